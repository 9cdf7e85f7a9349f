"""diff_scope: how much the agent changed against the dispatch's baseline commit.
Renames count as a delete plus an add, binary files count 0 lines, the staged
skill and framework files are left out. The patch is written beside grading.json.

Both trees come from the run's own object store (workspace/trees.py): git diffs two
trees of objects the workbench wrote, with no work tree, so nothing the agent left
in its workspace (attributes, a nested repository, its .git) takes part."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from workbench.formats.save import atomic_write
from workbench.grading.verdict import Verdict
from workbench.runs.run_folder import NOT_CHANGES, changed_files
from workbench.workspace import git_objects, layout, safe_git


def measure(
    repo_dir: Path, baseline: str, patch: Path | None = None, final_tree: str | None = None
) -> tuple[list[str], int]:
    """(files touched, lines added plus removed) since the baseline; the patch written to `patch`."""
    files, lines, text = changes(repo_dir, baseline, final_tree, patch is not None)
    if patch is not None:
        atomic_write(patch, text)
    return files, lines


def changes(
    repo_dir: Path, baseline: str, final_tree: str | None = None, with_patch: bool = True
) -> tuple[list[str], int, str]:
    """(files touched, lines added plus removed, the patch or "") since the baseline. final_tree: the
    tree the run recorded when the agent finished (run.json); else the workspace is read again now.
    Raises ValueError, OSError or git.GitCommandError when the run's store cannot be read."""
    # Absolute: git runs in a folder of its own (no work tree), where a relative --git-dir (`workbench grade
    # ws/iteration-1`, typed from the skill's folder) named nothing and every run was "not graded".
    repo_dir = Path(os.path.abspath(repo_dir))
    store = repo_dir.parent / layout.TREES
    if not (store / "objects").is_dir():
        adopt(repo_dir, baseline)  # a run made before the workbench kept its own baseline
    objects = git_objects.Objects(store / "objects")
    if final_tree is None or not objects.has(final_tree):
        final_tree = changed_files(repo_dir, baseline).final_tree
    before = _measured(objects, objects.entries(objects.tree_of(baseline)))
    after = _measured(objects, objects.entries(final_tree))
    if before == after:  # nothing changed: no git process to say so (the same answer git gives)
        return [], 0, "\n"
    args = [f"--git-dir={store}", "diff", *safe_git.DIFF_SAFE, "--no-renames", "--numstat", "-z"]
    if with_patch:
        args += ["--patch", "--binary"]
    with tempfile.TemporaryDirectory(prefix="workbench-diff-") as nowhere:  # no work tree to read
        out = safe_git.run_bytes([*args, before, after], Path(nowhere))
    files, lines = [], 0
    fields = out.split(b"\0")
    index = 0
    while index < len(fields) and fields[index]:
        added, removed, name = fields[index].split(b"\t", 2)
        files.append(name.decode("utf-8", "surrogateescape"))
        if added != b"-":  # "-" marks a binary file: it counts as touched, with 0 lines
            lines += int(added) + int(removed)
        index += 1
    patch = b"\0".join(fields[index + 1 :]).lstrip(b"\n").decode("utf-8", "replace")
    return files, lines, patch + ("\n" if not patch.endswith("\n") else "")


def _measured(objects: git_objects.Objects, entries: dict[str, git_objects.Entry]) -> str:
    """The tree of what a run's changes are measured on: the staged skill and framework files left out."""
    return objects.write_tree({path: entry for path, entry in entries.items() if not path.startswith(NOT_CHANGES)})


def adopt(repo_dir: Path, baseline: str) -> None:
    """The run's TREES store built from its repository's baseline commit, for a run made before the
    workbench kept one. git reads only objects there (its config put back first, nothing redirecting
    reads), and every object is checked against its id as it is copied: a baseline the agent rewrote
    is refused, never measured against."""
    safe_git.scrub(repo_dir)
    git_dir = repo_dir / ".git"
    with tempfile.TemporaryDirectory(prefix="workbench-adopt-") as nowhere:
        where = Path(nowhere)
        listing = safe_git.run_bytes([f"--git-dir={git_dir}", "ls-tree", "-r", "-z", "--full-tree", baseline], where)
        entries: dict[str, git_objects.Entry] = {}
        for line in listing.split(b"\0"):
            if line:
                meta, _, name = line.partition(b"\t")
                mode, _kind, oid = meta.decode().split()
                entries[name.decode("utf-8", "surrogateescape")] = git_objects.Entry(mode, oid)
        wanted = [baseline, *{entry.oid for entry in entries.values()}]
        raw = safe_git.run_bytes(
            [f"--git-dir={git_dir}", "cat-file", "--batch"], where, stdin="\n".join(wanted).encode() + b"\n"
        )
    store = repo_dir.parent / layout.TREES
    objects = git_objects.init(store, bare=True, head="none")
    for oid in wanted:
        header, _, raw = raw.partition(b"\n")
        _oid, kind, size = header.decode().split()
        data, raw = raw[: int(size)], raw[int(size) + 1 :]
        if objects.write(kind, data) != oid:
            raise ValueError(f"{git_dir}: object {oid} does not hold what its id names; the baseline was altered")
    if objects.write_tree(entries) != objects.tree_of(baseline):
        raise ValueError(f"{git_dir}: the baseline commit's files were altered")


def grade(assertion: dict, files: list[str], lines: int) -> Verdict:
    problems = []
    most_files, most_lines = assertion.get("max_files_touched"), assertion.get("max_lines_changed")
    if most_files is not None and len(files) > most_files:
        problems.append(f"{len(files)} files touched, more than {most_files}")
    if most_lines is not None and lines > most_lines:
        problems.append(f"{lines} lines changed, more than {most_lines}")
    shown = ", ".join(files[:10]) + (" …" if len(files) > 10 else "") if files else "none"
    facts = f"{len(files)} file(s) touched ({shown}); {lines} line(s) added plus removed"
    return Verdict(not problems, "; ".join(problems) + f" — {facts}" if problems else facts)
