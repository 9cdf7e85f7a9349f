"""skill-creator's legacy Improve mode, adopted.

There, the workspace (`<skill>-workspace/`, beside the skill) holds history.json
at its root, in seed 003's shape, and one folder per version with that version's
copy of the skill: `vN/skill/`. There is no versions.git. Such a workspace is
imported once: each version folder becomes a commit tagged vN whose git parent
is the version's parent in history.json, and the tags are written through one
journal (journal.py), so a kill leaves no tags or all of them once recovered.
history.json and the folders are read, never changed: history.json already is
our format, and what we add lives in versions.git and evaluations.json.

This module makes the commits (objects nobody refers to until tagged); journal.py
tags them. It never imports history.py or journal.py (they import it)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from workbench.formats import artifacts
from workbench.formats.artifacts import VERSION_NAME
from workbench.formats.document import SyntaxProblem, load
from workbench.formats.paths import inside, tree_problem
from workbench.formats.regular import read_regular_text
from workbench.validate.diagnostic import Diagnostic, FileProblems
from workbench.validate.validator import locate, validate_document
from workbench.workspace import safe_git
from workbench.workspace.versions import REPO, VersionStore

HISTORY = "history.json"
SKILL = "skill"  # vN/skill/: the version's copy of the skill, as skill-creator keeps it


class LegacyRefused(FileProblems):
    """A legacy version folder that cannot be imported as it is (missing, a link, a link out...)."""


def pending(workspace: Path) -> bool:
    """history.json and a vN entry at the workspace root, and no version in
    versions.git yet: a legacy workspace still to import. Cheap when it is not."""
    if not (workspace / HISTORY).is_file():
        return False
    try:
        names = os.listdir(workspace)
    except OSError:
        return False
    if not any(VERSION_NAME.fullmatch(name) for name in names):
        return False
    return not _has_tags(workspace / REPO)


def _has_tags(repo: Path) -> bool:
    """A vN tag in versions.git, read from its refs without running git (every reader
    of a legacy workspace asks): loose refs/tags/vN, or packed ones."""
    try:
        if any(VERSION_NAME.fullmatch(name) for name in os.listdir(repo / "refs" / "tags")):
            return True
    except OSError:
        pass
    try:
        packed = read_regular_text(repo / "packed-refs", errors="replace")
    except OSError:
        return False
    return any(VERSION_NAME.fullmatch(line.rpartition("refs/tags/")[2]) for line in packed.splitlines())


def commits(workspace: Path, store: VersionStore) -> dict[str, str]:
    """version -> a commit of its folder, parents as history.json says; {} when the
    workspace is not a legacy one still to import, or history.json is broken (then
    loading it says where). Raises LegacyRefused naming history.json's line."""
    if not pending(workspace):
        return {}
    parsed = load(workspace / HISTORY)
    if isinstance(parsed, SyntaxProblem) or any(
        d.severity == "error" for d in validate_document(parsed, artifacts.HISTORY, locate_all=False)
    ):
        return {}
    iterations = parsed.data["iterations"]
    problems = []
    for index, item in enumerate(iterations):
        why = folder_problem(workspace, item["version"])
        if why:
            problems.append(Diagnostic("error", f"/iterations/{index}/version", why))
    if problems:
        raise LegacyRefused(workspace / HISTORY, locate(parsed, problems))
    made: dict[str, str] = {}
    for item in iterations:  # parents come earlier: the lint checked it
        version, parent = item["version"], item["parent"]
        args = ["commit-tree", store.tree_of_folder(workspace / version / SKILL)]
        args += ["-m", f"{version} (imported from skill-creator's {version}/{SKILL}/)"]
        if parent is not None:
            args += ["-p", made[parent]]
        made[version] = store.repo().git.execute(safe_git.command(f"--git-dir={store.path}", *args)).strip()
    return made


def folder_problem(workspace: Path, version: str) -> str | None:
    """Why `<workspace>/<version>/skill/` cannot be imported, or None. The names come
    from a file anyone may have written (a cloned workspace): only v and digits, a
    real folder inside the workspace, no link out, no .git, no FIFO or device."""
    if not VERSION_NAME.fullmatch(version):
        return f'"{version}" is not a version name; expected exactly v and digits (v0, v1, ...)'
    root = os.path.realpath(workspace)
    for path in (workspace / version, workspace / version / SKILL):
        shown = os.path.relpath(path, workspace)
        if os.path.islink(path):
            return f"{shown} is a link (to {os.path.realpath(path)}); expected the version's own folder, not a link"
        if not path.is_dir():
            return (
                f"history.json names {version} but {workspace / shown} is not there; expected skill-creator's "
                f"{version}/{SKILL}/ with that version's files"
            )
    folder = workspace / version / SKILL
    if not inside(os.path.realpath(folder), root):
        return f"{version}/{SKILL}/ leads outside {workspace}"
    why = tree_problem(folder, folder)
    if why:
        return f"{version}/{SKILL}/: {why}"
    for path in folder.rglob("*"):
        mode = os.lstat(path).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            return f"{version}/{SKILL}/{path.relative_to(folder)} is not a file, folder or link (a FIFO or device)"
    return None
