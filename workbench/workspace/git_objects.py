"""Git's storage formats written by the workbench itself: objects (blobs, trees,
commits), loose or in one pack, a repository's skeleton and its index. No git process runs, so
nothing in a tree (its .gitattributes, a nested repository's config, a filter or
a hook) is ever consulted: a blob is exactly the bytes that were read.

Why not `git add`: it applies the tree's own attributes (line-ending and encoding
conversions, filters) and descends into nested repositories, and each git process
costs several milliseconds per dispatch. The formats are git's documented ones
(Documentation/gitformat-index.txt, gitformat-pack.txt: loose objects, and packs of
version 2 with their index of version 2, whole objects only, no deltas); tests check
every object, pack and index written here with git itself (`git fsck`, `git status`).

Why a pack for a new repository (a run's baseline): each loose object is a file in a
folder of its own (objects/xx/), and making a folder or a file is the costly part of a
dispatch's set-up on ext4 (an inode each); one pack and its index are two files."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import struct
import tempfile
import zlib
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import BinaryIO

FILE, EXECUTABLE, LINK, FOLDER = "100644", "100755", "120000", "40000"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
CHUNK = 1024 * 1024  # bytes read at a time from a big file
BIG = 8 * CHUNK  # a file above this is hashed and compressed as it is read, never held whole
PACK_KINDS = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}  # an entry's type in a pack (gitformat-pack.txt)
KIND_OF = {code: kind for kind, code in PACK_KINDS.items()}
IDX_MAGIC = b"\377tOc"
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
        self._packed: dict[str, tuple[str, int]] | None = None  # id -> (its pack, where in it): read once

    def path(self, oid: str) -> str:
        # A string, not a Path: a dispatch asks for a few dozen, and pathlib's parsing cost more than the lookup.
        return f"{self._root}/{oid[:2]}/{oid[2:]}"

    def has(self, oid: str) -> bool:
        return os.path.isfile(self.path(oid)) or oid in self._packs()

    def _packs(self) -> dict[str, tuple[str, int]]:
        """Every packed object of this folder (objects/pack/pack-*.idx), by id. ValueError for a damaged index."""
        if self._packed is None:
            found: dict[str, tuple[str, int]] = {}
            folder = f"{self._root}/pack"
            try:
                names = sorted(os.listdir(folder))
            except (FileNotFoundError, NotADirectoryError):
                names = []
            for name in names:
                pack = f"{folder}/{name[:-4]}.pack"
                # An index without its pack is skipped, as git skips it (a kill between the two writes).
                if name.startswith("pack-") and name.endswith(".idx") and os.path.lexists(pack):
                    found.update((oid, (pack, offset)) for oid, offset in _index_entries(f"{folder}/{name}"))
            self._packed = found
        return self._packed

    def write(self, kind: str, data: bytes) -> str:
        """Store an object (once: an object id names its content) and return its id. Not synced: a
        repository the workbench makes is made again when a kill interrupts it."""
        raw = b"%s %d\0" % (kind.encode(), len(data)) + data
        oid = hashlib.sha1(raw).hexdigest()
        target = self.path(oid)
        if os.path.isfile(target) or oid in self._packs():
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
            if os.path.isfile(target) or oid in self._packs():
                return oid
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.chmod(temporary, 0o444)
            os.replace(temporary, target)
            return oid
        finally:
            Path(temporary).unlink(missing_ok=True)

    def read(self, oid: str) -> tuple[str, bytes]:
        """(kind, content) of an object, loose or packed, checked against its id. ValueError when it is
        damaged; FileNotFoundError when this folder does not hold it."""
        try:
            compressed = _regular(self.path(oid))
        except FileNotFoundError:
            where = self._packs().get(oid)
            if where is None:
                raise
            kind, data = _read_packed(*where)
        else:
            raw = _inflate(BytesIO(compressed), _most(len(compressed)), f"object {oid}", whole=False)
            header, _, data = raw.partition(b"\0")
            kind, _, size = header.decode("ascii", "replace").partition(" ")
            if not size.isdigit() or int(size) != len(data):
                raise ValueError(f"object {oid} is cut short")
        if object_id(kind, data) != oid:
            raise ValueError(f"object {oid} does not hold what its id names")
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
    again): its objects kept here as they are written, then put in one pack (seal), which copy_to writes
    into another new repository as the same bytes, without reading them back. A dispatch wrote its
    baseline's objects one file and one folder each, in both repositories (~30 inodes of ~15)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.written: dict[str, bytes | None] = {}  # id -> its entry in the pack (None: streamed, loose on disk)
        self._pack: tuple[str, list[bytes], bytes] | None = None  # (name, the pack's parts, index) once made

    def has(self, oid: str) -> bool:
        return oid in self.written or super().has(oid)

    def write(self, kind: str, data: bytes) -> str:
        oid = object_id(kind, data)
        if oid not in self.written:
            self.written[oid] = _pack_entry(kind, data)
            self._pack = None
        return oid

    def write_stream(self, handle: BinaryIO, size: int) -> str:
        """A big file's blob stays loose, streamed to disk (a pack here is held whole in memory)."""
        oid = super().write_stream(handle, size)
        self.written.setdefault(oid, None)
        return oid

    def read(self, oid: str) -> tuple[str, bytes]:
        entry = self.written.get(oid)
        if entry is None:
            return super().read(oid)
        return _unpack(BytesIO(entry), "an object being written")

    def seal(self) -> None:
        """The objects written so far, in one pack (and its index) in this folder."""
        self._write_pack(self._root)

    def copy_to(self, folder: Path) -> None:
        """Every object written here, into another new object folder: the same pack, and streamed ones loose."""
        self._write_pack(os.fspath(folder))
        made: set[str] = set()
        for oid, entry in self.written.items():
            if entry is None:
                with open(self.path(oid), "rb") as stored:
                    _put(folder, oid, stored.read(), made)

    def _write_pack(self, root: str) -> None:
        packed = {oid: entry for oid, entry in self.written.items() if entry is not None}
        if not packed:
            return
        if self._pack is None:
            self._pack = _pack_files(packed)
        name, pack, index = self._pack
        os.makedirs(f"{root}/pack", exist_ok=True)  # init made it: a lookup
        # The pack before its index: git looks for packs by their index, so it never finds half of one.
        for suffix, parts in ((".pack", pack), (".idx", [index])):
            path = f"{root}/pack/pack-{name}{suffix}"
            if os.path.isfile(path):  # made before (seal, then copy_to into the same folder): the same bytes
                continue
            fd = os.open(path, _CREATE, 0o444)
            try:
                for part in parts:
                    view = memoryview(part)
                    while view:
                        view = view[os.write(fd, view) :]
            finally:
                os.close(fd)


def _pack_entry(kind: str, data: bytes) -> bytes:
    """An object as one entry of a pack: its type and size, then its content compressed."""
    return _entry_header(PACK_KINDS[kind], len(data)) + zlib.compress(data, 1)


def _entry_header(code: int, size: int) -> bytes:
    """A pack entry's type code and size: 4 bits of size beside the type, then 7 a byte, the high bit set on
    each byte but the last."""
    byte = (code << 4) | (size & 0x0F)
    size >>= 4
    header = bytearray()
    while size:
        header.append(byte | 0x80)
        byte, size = size & 0x7F, size >> 7
    header.append(byte)
    return bytes(header)


def _pack_files(entries: Mapping[str, bytes], large: int = 0x80000000) -> tuple[str, list[bytes], bytes]:
    """(name, the parts of the pack in order, index) holding these entries (id -> _pack_entry): a pack of
    version 2 and its index of version 2, offsets from `large` (2 GiB, as git's) in its table of large
    offsets. The pack is its parts, never joined: the entries are not held twice."""
    head = b"PACK" + struct.pack(">LL", 2, len(entries))
    digest = hashlib.sha1(head)
    offsets: dict[str, int] = {}
    at = len(head)
    for oid, entry in entries.items():
        offsets[oid] = at
        digest.update(entry)
        at += len(entry)
    pack_sum = digest.digest()
    pack = [head, *entries.values(), pack_sum]
    names = sorted(offsets)
    fanout = [0] * 256
    for oid in names:
        fanout[int(oid[:2], 16)] += 1
    for byte in range(1, 256):
        fanout[byte] += fanout[byte - 1]
    small: list[int] = []
    wide: list[int] = []
    for oid in names:
        if offsets[oid] < large:
            small.append(offsets[oid])
        else:
            small.append(0x80000000 | len(wide))
            wide.append(offsets[oid])
    index = bytearray(IDX_MAGIC + struct.pack(">L", 2) + struct.pack(">256L", *fanout))
    index += b"".join(bytes.fromhex(oid) for oid in names)
    index += struct.pack(f">{len(names)}L", *(zlib.crc32(entries[oid]) & 0xFFFFFFFF for oid in names))
    index += struct.pack(f">{len(names)}L", *small)
    index += struct.pack(f">{len(wide)}Q", *wide)
    index += pack_sum
    index += hashlib.sha1(index).digest()
    return pack_sum.hex(), pack, bytes(index)


def _opened(path: str) -> int:
    """A descriptor of a regular file at path, opened without following a link or waiting on a FIFO.
    ValueError for anything else there (a link, a folder, a FIFO); FileNotFoundError when nothing is."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{path} is a link; a store's own files never are") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):
            raise ValueError(f"{path} is not a file") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError(f"{path} is not a file")
    return fd


def _regular(path: str) -> bytes:
    """A regular file's bytes, never through a link and never blocking (a FIFO is refused)."""
    with os.fdopen(_opened(path), "rb") as handle:
        return handle.read()


MOST_INDEXED = 4_000_000  # objects of one pack index read here (~110 MB of index); git's own packs of a skill hold few
ZLIB_MOST_RATIO = 1032  # zlib's most output for one byte of input: a size declared above this is a lie (a bomb)


def _most(compressed: int) -> int:
    """The most bytes `compressed` bytes of zlib data can hold (its ceiling, not a guess)."""
    return 64 + ZLIB_MOST_RATIO * compressed


def _index_entries(path: str) -> Iterable[tuple[str, int]]:
    """(id, offset in the pack) of each object a pack index (version 2, or git's older version 1) names.
    ValueError when it is damaged: its size is checked against what its header says before it is read."""
    with os.fdopen(_opened(path), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(8 + 1024)
        if head[:4] == IDX_MAGIC:
            if len(head) < 8 + 1024 or struct.unpack(">L", head[4:8])[0] != 2:
                raise ValueError(f"{path} is not a pack index git writes (version 2, or 1)")
            count, version, names_at = struct.unpack(">L", head[8 + 1020 : 8 + 1024])[0], 2, 8 + 1024
            least = names_at + 28 * count + 40
            fits = least <= size <= least + 8 * count
        else:
            if len(head) < 1024:
                raise ValueError(f"{path} is cut short")
            count, version, names_at = struct.unpack(">L", head[1020:1024])[0], 1, 1024
            fits = size == names_at + 24 * count + 40
        if count > MOST_INDEXED or not fits:
            raise ValueError(f"{path} does not have the size its header says ({count} objects)")
        handle.seek(0)
        data = handle.read(size)
    if len(data) != size or hashlib.sha1(data[:-20]).digest() != data[-20:]:
        raise ValueError(f"{path} does not hold what its checksum says")
    if version == 1:
        for number in range(count):
            at = names_at + 24 * number
            yield data[at + 4 : at + 24].hex(), struct.unpack(">L", data[at : at + 4])[0]
        return
    offsets_at = names_at + 24 * count
    large_at = offsets_at + 4 * count
    small = struct.unpack(f">{count}L", data[offsets_at:large_at])
    for number, offset in enumerate(small):
        if offset & 0x80000000:
            at = large_at + 8 * (offset & 0x7FFFFFFF)
            if at + 8 > len(data) - 40:
                raise ValueError(f"{path} names a large offset it does not hold")
            offset = struct.unpack(">Q", data[at : at + 8])[0]
        yield data[names_at + 20 * number : names_at + 20 * number + 20].hex(), offset


def _read_packed(pack: str, offset: int) -> tuple[str, bytes]:
    """(kind, content) of the whole object at offset in a pack. ValueError when it is damaged or a delta."""
    with os.fdopen(_opened(pack), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if not 12 <= offset < size - 20:
            raise ValueError(f"{pack}: an index names an object past the pack's end")
        handle.seek(offset)
        return _unpack(handle, pack, size - 20 - offset)


def _unpack(handle: BinaryIO, where: str, room: int | None = None) -> tuple[str, bytes]:
    """The pack entry handle is at: (kind, content). ValueError when it is damaged or a delta. room: the
    bytes of the pack from there on (its checksum left out): the entry's declared size must fit in them."""
    first = handle.read(1)
    if not first:
        raise ValueError(f"{where}: an object is cut short")
    byte = first[0]
    code, size, shift = (byte >> 4) & 7, byte & 0x0F, 4
    while byte & 0x80:
        more = handle.read(1)
        if not more or shift > 56:
            raise ValueError(f"{where}: an object's size is damaged")
        byte = more[0]
        size |= (byte & 0x7F) << shift
        shift += 7
    if code not in KIND_OF:
        raise ValueError(f"{where}: an object of type {code} (a delta, or damaged) is not read here")
    if room is not None and size > _most(room):
        raise ValueError(f"{where}: an object says it holds {size} bytes, more than the pack could")
    return KIND_OF[code], _inflate(handle, size, where, whole=True)


def _inflate(handle: BinaryIO, size: int, where: str, whole: bool) -> bytes:
    """zlib data from handle: exactly `size` bytes of it (whole), or at most `size` (not whole: a loose
    object, whose header inside says its size). ValueError when it is damaged or holds more."""
    inflate = zlib.decompressobj()
    out = bytearray()
    pending = b""
    try:
        while not inflate.eof:
            pending = pending or handle.read(CHUNK)
            if not pending:
                raise ValueError(f"{where}: an object is cut short")
            out += inflate.decompress(pending, size + 1 - len(out))  # never more than one byte past its size
            pending = inflate.unconsumed_tail
            if len(out) > size:
                raise ValueError(f"{where}: an object holds more than its size")
    except zlib.error as exc:
        raise ValueError(f"{where}: an object is damaged ({exc})") from None
    if whole and len(out) != size:
        raise ValueError(f"{where}: an object is cut short")
    return bytes(out)


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
    # All git needs to see a repository: HEAD, objects/ and refs/ (refs/heads/ is made with the first branch,
    # by set_ref). Each folder is an inode, and making one is the costly part of a dispatch's set-up.
    os.makedirs(f"{root}/objects/pack", exist_ok=True)
    os.makedirs(f"{root}/refs", exist_ok=True)
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
            facts = (
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
            facts = (0, 0, 0, 0, 0, 0, int(entries[name].mode, 8), 0, 0, 0)
        body += struct.pack(">10L", *(value & 0xFFFFFFFF for value in facts))
        body += bytes.fromhex(entries[name].oid) + struct.pack(">H", min(len(encoded), 0xFFF))
        length = 62 + len(encoded)
        body += encoded + b"\0" * (8 - length % 8)
    body += hashlib.sha1(body).digest()
    path.write_bytes(bytes(body))
