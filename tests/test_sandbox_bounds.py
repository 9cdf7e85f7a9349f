"""Bounds inside the sandbox (workbench/runs/bounds.py): an agent that forks without end, fills its disk or
/tmp, or eats memory ends as a failed run that names the bound it hit, within seconds of hitting it, and
nothing of it is left running. Each with small limits from the config file; the real `workbench run`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DEMO
from support.process import command as workbench_command

from workbench.runs import bounds, executors, sandbox
from workbench.runs.executors.base import TurnCommand
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.processes import run_bounded
from workbench.runs.runner import FAILED, RunOptions

ROOT = Path(__file__).resolve().parent.parent
needs_bwrap = pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()}")
MARK = "wbbound31415"  # the name the agents' processes carry, to find any left running
LIMITS = {"sandbox_processes": 64, "sandbox_memory_mb": 96, "sandbox_file_mb": 8, "sandbox_tmp_mb": 8,
          "sandbox_disk_mb": 24}  # fmt: skip
RESULT = """echo '{"type":"result","result":"ok","session_id":"s","usage":{"input_tokens":1}}'"""

AGENTS = {
    # the classic fork bomb, each copy named so that a survivor would be found; the turn stays (a sleep
    # started first) so that a loaded machine's slow bomb is stopped by the bound, not by the turn ending
    "processes": (f"exec -a {MARK} bash -c 'sleep 50 & :(){{ :|:& }};:; wait'", "hit the process bound: 64 processes"),
    # one file that grows without end: RLIMIT_FSIZE ends the writer, the run names the bound
    "file": (f"yes {MARK} > big; {RESULT}", "hit the file size bound: 8 MB (big)"),
    # many files, each under the file bound: the workspace's growth is watched
    "disk": (
        "i=0; while true; do head -c 4000000 /dev/zero > part-$i; i=$((i+1)); done",
        "hit the disk bound: its workspace and home grew by more than 24 MB",
    ),
    # /tmp fills (ENOSPC), and the agent goes on as if nothing happened
    "tmp": (f"yes {MARK} > /tmp/big; exec -a {MARK} sleep 60", "hit the /tmp bound: 8 MB"),
    # memory: the OOM killer of its cgroup
    "memory": (
        f"{sys.executable} -c 'x = []\nwhile True: x.append(bytearray(1 << 20))'; exec -a {MARK} sleep 60",
        "hit the memory bound: 96 MB",
    ),
}


def _populated(folder: Path) -> bool:
    """Any process left in a cgroup or its children."""
    return any(procs.read_text().split() for procs in folder.rglob("cgroup.procs"))


def _survivors() -> list[str]:
    found = []
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            line = entry.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if line.startswith(MARK):
            found.append(line)
    return found


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@needs_bwrap
@pytest.mark.parametrize("bound", list(AGENTS))
def test_an_agent_that_passes_a_bound_ends_as_a_failed_run_naming_it(tmp_path, bound):
    config = Path(os.environ["WORKBENCH_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.json").write_text(json.dumps(LIMITS))
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    script, said = AGENTS[bound]
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/bash\ncat > /dev/null\n{script}\n")
    args = ["run", str(skill), "--executor", "command", "--agent-command", f"bash {agent}", "--only"]
    args += ["export-json-flag", "--baseline", "none", "--judge", "demo", "--sandbox", "bwrap", "--trust"]
    began = time.monotonic()
    process = subprocess.Popen(
        workbench_command(*args, "--timeout", "120"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    out, err = process.communicate(timeout=300)
    took = time.monotonic() - began
    [run] = (tmp_path / "changelog-entry-workspace").glob("iteration-1/*/*/run-1")
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "failed" and record["bound"] == said, (record, err)
    assert said in record["error"] and "Traceback" not in err
    assert took < 60, f"{took:.1f} s: the bound stopped it late (the turn's timeout is 120 s)"
    assert not _survivors()
    # the turn's cgroups went with it, and the workbench's own with the workbench
    for found in (bounds.means().pids, bounds.means().memory):
        if found is not None:
            assert not (found.parent / f"workbench-{process.pid}").exists()


@needs_bwrap
def test_without_a_cgroup_the_turns_processes_are_counted_and_memory_is_bounded_per_process(tmp_path, monkeypatch):
    """A machine without a writable cgroup (a user's, without delegation): the turn's processes are counted
    in its pid namespace; memory is an address-space limit per process, and the run warns of both."""
    monkeypatch.setattr(bounds, "means", lambda: bounds.Means(nproc_binds=os.geteuid() != 0))
    held = sandbox.choose("bwrap", None)
    assert any("processes are only counted" in w and "memory is bounded per process" in w for w in held.warnings)
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    results = {}
    for name, script in {
        "processes": f"for i in $(seq 100); do (exec -a {MARK} sleep 60) & done; wait",
        "memory": f"{sys.executable} -c 'bytearray(512 << 20)' || echo 'memory refused' >&2; exit 3",
    }.items():
        agent = tmp_path / f"{name}.sh"
        agent.write_text(f"cat > /dev/null\n{script}\n")
        executor = executors.make("command", f"bash {agent}")
        options = RunOptions(jobs=1, timeout=120, baseline="none", sandbox="bwrap", only={"export-json-flag"})
        options.limits = bounds.Limits(processes=64, memory_mb=256)
        launch = prepare_launch(skill, executor, options, workspace=tmp_path / f"ws-{name}")
        asyncio.run(run_launch(launch, executor, options))
        [dispatch] = launch.dispatches
        results[name] = json.loads((dispatch.folder / "run.json").read_text())
    assert results["processes"]["status"] == FAILED
    assert results["processes"]["bound"] == "hit the process bound: 64 processes"
    assert results["memory"]["status"] == FAILED and "status 3" in results["memory"]["error"]
    assert "memory refused" in results["memory"]["stderr_tail"]
    assert not _survivors()


@needs_bwrap
def test_a_workbench_killed_mid_turn_leaves_nothing_running_and_its_cgroups_are_removed_by_the_next(
    tmp_path, monkeypatch
):
    found = bounds.means()
    if found.pids is None:
        pytest.skip("no writable pids cgroup here")
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    agent = tmp_path / "agent.sh"
    agent.write_text(f"cat > /dev/null\nexec -a {MARK} sleep 120\n")
    args = ["run", str(skill), "--executor", "command", "--agent-command", f"bash {agent}", "--only"]
    args += ["export-json-flag", "--baseline", "none", "--judge", "demo", "--sandbox", "bwrap", "--trust"]
    process = subprocess.Popen(
        workbench_command(*args), cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    theirs = found.pids.parent / f"workbench-{process.pid}"
    deadline = time.monotonic() + 60
    while not _survivors() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _survivors(), "the agent did not start"
    assert any(theirs.glob("turn-*")), "the turn is not in a cgroup of its own"
    process.kill()  # kill -9: no atexit, no cleanup
    process.wait()
    deadline = time.monotonic() + 10
    while _survivors() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _survivors()  # the sandbox died with it (--die-with-parent, its pid namespace)
    assert theirs.exists()  # left behind
    # A process killed is gone from /proc's cmdline at once but stays in its cgroup until it is reaped, and
    # rmdir fails until then: the product waits STALE seconds before sweeping; the test waits for empty.
    deadline = time.monotonic() + 10
    while _populated(theirs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _populated(theirs)
    monkeypatch.setattr(bounds, "STALE", 0.0)
    for folder in (found.pids, found.memory):  # what the next workbench does when it first bounds a turn
        if folder is not None:
            bounds._sweep(folder.parent)
            assert not (folder.parent / f"workbench-{process.pid}").exists() and folder.exists()


CLAUDE = os.environ.get("WORKBENCH_TEST_CLAUDE") or shutil.which("claude")
CODEX = os.environ.get("WORKBENCH_TEST_CODEX") or shutil.which("codex")


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@needs_bwrap
@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_the_real_agents_start_under_the_default_bounds_without_a_cgroup_too(tmp_path, monkeypatch, agent):
    """Where no cgroup is writable, memory is RLIMIT_AS per process at the default bound: Claude Code (a native
    binary) and Codex (Node, then its native binary) still run a whole scripted conversation under it."""
    from agents import answer_skill
    from agents.scripted_model import ScriptedServer
    from agents.scripted_responses import ScriptedResponsesServer

    from workbench.runs.executors.claude import ClaudeExecutor
    from workbench.runs.executors.codex import CodexExecutor

    binary = CLAUDE if agent == "claude" else CODEX
    if not binary:
        pytest.skip(f"the {agent} CLI is not installed (tests/run.sh installs it)")
    monkeypatch.setattr(bounds, "means", lambda: bounds.Means(nproc_binds=os.geteuid() != 0))
    skill = answer_skill(tmp_path, DEMO)
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    with ScriptedServer() if agent == "claude" else ScriptedResponsesServer() as server:
        if agent == "claude":
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-scripted")
            executor = ClaudeExecutor(binary=binary)
        else:
            (home / ".codex" / "config.toml").write_text(server.config_toml())
            monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
            monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
            executor = CodexExecutor(binary=binary)
        options = RunOptions(jobs=1, timeout=120, baseline="none", sandbox="bwrap")
        launch = prepare_launch(skill, executor, options)
        asyncio.run(run_launch(launch, executor, options))
    [dispatch] = launch.dispatches
    record = json.loads((dispatch.folder / "run.json").read_text())
    assert record["status"] == "done" and record["turns"] == 2 and record["network"] == "model", record


def test_a_turns_end_does_not_wait_for_its_cgroup_to_go_and_the_cgroup_goes_once_it_can(tmp_path):
    """What is left in a turn's cgroup at its end is killed at once; its removal, which waits until the cgroup
    can go (rmdir fails while a killed process is still exiting), is the removal thread's (bounds.Removals),
    not the turn's slot's: a turn's end waited for it, 5-10 ms a sandboxed dispatch. Here the cgroup cannot
    go until the test lets it (a cgroup inside it: rmdir says EBUSY): the turn's end waited 5 s for it before."""
    found = bounds.means()
    if found.pids is None:
        pytest.skip("no writable pids cgroup here")
    held = bounds.TurnBounds(bounds.Limits())
    held._make()
    with held.starting():  # as a turn's bubblewrap starts
        left = subprocess.Popen(["sleep", "60"])
    inner: list[Path] = []
    try:
        held._hold(left.pid)
        folders = list(held.cgroups)
        assert folders and all(str(left.pid) in (f / "cgroup.procs").read_text().split() for f in folders)
        for folder in folders:
            (folder / "inner").mkdir()
            inner.append(folder / "inner")
        began = time.monotonic()
        held.close()
        took = time.monotonic() - began
        assert left.wait(10) == -9  # killed by the turn's end
        assert took < 1.0, f"the turn's end waited {took:.2f} s for its cgroups to go"
        time.sleep(0.1)
        assert all(f.exists() for f in folders)  # they cannot go yet
    finally:
        left.kill()
        left.wait()
        for folder in inner:
            folder.rmdir()
    deadline = time.monotonic() + 5
    while any(f.exists() for f in folders) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(f.exists() for f in folders), "a turn's cgroup was not removed once it could go"


@needs_bwrap
def test_a_turns_bubblewrap_starts_in_its_cgroups_already_and_its_processes_stay_in_them(tmp_path):
    """cgroup v1: the turn's bubblewrap is born in its cgroups (the thread that starts it moves itself in for
    that moment: TurnBounds.starting), so every process of the turn is in them from its first instruction and
    none is moved from outside (writing another's pid to cgroup.procs waits ~10-20 ms for a lock that every
    fork and exec of the machine takes); and the workbench's thread is back in its own cgroups after."""
    found = bounds.means()
    if found.v2 or found.pids is None:
        pytest.skip("no writable cgroup v1 here")
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    shown = "cat /proc/self/cgroup /proc/1/cgroup"  # the turn's command, and bubblewrap's first process
    command = sandbox.wrap(TurnCommand(argv=["/bin/sh", "-c", shown]), repo, home)
    assert command.bounds is not None
    moved: list[str] = []
    original = Path.write_text

    def write_text(path: Path, data: str, *args, **kwargs):
        if path.name == "cgroup.procs":
            moved.append(data)
        return original(path, data, *args, **kwargs)

    ours = Path("/proc/thread-self/cgroup").read_text()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "write_text", write_text)
        finished = run_bounded(command.argv, cwd=repo, contained=True, bounds=command.bounds, timeout=60)
    assert finished.code == 0, finished
    assert not moved, f"a process of the turn was moved from outside: {moved}"
    assert Path("/proc/thread-self/cgroup").read_text() == ours  # the thread that started it is back
    lines = finished.stdout.splitlines()
    for controller, folder in (("pids", found.pids), ("memory", found.memory)):
        if folder is None:
            continue
        theirs = [line.split(":", 2)[2] for line in lines if line.split(":")[1] == controller]
        assert len(theirs) == 2, lines
        assert all(f"/{folder.name}/turn-" in path for path in theirs), (controller, lines)
