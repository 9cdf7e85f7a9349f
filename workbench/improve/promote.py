"""Promote a version to current best, and optionally write its files into the
skill folder. Writing shows the diff first and refuses, changing nothing, when
the folder holds work that would be lost: uncommitted changes (in a git
repository) or, outside git, content that is in no version.

Writing is all-or-nothing (journal.py): the version's files that change are
staged on the skill folder's file system, links as links and with their modes;
then one journal write commits the promotion, the staged files are renamed into
place, the version's files that go are removed, and only then does history.json
name the version best. Files the version does not own (outside both trees:
ignored by git, or evals/) are never touched."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

import git

from workbench.errors import Refused
from workbench.improve import folder_repository
from workbench.improve.history import FILE, load_history
from workbench.workspace import git_objects, journal, safe_git, trees
from workbench.workspace.versions import EXCLUDED, VersionError, VersionStore


def unsafe_to_overwrite(store: VersionStore, skill_dir: Path, touched: Collection[str] = ()) -> str | None:
    """Why writing into the folder would lose work, or None when it would not. touched: the folder's paths
    the writing removes or overwrites; each that is there must be as git committed it or as a version holds
    it (an ignored file, in no version, is the user's only copy)."""
    committed: set[str] = set()
    try:
        repo = folder_repository.find(skill_dir)  # read as data: no git process, nothing of it obeyed
        if repo is not None:
            folder_repository.survey(repo, skill_dir)
            with tempfile.TemporaryDirectory(prefix="workbench-promote-") as scratch:
                changed = uncommitted(repo, folder_repository.shadow(repo, Path(scratch) / "git"), skill_dir, committed)
    except folder_repository.Unreadable as exc:
        return f"the skill folder's repository is not read: {exc}"
    except git.GitCommandError as exc:
        return f"git cannot say which files of the skill folder are committed: {_first_line(exc.stderr)}"
    if repo is not None:
        if changed:
            return f"the skill folder has uncommitted changes that would be overwritten: {_listed(changed)}"
    elif not _in_a_version(store, store.tree_of_folder(skill_dir)):
        return (
            "the skill folder is not in git and its content is in no version, so writing would lose it; "
            "snapshot it first (workbench version new)"
        )
    lost = _kept_nowhere(store, skill_dir, touched, committed)
    if lost:
        return (
            f"writing would remove or overwrite files that neither git nor a version keeps (ignored, or not "
            f"in a repository): {_listed(lost)}; move them out of the skill folder first"
        )
    return None


def _listed(names: list[str]) -> str:
    return ", ".join(names[:8]) + (" …" if len(names) > 8 else "")


def _in_a_version(store: VersionStore, tree: str) -> bool:
    return any(store.repo().git.rev_parse(f"{store.commit_of(v)}^{{tree}}") == tree for v in store.versions())


def _kept_nowhere(store: VersionStore, skill_dir: Path, touched: Collection[str], committed: set[str]) -> list[str]:
    """The touched paths that hold something in the folder that git cannot give back (not committed as it
    is) and no version holds at that path as it is. The folder's tree leaves out what its .gitignore files
    ignore, and knows nothing of info/exclude: such a file is in neither tree, yet a version may write
    where it stands, or the folder's tree hold it as a file the version does not have."""
    lost, versions = [], None
    for name in sorted(touched):
        if name in committed or not os.path.lexists(skill_dir / name):
            continue
        now = trees.entry_of(skill_dir / name)
        if now is not None:
            if versions is None:
                versions = [store.entries(store.tree_of(v)) for v in store.versions()]
            if any(entries.get(name) == (now.mode, now.oid) for entries in versions):
                continue
        if now is None and (skill_dir / name).is_dir() and not (skill_dir / name).is_symlink():
            continue  # a folder where a file goes: refused as in the way, with its own message
        lost.append(name)
    return lost


def uncommitted(
    repo: folder_repository.Repository, git_dir: Path, skill_dir: Path, committed: set[str] | None = None
) -> list[str]:
    """The skill folder's paths (evals/ aside) whose content is not what the repository around it
    committed: staged, modified, deleted, untracked (not ignored), or a nested repository. git_dir: the
    workbench's own git folder for that repository (folder_repository.shadow). committed: filled with the
    paths that are exactly as committed (git can give them back).

    Not `git status`: it runs the clean filters the tree's attributes name and descends into nested
    repositories, whose own config (fsmonitor, filters) it obeys. Here git only lists the index, the HEAD
    commit and the untracked names (commands that read no attribute, run no filter, enter no nested
    repository); the files themselves are read as bytes (workspace/trees.py) and compared by blob id. A file
    the repository keeps through a filter (LFS, line-ending conversion) therefore reads as changed:
    refusing is the safe side."""
    work_tree = repo.work_tree
    relative = os.path.relpath(skill_dir.resolve(), work_tree.resolve())
    base = "" if relative == "." else f"{relative}/"
    own = [f"--git-dir={git_dir}", f"--work-tree={work_tree}", "--literal-pathspecs"]
    where = [base or "."]
    # A listing is bounded by what the index makes plausible: a HEAD tree that names one subtree many
    # times (a few kB of objects) would have git print billions of paths.
    index_file = git_dir / "index"
    limit = LISTING + 4 * (index_file.stat().st_size if index_file.exists() else 0)

    def listed(*args: str) -> list[bytes]:
        try:
            out = safe_git.run_bytes([*own, *args, "--", *where], work_tree, timeout=GIT_TIMEOUT, limit=limit)
        except git.GitCommandError as exc:  # which git failed, in its own words
            said = _first_line(exc.stderr)
            raise git.GitCommandError(
                exc.command, exc.status, said if said.startswith("git ") else f"git {args[0]}: {said}"
            ) from None
        return [item for item in out.split(b"\0") if item]

    def mine(name: str) -> bool:
        return name.startswith(base) and not any(name[len(base) :].split("/")[0] == e for e in EXCLUDED)

    index: dict[str, tuple[str, str]] = {}
    changed: set[str] = set()
    for line in listed("ls-files", "--stage", "-z"):
        meta, _, raw = line.partition(b"\t")
        mode, oid, stage = meta.decode().split()
        name = os.fsdecode(raw)
        if mine(name):
            index[name] = (mode, oid)
            if stage != "0" or mode == "160000":  # a conflict, or a nested repository it cannot look into
                changed.add(name)
    # No commit yet (the shadow's HEAD names no commit): nothing is committed. A git that fails or is
    # stopped on a commit is said as such, never taken for this.
    has_commit = not (git_dir / "HEAD").read_text().startswith("ref:")
    head_lines = listed("ls-tree", "-r", "-z", "--full-tree", "HEAD") if has_commit else []
    head = {}
    for line in head_lines:
        meta, _, raw = line.partition(b"\t")
        mode, _kind, oid = meta.decode().split()
        if mine(os.fsdecode(raw)):
            head[os.fsdecode(raw)] = (mode, oid)
    changed |= {name for name in index.keys() | head.keys() if index.get(name) != head.get(name)}
    for name, (mode, oid) in index.items():
        now = trees.entry_of(work_tree / name)
        if now is None or now.oid != oid or (now.mode == git_objects.LINK) != (mode == git_objects.LINK):
            changed.add(name)
    for raw in listed("ls-files", "--others", "--exclude-standard", "-z"):
        if mine(os.fsdecode(raw)):
            changed.add(os.fsdecode(raw))
    if committed is not None:
        committed.update(name[len(base) :] for name in head if name not in changed)
    return sorted(name[len(base) :] for name in changed)


GIT_TIMEOUT = 120.0  # the last guard: git reads only files checked first (folder_repository)
LISTING = 64 << 20  # what git may print of the skill folder's paths, past 4 bytes for each of the index's


def _first_line(text: str) -> str:
    """The first line git said (gitpython wraps it as "stderr: '...'")."""
    text = str(text).strip()
    if text.startswith("stderr: '") and text.endswith("'"):
        text = text[len("stderr: '") : -1]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "no reason given"


@dataclass(frozen=True)
class WritePlan:
    """What writing a version into the folder would do, as shown before it is done."""

    version: str
    diff: str  # git diff from the folder to the version: links and modes included
    folder_tree: str  # the folder's tree when the diff was made: writing refuses if it changed since
    refused: str | None  # why writing would lose work, or None


def plan_write(store: VersionStore, version: str, skill_dir: Path) -> WritePlan:
    tree = store.tree_of_folder(skill_dir)
    diff = store.diff(tree, version)
    touched = [*_changes(store, tree, version)] if diff.strip() else []
    return WritePlan(
        version, diff, tree, unsafe_to_overwrite(store, skill_dir, touched[0] + touched[1]) if touched else None
    )


def _changes(store: VersionStore, tree: str, version: str) -> tuple[list[str], list[str]]:
    """(the files writing version over the folder's tree places, those it removes)."""
    old, new = store.entries(tree), store.entries(store.tree_of(version))
    place = sorted(name for name, entry in new.items() if old.get(name) != entry)
    return place, sorted(name for name in old if name not in new)


def promote(
    workspace: Path,
    version: str,
    skill_dir: Path | None = None,
    shown: WritePlan | None = None,
    wait: bool = False,
    say: Callable[[str], None] | None = None,
    skill: Path | None = None,
) -> list[str]:
    """Make version the current best; with skill_dir, write its files there too
    (the paths changed are returned). `shown` is the plan a person saw: when the
    folder changed since, nothing is done. Holds the workspace's lock. Raises
    Refused, VersionError, HistoryBroken, WorkspaceBusy. skill: the skill this is
    for, when not writing (an interrupted promotion into it may be finished)."""
    with journal.writing(workspace, "promote", wait, say, skill_dir or skill):
        store = VersionStore(workspace)
        history = load_history(workspace, store)
        if history is None:
            raise VersionError(f"{workspace} has no versions yet")
        store.commit_of(version)
        try:
            history.promote(version)
        except ValueError as exc:
            raise Refused(str(exc)) from None
        writes = {FILE: history.text()}
        if skill_dir is None:
            journal.commit(workspace, writes)
            return []
        before = store.tree_of_folder(skill_dir)
        if shown is not None and before != shown.folder_tree:
            raise Refused(
                f"{skill_dir} changed since its diff was shown; nothing was written or promoted: promote again "
                "to see the diff as it is now"
            )
        place, remove = _changes(store, before, version)
        if not place and not remove:
            journal.commit(workspace, writes)
            return []
        why = unsafe_to_overwrite(store, skill_dir, place + remove)
        if why:
            raise Refused(f"refused, nothing changed: {why}")
        in_the_way = _in_the_way(skill_dir, place, set(remove))
        if in_the_way:
            raise Refused(
                f"refused, nothing changed: {in_the_way} in {skill_dir} is in no version and stands where "
                f"{version} has a file; move it away first"
            )
        _keep(store, before)
        try:
            staging = _staging(workspace, skill_dir)
            store.materialize(version, staging, set(place))
        except OSError as exc:  # nothing is changed before the journal: the staging folder goes with the next writer
            raise journal.ChangeFailed(
                f"writing {version} into {skill_dir} failed before anything changed, while making its files "
                f"ready: {journal.said(exc)}; nothing was written or promoted"
            ) from None
        promotion = {
            "version": version,
            "skill_dir": str(skill_dir),
            "staging": str(staging),
            "place": place,
            "remove": remove,
            # What each file is now: a recovery after a kill must not overwrite later edits.
            "before": {name: journal.fingerprint(skill_dir / name) for name in sorted(set(place + remove))},
        }
        journal.commit(workspace, writes, promotion=promotion, before=_version_of(store, before))
        return sorted(place + remove)


def _version_of(store: VersionStore, tree: str) -> str:
    """The version whose files the folder holds (what a message calls them), or what it is."""
    for version in store.versions():
        if store.tree_of(version) == tree:
            return version
    return "the folder as it was (in no version)"


def _in_the_way(skill_dir: Path, place: list[str], remove: set[str]) -> str | None:
    """A path the version needs that holds something no version owns (a folder
    where a file goes, a file or link where a folder goes): renaming would fail
    midway, so it is refused before anything is done."""
    for name in place:
        target = skill_dir / name
        if target.is_dir() and not target.is_symlink():
            return f"the folder {name}/"
        parts = Path(name).parts
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in remove:
                break  # removed first, then made a folder
            path = skill_dir / parent
            if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
                return f"{parent}"
    return None


def _keep(store: VersionStore, tree: str) -> None:
    """The folder as it was before, kept in versions.git (refs/workbench/before-promotion) so that no
    content of it is lost even outside git."""
    repo = store.repo()
    commit = repo.git.execute(
        safe_git.command(f"--git-dir={store.path}", "commit-tree", tree, "-m", "the skill folder before a promotion")
    ).strip()
    repo.git.update_ref("refs/workbench/before-promotion", commit)


def _staging(workspace: Path, skill_dir: Path) -> Path:
    """A fresh folder on the skill folder's file system (a rename cannot cross file systems): in the
    workspace when it is on the same one, else beside the skill folder."""
    root = workspace / journal.STAGING
    root.mkdir(parents=True, exist_ok=True)
    if os.stat(root).st_dev != os.stat(skill_dir).st_dev:
        root = skill_dir.parent / f".{skill_dir.name}.workbench-promotion"
        root.mkdir(exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="promote-", dir=root))
