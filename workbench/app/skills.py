"""Finding skills to open, and the demo copy."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from workbench.config import bundled
from workbench.errors import WorkbenchError

SKIP = {".git", "node_modules", ".venv", "__pycache__"}


class SkillsNotFound(WorkbenchError):
    pass


def is_skill(folder: Path) -> bool:
    return (folder / "SKILL.md").is_file() or (folder / "evals").is_dir()


def find_skills(root: Path, depth: int = 4) -> list[Path]:
    """The skill at root, or the skills below it (nearest first, sorted)."""
    if not root.exists():
        raise SkillsNotFound(f"{root}: no such folder")
    if not root.is_dir():
        raise SkillsNotFound(f"{root}: not a folder (give the skill's folder, the one with SKILL.md)")
    if not os.access(root, os.R_OK | os.X_OK):
        raise SkillsNotFound(f"{root}: cannot be read")
    if is_skill(root):
        return [root.resolve()]
    found = []
    base = len(root.resolve().parts)
    for folder, dirs, files in os.walk(root.resolve()):
        dirs[:] = sorted(d for d in dirs if d not in SKIP and d != "evals")
        if "SKILL.md" in files:
            found.append(Path(folder))
            dirs[:] = []
        if len(Path(folder).parts) - base >= depth:
            dirs[:] = []
    if not found:
        raise SkillsNotFound(f"{root}: no skill here (a skill is a folder with SKILL.md and evals/)")
    return found


def copy_demo(draft: bool = False) -> Path:
    """A fresh copy of the demo skill in a temporary folder; with draft, its SKILL.md
    is the first draft (demo/draft/changelog-entry), for Improve mode."""
    source = bundled("demo")
    if source is None or not (source / "changelog-entry").is_dir():
        raise FileNotFoundError(
            "the demo skill is not installed with this copy of the workbench "
            "(reinstall skill-workbench, or run from a clone: pip install -e .)"
        )
    target = Path(tempfile.mkdtemp(prefix="workbench-demo-")) / "changelog-entry"
    # An installed copy may hold bytecode caches of the fixtures' .py files (pip compiles them).
    shutil.copytree(source / "changelog-entry", target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if draft:
        shutil.copy(source / "draft" / "changelog-entry" / "SKILL.md", target / "SKILL.md")
    return target
