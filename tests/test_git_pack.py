"""The packs the workbench writes for a new repository (workspace/git_objects.py), and its reading of
packs: checked with git itself, and refusing what it cannot read whole (a damaged pack or index, a
delta, a FIFO) with ValueError, never a wrong object, never a hang."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from workbench.runs import run_folder
from workbench.workspace import git_objects, layout
from workbench.workspace.versions import VersionStore

ROOT = Path(__file__).resolve().parent.parent

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


# ---------------------------------------------------------------- what a hostile or damaged store holds
# (found by a reviewing helper: each was an exception of another type, a hang, a leak or unbounded memory)


def baseline_run(tmp_path: Path) -> tuple[Path, str]:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "a.txt").write_text("hello\n")
    return folder, run_folder.baseline(folder)


def plant(objects: Path, oid: str, entry: bytes) -> None:
    """What an unsandboxed agent can do to trees/: add a pack whose index names `oid` at a crafted entry; its
    name sorts last, so its entry wins over the baseline's own."""
    _name, pack, index = git_objects._pack_files({oid: entry})
    (objects / "pack" / "pack-ffff.pack").write_bytes(b"".join(pack))
    (objects / "pack" / "pack-ffff.idx").write_bytes(index)


def refused_in_bounded_memory(folder: Path, commit: str) -> None:
    """changed_files in a child whose address space is capped: a ValueError or OSError, never memory spent."""
    code = f"""
import resource
resource.setrlimit(resource.RLIMIT_AS, ({768 << 20}, {768 << 20}))
from pathlib import Path
from workbench.runs import run_folder
try:
    run_folder.changed_files(Path({str(folder)!r}), {commit!r})
except (OSError, ValueError) as exc:
    print("refused:", type(exc).__name__, exc)
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0 and "refused" in done.stdout, done.stdout + done.stderr[-500:]


@pytest.mark.parametrize("size", [2**40, 2**63], ids=["past the pack", "past 64 bits"])
def test_an_entry_declaring_a_huge_size_is_a_value_error(tmp_path, size):
    folder, commit = baseline_run(tmp_path)
    plant(tmp_path / layout.TREES / "objects", commit, git_objects._entry_header(1, size) + zlib.compress(b"x"))
    with pytest.raises(ValueError, match="size is damaged|more than the pack could"):
        run_folder.changed_files(folder, commit)


def test_a_zlib_bomb_in_a_pack_is_refused_before_its_memory_is_taken(tmp_path):
    folder, commit = baseline_run(tmp_path)
    size = 1536 << 20  # 1.5 GiB of zeros, declared, in ~1.5 MiB: more than zlib can put in that many bytes
    squeeze = zlib.compressobj(9)
    bomb = b"".join(squeeze.compress(bytes(1 << 20)) for _ in range(size >> 20)) + squeeze.flush()
    plant(tmp_path / layout.TREES / "objects", commit, git_objects._entry_header(1, size) + bomb[: len(bomb) // 2])
    refused_in_bounded_memory(folder, commit)


def test_an_index_is_checked_against_its_size_before_it_is_read(tmp_path):
    folder, commit = baseline_run(tmp_path)
    packs = tmp_path / layout.TREES / "objects" / "pack"
    (packs / "pack-0000.pack").write_bytes(b"PACK")
    with open(packs / "pack-0000.idx", "wb") as out:
        out.truncate(4 << 30)  # 4 GiB, no block on disk
    refused_in_bounded_memory(folder, commit)


@pytest.mark.parametrize("shadow", ["fifo", "link to /dev/zero"])
def test_a_loose_object_planted_over_a_packed_one_is_refused_never_a_hang(tmp_path, shadow):
    folder, commit = baseline_run(tmp_path)
    loose = tmp_path / layout.TREES / "objects" / commit[:2] / commit[2:]
    loose.parent.mkdir()
    if shadow == "fifo":
        os.mkfifo(loose)
    else:
        loose.symlink_to("/dev/zero")
    refused_in_bounded_memory(folder, commit)


@pytest.mark.parametrize("which", [".idx", ".pack"])
def test_a_folder_in_place_of_an_index_or_a_pack_is_a_value_error_naming_it_and_leaks_nothing(tmp_path, which):
    _folder, commit = baseline_run(tmp_path)
    store = tmp_path / layout.TREES / "objects"
    victim = next((store / "pack").glob("*" + which))
    victim.unlink()
    victim.mkdir()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        with pytest.raises(ValueError, match=str(victim)):
            git_objects.Objects(store).read(commit)
    assert len(os.listdir("/proc/self/fd")) == before


def test_an_index_whose_pack_is_gone_is_skipped_as_git_skips_it(tmp_path):
    _folder, commit = baseline_run(tmp_path)
    packs = tmp_path / layout.TREES / "objects" / "pack"
    next(packs.glob("*.pack")).unlink()
    objects = git_objects.Objects(packs.parent)
    assert not objects.has(commit)
    with pytest.raises(FileNotFoundError):
        objects.read(commit)


def test_git_repack_in_the_store_keeps_the_baseline_it_names(tmp_path):
    folder, commit = baseline_run(tmp_path)
    store = tmp_path / layout.TREES
    git(store, f"--git-dir={store}", "repack", "-adq")
    git(store, f"--git-dir={store}", "gc", "-q", "--prune=now")
    assert run_folder.changed_files(folder, commit).files == []


def test_versions_git_packed_by_git_with_an_index_of_version_1_still_takes_snapshots(tmp_path):
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: s\n---\none\n")
    store = VersionStore(tmp_path / "ws")
    first = store.snapshot(skill, None)
    git(store.path, f"--git-dir={store.path}", "-c", "pack.indexVersion=1", "repack", "-adq")
    (skill / "SKILL.md").write_text("---\nname: s\n---\ntwo\n")
    assert VersionStore(tmp_path / "ws").snapshot(skill, first) == "v1"
