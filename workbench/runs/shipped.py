"""Files as bytes, for what a cluster's worker is sent and sends back: a file or
folder packed as {relative path: (kind, mode, bytes or link target)}, and written
back as data. Packing reads without following a link (runs/agent_files.py); writing
back checks every path (formats/paths.py), writes links last and never through one,
and refuses a link whose target leads out of the folder it is written into, on
paper or through the other links of the tree."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from workbench.formats import paths
from workbench.runs import agent_files

FILE, LINK, FOLDER = "file", "link", "folder"
Entry = tuple[str, int, bytes | str]  # (kind, mode, bytes of a file | target of a link | "" for a folder)
Tree = dict[str, Entry]  # relative path -> entry
LIMIT = 2 * 1024 * 1024 * 1024  # bytes of files in one packed tree: it is held in memory, twice, to be sent


def pack(path: Path, limit: int | None = None) -> Tree:
    """A file or folder as bytes, relative to itself (a file is the one entry "."). Links stay links;
    a FIFO, a device or a socket is left out (never opened: it could block or never end). TooBig (an
    OSError) past limit bytes of files (default LIMIT)."""
    limit = LIMIT if limit is None else limit
    if path.is_symlink():
        return {".": (LINK, 0, os.readlink(path))}
    if not path.is_dir():
        return {".": (FILE, stat.S_IMODE(path.stat().st_mode), agent_files.read(path.parent, path.name, limit))}
    tree: Tree = {}
    for entry, data in agent_files.contents(path, limit):
        if entry.kind == agent_files.FOLDER:
            tree[entry.path] = (FOLDER, stat.S_IMODE(entry.mode), "")
        elif entry.kind == agent_files.LINK:
            tree[entry.path] = (LINK, 0, entry.target)
        elif entry.kind == agent_files.FILE:
            tree[entry.path] = (FILE, stat.S_IMODE(entry.mode), data)
    return tree


def unpack(tree: Tree, root: Path, *, data: bool = True) -> None:
    """Write a tree under root. No name becomes a path unchecked: data (fixtures, the skill) follows
    formats/paths.py's rule; a returned run folder may hold its repository's .git, never climb out.
    Links are written last, so nothing is ever written through one, and none may lead out of root.
    ValueError says what was refused (root may then hold part of the tree: the caller discards it)."""
    what = "its folder" if data else "the run folder"
    links = {relative for relative, entry in tree.items() if _kind(relative, entry) == LINK}
    if tree.get(".", (FOLDER,))[0] == FOLDER:  # else a single file or link is written at root itself
        root.mkdir(parents=True, exist_ok=True)
    if "." in links:
        raise ValueError("a shipped tree's root cannot be a link")
    for relative in tree:
        parts = relative.split("/")
        under = next(("/".join(parts[:n]) for n in range(1, len(parts)) if "/".join(parts[:n]) in links), None)
        if under is not None:
            # Written through the link, it would land wherever the link leads.
            raise ValueError(f"a shipped path cannot be written: {relative!r} lies under the link {under!r}")
    order = sorted(tree.items(), key=lambda item: (item[1][0] == LINK, item[0].count("/"), item[0]))
    # A returned run folder is written on the submitting machine for every dispatch: one call naming a
    # path per entry (each folder made once, a file's mode set on its descriptor), not pathlib's several.
    base = os.path.normpath(root)
    made = {base}
    for relative, (kind, mode, content) in order:
        target = _place(base, relative, data)
        if kind == FOLDER:
            if target not in made:
                _make_folder(target, made)
            os.chmod(target, (mode & 0o777) | 0o700)
        elif kind == FILE and isinstance(content, bytes):
            _make_folder(os.path.dirname(target), made)
            # Never through a link (none is written yet; O_NOFOLLOW says so to the kernel too).
            handle = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                os.fchmod(handle, mode & 0o777)
                view = memoryview(content)
                while view:
                    view = view[os.write(handle, view) :]
            finally:
                os.close(handle)
        elif kind == LINK and isinstance(content, str):
            if _climbs_out(relative, content):
                raise ValueError(f"{relative}: a link that leads outside {what} ({content}): refused")
            _make_folder(os.path.dirname(target), made)
            os.symlink(content, target)
        else:
            raise ValueError(f"{relative}: not a file, folder or link ({kind!r}): refused")
    # On paper each link stays inside; through the others (one leading up to the root from deep down,
    # the next climbing from it) it may not. Resolved now that all are written, before anyone reads them.
    real_root = os.path.realpath(root)
    for relative in sorted(links):
        real = os.path.realpath(root / relative)
        if not paths.inside(real, real_root):
            content = tree[relative][2]
            raise ValueError(f"{relative}: a link that leads outside {what} ({content!s}, through its links): refused")


def _kind(relative: str, entry: object) -> str:
    """An entry's kind, once it is known to be (kind, mode, content) as a worker must send it."""
    if not (
        isinstance(relative, str)
        and isinstance(entry, tuple | list)
        and len(entry) == 3
        and isinstance(entry[0], str)
        and isinstance(entry[1], int)
        and isinstance(entry[2], bytes | str)
    ):
        raise ValueError(f"{relative!r}: not an entry of a shipped tree (kind, mode, content): refused")
    return entry[0]


def _climbs_out(relative: str, content: str) -> bool:
    """Whether a link's text, read from the link's folder, is absolute or goes above the root at any step."""
    if not content or os.path.isabs(content) or "\0" in content:
        return True
    depth = relative.count("/")  # folders between the root and the link
    for part in content.split("/"):
        if part == "..":
            depth -= 1
        elif part not in ("", "."):
            depth += 1
        if depth < 0:
            return True
    return False


def _place(root: str, relative: str, data: bool) -> str:
    """Where relative is written under root (normalised): ValueError when it is not a path inside it."""
    if relative == ".":
        return root
    if data:
        problem = paths.relative_problem(relative, "path")
    elif any(part in ("", ".", "..") for part in relative.split("/")) or "\0" in relative:
        problem = f"{relative!r} is not a path inside the run folder"
    else:
        problem = None  # a run folder holds its repository's .git: it is ours, made on the worker
    target = os.path.normpath(os.path.join(root, relative))
    if problem is None and not paths.inside(target, root):
        problem = f"{relative!r} leads outside its folder"
    if problem:
        raise ValueError(f"a shipped path cannot be written: {problem}")
    return target


def _make_folder(folder: str, made: set[str]) -> None:
    """folder and those above it that this unpack has not made yet (an entry's parents may be missing from
    a tree that was sent: they are made as before)."""
    if folder in made:
        return
    os.makedirs(folder, exist_ok=True)
    while folder not in made and folder != os.path.dirname(folder):
        made.add(folder)
        folder = os.path.dirname(folder)


def without_git(tree: Tree) -> Tree:
    return {relative: entry for relative, entry in tree.items() if not any(map(paths.is_git_name, relative.split("/")))}


def place_run(tree: Tree, folder: Path) -> None:
    """The returned run folder, written beside its place then renamed into it: no half of it is ever
    where a run is read, and a refused one (ValueError, OSError) leaves nothing. run.json comes after,
    from the Runner."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        unpack(tree, aside, data=False)
        if folder.exists():
            shutil.rmtree(folder)
        os.rename(aside, folder)
    finally:
        shutil.rmtree(aside, ignore_errors=True)
