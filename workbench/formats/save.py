"""Saving edited data back into the file's own text, changing as little as possible.

The data is rendered twice in the file's detected style: as it was loaded (R0)
and as it is now (R1). A three-way merge of the file's text (T0) with R0 -> R1
keeps every line the edit did not reach exactly as the user wrote it (comments,
escapes, inline arrays, odd spacing), and brings in the edited lines. For YAML
the round-trip tree keeps comments and order in the rendering itself.

Writes are atomic: a temp file in the same folder, fsync, rename.
"""

from __future__ import annotations

import ctypes
import difflib
import errno
import io
import itertools
import json
import os
import re
import stat
import threading
from pathlib import Path
from typing import Any

import merge3
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarbool import ScalarBoolean

from workbench.formats.yamlmap import _key, new_yaml, to_plain

_INDENT = re.compile(r"^([ \t]+)\S", re.M)


# ---------------------------------------------------------------- JSON


def json_style(text: str) -> dict:
    match = _INDENT.search(text)
    return {
        "indent": match.group(1) if match else "  ",
        "ensure_ascii": bool(re.search(r"\\u[0-9a-fA-F]{4}", text)) and text.isascii(),
        "newline": text.endswith("\n"),
        "bom": text.startswith("\ufeff"),
    }


def render_json(data: Any, style: dict) -> str:
    text = json.dumps(data, indent=style["indent"], ensure_ascii=style["ensure_ascii"])
    return ("\ufeff" if style["bom"] else "") + text + ("\n" if style["newline"] else "")


# ---------------------------------------------------------------- YAML


def yaml_style(text: str) -> dict:
    """Indentation of mappings and of block sequences, as ruamel needs them."""
    mapping = sequence = offset = None
    previous_indent = 0
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        if stripped.startswith("- "):
            if offset is None and indent > previous_indent:
                offset = indent - previous_indent
            elif offset is None:
                offset = 0
            if sequence is None:
                inner = stripped[2:]
                sequence = offset + 2 + (len(inner) - len(inner.lstrip(" ")))
        elif mapping is None and indent > previous_indent and not stripped.startswith("-"):
            mapping = indent - previous_indent
        previous_indent = indent + 2 if stripped.startswith("- ") else indent
    return {"mapping": mapping or 2, "sequence": sequence or 2, "offset": offset or 0}


def _yaml(style: dict) -> YAML:
    yaml = new_yaml()
    yaml.width = 4096  # never re-wrap a long line the user wrote on one line
    yaml.indent(mapping=style["mapping"], sequence=max(style["sequence"], style["offset"] + 2), offset=style["offset"])
    return yaml


def render_yaml_tree(tree: Any, style: dict) -> str:
    buffer = io.StringIO()
    _yaml(style).dump(tree, buffer)
    return buffer.getvalue()


def load_yaml_tree(text: str) -> Any:
    return new_yaml().load(text)


def sync_tree(tree: Any, data: Any) -> Any:
    """Make a round-trip tree equal to data, touching only what differs, so
    comments and scalar styles of untouched nodes survive. Returns the node to
    keep (the same object when it could be updated in place)."""
    if isinstance(tree, CommentedMap) and isinstance(data, dict):
        by_name = {_key(k): k for k in tree}
        for name in [n for n in by_name if n not in data]:
            del tree[by_name[name]]
        for position, (name, value) in enumerate(data.items()):
            if name in by_name:
                key = by_name[name]
                tree[key] = sync_tree(tree[key], value)
            else:
                tree.insert(position, name, value)
        order = list(data)
        if [_key(k) for k in tree] != order:  # a reorder: rebuild in data's order
            entries = {_key(k): (k, tree[k]) for k in tree}
            for key, _ in entries.values():
                del tree[key]
            for name in order:
                key, value = entries[name]
                tree[key] = value
        return tree
    if isinstance(tree, CommentedSeq) and isinstance(data, list):
        import difflib

        old = [json.dumps(to_plain(item), sort_keys=True) for item in tree]
        new = [json.dumps(item, sort_keys=True) for item in data]
        items = list(tree)
        result: list = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag == "equal":
                result.extend(items[i1:i2])
            elif tag == "replace" and i2 - i1 == j2 - j1:
                result.extend(sync_tree(items[i], data[j]) for i, j in zip(range(i1, i2), range(j1, j2), strict=True))
            else:
                result.extend(data[j1:j2])
        if len(result) == len(items):
            for index, item in enumerate(result):
                if item is not items[index]:
                    tree[index] = item
        else:
            del tree[:]
            tree.extend(result)
        return tree
    if _same_scalar(tree, data):
        return tree
    return data


def _same_scalar(tree: Any, data: Any) -> bool:
    if isinstance(tree, (dict, list)) or isinstance(data, (dict, list)):
        return False
    if isinstance(tree, ScalarBoolean) or isinstance(tree, bool):
        return isinstance(data, bool) and bool(tree) == data
    if isinstance(data, bool):
        return False
    return to_plain(tree) == data and type(to_plain(tree)) is type(data)


# ---------------------------------------------------------------- line endings


def newline_of(text: str) -> str:
    """The file's line ending: CRLF when most of its lines end so, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def with_newline(text: str, newline: str) -> str:
    """text (LF, or some lines CRLF) with every line ending in newline, never mixed."""
    if newline == "\n":
        return text
    return text.replace("\r\n", "\n").replace("\n", newline)


# ---------------------------------------------------------------- merge


def merge(original: str, before: str, after: str) -> str:
    """The original text with the change before -> after applied where it reaches,
    and the original's own lines kept everywhere else."""
    if before == after:
        return original
    if original == before:
        return after
    merged = _merge_lines(before.splitlines(True), original.splitlines(True), after.splitlines(True), edit_wins=True)
    assert merged is not None  # the edit wins every overlap
    return "".join(merged)


def _merge_lines(base: list[str], ours: list[str], theirs: list[str], edit_wins: bool) -> list[str] | None:
    """merge3's regions, with a conflict split line by line where the two sides
    change different lines; where they change the same ones, theirs wins
    (edit_wins) or there is no merge (None)."""
    out: list[str] = []
    for region in merge3.Merge3(base, ours, theirs).merge_regions():
        kind, *at = region
        if kind == "unchanged":
            out.extend(base[at[0] : at[1]])
        elif kind in ("a", "same"):
            out.extend(ours[at[0] : at[1]])
        elif kind == "b":
            out.extend(theirs[at[0] : at[1]])
        else:  # the two sides meet: apply each where it reaches
            edit = theirs[at[4] : at[5]]
            both = interleave(base[at[0] : at[1]], ours[at[2] : at[3]], edit)
            if both is None and not edit_wins:
                return None
            out.extend(edit if both is None else both)
    return out


def _changes(base: list[str], other: list[str]) -> list[tuple[int, int, list[str]]]:
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return [(i1, i2, other[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _overlap(first: tuple[int, int, list[str]], second: tuple[int, int, list[str]]) -> bool:
    (a1, a2, _), (b1, b2, _) = first, second
    if a1 == a2 and b1 == b2:  # two insertions at one place: their order is unknown
        return a1 == b1
    if a1 == a2:
        return b1 < a1 < b2
    if b1 == b2:
        return a1 < b1 < a2
    return max(a1, b1) < min(a2, b2)


def interleave(base: list[str], ours: list[str], theirs: list[str]) -> list[str] | None:
    """base changed into ours in some lines and into theirs in others, next to
    each other (merge3 calls that a conflict, as no unchanged line separates
    them): both changes applied, line by line; None where they touch the same
    base line. Keeps an untouched neighbour of an edited line as it was written."""
    mine, edits = _changes(base, ours), _changes(base, theirs)
    if any(_overlap(m, e) for m in mine for e in edits):
        return None
    out: list[str] = []
    position = 0
    for start, end, lines in sorted(mine + edits, key=lambda c: (c[0], c[1])):
        out.extend(base[position:start])
        out.extend(lines)
        position = end
    out.extend(base[position:])
    return out


def merge_texts(base: str, ours: str, theirs: str) -> str | None:
    """Two edits of base, both applied; None where they change the same lines."""
    merged = _merge_lines(base.splitlines(True), ours.splitlines(True), theirs.splitlines(True), edit_wins=False)
    return None if merged is None else "".join(merged)


# ---------------------------------------------------------------- writing


def atomic_write(
    path: Path | str, text: str | bytes, sync_dir: bool = True, through_link: bool = False, durable: bool = True
) -> None:
    """Replace path's content all at once: a crash leaves the old file or the new
    one, never half of either. Keeps the file's permissions. sync_dir=False skips
    syncing the folder, for a file whose neighbour is written (and synced) next.
    durable=False syncs nothing: for a file that a later durable point (durable_point
    below) makes durable before anything vouching for it is written.

    A symlink at path is replaced by the file, unless through_link: only the
    editor's save of a file the person opened writes through a link to its
    target (the link stays a link). Anything else the workbench writes (run
    artifacts, gradings, config) never follows a link someone else planted."""
    # A string throughout: a run writes about a dozen files a dispatch, and pathlib's parsing cost more than that.
    # A str is read as Path reads it (a trailing / or a doubled one dropped); a Path's own string already is.
    target = os.fspath(path if isinstance(path, Path) else Path(path))
    target = os.path.realpath(target) if through_link and os.path.islink(target) else target
    try:
        mode: int | None = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        mode = None
    if mode is not None and stat.S_ISDIR(mode) and not os.path.islink(target):  # said of the target, not the temp
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), target)
    # Text is written as UTF-8 with no newline translation: exactly its encoded bytes.
    content = memoryview(text if isinstance(text, bytes) else text.encode("utf-8"))
    # Plain descriptor calls, the folder made only when it is missing: a run writes about a dozen files a
    # dispatch, and pathlib's mkdir, mkstemp's name drawing and a file object cost more than the write.
    fd, temp = _temporary(target)
    try:
        try:
            while content:
                content = content[os.write(fd, content) :]
            if durable:
                os.fsync(fd)
            if mode is not None:
                os.fchmod(fd, mode & 0o7777)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        if os.path.lexists(temp):
            os.unlink(temp)
        raise
    if not sync_dir or not durable:
        return
    try:  # make the rename itself durable
        directory = os.open(os.path.dirname(target) or ".", os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError:
        pass


_serial = itertools.count()
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _temporary(path: str) -> tuple[int, str]:
    """A new file beside path, open for writing, readable by its owner only (as mkstemp makes it); its name
    is this process's and never an existing file's (O_EXCL: another writer's is skipped). Missing folders
    are made."""
    folder, name = os.path.split(path)
    folder = folder or "."  # a bare name is in the current folder
    while True:
        temp = os.path.join(folder, f".{name}.{os.getpid()}-{next(_serial)}.tmp")
        try:
            return os.open(temp, _CREATE, 0o600), temp
        except FileExistsError:
            continue
        except (FileNotFoundError, NotADirectoryError):
            os.makedirs(folder, exist_ok=True)  # raises when a file stands in the way
            return os.open(temp, _CREATE, 0o600), temp


_libc = ctypes.CDLL(None, use_errno=True)


def syncfs(fd: int) -> int:
    """The kernel's syncfs(2): everything written to the filesystem holding fd reaches the disk. 0, or -1."""
    return _libc.syncfs(fd)


class _Group:
    """Group commit: one syncfs serves every thread that asked before it started."""

    def __init__(self) -> None:
        self.turns = threading.Condition()
        self.started = 0  # syncs begun
        self.finished = 0  # syncs ended (each covers what was written before it began)
        self.running = False


_groups: dict[int, _Group] = {}
_groups_lock = threading.Lock()


def durable_point(folder: Path, written: list[Path] | None = None, since: int | None = None) -> None:
    """Everything written so far under folder (files, renames, folders made) reaches the disk before this
    returns: one syncfs of its filesystem, shared by the dispatches that reach their durable point at the same
    time (a sync that began after a caller asked covers it). since: a mark() taken once the writes were done:
    a sync begun after it covers them too, so none is waited for when one has ended since (another dispatch's,
    a grading's). Where syncfs is refused, each caller syncs every file and folder under its own folder, or,
    given `written`, those files, their folders and `folder` (a large folder of which only a few files are new
    is not walked)."""
    if not _syncfs_refused and _shared_syncfs(folder, since):
        return
    if written is None:
        todo = [*(p for p in folder.rglob("*") if not p.is_symlink()), folder]
    else:
        todo = list(dict.fromkeys([*written, *(p.parent for p in written), folder]))
    for path in todo:
        try:
            handle = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


_syncfs_refused = False  # once refused, every durable point syncs its own files


def mark(folder: Path) -> int:
    """The syncs begun so far on folder's filesystem: any begun after this covers what was written before it
    (durable_point's since)."""
    group = _group(folder)
    with group.turns:
        return group.started


def _group(folder: Path) -> _Group:
    device = os.stat(folder).st_dev
    with _groups_lock:
        return _groups.setdefault(device, _Group())


def _shared_syncfs(folder: Path, since: int | None = None) -> bool:
    """One syncfs covering this caller's writes, begun by it or by a caller beside it (or, given since, any
    begun after that mark); False if refused."""
    global _syncfs_refused
    group = _group(folder)
    with group.turns:
        # One that is running now may have begun before our writes: the next one to begin covers them.
        wanted = (group.started if since is None else since) + 1
        while group.finished < wanted and not _syncfs_refused:
            if group.running:
                group.turns.wait()
                continue
            group.running = True
            group.started += 1
            number = group.started
            group.turns.release()
            try:
                fd = os.open(folder, os.O_RDONLY)
                try:
                    ok = syncfs(fd) == 0
                finally:
                    os.close(fd)
            finally:
                group.turns.acquire()
                group.running = False
                group.turns.notify_all()
            if not ok:
                _syncfs_refused = True
                return False
            group.finished = number
        return not _syncfs_refused
