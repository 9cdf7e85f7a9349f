"""Reading a tree the workbench did not write (an agent's workspace, a skill
folder, a tree returned by a cluster worker) as data, never as a repository.

Git obeys what it finds in a tree: `.gitattributes` (filters, line-ending and
encoding conversions, export rules), a nested repository's `.git/config` (its
filters, fsmonitor, hooks) when it descends into a gitlink, the repository's own
`info/exclude`. So no git process ever reads such a tree. Instead the files are
read here, byte for byte, with links read as links (never followed), a `.git`
below the root recorded as a nested repository (its folder is left out, never
opened), and anything that is not a file, folder or link (a FIFO, a socket, a
device) left unread. The blobs and trees go into an object folder the workbench
alone writes, where git diffs them: git then reads only objects.

Ignore rules are data too: they come from the `.gitignore` files the caller
trusts (for an agent's workspace, those of its baseline; for a skill folder, its
own), matched by pathspec's implementation of git's rules; a file that was in the
baseline is never ignored, as git never ignores a tracked file."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pathspec

from workbench.formats.paths import is_git_name
from workbench.workspace.git_objects import BIG, EXECUTABLE, FILE, LINK, Entry, Objects, blob_id, blob_id_of

IGNORE_FILE = ".gitignore"
IGNORE_LIMIT = 1024 * 1024  # bytes of one .gitignore read; a bigger one is data, not rules


@dataclass
class Read:
    """A tree as read: its files, and what was found in it but not read."""

    entries: dict[str, Entry] = field(default_factory=dict)
    nested: list[str] = field(default_factory=list)  # folders holding a repository of their own ("sub/")
    unread: list[str] = field(default_factory=list)  # "name (a FIFO)": neither file, folder nor link

    def notes(self) -> list[str]:
        """What the evidence says about them, in words."""
        said = [f"a nested repository at {name}: read as plain files, its .git left out" for name in self.nested]
        return said + [f"{name}: not read" for name in self.unread]


class Ignore:
    """git's ignore rules from `.gitignore` texts by folder ("" for the root), matched as git matches them:
    the deepest folder's last matching line decides, and an ignored folder is not entered."""

    def __init__(self, texts: Mapping[str, str] | None = None) -> None:
        self._specs: dict[str, pathspec.GitIgnoreSpec] = {}
        for folder, text in (texts or {}).items():
            self.add(folder, text)

    def add(self, folder: str, text: str) -> None:
        lines = text.splitlines()
        if any(line.strip() and not line.startswith("#") for line in lines):
            self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines)

    def __bool__(self) -> bool:
        return bool(self._specs)

    def ignored(self, path: str, is_folder: bool) -> bool:
        decided = False
        parts = path.split("/")
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            spec = self._specs.get(folder)
            if spec is None:
                continue
            relative = "/".join(parts[depth:]) + ("/" if is_folder else "")
            include = spec.check_file(relative).include
            if include is not None:
                decided = include
        return decided


def read(
    root: Path,
    objects: Objects | None = None,
    *,
    leave_out: Callable[[str], bool] = lambda path: False,
    ignore: Ignore | None = None,
    tracked: Mapping[str, Entry] | None = None,
    own_ignore_files: bool = False,
) -> Read:
    """Every file under root as git would record it, read as data (see the module's docstring). objects:
    where each blob is stored (None: ids only). leave_out(path): paths not read at all. ignore: rules for
    files not in `tracked`. own_ignore_files: also obey the tree's own .gitignore files (a skill folder's,
    never an agent's). The root's own .git is the repository the tree lives in: left out, not nested."""
    top = os.lstat(root)
    if not stat.S_ISDIR(top.st_mode):
        raise NotADirectoryError(f"{root} is not a folder (a link or a file stands there)")
    out = Read()
    rules = ignore if ignore is not None else Ignore()
    kept_folders = {p.rsplit("/", 1)[0] for p in tracked or {} if "/" in p}
    kept_folders |= {"/".join(f.split("/")[:n]) for f in list(kept_folders) for n in range(1, f.count("/") + 1)}
    pending = [""]
    while pending:
        folder = pending.pop()
        place = root / folder if folder else root
        try:
            listed = sorted(os.scandir(place), key=lambda e: e.name)
        except OSError as exc:
            out.unread.append(f"{folder or '.'}/ ({exc.strerror or exc})")
            continue
        if own_ignore_files:
            _add_own_rules(rules, folder, listed)
        for item in listed:
            path = f"{folder}/{item.name}" if folder else item.name
            if is_git_name(item.name):
                if folder:  # a repository inside the tree: data, and its .git never opened
                    out.nested.append(f"{folder}/")
                continue
            if leave_out(path):
                continue
            mode = item.stat(follow_symlinks=False).st_mode
            known = tracked is not None and path in tracked
            if stat.S_ISDIR(mode):
                if rules and path not in kept_folders and rules.ignored(path, True):
                    continue
                pending.append(path)
                continue
            if rules and not known and rules.ignored(path, False):
                continue
            if stat.S_ISLNK(mode):
                target = os.fsencode(os.readlink(item.path))
                out.entries[path] = Entry(LINK, objects.write("blob", target) if objects else blob_id(target))
            elif not stat.S_ISREG(mode):
                out.unread.append(f"{path} ({_what(mode)})")
            else:
                oid = _blob(item.path, objects)
                if oid is None:
                    out.unread.append(f"{path} (not readable, or not a regular file any more)")
                else:
                    out.entries[path] = Entry(EXECUTABLE if mode & stat.S_IXUSR else FILE, oid)
    out.nested.sort()
    return out


def _blob(path: str, objects: Objects | None) -> str | None:
    """A regular file's blob id, its blob stored when objects is given; None when it is not a regular
    file any more. A big file is streamed, never held whole."""
    file = open_file(path)
    if file is None:
        return None
    with file:
        facts = os.fstat(file.fileno())
        if facts.st_size > BIG:
            return objects.write_stream(file, facts.st_size) if objects else blob_id_of(file, facts.st_size)
        data = file.read()
    return objects.write("blob", data) if objects else blob_id(data)


def read_file(path: str) -> bytes | None:
    """A regular file's bytes, never through a link and never blocking on a FIFO swapped in."""
    file = open_file(path)
    if file is None:
        return None
    with file:
        return file.read()


def open_file(path: str) -> BinaryIO | None:
    """A regular file opened for reading, never through a link and never blocking on a FIFO swapped in;
    None when it is not one (or is gone)."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    file = os.fdopen(handle, "rb")
    if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
        file.close()
        return None
    return file


def entry_of(path: Path) -> Entry | None:
    """One file as git would record it, read as data; None when it is gone or not a file or link."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        return Entry(LINK, blob_id(os.fsencode(os.readlink(path))))
    oid = _blob(str(path), None) if stat.S_ISREG(mode) else None
    return None if oid is None else Entry(EXECUTABLE if mode & stat.S_IXUSR else FILE, oid)


def _add_own_rules(rules: Ignore, folder: str, listed: list[os.DirEntry]) -> None:
    for item in listed:
        if item.name == IGNORE_FILE and item.is_file(follow_symlinks=False):
            data = read_file(item.path)
            if data is not None and len(data) <= IGNORE_LIMIT:
                rules.add(folder, data.decode("utf-8", "replace"))


def _what(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def ignore_rules(entries: Mapping[str, Entry], objects: Objects) -> Ignore:
    """The rules of the .gitignore files among a tree's entries (the baseline's), read from objects."""
    texts = {}
    for path, entry in entries.items():
        folder, _, name = path.rpartition("/")
        if name == IGNORE_FILE and entry.mode != LINK:
            _, data = objects.read(entry.oid)
            if len(data) <= IGNORE_LIMIT:
                texts[folder] = data.decode("utf-8", "replace")
    return Ignore(texts)
