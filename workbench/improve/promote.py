"""Promote a version to current best, and optionally write its files into the
skill folder. Writing shows the diff first and refuses, changing nothing, when
the folder holds work that would be lost: uncommitted changes (in a git
repository) or, outside git, content that is in no version."""

from __future__ import annotations

import os
from pathlib import Path

import git

from workbench.formats.save import atomic_write
from workbench.improve.versions import EXCLUDED, VersionStore
from workbench.runs import safe_git


def unsafe_to_overwrite(store: VersionStore, skill_dir: Path) -> str | None:
    """Why writing into the folder would lose work, or None when it would not."""
    try:
        repo = safe_git.configure(git.Repo(skill_dir, search_parent_directories=True))
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        repo = None
    work_tree = repo.working_tree_dir if repo is not None else None  # None for a bare repository
    if repo is not None and work_tree is not None:
        relative = os.path.relpath(skill_dir.resolve(), Path(work_tree).resolve())
        base = "" if relative == "." else f"{relative}/"
        changed = safe_git.run(
            [
                *safe_git.without_filters(Path(work_tree)),
                "status",
                "--porcelain",
                "--untracked-files=all",
                "--",
                f"{base or '.'}",
                *[f":(exclude){base}{name}" for name in EXCLUDED],
            ],
            Path(work_tree),
        ).splitlines()
        if changed:
            listed = ", ".join(line[3:] for line in changed[:8]) + (" …" if len(changed) > 8 else "")
            return f"the skill folder has uncommitted changes that would be overwritten: {listed}"
        return None
    tree = store.tree_of_folder(skill_dir)
    for version in store.versions():
        if store.repo().git.rev_parse(f"{store.commit_of(version)}^{{tree}}") == tree:
            return None
    return (
        "the skill folder is not in git and its content is in no version, so writing would lose it; "
        "snapshot it first (workbench version new)"
    )


def write_version(store: VersionStore, version: str, skill_dir: Path) -> list[str]:
    """Make the folder's skill files exactly the version's; returns the paths changed."""
    wanted = store.files(version)
    tree = store.tree_of_folder(skill_dir)
    present = store.repo().git.ls_tree("-r", "--name-only", tree).splitlines()
    changed = []
    for name in present:
        if name not in wanted:
            (skill_dir / name).unlink()
            changed.append(name)
    for name, content in wanted.items():
        target = skill_dir / name
        if not target.exists() or target.read_bytes() != content:
            atomic_write(target, content, sync_dir=False)
            changed.append(name)
    return sorted(changed)
