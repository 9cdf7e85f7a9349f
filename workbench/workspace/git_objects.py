"""Git's storage formats written by the workbench itself: loose objects (blobs,
trees, commits), a repository's skeleton and its index. No git process runs, so
nothing in a tree (its .gitattributes, a nested repository's config, a filter or
a hook) is ever consulted: a blob is exactly the bytes that were read.

Why not `git add`: it applies the tree's own attributes (line-ending and encoding
conversions, filters) and descends into nested repositories, and each git process
costs several milliseconds per dispatch. The formats are git's documented ones
(Documentation/gitformat-index.txt, gitformat-pack's loose objects); tests check
every object and index written here with git itself (`git fsck`, `git status`)."""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zlib
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

FILE, EXECUTABLE, LINK, FOLDER = "100644", "100755", "120000", "40000"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
CHUNK = 1024 * 1024  # bytes read at a time from a big file
BIG = 8 * CHUNK  # a file above this is hashed and compressed as it is read, never held whole
# What `git init` writes, and all a repository the workbench makes needs.
CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = {bare}\n\tlogallrefupdates = true\n"


def object_id(kind: str, data: bytes) -> str:
    return hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)) + data).hexdigest()


def blob_id(data: bytes) -> str:
    return object_id("blob", data)


def blob_id_of(handle: BinaryIO, size: int) -> str:
    """A blob id of `size` bytes read from an open file in chunks."""
    digest = hashlib.sha1(b"blob %d\0" % size)
    while chunk := handle.read(CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class Entry:
    """One file of a tree as git records it: its mode (FILE, EXECUTABLE or LINK) and blob id."""

    mode: str
    oid: str


class Objects:
    """A repository's object folder (`<git dir>/objects`), written loose."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._root = os.fspath(folder)

    def path(self, oid: str) -> str:
        # A string, not a Path: a dispatch asks for a few dozen, and pathlib's parsing cost more than the lookup.
        return f"{self._root}/{oid[:2]}/{oid[2:]}"

    def has(self, oid: str) -> bool:
        return os.path.isfile(self.path(oid))

    def write(self, kind: str, data: bytes) -> str:
        """Store an object (once: an object id names its content) and return its id. Not synced: a
        repository the workbench makes is made again when a kill interrupts it."""
        raw = b"%s %d\0" % (kind.encode(), len(data)) + data
        oid = hashlib.sha1(raw).hexdigest()
        target = self.path(oid)
        if os.path.isfile(target):
            return oid
        os.makedirs(os.path.dirname(target), exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".object-", dir=os.path.dirname(target))
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(zlib.compress(raw, 1))
            os.chmod(temporary, 0o444)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return oid

    def write_stream(self, handle: BinaryIO, size: int) -> str:
        """A blob of `size` bytes read from an open file in chunks (never whole in memory): hashed and
        compressed as it is read; raises ValueError when the file does not hold `size` bytes."""
        digest = hashlib.sha1(b"blob %d\0" % size)
        squeeze = zlib.compressobj(1)
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".object-", dir=self.folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(squeeze.compress(b"blob %d\0" % size))
                seen = 0
                while chunk := handle.read(CHUNK):
                    seen += len(chunk)
                    digest.update(chunk)
                    out.write(squeeze.compress(chunk))
                out.write(squeeze.flush())
            if seen != size:
                raise ValueError(f"{getattr(handle, 'name', 'a file')} changed size while it was read")
            oid = digest.hexdigest()
            target = self.path(oid)
            if os.path.isfile(target):
                return oid
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.chmod(temporary, 0o444)
            os.replace(temporary, target)
            return oid
        finally:
            Path(temporary).unlink(missing_ok=True)

    def read(self, oid: str) -> tuple[str, bytes]:
        """(kind, content) of a loose object, checked against its id. ValueError when it is damaged."""
        try:
            with open(self.path(oid), "rb") as stored:
                raw = zlib.decompress(stored.read())
        except zlib.error as exc:
            raise ValueError(f"object {oid} is damaged ({exc})") from None
        if hashlib.sha1(raw).hexdigest() != oid:
            raise ValueError(f"object {oid} does not hold what its id names")
        header, _, data = raw.partition(b"\0")
        kind, _, size = header.decode("ascii", "replace").partition(" ")
        if not size.isdigit() or int(size) != len(data):
            raise ValueError(f"object {oid} is cut short")
        return kind, data

    def tree_of(self, commit: str) -> str:
        """The tree a commit names."""
        kind, data = self.read(commit)
        if kind != "commit" or not data.startswith(b"tree "):
            raise ValueError(f"{commit} is not a commit of this store")
        return data[5:45].decode()

    def entries(self, tree: str, prefix: str = "") -> dict[str, Entry]:
        """Every file of a tree in this store: path -> Entry (read back, each object checked against its id)."""
        kind, data = self.read(tree)
        if kind != "tree":
            raise ValueError(f"{tree} is a {kind}, not a tree")
        out: dict[str, Entry] = {}
        while data:
            header, _, rest = data.partition(b"\0")
            mode, _, name = header.partition(b" ")
            oid, data = rest[:20].hex(), rest[20:]
            path = prefix + os.fsdecode(name)
            if mode.decode() == FOLDER:
                out.update(self.entries(oid, path + "/"))
            else:
                out[path] = Entry(mode.decode(), oid)
        return out

    def write_tree(self, entries: Mapping[str, Entry]) -> str:
        """The tree objects of a set of files ({"a/b.txt": Entry}); returns the root tree's id."""
        folders: dict[str, dict[str, tuple[str, str]]] = {"": {}}
        for path in entries:
            parts = path.split("/")
            for depth in range(1, len(parts)):
                folders.setdefault("/".join(parts[:depth]), {})
        for path, entry in entries.items():
            parent, _, name = path.rpartition("/")
            folders[parent][name] = (entry.mode, entry.oid)
        # Deepest first, so each folder's tree id is known before its parent's is written.
        for folder in sorted(folders, key=lambda f: f.count("/") + (f != ""), reverse=True):
            oid = self.write("tree", _tree_bytes(folders[folder]))
            if folder:
                parent, _, name = folder.rpartition("/")
                folders[parent][name] = (FOLDER, oid)
            else:
                return oid
        raise AssertionError("unreachable: the root folder is always written last")

    def write_commit(self, tree: str, message: str, who: str, when: int, parents: Iterable[str] = ()) -> str:
        lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
        lines += [f"author {who} {when} +0000", f"committer {who} {when} +0000", "", message]
        return self.write("commit", ("\n".join(lines) + "\n").encode())


class FreshObjects(Objects):
    """The object folder of a repository made just now, empty (a baseline's: a kill midway has it made
    again): each object is written in place, read-only, once, with no temporary file renamed into place,
    and kept so that copy_to writes the same bytes into another new repository without reading them back.
    A dispatch wrote its baseline's objects one rename each, then copied the whole folder again."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.written: dict[str, bytes | None] = {}  # id -> its compressed bytes (None: streamed, on disk only)
        self._made: set[str] = set()

    def has(self, oid: str) -> bool:
        return oid in self.written or super().has(oid)

    def write(self, kind: str, data: bytes) -> str:
        raw = b"%s %d\0" % (kind.encode(), len(data)) + data
        oid = hashlib.sha1(raw).hexdigest()
        if oid not in self.written:
            compressed = zlib.compress(raw, 1)
            _put(self.folder, oid, compressed, self._made)
            self.written[oid] = compressed
        return oid

    def write_stream(self, handle: BinaryIO, size: int) -> str:
        oid = super().write_stream(handle, size)
        self.written.setdefault(oid, None)
        return oid

    def copy_to(self, folder: Path) -> None:
        """Every object written here, into another new object folder."""
        made: set[str] = set()
        for oid, compressed in self.written.items():
            if compressed is None:
                with open(self.path(oid), "rb") as stored:
                    compressed = stored.read()
            _put(folder, oid, compressed, made)


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _put(folder: Path, oid: str, compressed: bytes, made: set[str]) -> None:
    """One loose object written in place in a new object folder; made: its subfolders made so far."""
    if oid[:2] not in made:
        os.makedirs(os.path.join(folder, oid[:2]), exist_ok=True)
        made.add(oid[:2])
    path = os.path.join(folder, oid[:2], oid[2:])
    try:
        fd = os.open(path, _CREATE, 0o444)
    except FileExistsError:  # not new after all (something stood there): replaced whole, as Objects writes
        handle, temporary = tempfile.mkstemp(prefix=".object-", dir=os.path.dirname(path))
        with os.fdopen(handle, "wb") as out:
            out.write(compressed)
        os.chmod(temporary, 0o444)
        os.replace(temporary, path)
        return
    try:
        view = memoryview(compressed)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _tree_bytes(folder: Mapping[str, tuple[str, str]]) -> bytes:
    # git's order: byte order of the names, a folder's name compared as if it ended in "/".
    def key(name: str) -> bytes:
        encoded = os.fsencode(name)
        return encoded + b"/" if folder[name][0] == FOLDER else encoded

    return b"".join(
        b"%s %s\0" % (folder[name][0].encode(), os.fsencode(name)) + bytes.fromhex(folder[name][1])
        for name in sorted(folder, key=key)
    )


def init(git_dir: Path, bare: bool, head: str = "master") -> Objects:
    """An empty repository's skeleton at git_dir: HEAD on `head`, the workbench's own config."""
    root = os.fspath(git_dir)  # strings: pathlib's parsing cost more than these calls, at every dispatch
    os.makedirs(f"{root}/objects", exist_ok=True)
    os.makedirs(f"{root}/refs/heads", exist_ok=True)
    os.makedirs(f"{root}/refs/tags", exist_ok=True)  # as before: a file standing there is an error
    for name, text in (
        ("HEAD", f"ref: refs/heads/{head}\n"),
        ("config", CONFIG.format(bare="true" if bare else "false")),
    ):
        with open(f"{root}/{name}", "w", encoding="utf-8") as out:
            out.write(text)
    return Objects(git_dir / "objects")


def set_ref(git_dir: Path, ref: str, oid: str) -> None:
    target = git_dir / ref
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(oid + "\n")


def write_index(path: Path, work_tree: Path, entries: Mapping[str, Entry], same: Container[str] | None = None) -> None:
    """An index (version 2) recording every file as committed, with its stat data read now, so that
    `git status` in the repository says nothing changed (and does not need to hash every file again).
    same: the files known to hold their committed content now (None: all); the others get no stat data,
    so git reads them again and sees what changed."""
    body = bytearray(b"DIRC" + struct.pack(">LL", 2, len(entries)))
    for name in sorted(entries, key=os.fsencode):
        encoded = os.fsencode(name)
        try:
            if same is not None and name not in same:
                raise FileNotFoundError(name)
            st = os.lstat(work_tree / name)
            stat = (
                int(st.st_ctime),
                st.st_ctime_ns % 1_000_000_000,
                int(st.st_mtime),
                st.st_mtime_ns % 1_000_000_000,
                st.st_dev,
                st.st_ino,
                int(entries[name].mode, 8),
                st.st_uid,
                st.st_gid,
                st.st_size,
            )
        except OSError:  # gone or changed: git hashes it again and sees that
            stat = (0, 0, 0, 0, 0, 0, int(entries[name].mode, 8), 0, 0, 0)
        body += struct.pack(">10L", *(value & 0xFFFFFFFF for value in stat))
        body += bytes.fromhex(entries[name].oid) + struct.pack(">H", min(len(encoded), 0xFFF))
        length = 62 + len(encoded)
        body += encoded + b"\0" * (8 - length % 8)
    body += hashlib.sha1(body).digest()
    path.write_bytes(bytes(body))
