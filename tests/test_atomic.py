"""One writer per workspace, and what promotion may and may not touch: the lock
names its holder and every writing command stops (exit 2) or waits for it; a
promotion writes links and modes, never a file no version owns, and nothing
when the folder changed after its diff was shown; a run planned but never
finished makes its iteration an error."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import copy_prepared
from support.process import command as workbench_command
from test_kills import RUN_ARGS, environment, small_demo, workbench

from workbench.errors import Refused
from workbench.improve.promote import plan_write, promote
from workbench.workspace import layout, lock
from workbench.workspace.versions import VersionStore

HOLD = """
import sys
from pathlib import Path
from workbench.workspace import lock
with lock.hold(Path(sys.argv[1]), "a test"):
    print("held", flush=True)
    sys.stdin.read()
"""


def holder(workspace: Path, cwd: Path) -> subprocess.Popen:
    """A process holding the workspace's lock until its standard input is closed (or it is killed)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(workspace)],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=environment(cwd),
    )
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    return process


@pytest.fixture(scope="module")
def evaluated_once(tmp_path_factory) -> Path:
    """The small demo with v0 made and evaluated, once a module: the tests copy it."""
    base = tmp_path_factory.mktemp("evaluated")
    skill = small_demo(base)
    assert workbench(base, "version", "new", str(skill)).returncode == 0
    assert workbench(base, "evaluate", str(skill), "v0", *RUN_ARGS).returncode == 0
    return base


@pytest.fixture
def evaluated(evaluated_once, tmp_path) -> Path:
    """A private copy of the evaluated small demo (its workspace and config folder beside it): the skill."""
    copy_prepared(evaluated_once, tmp_path)
    return tmp_path / "changelog-entry"


@pytest.mark.slow  # 37 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_every_writer_stops_with_exit_2_naming_who_holds_the_workspace(evaluated, tmp_path):
    skill, workspace = evaluated, tmp_path / "changelog-entry-workspace"
    process = holder(workspace, tmp_path)
    try:
        for command in (
            ("run", str(skill), *RUN_ARGS),
            ("evaluate", str(skill), "v0", *RUN_ARGS),
            ("grade", str(workspace / "iteration-1"), "--trust"),
            ("version", "new", str(skill)),
            ("promote", str(skill), "v0"),
        ):
            result = workbench(tmp_path, *command)
            assert result.returncode == 2, (command, result.stdout, result.stderr)
            assert f"is in use by pid {process.pid}" in result.stderr and "(a test)" in result.stderr, result.stderr
        assert workbench(tmp_path, "report", str(workspace / "iteration-1")).returncode == 0  # readers read on
    finally:
        process.kill()
        process.wait()
    # The holder died holding it: the kernel let go, the next writer goes on.
    assert workbench(tmp_path, "promote", str(skill), "v0").returncode == 0


def test_wait_waits_for_the_holder_then_writes(evaluated, tmp_path):
    workspace = tmp_path / "changelog-entry-workspace"
    process = holder(workspace, tmp_path)
    # The holder lets go only once the waiter says it waits: a fixed hold could end before a slow
    # (loaded) machine had even started the waiter, which would then have nobody to wait for.
    waiter = subprocess.Popen(
        workbench_command("promote", str(evaluated), "v0", "--wait"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(tmp_path),
    )
    try:
        assert waiter.stderr is not None
        said = waiter.stderr.readline()
        assert f"waiting for pid {process.pid}" in said, said
        time.sleep(0.3)
        assert waiter.poll() is None  # it waits while the lock is held
        process.communicate("")  # the holder lets go and ends
        out, err = waiter.communicate(timeout=120)
        assert waiter.returncode == 0, said + err
        assert "Traceback" not in said + err and "v0 is the current best" in out, out
    finally:
        for proc in (waiter, process):
            proc.kill()
            proc.wait()


def test_a_second_lock_in_the_same_process_is_refused_too(tmp_path):
    with lock.hold(tmp_path, "first"):
        with pytest.raises(lock.WorkspaceBusy, match="first"):
            with lock.hold(tmp_path, "second"):
                pass
    with lock.hold(tmp_path, "again"):  # released on leaving
        pass


@pytest.mark.slow  # 24 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_promotion_writes_links_and_modes_shows_them_and_leaves_unowned_files(evaluated, tmp_path):
    skill, workspace = evaluated, tmp_path / "changelog-entry-workspace"
    store = VersionStore(workspace)
    (skill / "LINK.md").symlink_to("SKILL.md")
    (skill / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (skill / "tool.sh").chmod(0o755)
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    assert workbench(tmp_path, "evaluate", str(skill), "v1", *RUN_ARGS).returncode == 0
    assert workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes").returncode == 0
    assert not (skill / "LINK.md").exists() and not (skill / "tool.sh").exists()
    (skill / "evals" / "notes.txt").write_text("mine\n")  # evals/ is no version's
    shown = workbench(tmp_path, "promote", str(skill), "v1", "--write", "--yes")
    assert shown.returncode == 0, shown.stderr
    assert "new file mode 120000" in shown.stdout and "new file mode 100755" in shown.stdout
    assert (skill / "LINK.md").is_symlink() and (skill / "LINK.md").readlink() == Path("SKILL.md")
    assert (skill / "tool.sh").stat().st_mode & 0o777 == 0o755
    assert (skill / "evals" / "notes.txt").read_text() == "mine\n"
    assert store.tree_of_folder(skill) == store.tree_of("v1")


@pytest.mark.slow  # 12 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_folder_changed_after_its_diff_was_shown_is_not_written(evaluated, tmp_path):
    skill, workspace = evaluated, tmp_path / "changelog-entry-workspace"
    store = VersionStore(workspace)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nBetter.\n")
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    assert workbench(tmp_path, "evaluate", str(skill), "v1", *RUN_ARGS).returncode == 0
    shown = plan_write(store, "v0", skill)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nAn edit after the diff.\n")
    with pytest.raises(Refused, match="changed since its diff was shown"):
        promote(workspace, "v0", skill, shown)
    assert "An edit after the diff." in (skill / "SKILL.md").read_text()


@pytest.mark.slow  # 18 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_promotion_refuses_rather_than_overwrite_a_file_of_the_users(evaluated, tmp_path):
    skill = evaluated
    (skill / "references").mkdir()
    (skill / "references" / "a.md").write_text("a\n")
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    assert workbench(tmp_path, "evaluate", str(skill), "v1", *RUN_ARGS).returncode == 0
    assert workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes").returncode == 0
    (skill / ".gitignore").write_text("references\n")  # now, outside git too, `references` is no version's
    (skill / "references").write_text("a file of mine where v1 has a folder\n")
    before = (skill / "SKILL.md").read_bytes()
    refused = workbench(tmp_path, "promote", str(skill), "v1", "--write", "--yes")
    assert refused.returncode == 2
    assert (skill / "references").read_text().startswith("a file of mine")
    assert (skill / "SKILL.md").read_bytes() == before


def test_a_run_planned_but_never_started_makes_the_iteration_an_error(evaluated, tmp_path):
    iteration = tmp_path / "changelog-entry-workspace" / "iteration-1"
    copy = tmp_path / "copy" / "iteration-1"
    shutil.copytree(iteration, copy)
    assert workbench(tmp_path, "report", str(copy)).returncode == 0
    [run] = [r for r in layout.runs(copy) if r.configuration == "with_skill"][:1]
    shutil.rmtree(Path(run.path).parent)  # as if killed before it started: no folder at all
    (copy / layout.PLAN).touch()  # the launch began after benchmark.json was written
    report = workbench(tmp_path, "report", str(copy))
    assert report.returncode == 2, report.stdout
    assert "planned in plan.json but not finished" in report.stdout
