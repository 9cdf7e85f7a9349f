"""A problem found in a file: what is wrong, where (pointer, line, column), how bad."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from workbench.errors import WorkbenchError

ERROR = "error"
WARNING = "warning"


@dataclass(slots=True)
class Diagnostic:
    severity: str  # "error" or "warning"
    path: str  # JSON Pointer into the document ("" for the whole file)
    message: str
    line: int | None = None  # 1-based; None until located
    column: int | None = None

    def compiler_line(self, file: object, severity: str | None = None) -> str:
        """`file:line:col: severity: message [pointer]`, as compilers print, so editors can jump to it."""
        where = f" [{self.path}]" if self.path else ""
        return f"{file}:{self.line}:{self.column}: {severity or self.severity}: {self.message}{where}"

    def as_json(self) -> dict:
        return {
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }


class FileProblems(WorkbenchError):
    """A file that cannot be used as it is; its diagnostics say why."""

    def __init__(self, path: Path, diagnostics: list[Diagnostic]) -> None:
        super().__init__(f"{path}: {len(diagnostics)} problem(s)")
        self.path = path
        self.diagnostics = diagnostics


def error(path: str, message: str) -> Diagnostic:
    return Diagnostic(ERROR, path, message)


def warning(path: str, message: str) -> Diagnostic:
    return Diagnostic(WARNING, path, message)


def did_you_mean(value: str, options: list[str] | tuple[str, ...]) -> str:
    """' (did you mean "x"?)' for the one option close to a mistyped value, else ''."""
    close = difflib.get_close_matches(value, list(options), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


@dataclass(slots=True)
class FileReport:
    """What validating one file found; `skipped` says why a file was not checked."""

    file: str
    dialect: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    skipped: str | None = None
    detected: str | None = None  # why the file was read as its dialect (its evidence)

    @property
    def errors(self) -> int:
        return sum(d.severity == ERROR for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity == WARNING for d in self.diagnostics)

    def as_json(self) -> dict:
        out = {
            "file": self.file,
            "dialect": self.dialect,
            "diagnostics": [d.as_json() for d in self.diagnostics],
        }
        if self.skipped:
            out["skipped"] = self.skipped
        if self.detected:
            out["detected"] = self.detected
        return out
