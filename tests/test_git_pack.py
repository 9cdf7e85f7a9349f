"""The packs the workbench writes for a new repository (workspace/git_objects.py), and its reading of
packs: checked with git itself, and refusing what it cannot read whole (a damaged pack or index, a
delta, a FIFO) with ValueError, never a wrong object, never a hang."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from workbench.workspace import git_objects

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "PATH": os.environ["PATH"]}


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**GIT_ENV, "HOME": str(cwd), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=check)


def sealed(folder: Path, contents: list[bytes], large: int | None = None) -> tuple[git_objects.FreshObjects, list]:
    """A new bare repository at folder whose objects (these blobs, a tree of them, a commit) are one pack."""
    git_objects.init(folder, bare=True)
    objects = git_objects.FreshObjects(folder / "objects")
    entries = {
        f"f{n}": git_objects.Entry(git_objects.FILE, objects.write("blob", data)) for n, data in enumerate(contents)
    }
    commit = objects.write_commit(objects.write_tree(entries), "m", "A <a@b>", 0)
    git_objects.set_ref(folder, "refs/heads/master", commit)
    if large is not None:  # the table of large offsets, used from a small offset (as git index-pack can be told)
        objects._pack = git_objects._pack_files({o: e for o, e in objects.written.items() if e}, large=large)
    objects.seal()
    return objects, [commit, *(e.oid for e in entries.values())]


CONTENTS = [b"", b"a\n", b"x" * 15, b"y" * 16, bytes(range(256)) * 300]  # sizes across the size varint's steps


@pytest.mark.parametrize("large", [None, 40], ids=["offsets", "large offsets"])
def test_a_pack_written_here_is_whole_for_git_and_read_back_here(tmp_path, large):
    store = tmp_path / "store.git"
    _objects, oids = sealed(store, CONTENTS, large)
    packs = list((store / "objects" / "pack").iterdir())
    assert sorted(p.suffix for p in packs) == [".idx", ".pack"]
    idx = next(p for p in packs if p.suffix == ".idx")
    assert git(store, "verify-pack", "-v", str(idx)).returncode == 0
    assert git(store, "fsck", "--strict").returncode == 0
    shown = subprocess.run(["git", "cat-file", "blob", "master:f4"], cwd=store, capture_output=True, env=GIT_ENV)
    assert shown.stdout == CONTENTS[4]
    again = git_objects.Objects(store / "objects")
    for oid in oids:
        assert again.has(oid)
        kind, data = again.read(oid)
        assert git_objects.object_id(kind, data) == oid
    assert [again.read(oid)[1] for oid in oids[1:]] == CONTENTS
    # An object already packed is not written again loose.
    again.write("blob", b"a\n")
    assert not any(p.is_file() for p in (store / "objects").glob("??/*"))


def test_a_pack_git_wrote_is_read_and_a_delta_is_refused_not_misread(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    text = "".join(f"line {n}\n" for n in range(400))
    (repo / "a.txt").write_text(text)
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "one")
    (repo / "a.txt").write_text(text + "one more\n")
    git(repo, "commit", "-qam", "two")
    git(repo, "repack", "-adq", "--window=0")  # whole objects only
    objects = git_objects.Objects(repo / ".git" / "objects")
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert objects.entries(objects.tree_of(head))["a.txt"].oid == git(repo, "rev-parse", "HEAD:a.txt").stdout.strip()
    git(repo, "repack", "-adfq", "--window=10", "--depth=5")  # now one of the two blobs is a delta of the other
    objects = git_objects.Objects(repo / ".git" / "objects")
    read = []
    for rev in ("HEAD:a.txt", "HEAD~1:a.txt"):
        try:
            read.append(objects.read(git(repo, "rev-parse", rev).stdout.strip())[1])
        except ValueError as exc:
            assert "delta" in str(exc)
            read.append(None)
    assert None in read  # the delta was refused, and what was read is right
    assert [r for r in read if r is not None] in ([(text + "one more\n").encode()], [text.encode()])


def damage_pack(pack: Path) -> None:
    data = bytearray(pack.read_bytes())
    data[len(data) // 2] ^= 0xFF
    pack.chmod(0o644)
    pack.write_bytes(bytes(data))


def damage_index(idx: Path) -> None:
    idx.chmod(0o644)
    idx.write_bytes(idx.read_bytes()[:-30])


def damage_index_fifo(idx: Path) -> None:
    idx.unlink()
    os.mkfifo(idx)


def damage_index_link(idx: Path) -> None:
    target = idx.with_name("elsewhere")
    target.write_bytes(idx.read_bytes())
    idx.unlink()
    idx.symlink_to(target)


@pytest.mark.parametrize(
    "damage", [damage_pack, damage_index, damage_index_fifo, damage_index_link], ids=lambda f: f.__name__[7:]
)
def test_a_damaged_pack_or_index_is_a_value_error_never_a_wrong_object_or_a_hang(tmp_path, damage):
    store = tmp_path / "store.git"
    _objects, oids = sealed(store, CONTENTS)
    folder = store / "objects" / "pack"
    victim = next(p for p in folder.iterdir() if p.suffix == (".pack" if damage is damage_pack else ".idx"))
    damage(victim)
    outcomes: list[str] = []

    def read_all() -> None:
        objects = git_objects.Objects(store / "objects")
        for oid in oids:
            try:
                kind, data = objects.read(oid)
                assert git_objects.object_id(kind, data) == oid
                outcomes.append("read")
            except ValueError:
                outcomes.append("refused")

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading a damaged store blocked"
    assert len(outcomes) == len(oids) and "refused" in outcomes
