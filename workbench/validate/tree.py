"""Validating what a person points at: a file, a skill folder, or a whole tree."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import workbench
from workbench.formats import detect
from workbench.validate.diagnostic import ERROR, WARNING, Diagnostic, FileReport
from workbench.validate.validator import validate_file

SKIP_DIRS = {
    ".git",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".hypothesis",
    ".pytest_cache",
    # A workspace's own internals: version snapshots (a skill copy in a folder named vN), the
    # versions repository and the dispatch cache. Its history.json and iterations are still checked.
    ".snapshots",
    "versions.git",
    ".cache",
    # Installed packages and build output: other people's files, not the user's skills.
    "site-packages",
    "dist-packages",
    "build",
    "dist",
}
CANDIDATE_SUFFIXES = {".json", ".yaml", ".yml"}
_ITERATION = re.compile(r"iteration-\d+")
_PACKAGE = Path(workbench.__file__).resolve().parent  # the workbench's own package data


def is_workspace(children: Iterable[str]) -> bool:
    """A folder holding these names is a workbench workspace: its versions repository, or iteration-N folders."""
    names = set(children)
    return "versions.git" in names or any(_ITERATION.fullmatch(n) for n in names)


def candidates(root: Path) -> Iterator[Path]:
    """The files in a tree that may be in a format the workbench reads, sorted.
    A walk skips the workbench's own workspaces (runs, versions, snapshots: the
    tool's files, not the user's) unless the walk starts in one, and its own
    package data. Symlinks to folders are not followed (no loops)."""
    for folder, dirs, files in os.walk(root):
        # Judged from the listing the walk made anyway: a workspace is left as soon as it is entered.
        if folder != str(root) and is_workspace(dirs):
            dirs[:] = []
            continue
        dirs[:] = sorted(
            name
            for name in dirs
            if name not in SKIP_DIRS
            and not name.endswith(".egg-info")
            and not (name == _PACKAGE.name and Path(folder, name).resolve() == _PACKAGE)
        )
        for name in sorted(files):
            if name == "SKILL.md" or os.path.splitext(name)[1].lower() in CANDIDATE_SUFFIXES:
                yield Path(folder, name)


def validate_paths(paths: Iterable[Path], dialect: str | None = None) -> list[FileReport]:
    """Reports for every file given and every candidate under every folder given.
    Raises FileNotFoundError for a path that does not exist, OSError when unreadable."""
    reports = []
    for path in paths:
        if path.is_dir():
            found = [_checked(file, dialect, explicit=False) for file in candidates(path)]
            reports += _untested(found)
        elif path.exists() or path.is_symlink():
            reports.append(_checked(path, dialect, explicit=True))
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return reports


def _untested(reports: list[FileReport]) -> list[FileReport]:
    """A skill (a SKILL.md) with no eval suite beside it validates, with a warning: nothing tests it yet."""
    suites = [Path(r.file) for r in reports if r.dialect in detect.EVALS_DIALECTS]
    for report in reports:
        if report.dialect != "skill-md" or Path(report.file).name != "SKILL.md":
            continue
        evals = Path(report.file).parent / "evals"
        if not any(evals in suite.parents for suite in suites):
            report.diagnostics.insert(
                0,
                Diagnostic(
                    WARNING,
                    "",
                    f"no eval suite: nothing tests this skill; open it (workbench {Path(report.file).parent}) and "
                    "press ctrl+n for a first suite in evals/",
                    1,
                    1,
                ),
            )
    return reports


def _checked(path: Path, dialect: str | None, explicit: bool) -> FileReport:
    """One file's report; a broken link is a problem of its own, and the walk goes on."""
    try:
        return validate_file(path, dialect, shown=str(path), explicit=explicit)
    except FileNotFoundError:
        target = os.readlink(path) if path.is_symlink() else None
        why = f"a broken link to {target}: nothing is there" if target else "it vanished while being checked"
        # An error where a suite, SKILL.md or artifact should be; elsewhere in a walk, a warning.
        severity = ERROR if explicit or detect.by_place(path) is not None else WARNING
        return FileReport(str(path), None, [Diagnostic(severity, "", f"cannot be read: {why}; expected a file", 1, 1)])
