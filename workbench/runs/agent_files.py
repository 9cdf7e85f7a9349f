"""Reading what an agent left: a run folder's files, read by the workbench's own hands
(grading, the judge's outputs, a command_check's scratch copy, the report, the Results
screen, the cache's restore) and never through a link.

A run folder holds what an agent wrote (its repository, its outputs), or what a
cluster's worker sent back, or a copy of either. Any of it may be a link (to a secret,
to a folder, back into the run's home/ or .git), a FIFO that blocks whoever opens it, a
device, or a file too big to hold. So here: every folder on the way is opened without
following a link, from the folder the caller names down (openat with O_NOFOLLOW); a
link is an entry with its target's text, never opened; only a regular file is opened,
checked by lstat before (a device is never opened) and by fstat after (the same file);
reading is bounded. The folder named by the caller is trusted to be where it says; its
parents are the workspace's."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench.formats.regular import MAX_BYTES, NotAFile, TooBig, kind

FILE, FOLDER, LINK, OTHER = "file", "folder", "link", "other"
MAX_DEPTH = 128  # folders deep: a walk holds one descriptor per level; no real repository comes near
CHUNK = 1024 * 1024
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Linked(OSError):
    """A link where a file or a folder was to be read: it is not followed."""


@dataclass(frozen=True)
class Entry:
    """One thing in a folder, as it is, not as a link would make it look."""

    path: str  # relative to the folder walked, with /
    kind: str  # file, folder, link or other
    size: int = 0  # a file's bytes
    target: str = ""  # a link's text
    why: str = ""  # other: what it is ("a FIFO (named pipe)"), or why it is not read
    mode: int = 0
    mtime_ns: int = 0


def read(folder: Path, relative: str, limit: int = MAX_BYTES, cut: bool = False) -> bytes:
    """The bytes of folder/relative, reached through real folders only. FileNotFoundError when
    missing; Linked when it (or a folder on the way) is a link; NotAFile for a FIFO, a device, a
    socket or a folder; TooBig over limit (with cut: its first `limit` bytes)."""
    *parents, name = [part for part in relative.split("/") if part not in ("", ".")] or ["."]
    if name == ".." or ".." in parents:
        raise Linked(errno.EINVAL, "not a path inside its folder", str(folder / relative))
    fd = _open_folder(folder, parents)
    try:
        return _read_at(fd, name, limit, cut, str(folder / relative))
    finally:
        os.close(fd)


def read_text(folder: Path, relative: str, limit: int = MAX_BYTES, cut: bool = False) -> str:
    return read(folder, relative, limit, cut).decode("utf-8", errors="replace")


def entries(folder: Path) -> list[Entry]:
    """Everything under folder, depth first in name order, nothing followed. A folder that is
    itself a link, or missing, has no entries."""
    return [entry for entry, _fd in _walk(folder)]


def contents(folder: Path, limit: int) -> Iterator[tuple[Entry, bytes]]:
    """Every entry under folder as entries() gives it, with a file's bytes (b"" for the rest), read as
    the walk goes. TooBig once the files together pass limit bytes."""
    left = limit
    for entry, parent in _walk(folder):
        if entry.kind != FILE:
            yield entry, b""
            continue
        try:
            data = _read_at(parent, entry.path.rsplit("/", 1)[-1], left, False, str(folder / entry.path))
        except TooBig:
            raise TooBig(errno.EFBIG, f"its files together are over {limit:,} bytes", str(folder)) from None
        left -= len(data)
        yield entry, data


def copy(source: Path, target: Path, leave_out: Collection[str] = ()) -> list[Entry]:
    """A copy of source made at target (made, or empty), without following a link: folders and
    files as they are (a file from its bytes, its mode less setuid bits, its time kept), links as
    links. What is neither (a FIFO, a device, a socket) or cannot be read is left out, and returned.
    leave_out: names at the top of source not copied at all (nor looked into).
    Linked (or another OSError) when source itself is a link or no folder: nothing is copied."""
    os.close(_open_top(source))
    target.mkdir(parents=True, exist_ok=True)
    left_out: list[Entry] = []
    folders: list[tuple[Path, int]] = []
    for entry, parent in _walk(source, leave_out):
        place = target / entry.path
        if entry.kind == FOLDER:
            place.mkdir(mode=0o700)
            folders.append((place, entry.mode))
        elif entry.kind == LINK:
            os.symlink(entry.target, place)
        elif entry.kind == FILE:
            try:
                _copy_file(parent, entry, place)
            except OSError as exc:
                left_out.append(Entry(entry.path, OTHER, why=f"cannot be read: {exc.strerror or exc}"))
        else:
            left_out.append(entry)
    for place, mode in reversed(folders):  # last: a folder without write permission is filled first
        os.chmod(place, (mode & 0o777) | 0o700)
    return left_out


# ------------------------------------------------------------------ how


def _open_folder(folder: Path, parts: list[str]) -> int:
    fd = _open_top(folder)
    for part in parts:
        fd = _descend(fd, part, str(folder))
    return fd


def _open_top(folder: Path) -> int:
    try:
        return os.open(folder, _FOLDER_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(folder):
            raise Linked(errno.ELOOP, "a link, not followed", str(folder)) from None
        raise


def _descend(fd: int, name: str, where: str) -> int:
    """The folder `name` inside fd, opened without following a link. fd is closed, whatever happens."""
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(_lstat(fd, name)):
            raise Linked(errno.ELOOP, "a link, not followed", f"{where}/{name}") from None
        raise
    finally:
        os.close(fd)


def _lstat(fd: int, name: str) -> int:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except OSError:
        return 0


def _read_at(fd: int, name: str, limit: int, cut: bool, where: str) -> bytes:
    before = os.stat(name, dir_fd=fd, follow_symlinks=False)
    if stat.S_ISLNK(before.st_mode):
        raise Linked(errno.ELOOP, "a link, not followed", where)
    if not stat.S_ISREG(before.st_mode):  # checked before opening: opening a device can do something
        raise NotAFile(errno.EINVAL, f"{kind(before.st_mode)}, not a regular file", where)
    handle = _open_same(fd, name, before, where)
    try:
        data = _read_up_to(handle, limit + 1)
    finally:
        os.close(handle)
    if len(data) > limit and not cut:
        raise TooBig(errno.EFBIG, f"too big to read: over {limit:,} bytes", where)
    return data[:limit]


def _open_same(fd: int, name: str, before: os.stat_result, where: str) -> int:
    """name opened for reading, if it is still the regular file lstat saw (never a link swapped in)."""
    try:
        handle = os.open(name, _FILE_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Linked(errno.ELOOP, "a link, not followed", where) from None
        raise
    now = os.fstat(handle)
    if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
        os.close(handle)
        raise NotAFile(errno.EINVAL, "changed while it was read", where)
    return handle


def _read_up_to(handle: int, most: int) -> bytes:
    chunks, got = [], 0
    while got < most:
        chunk = os.read(handle, min(CHUNK, most - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _copy_file(parent: int, entry: Entry, place: Path) -> None:
    source = _open_same(parent, entry.path.rsplit("/", 1)[-1], _as_stat(parent, entry), entry.path)
    try:
        out = os.open(place, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            while chunk := os.read(source, CHUNK):
                os.write(out, chunk)
            os.fchmod(out, entry.mode & 0o777)
        finally:
            os.close(out)
    finally:
        os.close(source)
    os.utime(place, ns=(entry.mtime_ns, entry.mtime_ns), follow_symlinks=False)


def _as_stat(parent: int, entry: Entry) -> os.stat_result:
    return os.stat(entry.path.rsplit("/", 1)[-1], dir_fd=parent, follow_symlinks=False)


def _walk(folder: Path, leave_out: Collection[str] = ()) -> Iterator[tuple[Entry, int]]:
    """(entry, descriptor of the folder holding it), depth first in name order; the descriptor is
    open while the entry is looked at. One descriptor per level, never more than MAX_DEPTH. leave_out:
    names at the top of folder passed over."""
    try:
        top = os.open(folder, _FOLDER_FLAGS)
    except OSError:
        return
    stack: list[tuple[int, str, Iterator[str]]] = []
    try:
        try:
            stack.append((top, "", iter(sorted(set(os.listdir(top)) - set(leave_out)))))
        except OSError:
            os.close(top)
            return
        while stack:
            fd, prefix, names = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                os.close(fd)
                continue
            relative = prefix + name
            try:
                found = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError as exc:
                yield Entry(relative, OTHER, why=f"cannot be read: {exc.strerror or exc}"), fd
                continue
            mode = found.st_mode
            if stat.S_ISLNK(mode):
                yield Entry(relative, LINK, target=os.readlink(name, dir_fd=fd)), fd
            elif stat.S_ISREG(mode):
                yield Entry(relative, FILE, found.st_size, mode=mode, mtime_ns=found.st_mtime_ns), fd
            elif not stat.S_ISDIR(mode):
                yield Entry(relative, OTHER, why=kind(mode)), fd
            elif len(stack) >= MAX_DEPTH:
                yield Entry(relative, OTHER, why=f"nested more than {MAX_DEPTH} folders deep: not read"), fd
            else:
                try:
                    inner = os.open(name, _FOLDER_FLAGS, dir_fd=fd)
                except OSError as exc:
                    yield Entry(relative, OTHER, why=f"cannot be read: {exc.strerror or exc}"), fd
                    continue
                try:
                    names_inside = sorted(os.listdir(inner))
                except OSError as exc:
                    os.close(inner)
                    yield Entry(relative, OTHER, why=f"cannot be read: {exc.strerror or exc}"), fd
                    continue
                yield Entry(relative, FOLDER, mode=mode, mtime_ns=found.st_mtime_ns), fd
                stack.append((inner, relative + "/", iter(names_inside)))
    finally:
        for fd, _prefix, _names in stack:
            os.close(fd)
