"""All-or-nothing changes of a workspace's versions, history and skill folder.

A change that touches more than one file (a promotion: the skill's files, then
history.json; an evaluation: evaluations.json and history.json; the first
version: its tag and history.json) is first written whole into
`<workspace>/journal.json`, atomically: that write is the moment it happens.
Then it is applied, in the order that keeps history.json true (the files it
describes first, history.json last), and the journal is removed. Applying is
idempotent, so when a process is killed midway the next writer of the workspace
applies the journal again and finishes the change (recover()): a kill leaves
the old state (no journal yet) or, once the next command has run, the new one.

Every writer goes through writing(): the workspace's lock (runs/lock.py), then
recovery of whatever a killed writer left."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

from workbench.formats.artifacts import VERSION_NAME
from workbench.formats.paths import inside
from workbench.formats.save import atomic_write
from workbench.improve.versions import REPO, VersionStore
from workbench.runs import lock
from workbench.runs.workspace import default_workspace
from workbench.validate.diagnostic import Diagnostic, FileProblems

FILE = "journal.json"
STAGING = ".promotion"  # in the workspace: promoted files wait here, on the skill folder's file system
# For the kill tests only (tests/test_kills.py): die at this named point, as a crash would there.
_KILL_AT = os.environ.get("WORKBENCH_TEST_KILL_AT", "")


def _point(name: str) -> None:
    if _KILL_AT == name:
        os.kill(os.getpid(), signal.SIGKILL)


class JournalBroken(FileProblems):
    """journal.json is not a journal this workbench wrote."""


@contextlib.contextmanager
def writing(workspace: Path, what: str, wait: bool = False, say: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the workspace's lock (WorkspaceBusy when another writer has it, or
    wait for it), and finish what a killed writer left, before writing."""
    with lock.hold(workspace, what, wait, say):
        done = recover(workspace)
        if done and say is not None:
            say(done)
        yield


def recover_now(workspace: Path) -> str | None:
    """For a reader about to show the workspace (history, the History screen) or a
    command about to plan a change: finish a killed writer's change now, unless
    a writer is at work (then it is that writer's to finish)."""
    if not (workspace / FILE).exists() and not (workspace / STAGING).exists():
        return None  # nothing left: no lock taken, nothing written
    try:
        with lock.hold(workspace, "recover"):
            return recover(workspace)
    except lock.WorkspaceBusy:
        return None


def commit(
    workspace: Path,
    writes: dict[str, str] | None = None,
    tags: dict[str, str] | None = None,
    promotion: dict | None = None,
) -> None:
    """Make the change at once: tags in versions.git, then the promoted files
    into the skill folder, then each write (a file of the workspace -> its whole
    new text, history.json last). Call it holding writing()."""
    writes = dict(writes or {})
    if "history.json" in writes:  # the file that describes the others changes after them
        writes["history.json"] = writes.pop("history.json")
    journal = {"tags": tags or {}, "promotion": promotion, "writes": writes}
    atomic_write(workspace / FILE, json.dumps(journal, indent=2) + "\n")
    _point("journal-written")
    _apply(workspace, journal)


def recover(workspace: Path) -> str | None:
    """Finish a change a killed writer left, and clear what it left half-made;
    what was finished, said for a person, or None. Call it holding the lock."""
    _clear_git_locks(workspace / REPO)
    path = workspace / FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        shutil.rmtree(workspace / STAGING, ignore_errors=True)  # staged for a promotion that never happened
        return None
    try:
        journal = json.loads(text)
        why = _not_ours(workspace, journal)
    except ValueError as exc:
        why = str(exc)
    if why:
        # Replaying it would write or delete what it names: a journal that is not exactly
        # what this workbench writes (a cloned or edited workspace) is refused, untouched.
        raise JournalBroken(
            path,
            [Diagnostic("error", "", f"not a journal the workbench wrote ({why}); move it away to go on", 1, 1)],
        )
    _apply(workspace, journal)
    promotion = journal.get("promotion")
    what = (
        f"a promotion of {promotion['version']} into {promotion['skill_dir']}"
        if promotion
        else ", ".join(journal["tags"]) or " and ".join(journal["writes"])
    )
    return f"finished an interrupted change ({what}) that a killed workbench had started"


# The only files a journal writes in the workspace.
WRITABLE = ("evaluations.json", "history.json")


def _not_ours(workspace: Path, journal: object) -> str | None:
    """What makes a parsed journal one this workbench did not write, or None. Every
    path in it is checked before anything is done: the files it writes are the
    workspace's own, a promotion goes into the skill whose workspace this is, from
    staging inside the workspace (or beside that skill), by relative names inside it."""
    if not isinstance(journal, dict) or set(journal) != {"tags", "promotion", "writes"}:
        return "expected exactly tags, promotion and writes"
    tags, promotion, writes = journal["tags"], journal["promotion"], journal["writes"]
    if not isinstance(tags, dict) or not all(
        isinstance(v, str) and VERSION_NAME.fullmatch(v) and isinstance(c, str) and _OBJECT.fullmatch(c)
        for v, c in tags.items()
    ):
        return "tags: expected version names and commit ids"
    if not isinstance(writes, dict) or not all(n in WRITABLE and isinstance(t, str) for n, t in writes.items()):
        return f"writes: expected the text of {' or '.join(WRITABLE)}"
    if promotion is None:
        return None
    if not isinstance(promotion, dict) or set(promotion) != {"version", "skill_dir", "staging", "place", "remove"}:
        return "promotion: expected version, skill_dir, staging, place and remove"
    skill_dir, staging = promotion["skill_dir"], promotion["staging"]
    if not (
        isinstance(skill_dir, str) and isinstance(staging, str) and VERSION_NAME.fullmatch(str(promotion["version"]))
    ):
        return "promotion: expected a version and two folders"
    skill = Path(skill_dir)
    if not skill.is_absolute() or default_workspace(skill) != workspace.resolve():
        return f"promotion into {skill_dir}, which is not the skill of this workspace"
    root = os.path.realpath(staging)
    beside = skill.parent / f".{skill.name}.workbench-promotion"  # where promote stages across file systems
    if not any(
        inside(root, os.path.realpath(folder)) and root != os.path.realpath(folder)
        for folder in (workspace / STAGING, beside)
    ):
        return f"promotion staged in {staging}, not in this workspace's staging"
    for key in ("place", "remove"):
        names = promotion[key]
        if not isinstance(names, list) or not all(isinstance(n, str) and _relative_inside(n) for n in names):
            return f"promotion: {key} names a path outside the skill folder"
    return None


_OBJECT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _relative_inside(name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts and parts[0] not in (".git", "evals")


def _apply(workspace: Path, journal: dict) -> None:
    store = VersionStore(workspace)
    for version, commit_id in journal.get("tags", {}).items():
        store.tag(version, commit_id)
    promotion = journal.get("promotion")
    if promotion:
        swap(Path(promotion["skill_dir"]), Path(promotion["staging"]), promotion["place"], promotion["remove"])
    for name, text in journal["writes"].items():
        _point(f"before-{name}")
        atomic_write(workspace / name, text)
    (workspace / FILE).unlink()
    if promotion:
        shutil.rmtree(promotion["staging"], ignore_errors=True)


def swap(skill_dir: Path, staging: Path, place: list[str], remove: list[str]) -> None:
    """Remove the version's files that go, then rename each staged file or link
    into place. Each step is a rename or an unlink on one file system, and
    doing them again after a kill finishes them (what is done is skipped)."""
    touched = set()
    for name in remove:
        target = skill_dir / name
        if target.is_symlink() or target.is_file():
            target.unlink()
        touched.add(target.parent)
    for name in sorted(remove, key=lambda n: -n.count("/")):  # folders left empty go, deepest first
        parent = (skill_dir / name).parent
        while parent != skill_dir and skill_dir in parent.parents:
            try:
                parent.rmdir()
            except OSError:
                break  # not empty (or already gone): stop climbing
            parent = parent.parent
    for index, name in enumerate(place):
        if index == len(place) // 2:
            _point("half-swapped")
        source, target = staging / name, skill_dir / name
        if os.path.lexists(source):
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
            touched.add(target.parent)
    for folder in touched:
        _sync(folder)


def _sync(folder: Path) -> None:
    """Make renames in folder durable before history.json says they happened."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _clear_git_locks(repo: Path) -> None:
    """Git's own lock files (refs/tags/v3.lock...) left by a git killed with the
    workbench: with the workspace locked no git of ours writes here, and a left
    one would refuse every later tag."""
    if not repo.is_dir():
        return
    for name in ("HEAD.lock", "config.lock", "packed-refs.lock", "index.lock"):
        (repo / name).unlink(missing_ok=True)
    for path in (repo / "refs").rglob("*.lock"):
        path.unlink(missing_ok=True)
