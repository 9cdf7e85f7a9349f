"""The one reader of run folders (workbench/runs/agent_files.py): a link anywhere on the
way is not followed, a pipe neither blocks nor is read, a walk is bounded in depth,
and a copy keeps links as links. tests/test_returned_trees.py has the exploits end to end."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from workbench.formats.regular import NotAFile, TooBig
from workbench.runs import agent_files


@pytest.fixture
def run(tmp_path: Path) -> Path:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "secret.md").write_text("HOST SECRET\n")
    run = tmp_path / "run"
    (run / "outputs" / "real").mkdir(parents=True)
    (run / "outputs" / "real" / "answer.md").write_text("the answer\n")
    (run / "outputs" / "linked").symlink_to(secrets)  # a folder on the way is a link
    (run / "outputs" / "stolen.md").symlink_to(secrets / "secret.md")
    os.mkfifo(run / "outputs" / "pipe")
    return run


def test_a_link_anywhere_on_the_way_is_not_followed(run):
    assert agent_files.read(run, "outputs/real/answer.md") == b"the answer\n"
    for relative in ("outputs/linked/secret.md", "outputs/stolen.md", "outputs/linked"):
        with pytest.raises(agent_files.Linked, match="a link, not followed"):
            agent_files.read(run, relative)
    with pytest.raises(agent_files.Linked):
        agent_files.read(run / "outputs" / "linked", "secret.md")  # the folder named is itself a link


def test_a_pipe_is_refused_at_once_not_waited_on(run):
    said: list[BaseException] = []
    reader = threading.Thread(target=lambda: _catch(said, agent_files.read, run, "outputs/pipe"), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive() and isinstance(said[0], NotAFile) and "FIFO" in str(said[0])


def _catch(said, function, *args):
    try:
        function(*args)
    except BaseException as exc:  # noqa: BLE001 - the test looks at what it was
        said.append(exc)


def test_reading_is_bounded(run):
    (run / "outputs" / "big.md").write_bytes(b"x" * 5000)
    with pytest.raises(TooBig):
        agent_files.read(run, "outputs/big.md", limit=1000)
    assert agent_files.read(run, "outputs/big.md", limit=1000, cut=True) == b"x" * 1000
    with pytest.raises(TooBig, match="together are over 3,000 bytes"):
        list(agent_files.contents(run, 3000))


def test_a_walk_names_links_and_pipes_and_never_enters_them(run):
    found = {e.path: (e.kind, e.target or e.why) for e in agent_files.entries(run)}
    assert found["outputs/linked"] == ("link", str(run.parent / "secrets"))
    assert found["outputs/pipe"] == ("other", "a FIFO (named pipe)")
    assert found["outputs/real/answer.md"][0] == "file"
    assert not any("secret.md" in path for path in found if "stolen" not in path)


def test_a_walk_stops_at_its_depth_bound(tmp_path):
    deep = tmp_path / "deep"
    os.makedirs(deep / "/".join(["d"] * (agent_files.MAX_DEPTH + 5)))
    found = agent_files.entries(deep)
    assert any(e.kind == "other" and "folders deep" in e.why for e in found)
    assert max(e.path.count("/") for e in found) < agent_files.MAX_DEPTH


def test_a_copy_keeps_links_as_links_and_leaves_pipes_out(run, tmp_path):
    (run / "outputs" / "real" / "run.sh").write_text("#!/bin/sh\n")
    (run / "outputs" / "real" / "run.sh").chmod(0o755)
    left_out = agent_files.copy(run, tmp_path / "copy")
    copy = tmp_path / "copy" / "outputs"
    assert os.readlink(copy / "linked") == str(run.parent / "secrets")
    assert (copy / "real" / "answer.md").read_text() == "the answer\n"
    assert (copy / "real" / "run.sh").stat().st_mode & 0o777 == 0o755
    assert not (copy / "pipe").exists() and [e.path for e in left_out] == ["outputs/pipe"]
