"""Which format a file is in: its `$schema`/`$id` when present, then its name and
place (evals/evals.json, evals/suite.yaml, history.json, ...), then its structure."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from workbench.formats import artifacts, chock, eval_magic, skill_creator, skill_md, slow_powers
from workbench.formats.dialect import Format

EVALS_DIALECTS = {f.name: f for f in (slow_powers.FORMAT, skill_creator.FORMAT, chock.FORMAT)}
ALL_FORMATS: tuple[Format, ...] = (*EVALS_DIALECTS.values(), *eval_magic.FORMATS, *artifacts.FORMATS, skill_md.FORMAT)

_EVALS_FILE = re.compile(r"(evals|.+\.evals|evals\..+)\.json")
_SUITE_FILE = re.compile(r"suite\.(ya?ml|json)")
# Another runner's result written under an artifact's name.
_RESULTS_TWIN = {"grading": eval_magic.GRADING, "benchmark": eval_magic.BENCHMARK}


def by_place(path: Path) -> Format | str | None:
    """The format a file's name and folder promise: a Format, "evals-json" when it
    is an evals.json of either JSON dialect, or None."""
    name = path.name
    if name == "SKILL.md":
        return skill_md.FORMAT
    if path.parent.name == "evals":
        if _EVALS_FILE.fullmatch(name):
            return "evals-json"
        if _SUITE_FILE.fullmatch(name):
            return chock.FORMAT
    return artifacts.by_file_name(name)


def by_schema_id(data: Any) -> Format | None:
    if not isinstance(data, dict):
        return None
    for key in ("$schema", "$id"):
        value = data.get(key)
        if isinstance(value, str):
            for fmt in ALL_FORMATS:
                if fmt.schema_id and value.rstrip("#") == fmt.schema_id:
                    return fmt
    return None


def by_structure(data: Any) -> Format | None:
    # Order matters: specific shapes before general ones.
    for fmt in (chock.FORMAT, *eval_magic.FORMATS):
        if fmt.sniff(data):
            return fmt
    dialect = slow_powers.evals_dialect(data) if "skill_name" in (data if isinstance(data, dict) else {}) else None
    if dialect:
        return EVALS_DIALECTS[dialect]
    for fmt in artifacts.FORMATS:
        if fmt.sniff(data):
            return fmt
    return None


def refine(place: Format | str | None, data: Any) -> Format | None:
    """The format of parsed data whose place promised `place`."""
    declared = by_schema_id(data)
    if declared:
        return declared
    if place == "evals-json":
        return EVALS_DIALECTS[slow_powers.evals_dialect(data) or slow_powers.NAME]
    if isinstance(place, Format):
        twin = _RESULTS_TWIN.get(place.name)
        if twin and twin.sniff(data):
            return twin
        return place
    return by_structure(data)


def place_default(place: Format | str | None) -> Format | None:
    """The format to report a file's syntax errors under, before it could be parsed."""
    if place == "evals-json":
        return slow_powers.FORMAT
    return place if isinstance(place, Format) else None
