"""Paths that come from data (an evals file's fixtures, setup files, a chock
replay's file trees): relative, never climbing out, never naming `.git`. One
rule, used by the lint (so the editor and `workbench validate` show it at its
line) and again where the path is used (so nothing relies on the lint alone)."""

from __future__ import annotations

import os
import re
from pathlib import Path

_SEPARATORS = re.compile(r"[\\/]+")


def inside(target: str, root: str) -> bool:
    """`target` is `root` or below it (both already resolved or normalised the same way)."""
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def links_out(folder: Path) -> list[str]:
    """The links in a folder that lead outside it, as `relative -> target` (copying
    the folder would copy whatever they name: a key, a whole disk). Its .git and
    workspaces are not looked at."""
    real_root = os.path.realpath(folder)
    found = []
    for parent, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git" and not d.endswith("-workspace")]
        for name in [*dirs, *files]:
            path = os.path.join(parent, name)
            if os.path.islink(path) and not inside(os.path.realpath(path), real_root):
                found.append(f"{os.path.relpath(path, folder)} -> {os.path.realpath(path)}")
    return found


def is_git_name(part: str) -> bool:
    """`.git`, as any file system may spell it (`.GIT`, `.git.` and `.git ` on Windows)."""
    return part.rstrip(". ").lower() == ".git" or part.lower() == ".git"


def relative_problem(value: str, what: str = "path") -> str | None:
    """Why `value` cannot name a place inside a folder, or None when it can."""
    if not value:
        return f"the {what} is empty; expected a relative path"
    if os.path.isabs(value) or value.startswith(("/", "\\", "~")) or re.match(r"[A-Za-z]:", value):
        return f'"{value}" is an absolute path; expected a path relative to its folder'
    parts = _SEPARATORS.split(value)
    if ".." in parts:
        return f'"{value}" climbs out with ".."; expected a path inside its folder'
    if any(is_git_name(part) for part in parts):
        return f'"{value}" names .git; the workbench never writes or copies a .git (git would run what it holds)'
    return None


def tree_problem(target: Path, root: Path) -> str | None:
    """Why the file or folder at `target` cannot be copied into a workspace: a
    .git inside it, or a link that leads outside `root`. None when it can."""
    real_root = os.path.realpath(root)
    for path in [target, *(sorted(target.rglob("*")) if target.is_dir() and not target.is_symlink() else [])]:
        shown = os.path.relpath(path, root)
        if is_git_name(path.name):
            return f"{shown} is a .git; the workbench never copies one into a workspace"
        if path.is_symlink():
            real = os.path.realpath(path)
            if not inside(real, real_root):
                return f"{shown} is a link that leads outside {root.name}/ (to {real}); links out are refused"
            if os.path.isdir(real):
                return f"{shown} is a link to a folder; copy the folder instead (links to folders are refused)"
    return None
