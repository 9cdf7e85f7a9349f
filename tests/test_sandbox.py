"""The agents' sandbox (workbench/runs/sandbox.py), end to end through the CLI:
a sandboxed demo run, and a command agent that tries to write outside its
workspace, into the user's home, and to leave a daemon behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agents import answer_skill
from conftest import DEMO
from support.process import command as workbench_command

from workbench.app import pipeline
from workbench.app.choices import Agent, Placement
from workbench.errors import Refused
from workbench.runs import sandbox

ROOT = Path(__file__).resolve().parent.parent
needs_bwrap = pytest.mark.skipif(
    bool(sandbox.unavailable()),
    reason=f"no sandbox here: {sandbox.unavailable()} (tests/run.sh installs bubblewrap when it runs as root)",
)
DAEMON = "31.4159"  # `sleep 31.4159`: a daemon easy to find among the machine's processes
AGENT = f"""#!/bin/sh
echo leaked > "$OUTSIDE/marker" 2>/dev/null
echo leaked > "$SCRIPTS/marker" 2>/dev/null
echo leaked > "$HOME/leak" 2>/dev/null
mount -o remount,bind,rw "$SCRIPTS" 2>/dev/null && echo leaked > "$SCRIPTS/remounted" 2>/dev/null
echo inside > answer.txt
setsid sh -c 'exec sleep {DAEMON}' > /dev/null 2>&1 &
echo '{{"type":"result","result":"ok","session_id":"s","usage":{{"input_tokens":1}}}}'
"""


def _workbench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path / "user-home"),
        "OUTSIDE": str(tmp_path / "outside"),
        "SCRIPTS": str(tmp_path / "agent"),
    }
    (tmp_path / "user-home").mkdir(exist_ok=True)
    return subprocess.run(workbench_command(*args), capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)


def _records(workspace: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(workspace.glob("iteration-1/*/*/run-*/run.json"))]


def _daemons() -> list[str]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            line = stat.read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"sleep {DAEMON}" in line and "sh -c" not in line:
            found.append(line)
    return found


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@needs_bwrap
def test_a_sandboxed_demo_run_passes_like_an_unsandboxed_one(tmp_path):
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    done = _workbench(tmp_path, "run", str(skill), "--executor", "demo", "--sandbox", "bwrap", "--trust")
    records = _records(tmp_path / "changelog-entry-workspace")
    assert records and all(r["status"] == "done" and r["sandbox"] == "bwrap" for r in records), done.stderr
    benchmark = json.loads((tmp_path / "changelog-entry-workspace" / "iteration-1" / "benchmark.json").read_text())
    assert benchmark["run_summary"]["with_skill"]["pass_rate"]["mean"] == 1.0, done.stdout
    assert not list(tmp_path.glob("*-workspace/iteration-1/*/*/run-*/home"))  # private homes are removed


@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_a_command_agent_cannot_write_outside_its_workspace_nor_leave_a_daemon(tmp_path, mode):
    skill = answer_skill(tmp_path, DEMO, turns=None)
    (tmp_path / "outside").mkdir()
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "agent.sh").write_text(AGENT)
    command = f"sh {tmp_path / 'agent' / 'agent.sh'}"
    args = ["run", str(skill), "--executor", "command", "--agent-command", command, "--judge", "demo"]
    done = _workbench(tmp_path, *args, "--baseline", "none", "--sandbox", mode, "--trust")
    [record] = _records(tmp_path / "changelog-entry-workspace")
    assert record["status"] == "done" and record["sandbox"] == mode, (record, done.stderr)
    assert "answer.txt" in record["changed_files"]  # the workspace is writable
    # killed with the run, sandboxed or not: a killed process leaves /proc a moment later on a loaded
    # machine, a survivor sleeps 31 s
    deadline = time.monotonic() + 3
    while _daemons() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _daemons()
    escaped = [p for p in (tmp_path / "outside" / "marker", tmp_path / "agent" / "marker") if p.exists()]
    leaked_home = (tmp_path / "user-home" / "leak").exists()
    if mode == "bwrap":  # even as root: no capability to remount its read-only folder writable
        assert escaped == [] and not leaked_home and not (tmp_path / "agent" / "remounted").exists()
    else:  # without the sandbox the same agent does write there: the test above means something
        assert len(escaped) == 2 and leaked_home


def test_auto_runs_unsandboxed_with_a_warning_when_bwrap_cannot_work(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "unavailable", lambda: "bubblewrap (bwrap) is not installed")
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    prepared = pipeline.prepare(pipeline.RunRequest(skill, agent=Agent("demo")))
    assert prepared.options.sandbox == "none"
    assert any("without a sandbox: bubblewrap (bwrap) is not installed" in w for w in prepared.warnings)
    with pytest.raises(Refused, match="--sandbox bwrap: bubblewrap"):
        pipeline.prepare(pipeline.RunRequest(skill, agent=Agent("demo"), placement=Placement("bwrap")))


def test_a_turns_sandbox_works_out_each_paths_real_place_once(tmp_path, monkeypatch):
    """Every turn's argv is made anew (the workspace differs): each real place it looks up costs a lstat per
    component, and a Python agent's turn looked the same ones up again and again (~400 stat calls, ~1.8 ms of
    CPU a turn). Counted: os.path.realpath per path, one wrap."""
    from workbench.runs.executors.base import TurnCommand

    asked: dict[str, int] = {}
    real = os.path.realpath

    def counted(path, *args, **kwargs):
        asked[os.fspath(path)] = asked.get(os.fspath(path), 0) + 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", counted)
    command = TurnCommand(shell=f'{sys.executable} -S -c "print(1)"', env={})
    held = sandbox.Confinement(hidden=(tmp_path / "workspace", tmp_path / "skill"))
    sandbox.wrap(command, tmp_path / "repo", tmp_path / "home", held)
    again = {path: times for path, times in asked.items() if times > 1}
    assert asked and not again, f"{sum(asked.values())} lookups of {len(asked)} paths; again: {again}"


def test_the_sandbox_argv_keeps_the_system_read_only_and_the_workspace_writable(tmp_path):
    from workbench.runs.executors.base import TurnCommand

    repo, home = tmp_path / "repo", tmp_path / "home"
    wrapped = sandbox.wrap(TurnCommand(shell="echo hi", env={"HOME": "/nonexistent-home"}), repo, home)
    argv = wrapped.argv or []
    assert argv[0] == "bwrap" and {"--die-with-parent", "--unshare-pid", "--new-session"} <= set(argv)
    assert argv[argv.index("--tmpfs") + 1] == "/tmp"
    writable = [argv[i + 2] for i, a in enumerate(argv) if a == "--bind"]
    assert writable == ["/nonexistent-home", str(home), str(repo)]
    assert argv[-3:] == ["/bin/sh", "-c", "echo hi"]


def test_a_runs_places_are_worked_out_once_and_never_show_a_dispatchs_own_folders(tmp_path, monkeypatch):
    """What a turn is shown read-only is worked out once per run (sandbox.shown_places): the same as each
    dispatch's own working-out, its repository and home held out alike; afresh when they are not inside a
    hidden folder, where the rule could answer otherwise."""
    workspace = tmp_path / "workspace"
    owns = [(workspace / f"run-{i}" / "repo", workspace / f"run-{i}" / "home") for i in range(3)]
    for repo, home in owns:
        repo.mkdir(parents=True)
        home.mkdir()
    inner = ["/bin/sh", "-c", f"{sys.executable} -c pass"]
    env = dict(os.environ)
    user_home = os.path.expanduser("~")
    worked = []
    real = sandbox.Shown.places

    def counted(self, *args):
        worked.append(args)
        return real(self, *args)

    monkeypatch.setattr(sandbox.Shown, "places", counted)
    held = sandbox.Confinement(hidden=(workspace,), places={})
    found = [sandbox.shown_places(inner, inner[2], env, user_home, own, held) for own in owns]
    assert len(worked) == 1
    for own, places in zip(owns, found, strict=True):
        assert places == real(sandbox.Shown(user_home, (*own, workspace)), inner, inner[2], env, ())
        assert places and not any(str(tmp_path) in source for source, _ in places)

    outside = (tmp_path / "elsewhere" / "repo", tmp_path / "elsewhere" / "home")
    worked.clear()
    sandbox.shown_places(inner, inner[2], env, user_home, outside, held)
    sandbox.shown_places(inner, inner[2], env, user_home, outside, held)
    assert len(worked) == 2

    # A place shown at the first turn is made a link into the workspace during the run: asked again, refused.
    shared = tmp_path / "shared"
    shared.mkdir()
    shows = sandbox.Confinement(hidden=(workspace,), places={}, show=(str(shared),))
    worked.clear()
    assert (str(shared), str(shared)) in sandbox.shown_places(inner, inner[2], env, user_home, owns[0], shows)
    shared.rmdir()
    shared.symlink_to(workspace)
    later = sandbox.shown_places(inner, inner[2], env, user_home, owns[1], shows)
    assert len(worked) == 2 and not any(str(tmp_path) in source for source, _ in later)
