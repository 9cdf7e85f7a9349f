"""Every artifact the workbench writes is validated against its schema (and
linted) before it is written, atomically. An invalid one is a bug of ours: it is
refused with the diagnostics, and the previous file stays."""

from __future__ import annotations

from pathlib import Path

import orjson

from workbench.errors import WorkbenchError
from workbench.formats import json_out

TYPE_CHECKING = False  # not typing's: a report starts faster without importing it
if TYPE_CHECKING:
    from typing import Any

    from workbench.formats.dialect import Format


class ArtifactInvalid(WorkbenchError):
    def __init__(self, path: Path, problems: list[str]) -> None:
        super().__init__(f"{path}: would not be valid: " + "; ".join(problems[:5]))


def write_artifact(path: Path, fmt: Format, data: Any, indent: bool = True, durable: bool = True) -> None:
    """durable=False: not synced, for a caller whose durable point (formats/save.py) follows."""
    from workbench.formats.save import atomic_write  # here: a report only reads

    atomic_write(path, render_artifact(path, fmt, data, indent), sync_dir=False, durable=durable)


def render_artifact(path: Path, fmt: Format, data: Any, indent: bool = True) -> str:
    """The artifact's text, checked against its schema (ArtifactInvalid when it breaks it);
    without indent, on one line (a large benchmark.json: a third smaller to read back)."""
    # The same text as json.dumps(indent=2, ensure_ascii=False), much faster.
    # Here, not at the top: reading artifacts (a report) needs no validator, and starts faster without it.
    from workbench.formats.document import SyntaxProblem, parse_json
    from workbench.validate.validator import validate_document

    option = orjson.OPT_NON_STR_KEYS | (orjson.OPT_INDENT_2 if indent else 0)
    text = json_out.dumps(data, option).decode() + "\n"
    document = parse_json(text, path)
    assert not isinstance(document, SyntaxProblem)  # orjson writes only valid JSON (NaN as null)
    errors = [
        f"{d.path or '/'}: {d.message}"
        for d in validate_document(document, fmt, locate_all=False)
        if d.severity == "error"
    ]
    if errors:
        raise ArtifactInvalid(path, errors)
    return text
