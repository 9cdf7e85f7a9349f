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

An error while applying (a folder that cannot be written, a full disk) is not a
kill: a promotion is rolled back there and then (the files it moved into the
skill folder go back to staging, the ones it moved aside come back) and its
journal removed, so the folder and history.json are as they were. Where even
that fails, the journal is kept, marked with the error (`stopped`), and the
message lists what is from which version and the command that finishes it;
the command that does says it finished a change stopped at an error, not a
killed one.

Every writer goes through writing(): the workspace's lock (workspace/lock.py), then
recovery of whatever a killed writer left."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import signal
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.formats.artifacts import VERSION_NAME
from workbench.formats.paths import inside
from workbench.formats.regular import read_regular
from workbench.formats.save import atomic_write
from workbench.validate.diagnostic import Diagnostic, FileProblems
from workbench.workspace import legacy, lock, safe_git
from workbench.workspace.layout import default_workspace
from workbench.workspace.versions import REPO, VersionStore

FILE = "journal.json"
STAGING = ".promotion"  # in the workspace: promoted files wait here, on the skill folder's file system
ASIDE = ".before"  # beside a promotion's staging folder: the files it replaces or removes, until it is done
# For the kill tests only (tests/test_kills.py): die at this named point, as a crash would there.
_KILL_AT = os.environ.get("WORKBENCH_TEST_KILL_AT", "")
# For the tests of a rollback that fails too (tests/test_promote_errors.py): an I/O error at this point.
_FAIL_AT = os.environ.get("WORKBENCH_TEST_FAIL_AT", "")


def _point(name: str) -> None:
    if _KILL_AT == name:
        os.kill(os.getpid(), signal.SIGKILL)
    if _FAIL_AT == name:
        raise OSError(errno.EIO, "an I/O error (injected by a test)", name)


class ChangeFailed(WorkbenchError):
    """A change stopped at an error: rolled back, or kept to be finished (the message says which)."""


class JournalBroken(FileProblems):
    """journal.json is not a journal this workbench wrote."""


class PromotionBlocked(FileProblems):
    """An interrupted promotion cannot finish without overwriting what changed since, or
    goes into a skill folder this command was not given."""


@contextlib.contextmanager
def writing(
    workspace: Path,
    what: str,
    wait: bool = False,
    say: Callable[[str], None] | None = None,
    skill_dir: Path | None = None,
) -> Iterator[None]:
    """Hold the workspace's lock (WorkspaceBusy when another writer has it, or
    wait for it), and finish what a killed writer left, before writing. skill_dir:
    the skill the command works on (a promotion may be finished into it)."""
    with lock.hold(workspace, what, wait, say):
        done = recover(workspace, skill_dir)
        if done and say is not None:
            say(done)
        yield


def recover_now(workspace: Path, skill_dir: Path | None = None) -> str | None:
    """For a reader about to show the workspace (history, the History screen) or a
    command about to plan a change: finish a killed writer's change now, unless
    a writer is at work (then it is that writer's to finish)."""
    if not (workspace / FILE).exists() and not (workspace / STAGING).exists() and not legacy.pending(workspace):
        return None  # nothing left: no lock taken, nothing written
    try:
        with lock.hold(workspace, "recover"):
            return recover(workspace, skill_dir)
    except lock.WorkspaceBusy:
        return None


def commit(
    workspace: Path,
    writes: dict[str, str] | None = None,
    tags: dict[str, str] | None = None,
    promotion: dict | None = None,
    before: str = "the folder as it was",
) -> None:
    """Make the change at once: tags in versions.git, then the promoted files
    into the skill folder, then each write (a file of the workspace -> its whole
    new text, history.json last). Call it holding writing(). before: what the
    skill folder holds now, for a message (a version, or "the folder as it was").
    Raises ChangeFailed when it stops at an error: rolled back when it can be."""
    writes = dict(writes or {})
    if "history.json" in writes:  # the file that describes the others changes after them
        writes["history.json"] = writes.pop("history.json")
    journal = {"tags": tags or {}, "promotion": promotion, "writes": writes}
    try:
        atomic_write(workspace / FILE, json.dumps(journal, indent=2) + "\n")
    except OSError as exc:
        raise ChangeFailed(f"{_what(journal)} could not begin: {said(exc)}; nothing was changed") from None
    _point("journal-written")
    done = Progress()
    try:
        _apply(workspace, journal, done)
    except Exception as exc:  # noqa: BLE001 - any error midway: rolled back, or said exactly
        raise _stopped(workspace, journal, done, exc, before) from None


def recover(workspace: Path, skill_dir: Path | None = None) -> str | None:
    """Finish a change a killed writer left, and clear what it left half-made,
    then import skill-creator's legacy version folders if they are still to be
    (legacy.py); what was done, said for a person, or None. Call it holding the lock."""
    _clear_git_locks(workspace / REPO)
    done = _finish(workspace, skill_dir)
    adopted = _adopt(workspace)
    return "; ".join(text for text in (done, adopted) if text) or None


def _adopt(workspace: Path) -> str | None:
    """A legacy workspace's versions into versions.git, all tags in one change."""
    tags = legacy.commits(workspace, VersionStore(workspace))
    if not tags:
        return None
    _point("legacy-commits-made")  # commits made, nothing refers to them: a kill here leaves no versions
    commit(workspace, tags=tags)
    return (
        f"imported skill-creator's versions {', '.join(tags)} from {', '.join(f'{v}/{legacy.SKILL}/' for v in tags)} "
        f"into {workspace / REPO}; history.json and the folders are unchanged"
    )


def _finish(workspace: Path, skill_dir: Path | None) -> str | None:
    path = workspace / FILE
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        shutil.rmtree(workspace / STAGING, ignore_errors=True)  # staged for a promotion that never happened
        return None
    try:
        journal = json.loads(raw.decode("utf-8"))
        why = _not_ours(workspace, journal)
    except (ValueError, RecursionError) as exc:
        why = str(exc)[:200] or type(exc).__name__
    if why:
        # Replaying it would write or delete what it names: a journal that is not exactly
        # what this workbench writes (a cloned or edited workspace) is refused, untouched.
        raise JournalBroken(
            path,
            [Diagnostic("error", "", f"not a journal the workbench wrote ({why}); move it away to go on", 1, 1)],
        )
    _check_promotion_target(workspace, journal, skill_dir)
    try:
        _apply(workspace, journal, Progress())
    except (OSError,) + safe_git.errors() as exc:
        raise ChangeFailed(
            f"{_what(journal)} was left to finish ({path}), and finishing it failed too: {said(exc)}; "
            "it stays recorded there: fix that, then run the command again"
        ) from None
    if journal.get("stopped"):
        return f"finished {_what(journal)}, which had stopped half applied at an error ({journal['stopped']})"
    promotion = journal["promotion"]
    what = (
        f"a promotion of {promotion['version']} into {promotion['skill_dir']}"
        if promotion
        else ", ".join(journal["tags"]) or " and ".join(journal["writes"])
    )
    # No error was recorded: the workbench that began it stopped without a word (killed, or its machine went down).
    return f"finished an interrupted change ({what}) that a killed workbench had started"


def _what(journal: dict) -> str:
    promotion = journal.get("promotion")
    if promotion:
        return f"the promotion of {promotion['version']} into {promotion['skill_dir']}"
    return "the change of " + (", ".join(journal["tags"]) or " and ".join(journal["writes"]) or "nothing")


def said(exc: BaseException) -> str:
    """An error as a person reads it: the path(s) it concerns and what the system said."""
    if isinstance(exc, OSError):
        where = " -> ".join(str(name) for name in (exc.filename, exc.filename2) if name)
        return f"{where}: {exc.strerror or exc}" if where else str(exc.strerror or exc)
    if isinstance(exc, safe_git.errors()):
        return f"git failed: {' '.join(str(exc.stderr or exc).split())[:300]}"
    return f"{type(exc).__name__}: {exc}"


# The only files a journal writes in the workspace.
WRITABLE = ("evaluations.json", "history.json")


def _not_ours(workspace: Path, journal: object) -> str | None:
    """What makes a parsed journal one this workbench did not write, or None. Every
    path in it is checked before anything is done: the files it writes are the
    workspace's own, a promotion goes into the skill whose workspace this is, from
    staging inside the workspace (or beside that skill), by relative names inside it."""
    if not isinstance(journal, dict) or set(journal) - {"stopped"} != {"tags", "promotion", "writes"}:
        return "expected exactly tags, promotion and writes (and what stopped it)"
    if not isinstance(journal.get("stopped", ""), str):
        return "stopped: expected the error that stopped the change"
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
    keys = {"version", "skill_dir", "staging", "place", "remove", "before"}
    if not isinstance(promotion, dict) or set(promotion) != keys:
        return "promotion: expected version, skill_dir, staging, place, remove and before"
    skill_dir, staging = promotion["skill_dir"], promotion["staging"]
    if not (
        isinstance(skill_dir, str) and isinstance(staging, str) and VERSION_NAME.fullmatch(str(promotion["version"]))
    ):
        return "promotion: expected a version and two folders"
    if not Path(skill_dir).is_absolute():
        return f"promotion into {skill_dir}, which is not an absolute path"
    skill = Path(skill_dir)
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
    before = promotion["before"]
    if (
        not isinstance(before, dict)
        or set(before) != set(promotion["place"]) | set(promotion["remove"])
        or not all(f is None or (isinstance(f, str) and _FINGERPRINT.fullmatch(f)) for f in before.values())
    ):
        return "promotion: before expected the fingerprints of the files it places or removes"
    for key, base in (("place", skill), ("place", Path(staging)), ("remove", skill)):
        for name in promotion[key]:
            if _through_a_link(base, name):
                return f"promotion: {key} names {name}, which goes through a link out of {base}"
    return None


def _through_a_link(root: Path | str, name: str) -> bool:
    """A name whose folders include a link: text inside the folder, a place outside it."""
    real = os.path.realpath(root)
    return not inside(os.path.realpath(os.path.dirname(os.path.join(root, name))), real)


_FINGERPRINT = re.compile(r"sha256:[0-9a-f]{64}|link:.{1,4096}|folder|other", re.DOTALL)


def fingerprint(path: Path) -> str | None:
    """What stands at path, to tell later whether someone changed it: a file's content
    hash, a link's target, a folder, or None for nothing."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return f"link:{os.readlink(path)}"
    if stat.S_ISDIR(mode):
        return "folder"
    if not stat.S_ISREG(mode):
        return "other"  # a FIFO or a device: never opened (it would block)
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def _check_promotion_target(workspace: Path, journal: dict, skill_dir: Path | None) -> None:
    """A promotion is finished only into the skill it was for: the skill of this
    workspace by its default place, or the skill the command was given (a custom
    --workspace). Anything else waits, said, until a command on that skill runs."""
    promotion = journal.get("promotion")
    if not promotion:
        return
    skill = Path(promotion["skill_dir"])
    if default_workspace(skill) == workspace.resolve():
        return
    if skill_dir is not None and skill.resolve() == Path(skill_dir).resolve():
        return
    raise PromotionBlocked(
        workspace / FILE,
        [
            Diagnostic(
                "error",
                "",
                f"an interrupted promotion of {promotion['version']} into {skill} waits here; only a command "
                "on that skill with this workspace (history, promote, run, version new) finishes it. If you "
                f"did not promote into {skill}, move this file away",
                1,
                1,
            )
        ],
    )


_OBJECT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _relative_inside(name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts and parts[0] not in (".git", "evals")


def _apply(workspace: Path, journal: dict, done: Progress) -> None:
    store = VersionStore(workspace)
    tags = list(journal.get("tags", {}).items())
    for index, (version, commit_id) in enumerate(tags):
        if index and index == len(tags) // 2:
            _point("half-tagged")
        store.tag(version, commit_id)
    promotion = journal.get("promotion")
    if promotion:
        skill_dir, staging = Path(promotion["skill_dir"]), Path(promotion["staging"])
        changed = changed_since(skill_dir, staging, promotion["place"], promotion["remove"], promotion.get("before"))
        if changed:
            raise PromotionBlocked(
                workspace / FILE,
                [
                    Diagnostic(
                        "error",
                        "",
                        f"the promotion of {promotion['version']} into {skill_dir} was interrupted, and since then "
                        f"{', '.join(changed[:8])}{' …' if len(changed) > 8 else ''} changed there: finishing it "
                        "would overwrite that. Move it out of the folder (it is yours), then run the command again to "
                        "finish the promotion; or move this file away to leave the folder as it is (partly "
                        "promoted; the best stays what it was)",
                        1,
                        1,
                    )
                ],
            )
        swap(skill_dir, staging, promotion["place"], promotion["remove"], done.steps)
    for name, text in journal["writes"].items():
        _point(f"before-{name}")
        atomic_write(workspace / name, text)
        done.written += 1  # history.json (last) may say the change happened: past undoing
    (workspace / FILE).unlink()
    if promotion:
        _clear_staging(Path(promotion["staging"]))


def _clear_staging(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(aside_of(staging), ignore_errors=True)


def changed_since(
    skill_dir: Path, staging: Path, place: list[str], remove: list[str], before: dict | None
) -> list[str]:
    """The files a promotion has still to replace or remove that are no longer what
    promote saw (someone edited them after a kill): finishing would lose that."""
    if before is None:
        return []  # a journal from before fingerprints were kept
    pending = set(remove) | {n for n in place if os.path.lexists(staging / n)}  # placed ones are done
    # Only what stands there and differs: a file moved out of the way is no loss.
    return sorted(n for n in pending if os.path.lexists(skill_dir / n) and fingerprint(skill_dir / n) != before.get(n))


class Progress:
    """What applying a journal has done so far, in order, so that it can be undone."""

    def __init__(self) -> None:
        # ("aside", name) ("pruned", folder, mode) ("made", folder) ("placed", name), in the order done
        self.steps: list[tuple] = []
        self.written = 0  # the workspace's files written (each atomically): once one is, no rollback


def aside_of(staging: Path) -> Path:
    """Where a promotion keeps the files it replaces or removes until it is done (a rollback takes them
    back): beside its staging folder, on the same file system."""
    return staging.with_name(staging.name + ASIDE)


def swap(skill_dir: Path, staging: Path, place: list[str], remove: list[str], steps: list[tuple] | None = None) -> None:
    """Move the files the version removes aside and remove the folders that leaves empty, then
    one file at a time move the file it replaces aside and rename the staged file or link into
    place. Each step is a rename on one file system (or a folder made or removed), recorded in
    steps so that it can be undone (roll_back); doing them again after a kill finishes them (what
    is done is skipped). Nothing is deleted until the change is done: what goes waits aside."""
    steps = [] if steps is None else steps
    touched = set()
    for name in remove:
        touched.add(_put_aside(skill_dir, staging, name, steps))
    for name in sorted(remove, key=lambda n: -n.count("/")):  # folders left empty go, deepest first
        parent = (skill_dir / name).parent
        while parent != skill_dir and skill_dir in parent.parents:
            try:
                mode = os.lstat(parent).st_mode
                parent.rmdir()
            except OSError:
                break  # not empty (or already gone): stop climbing
            steps.append(("pruned", parent, stat.S_IMODE(mode)))
            parent = parent.parent
    for index, name in enumerate(place):
        if index == len(place) // 2:
            _point("half-swapped")
        source, target = staging / name, skill_dir / name
        if os.path.lexists(source):  # (still staged: not placed yet, so what stands there is the old one)
            _put_aside(skill_dir, staging, name, steps)
            _made_folders(target.parent, skill_dir, steps)
            os.replace(source, target)
            steps.append(("placed", name))
            touched.add(target.parent)
    for folder in touched:
        _sync(folder)


def _put_aside(skill_dir: Path, staging: Path, name: str, steps: list[tuple]) -> Path:
    """The file or link at name, moved aside (never a folder: promote refused those); its folder."""
    target = skill_dir / name
    if target.is_symlink() or target.is_file():
        kept = aside_of(staging) / name
        kept.parent.mkdir(parents=True, exist_ok=True)
        os.replace(target, kept)
        steps.append(("aside", name))
    return target.parent


def _made_folders(folder: Path, skill_dir: Path, steps: list[tuple]) -> None:
    """folder and its missing parents inside skill_dir, each made recorded (a rollback removes it)."""
    missing = []
    while folder != skill_dir and not os.path.lexists(folder):
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
        steps.append(("made", path))


def roll_back(skill_dir: Path, staging: Path, steps: list[tuple]) -> None:
    """Undo what swap did, last step first: placed files go back to staging, folders it made go,
    folders it removed come back with their modes, files it moved aside come back. Each undone
    step leaves steps; an error stops it there (what is left in steps is what is still done)."""
    aside = aside_of(staging)
    while steps:
        step = steps[-1]
        _point("rolling-back")
        if step[0] == "placed":
            (staging / step[1]).parent.mkdir(parents=True, exist_ok=True)
            os.replace(skill_dir / step[1], staging / step[1])
        elif step[0] == "made":
            os.rmdir(step[1])
        elif step[0] == "pruned":
            os.mkdir(step[1])
            os.chmod(step[1], step[2])
        else:
            os.replace(aside / step[1], skill_dir / step[1])
        steps.pop()


def _stopped(workspace: Path, journal: dict, done: Progress, exc: Exception, before: str) -> ChangeFailed:
    """The error a change stopped at, once what can be done about it is done: a promotion not yet
    written into history.json is rolled back and its journal removed; anything else (or a rollback
    that fails too) keeps its journal, marked with the error, for the next command to finish."""
    error = said(exc)
    path = workspace / FILE
    promotion = journal.get("promotion")
    if done.written == len(journal["writes"]) and (workspace / FILE).exists() and done.written:
        return ChangeFailed(  # every file written: only the journal's removal failed
            f"{_what(journal)} is done, but {path} could not be removed ({error}); the next command on this "
            "workspace removes it"
        )
    if promotion and not done.written:
        skill_dir, staging = Path(promotion["skill_dir"]), Path(promotion["staging"])
        try:
            roll_back(skill_dir, staging, done.steps)
        except OSError as again:
            error += f"; then putting the folder back failed too: {said(again)}"
        else:
            try:
                path.unlink()
            except OSError as again:
                return ChangeFailed(
                    f"writing {promotion['version']} into {skill_dir} failed: {error}. The folder was put back as "
                    f"it was ({before}), but {path} could not be removed ({said(again)}): the next command on this "
                    f"skill would promote {promotion['version']} after all; remove that file to keep the folder "
                    "as it is"
                )
            _clear_staging(staging)
            return ChangeFailed(
                f"writing {promotion['version']} into {skill_dir} failed: {error}. The folder was put back as it "
                f"was ({before}), byte for byte, and nothing was promoted: history.json is unchanged"
            )
    try:
        atomic_write(path, json.dumps({**journal, "stopped": error}, indent=2) + "\n")
    except OSError:
        pass  # the journal stays as it was: the next command finishes it all the same
    if not promotion:
        return ChangeFailed(
            f"{_what(journal)} stopped at an error: {error}. It is recorded in {path}, and the next command on "
            "this workspace finishes it"
        )
    return ChangeFailed(_half_applied(workspace, promotion, done.steps, error, before))


def _half_applied(workspace: Path, promotion: dict, steps: list[tuple], error: str, before: str) -> str:
    """What a promotion that stopped midway left in the folder, file by file, and the one command that
    finishes it."""
    version, skill_dir = promotion["version"], Path(promotion["skill_dir"])
    placed = {s[1] for s in steps if s[0] == "placed"}
    moved = {s[1] for s in steps if s[0] == "aside"}
    new = sorted(placed | (moved & set(promotion["remove"])))  # a file the version removes, gone: as in it
    missing = sorted(moved - placed - set(promotion["remove"]))
    old = sorted((set(promotion["place"]) | set(promotion["remove"])) - set(new) - set(missing))
    command = f"workbench history {skill_dir}"
    if default_workspace(skill_dir) != workspace.resolve():
        command += f" --workspace {workspace}"
    lines = [
        f"writing {version} into {skill_dir} failed: {error}. The promotion is half applied, and history.json "
        "still names the best it had:",
        f"  from {version}: {_listed(new)}",
        f"  from {before}: {_listed(old)}",
    ]
    if missing:
        lines.append(f"  missing (kept in {aside_of(Path(promotion['staging']))}): {_listed(missing)}")
    lines.append(f"Once the cause is fixed, `{command}` finishes the promotion of {version}.")
    return "\n".join(lines)


def _listed(names: list[str]) -> str:
    return ", ".join(names[:20]) + (f" … ({len(names) - 20} more)" if len(names) > 20 else "") or "none"


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
