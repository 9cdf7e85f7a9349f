"""Files as bytes, for what a cluster's worker is sent and sends back: a file or
folder packed as {relative path: (kind, mode, bytes or link target)}, and written
back with every path checked (formats/paths.py) and links written last, never
followed."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from workbench.formats import paths

FILE, LINK, FOLDER = "file", "link", "folder"
Entry = tuple[str, int, bytes | str]  # (kind, mode, bytes of a file | target of a link | "" for a folder)
Tree = dict[str, Entry]  # relative path -> entry


def pack(path: Path) -> Tree:
    """A file or folder as bytes, relative to itself (a file is the one entry "."). Links stay links."""
    if path.is_symlink():
        return {".": (LINK, 0, os.readlink(path))}
    if not path.is_dir():
        return {".": (FILE, stat.S_IMODE(path.stat().st_mode), path.read_bytes())}
    tree: Tree = {}
    for parent, dirs, files in os.walk(path):
        dirs.sort()
        for name in [*dirs, *sorted(files)]:
            full = Path(parent, name)
            relative = full.relative_to(path).as_posix()
            if full.is_symlink():
                tree[relative] = (LINK, 0, os.readlink(full))
            elif full.is_dir():
                tree[relative] = (FOLDER, stat.S_IMODE(full.stat().st_mode), "")
            elif full.is_file():  # a FIFO or device is never read: it would block
                tree[relative] = (FILE, stat.S_IMODE(full.stat().st_mode), full.read_bytes())
    return tree


def unpack(tree: Tree, root: Path, *, data: bool = True) -> None:
    """Write a tree under root. No name becomes a path unchecked: data (fixtures, the skill) follows
    formats/paths.py's rule; a returned run folder may hold its repository's .git, never climb out.
    Links are written last, so nothing is ever written through one."""
    if tree.get(".", (FOLDER,))[0] == FOLDER:  # else a single file or link is written at root itself
        root.mkdir(parents=True, exist_ok=True)
    links = {relative for relative, (kind, *_rest) in tree.items() if kind == LINK}
    if "." in links:
        raise ValueError("a shipped tree's root cannot be a link")
    for relative in tree:
        parts = relative.split("/")
        under = next(("/".join(parts[:n]) for n in range(1, len(parts)) if "/".join(parts[:n]) in links), None)
        if under is not None:
            # Written through the link, it would land wherever the link leads.
            raise ValueError(f"a shipped path cannot be written: {relative!r} lies under the link {under!r}")
    order = sorted(tree.items(), key=lambda item: (item[1][0] == LINK, item[0].count("/"), item[0]))
    for relative, (kind, mode, content) in order:
        target = _place(root, relative, data)
        if kind == FOLDER:
            target.mkdir(parents=True, exist_ok=True)
            os.chmod(target, (mode & 0o777) | 0o700)
        elif kind == FILE and isinstance(content, bytes):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            os.chmod(target, mode & 0o777)
        elif kind == LINK and isinstance(content, str):
            if data and not _stays_inside(root, target, content):
                raise ValueError(f"{relative}: a link that leads outside its folder ({content}); links out are refused")
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(content, target)
        else:
            raise ValueError(f"{relative}: not a file, folder or link ({kind!r})")


def _place(root: Path, relative: str, data: bool) -> Path:
    if relative == ".":
        return root
    if data:
        problem = paths.relative_problem(relative, "path")
    elif not relative or os.path.isabs(relative) or ".." in relative.split("/"):
        problem = f"{relative!r} is not a path inside the run folder"
    else:
        problem = None  # a run folder holds its repository's .git: it is ours, made on the worker
    target = Path(os.path.normpath(root / relative))
    if problem is None and not paths.inside(str(target), str(root)):
        problem = f"{relative!r} leads outside its folder"
    if problem:
        raise ValueError(f"a shipped path cannot be written: {problem}")
    return target


def _stays_inside(root: Path, link: Path, content: str) -> bool:
    return not os.path.isabs(content) and paths.inside(os.path.normpath(link.parent / content), str(root))


def without_git(tree: Tree) -> Tree:
    return {relative: entry for relative, entry in tree.items() if not any(map(paths.is_git_name, relative.split("/")))}


def place_run(tree: Tree, folder: Path) -> None:
    """The returned run folder, written beside its place then renamed into it: no half of it is ever
    where a run is read. run.json comes after, from the Runner."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        unpack(tree, aside, data=False)
        if folder.exists():
            shutil.rmtree(folder)
        os.rename(aside, folder)
    finally:
        shutil.rmtree(aside, ignore_errors=True)
