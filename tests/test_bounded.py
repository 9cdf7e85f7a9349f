"""Children that try to outlive their bounds (issue 11): a check, a guard, a judge
or an agent leaves a child that called setsid() (so it is out of the process
group) and still holds stdout open. Each must end at its timeout, with that
child killed and the evidence saying so; output is bounded in size too."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from workbench.grading import chock_replay, command_check
from workbench.grading.judges.base import JudgeCase
from workbench.grading.judges.command import CommandJudge
from workbench.runs.processes import run_bounded


# Starts a grandchild in a new session that writes its pid and then holds the
# inherited stdout for 20 s; the shell itself waits too (so only a timeout ends it).
def _escaper(pidfile: Path, then: str = "sleep 20") -> str:
    return f"setsid sh -c 'echo $$ > {pidfile}; exec sleep 20' & {then}"


def _gone(pidfile: Path) -> bool:
    for _ in range(50):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    for _ in range(40):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1]
        except FileNotFoundError:  # reaped between the two looks
            return True
        if state.startswith("Z"):
            return True  # a zombie waiting for its reaper is dead
        time.sleep(0.05)
    return False


def test_run_bounded_kills_a_setsid_child_holding_stdout_at_the_timeout(tmp_path):
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    finished = run_bounded(["bash", "-c", _escaper(pidfile)], timeout=1)
    assert time.monotonic() - started < 4
    assert finished.timed_out and finished.code is None
    assert "timed out after 1 s" in finished.evidence and "(sleep)" in finished.evidence
    assert _gone(pidfile)


def test_a_daemon_left_by_a_finished_command_is_killed_and_named(tmp_path):
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    wait = f"until [ -s {pidfile} ]; do sleep 0.05; done; echo done"
    finished = run_bounded(["bash", "-c", _escaper(pidfile, wait)], timeout=30)
    assert time.monotonic() - started < 4
    assert finished.code == 0 and finished.stdout == "done\n"
    assert "left behind when the command exited" in finished.evidence
    assert _gone(pidfile)


def test_output_is_capped_and_says_so():
    finished = run_bounded(["bash", "-c", "head -c 3000000 /dev/zero"], timeout=30, limit=1000)
    assert finished.code == 0 and len(finished.stdout) == 1000
    assert finished.cut == ["stdout cut at 1000 bytes (2999000 more bytes dropped)"]


def test_command_check_with_a_setsid_child_ends_at_its_timeout(tmp_path):
    pidfile = tmp_path / "pid"
    repo = tmp_path / "repo"
    repo.mkdir()
    started = time.monotonic()
    verdict = command_check.grade({"type": "command_check", "command": _escaper(pidfile)}, repo, tmp_path, timeout=1)
    assert time.monotonic() - started < 4
    assert not verdict.passed and "timed out after 1 s" in verdict.evidence and "killed pid" in verdict.evidence
    assert _gone(pidfile)


def test_a_guard_with_a_setsid_child_ends_at_its_timeout(tmp_path):
    pidfile = tmp_path / "pid"
    policy = tmp_path / "sticky-policy"
    (policy / "implementations").mkdir(parents=True)
    (policy / "evals").mkdir()
    (policy / "manifest.yaml").write_text("id: sticky-policy\n")
    (policy / "implementations" / "guard.sh").write_text(_escaper(pidfile) + "\n")
    started = time.monotonic()
    verdict = chock_replay.replay(
        chock_replay.policy_of(policy / "evals" / "suite.yaml"), {"command": "ls", "expect": "allow"}, timeout=1
    )
    assert time.monotonic() - started < 4
    assert verdict.error and "timed out after 1 s" in verdict.evidence
    assert _gone(pidfile)


def test_a_judge_command_with_a_setsid_child_ends_at_its_timeout(tmp_path):
    pidfile = tmp_path / "pid"
    judge = CommandJudge("cat > /dev/null; " + _escaper(pidfile))
    judge.timeout = 1
    started = time.monotonic()
    verdict = judge.decide(JudgeCase("anything"))  # asks twice: one retry
    assert time.monotonic() - started < 8
    assert verdict.error and "timed out after 1 s" in verdict.evidence
    assert _gone(pidfile)


RESULT = """echo '{"type":"result","result":"ok","session_id":"s","usage":{"input_tokens":1}}'"""


def _agent_run(tmp_path: Path, command: str, timeout: float = 30):
    from agents import answer_skill
    from conftest import DEMO

    from workbench.runs import executors
    from workbench.runs.launch import prepare_launch, run_launch
    from workbench.runs.runner import RunOptions

    skill = answer_skill(tmp_path, DEMO, turns=None)
    executor = executors.make("command", command)
    options = RunOptions(jobs=1, timeout=timeout, baseline="none")
    launch = prepare_launch(skill, executor, options)
    asyncio.run(run_launch(launch, executor, options))
    [dispatch] = launch.dispatches
    return dispatch, json.loads((dispatch.folder / "run.json").read_text())


def test_a_daemon_an_agent_leaves_is_gone_after_its_turn(tmp_path):
    pidfile = tmp_path / "pid"
    wait = f"until [ -s {pidfile} ]; do sleep 0.05; done; {RESULT}"
    dispatch, record = _agent_run(tmp_path, _escaper(pidfile, wait).replace("&", "> /dev/null 2>&1 &", 1))
    assert record["status"] == "done", record
    assert _gone(pidfile)
    assert any("left behind when the command exited" in line for line in record["killed"]), record


def test_an_agent_whose_setsid_child_holds_stdout_ends_at_its_timeout(tmp_path):
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    dispatch, record = _agent_run(tmp_path, _escaper(pidfile), timeout=1)
    assert time.monotonic() - started < 6
    assert record["status"] == "failed" and "timed out after 1 s" in record["error"]
    assert _gone(pidfile)


def test_a_turn_starts_no_interpreter_to_watch_it():
    """The wrapper that kills a turn's leftovers costs next to nothing per turn (issue 26): no interpreter
    starts for it (a Python start is ~15-20 ms of CPU). Measured as CPU time (clock ticks) the wrapper,
    the command's parent, had used when the command started, over 20 turns: steady beside a CPU hog."""
    read = "cut -d')' -f2 /proc/$PPID/stat | awk '{print $12 + $13}'"  # utime + stime of the parent
    ticks = []
    for _ in range(20):
        finished = run_bounded(["sh", "-c", read], timeout=30)
        assert finished.code == 0, finished.stderr
        ticks.append(int(finished.stdout))
    assert sum(ticks) <= 3, f"the wrapper used {sum(ticks)} clock ticks of CPU over 20 turns: {ticks}"
    # Its guarantee stays: a grandchild that leaves the session is still killed (tests above).


def test_a_workbench_killed_with_sigkill_mid_turn_leaves_nothing_of_the_turn(tmp_path):
    """kill -9 of the workbench alone (not its group): the turn's tree goes with it, a grandchild that
    left the session included; the long-lived helper that wraps turns goes too."""
    import signal
    import subprocess
    import sys

    pidfile = tmp_path / "pid"
    script = (
        "import sys; from workbench.runs.processes import run_bounded, Helper; "
        "print(Helper.shared().process.pid, flush=True); "
        f"run_bounded(['bash', '-c', {_escaper(pidfile)!r}], timeout=60)"
    )
    workbench = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert workbench.stdout is not None
    helper = int(workbench.stdout.readline())
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.05)
    os.kill(workbench.pid, signal.SIGKILL)
    workbench.wait()
    assert _gone(pidfile)
    for _ in range(100):
        if not Path(f"/proc/{helper}").exists() or " Z" in Path(f"/proc/{helper}/stat").read_text():
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the wrapper helper outlived the workbench")


def test_a_child_with_a_large_environment_and_arguments_starts_whole():
    """What a child is started with reaches it whole, however large (a long prompt in argv, a big env)."""
    env = {f"BIG{i}": str(i) * 100_000 for i in range(4)}
    argv = ["sh", "-c", "echo ${#BIG0} ${#BIG3} ${#1}", "sh", "y" * 100_000]
    finished = run_bounded(argv, timeout=30, env=env)
    assert finished.code == 0, finished.stderr
    assert finished.stdout.split() == ["100000", "100000", "100000"]
