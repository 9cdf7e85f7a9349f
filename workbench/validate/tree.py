"""Validating what a person points at: a file, a skill folder, or a whole tree."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from workbench.validate.diagnostic import FileReport
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
}
CANDIDATE_SUFFIXES = {".json", ".yaml", ".yml"}


def candidates(root: Path) -> Iterator[Path]:
    """The files in a tree that may be in a format the workbench reads, sorted."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            if name == "SKILL.md" or os.path.splitext(name)[1].lower() in CANDIDATE_SUFFIXES:
                yield Path(folder, name)


def validate_paths(paths: Iterable[Path], dialect: str | None = None) -> list[FileReport]:
    """Reports for every file given and every candidate under every folder given.
    Raises FileNotFoundError for a path that does not exist, OSError when unreadable."""
    reports = []
    for path in paths:
        if path.is_dir():
            for file in candidates(path):
                reports.append(validate_file(file, dialect, shown=str(file), explicit=False))
        elif path.exists():
            reports.append(validate_file(path, dialect, shown=str(path), explicit=True))
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return reports
