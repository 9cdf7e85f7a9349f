"""The git repository around a skill folder, read as data. It may be the user's own, or one that came
with a skill from a stranger (a clone, a tarball): any of its files may be a named pipe (a read waits for
ever), a device (/dev/zero never ends) or huge. `promote --write` asks it which files are committed, and
must neither obey it nor wait on it.

So git never opens that repository's own folder. What promote needs of it is read here, by bounded
reads of regular files only (formats/regular.py): the .git file or folder, commondir, HEAD and the ref it
names (or packed-refs), the index, info/exclude and objects/info/alternates. What git would open on its
own, were it pointed there, is checked to be a folder or a regular file of a bounded size first: the
config and every file it includes, each entry of the object store and of its alternates (through any
link, as git follows it), the .gitignore files git reads on its way to and inside the skill folder, and
each nested repository's HEAD and commondir (git reads them to tell a nested repository from a folder).
A file that fails is named, and promote refuses. What git prints is read as it comes and bounded
(promote.py): a tree that names its subtrees many times cannot make it grow.

Git then runs on a git folder of the workbench's own (`shadow`): its own config, HEAD as the commit
resolved here, a copy of the index and of info/exclude, and the repository's objects as an alternate:
the repository's config (includes, excludesFile, fsmonitor, hooks), its shallow and graft files, its
attributes and its commit-graph are never read. The pins of workspace/safe_git.py apply, and a timeout is
the last guard."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from workbench.formats import regular

SMALL = 1 << 20  # HEAD, a ref, a .git file, commondir, alternates, a config and what it includes
TEXT = 16 << 20  # packed-refs, info/exclude, a .gitignore
INDEX = 256 << 20
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_INCLUDE = re.compile(r"^\s*path\s*=\s*(.*?)\s*$", re.IGNORECASE)


class Unreadable(Exception):
    """A file of the repository that promote will not read or let git read; the message names it."""


@dataclass(frozen=True)
class Repository:
    git_dir: Path  # the .git folder (a linked worktree's own folder for a worktree)
    common: Path  # where its objects, refs and config are (the same folder but for a linked worktree)
    work_tree: Path


def find(skill_dir: Path) -> Repository | None:
    """The repository whose work tree holds skill_dir (as git would find it, from skill_dir up), or None."""
    folder = skill_dir.resolve()
    for place in (folder, *folder.parents):
        dot = place / ".git"
        try:
            info = os.stat(dot)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise Unreadable(f"{dot} cannot be read: {exc.strerror or exc}") from None
        if stat.S_ISREG(info.st_mode):
            git_dir = _gitdir_of(dot)
        elif stat.S_ISDIR(info.st_mode):
            git_dir = dot
        else:
            raise Unreadable(f"{dot} is {regular.kind(info.st_mode)}, not a folder or a file naming one")
        common = git_dir
        if os.path.lexists(git_dir / "commondir"):
            common = (git_dir / _read(git_dir / "commondir", SMALL).strip()).resolve()
        return Repository(git_dir, common, place)
    return None


def head_commit(repo: Repository) -> str | None:
    """The commit HEAD names, resolved here; None before the first commit."""
    if os.path.lexists(repo.common / "reftable"):
        raise Unreadable(f"{repo.common} keeps its refs in git's reftable format, which promote does not read")
    text, seen = _read(repo.git_dir / "HEAD", SMALL).strip(), 0
    while text.startswith("ref:") and seen < 5:
        name, seen = text[4:].strip(), seen + 1
        parts = name.split("/")
        if parts[0] != "refs" or any(p in ("", ".", "..") for p in parts):
            raise Unreadable(f"{repo.git_dir / 'HEAD'} names {name!r}, which is not a ref")
        per_worktree = parts[1] in ("bisect", "worktree", "rewritten")
        loose = (repo.git_dir if per_worktree else repo.common).joinpath(*parts)
        if os.path.lexists(loose):
            text = _read(loose, SMALL).strip()
            continue
        return _packed(repo.common / "packed-refs", name)
    if _OBJECT_ID.fullmatch(text):
        return text
    raise Unreadable(f"{repo.git_dir / 'HEAD'} names no commit")


def survey(repo: Repository, skill_dir: Path) -> None:
    """Every file git would open, were it pointed at this repository and the skill folder, is a folder
    or a regular file of a bounded size; raises Unreadable naming the first that is not."""
    for config in (repo.common / "config", repo.git_dir / "config.worktree"):
        if os.path.lexists(config):
            _config(config, 0)
    _objects(repo.common / "objects", 0)
    folder = skill_dir.resolve()
    for place in (folder, *folder.parents):  # git reads the .gitignore of each folder on its way
        _bounded(place / ".gitignore", TEXT, missing_ok=True)
        if place == repo.work_tree:
            break
    _inside(folder)


def shadow(repo: Repository, into: Path) -> Path:
    """A git folder of the workbench's own at into, for the repository's index and objects: git run on
    it (with the work tree named) reads nothing else of the repository."""
    commit = head_commit(repo)
    into.mkdir(mode=0o700)
    (into / "refs").mkdir()
    (into / "info").mkdir()
    (into / "objects" / "info").mkdir(parents=True)
    wide = commit is not None and len(commit) == 64
    config = "[core]\n\trepositoryformatversion = {}\n\tbare = false\n\tcommitGraph = false\n"
    config += "\tmultiPackIndex = false\n\tsparseCheckout = false\n"
    config = config.format(1 if wide else 0) + ("[extensions]\n\tobjectformat = sha256\n" if wide else "")
    (into / "config").write_text(config)
    (into / "HEAD").write_text(f"{commit}\n" if commit else "ref: refs/heads/none-yet\n")
    (into / "objects" / "info" / "alternates").write_text(f"{(repo.common / 'objects').resolve()}\n")
    if os.path.lexists(repo.git_dir / "index"):
        (into / "index").write_bytes(_bytes(repo.git_dir / "index", INDEX))
    exclude = repo.common / "info" / "exclude"
    if os.path.lexists(exclude):
        (into / "info" / "exclude").write_bytes(_bytes(exclude, TEXT))
    return into


# ------------------------------------------------------------------ how


def _read(path: Path, limit: int) -> str:
    return _bytes(path, limit).decode("utf-8", "replace")


def _bytes(path: Path, limit: int) -> bytes:
    try:
        return regular.read_regular(path, limit)
    except OSError as exc:
        raise Unreadable(f"{path} cannot be read: {exc.strerror or exc}") from None


def _bounded(path: Path, limit: int, missing_ok: bool = False) -> None:
    """path (followed, as git follows it) is a regular file of at most limit bytes."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if missing_ok:
            return
        raise Unreadable(f"{path} is missing") from None
    except OSError as exc:
        raise Unreadable(f"{path} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable(f"{path} is {regular.kind(info.st_mode)}, not a regular file")
    if info.st_size > limit:
        raise Unreadable(f"{path} is too big to read: over {limit >> 20} MB")


def _gitdir_of(dot: Path) -> Path:
    text = _read(dot, SMALL).strip()
    if not text.startswith("gitdir:"):
        raise Unreadable(f"{dot} is a file that names no git folder (expected 'gitdir: PATH')")
    return (dot.parent / text[len("gitdir:") :].strip()).resolve()


def _packed(path: Path, name: str) -> str | None:
    if not os.path.lexists(path):
        return None
    for line in _read(path, TEXT).splitlines():
        oid, _, ref = line.partition(" ")
        if ref == name and _OBJECT_ID.fullmatch(oid):
            return oid
    return None


def _config(path: Path, depth: int) -> None:
    """A config file and what it includes (includeIf too, whatever its condition), as git would read them."""
    if depth > 10:
        raise Unreadable(f"{path} is included more than 10 levels deep")
    section = ""
    for line in _read(path, SMALL).splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped[1:].split("]")[0].split()[0].lower() if stripped[1:].split() else ""
            continue
        found = _INCLUDE.match(stripped) if section in ("include", "includeif") else None
        if found:
            value = found.group(1).strip('"')
            target = Path(os.path.expanduser(value)) if value.startswith("~") else path.parent / value
            if os.path.lexists(target):
                try:
                    _bounded(target, SMALL)
                except Unreadable as exc:
                    raise Unreadable(f"{exc} (included from {path})") from None
                _config(target, depth + 1)


def _objects(folder: Path, depth: int) -> None:
    """Each entry of an object store is a folder or a regular file, its links followed as git follows
    them; its alternates likewise."""
    if depth > 5 or not os.path.isdir(folder):
        return
    _store(folder, 0, set())
    alternates = folder / "info" / "alternates"
    if os.path.lexists(alternates):
        for line in _read(alternates, SMALL).splitlines():
            if line.strip() and not line.startswith("#"):
                _objects((folder / line.strip()).resolve(), depth + 1)


def _store(folder: Path, level: int, seen: set[tuple[int, int]]) -> None:
    """git opens a store's files two folders down at most (objects/<xx>/<rest>, pack/<file>,
    info/commit-graphs/<file>), following any link on the way: so is each entry checked here."""
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        raise Unreadable(f"{folder} cannot be read: {exc.strerror or exc}") from None
    for name in names:
        path = folder / name
        try:
            info = os.stat(path)  # followed, as git follows it
        except FileNotFoundError:
            continue  # a link to nothing: git finds no object there either
        except OSError as exc:
            raise Unreadable(f"{path} cannot be read: {exc.strerror or exc}") from None
        if stat.S_ISDIR(info.st_mode):
            if level < 2 and (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                _store(path, level + 1, seen)
        elif not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"{path} is {regular.kind(info.st_mode)}, not a regular file")


def _inside(folder: Path) -> None:
    """The .gitignore files inside the skill folder, and each nested repository's .git and HEAD."""
    for root, folders, files in os.walk(folder):
        here = Path(root)
        if ".gitignore" in files or ".gitignore" in folders:
            _bounded(here / ".gitignore", TEXT)
        if ".git" in files or ".git" in folders:
            if here != folder:
                _nested(here / ".git")
            folders[:] = [f for f in folders if f != ".git"]


def _nested(dot: Path) -> None:
    """A nested repository's .git (a folder, or a file naming one), as git reads it to tell a repository
    from a folder: its HEAD, then its commondir (git only asks whether the folders that one names exist)."""
    if os.path.isdir(dot):
        git_dir = dot
    elif os.path.lexists(dot):
        _bounded(dot, SMALL)
        git_dir = _gitdir_of(dot)
    else:
        return
    for name in ("HEAD", "commondir"):
        _bounded(git_dir / name, SMALL, missing_ok=True)
