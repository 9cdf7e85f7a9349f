"""What the workbench knows about each format it reads: its name, schema, where
its cases are, and how to recognise it. Each format is declared in its own module."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

EVALS = "evals"  # an eval suite a person writes
ARTIFACT = "artifact"  # a file a run or Improve mode writes
RESULTS = "results"  # another runner's results, recognised and read
SKILL = "skill"


@dataclass(frozen=True)
class CaseList:
    """An array of cases in a suite, and the schema of one of its items."""

    pointer: str  # e.g. "/evals"
    item_schema: str  # JSON Pointer into the format's schema, e.g. "/definitions/eval"
    id_field: str = "id"


@dataclass(frozen=True)
class Format:
    name: str
    title: str
    family: str
    schema_file: str | None = None
    cases: tuple[CaseList, ...] = ()
    # Recognises the format from parsed data alone.
    sniff: Callable[[Any], bool] = field(default=lambda data: False, compare=False)
    # Friendlier words for schema failures, keyed by the failing keyword's schema path.
    hints: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def schema(self) -> dict | None:
        return load_schema(self.schema_file) if self.schema_file else None

    @property
    def schema_id(self) -> str | None:
        schema = self.schema
        return schema.get("$id") if schema else None

    def case_of(self, pointer: str) -> str | None:
        """The case a pointer lies in ("/evals/3" for "/evals/3/turns/0"), if any."""
        from workbench.formats import pointer as ptr

        tokens = ptr.split(pointer)
        for case_list in self.cases:
            prefix = ptr.split(case_list.pointer)
            if tokens[: len(prefix)] == prefix and len(tokens) > len(prefix) and tokens[len(prefix)].isdigit():
                return ptr.join(tokens[: len(prefix) + 1])
        return None


@cache
def load_schema(file_name: str) -> dict:
    from importlib import resources  # here: it imports tempfile and more, which a report never needs

    text = resources.files("workbench.formats").joinpath("schemas", file_name).read_text("utf-8")
    return json.loads(text)


def keys_of(data: Any) -> set[str]:
    return set(data) if isinstance(data, dict) else set()
