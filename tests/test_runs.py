"""Runs end to end: the demo and command executors, turns, resume, the cache,
and every way an agent can fail."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DEMO
from support.cli import workbench
from support.process import command as workbench_command

from workbench.runs import executors
from workbench.runs.launch import RunRefused, prepare_launch, run_launch
from workbench.runs.runner import DONE, FAILED, REUSED, SKIPPED, RunOptions, deliver_reason
from workbench.validate.tree import validate_paths
from workbench.workspace.layout import default_workspace

AGENT = Path(__file__).parent / "agents" / "scripted_agent.py"


@pytest.fixture
def skill(tmp_path) -> Path:
    target = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target


def _run(skill, executor="demo", **options):
    executor_ = executors.make(executor, options.pop("agent_command", None))
    run_options = RunOptions(**{"jobs": 4, "timeout": 30, **options})
    launch = prepare_launch(skill, executor_, run_options)
    asyncio.run(run_launch(launch, executor_, run_options))
    return launch


def _events(folder):
    return [json.loads(line) for line in (folder / "transcript.jsonl").read_text().splitlines()]


def test_demo_run_fills_the_workspace_layout_and_differs_with_the_skill(skill):
    launch = _run(skill)
    assert launch.workspace == skill.parent.parent / "changelog-entry-workspace"  # outside skills/
    iteration = launch.workspace / "iteration-1"
    # 10 evals, the ambiguous timeout one twice: 11 runs with the skill, 11 without
    assert {d.status for d in launch.dispatches} == {DONE} and len(launch.dispatches) == 22
    for eval_id in ("export-json-flag", "ambiguous-timeout-change", "question-not-a-request"):
        metadata = json.loads((iteration / f"eval-{eval_id}" / "eval_metadata.json").read_text())
        assert metadata["eval_id"] == eval_id and metadata["prompt"]
    with_skill = iteration / "eval-export-json-flag" / "with_skill" / "run-1"
    without = iteration / "eval-export-json-flag" / "without_skill" / "run-1"
    for folder in (with_skill, without):
        assert {"outputs", "transcript.jsonl", "timing.json", "metrics.json", "run.json"} <= {
            p.name for p in folder.iterdir()
        }
    rendered = [e.get("rendered") for e in _events(with_skill) if e["kind"] == "tool_use"]
    assert rendered[0] == 'Skill {"skill":"changelog-entry"}' and rendered[1].startswith('Read {"file_path":')
    assert (
        "### Added\n\n- Export can write JSON with `--json`." in (with_skill / "outputs" / "CHANGELOG.md").read_text()
    )
    assert not any(e.get("name") in ("Skill", "Read") for e in _events(without))
    assert json.loads((without / "run.json").read_text())["changed_files"] == ["CHANGELOG.md", "cli.py"]
    metrics = json.loads((with_skill / "metrics.json").read_text())
    assert metrics["tool_calls"] == {"Skill": 1, "Read": 1, "Edit": 1} and metrics["total_tool_calls"] == 3
    timing = json.loads((with_skill / "timing.json").read_text())
    assert timing["total_tokens"] > 0 and timing["executor_start"].endswith("Z")
    # every artifact written is valid in its format
    reports = validate_paths([iteration])
    assert [(r.file, d.message) for r in reports for d in r.diagnostics if d.severity == "error"] == []
    assert {r.dialect for r in reports if not r.skipped} >= {"timing", "metrics", "eval_metadata"}


def test_scripted_turns_are_delivered_only_when_the_agent_asks(skill):
    launch = _run(skill, only={"ambiguous-timeout-change"}, runs=1)
    by_condition = {d.configuration: json.loads((d.folder / "run.json").read_text()) for d in launch.dispatches}
    assert by_condition["with_skill"]["turns"] == 2 and by_condition["with_skill"]["stop_reason"] is None
    assert by_condition["without_skill"]["turns"] == 1
    assert by_condition["without_skill"]["stop_reason"] == "agent_did_not_ask"
    events = _events(next(d.folder for d in launch.dispatches if d.configuration == "with_skill"))
    assert [e["text"] for e in events if e["kind"] == "user"][1].startswith("It's a fix")


def test_the_same_command_again_resumes_and_a_changed_skill_reuses_the_baseline(skill):
    first = _run(skill)
    again = _run(skill)
    assert again.iteration == first.iteration and {d.status for d in again.dispatches} == {SKIPPED}
    text = (skill / "SKILL.md").read_text().replace("1. **Read `CHANGELOG.md` first.**", "1. **Start writing.**")
    (skill / "SKILL.md").write_text(text)
    changed = _run(skill)
    assert changed.iteration == first.iteration + 1
    statuses = [(d.configuration, d.status) for d in changed.dispatches]
    assert all(s == REUSED for c, s in statuses if c == "without_skill")
    assert all(s == DONE for c, s in statuses if c == "with_skill")
    assert sum(s == DONE for _, s in statuses) == len(statuses) // 2  # half the dispatches ran
    folder = next(
        d.folder for d in changed.dispatches if d.case.id == "export-json-flag" and d.configuration == "with_skill"
    )
    assert not any(e.get("name") == "Read" for e in _events(folder))  # the new version behaves differently
    assert json.loads((next(d.folder for d in changed.dispatches if d.status == REUSED) / "run.json").read_text())[
        "reused"
    ]


@pytest.mark.parametrize(
    "reply,turn,expected",
    [
        ("Which one?", {"prompt": "p", "deliver_when": "agent_asks"}, None),
        ("I did it.", {"prompt": "p", "deliver_when": "agent_asks"}, "agent_did_not_ask"),
        (
            "Which one?",
            {"prompt": "p", "deliver_when": "agent_asks", "agent_response_matches": "(?i)format"},
            "agent_response_mismatch",
        ),
        ("Which format?", {"prompt": "p", "deliver_when": "agent_asks", "agent_response_matches": "(?i)format"}, None),
        ("I did it.", {"prompt": "p", "deliver_when": "always"}, None),
    ],
)
def test_deliver_rule(reply, turn, expected):
    assert deliver_reason(turn, reply) == expected


def _command_suite(skill, turns=True):
    data = {
        "skill_name": "changelog-entry",
        "evals": [
            {
                "id": "ask-then-write",
                "prompt": "Write the answer.",
                "expected_output": "answer.txt written",
                **({"turns": [{"prompt": "JSON please", "deliver_when": "agent_asks"}]} if turns else {}),
            }
        ],
    }
    (skill / "evals" / "evals.json").write_text(json.dumps(data, indent=2))


def _agent(mode, **env):
    return f"AGENT_MODE={mode} " + " ".join(f"{k}={v}" for k, v in env.items()) + f" {sys.executable} {AGENT}"


def test_command_executor_resumes_the_session_for_a_follow_up_turn(skill, tmp_path):
    _command_suite(skill)
    log = tmp_path / "agent.log"
    launch = _run(skill, "command", agent_command=_agent("ok", AGENT_LOG=log), baseline="none")
    [dispatch] = launch.dispatches
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [c["session"] for c in calls] == [None, "scripted-1"] and calls[1]["prompt"] == "JSON please"
    assert (dispatch.folder / "outputs" / "answer.txt").read_text() == "JSON please"
    assert json.loads((dispatch.folder / "run.json").read_text())["turns"] == 2


@pytest.mark.parametrize(
    "mode,words",
    [
        ("garbage", "no stream-json events"),
        ("crash", "exited with status 3"),
    ],
)
def test_a_failing_agent_is_a_recorded_result(skill, mode, words):
    _command_suite(skill, turns=False)
    launch = _run(skill, "command", agent_command=_agent(mode), baseline="none")
    [dispatch] = launch.dispatches
    record = json.loads((dispatch.folder / "run.json").read_text())
    assert dispatch.status == FAILED and words in record["error"]
    if mode == "crash":
        assert "the agent fell over" in record["stderr_tail"]


def test_an_agent_that_removes_its_git_folder_is_measured_all_the_same(skill):
    """Found by an attacker, once: the run crashed. The workbench keeps its own baseline beside the workspace
    (workspace/trees.py), so what the agent did to its .git changes nothing of what is measured."""
    _command_suite(skill)
    launch = _run(skill, "command", agent_command=_agent("no-git"), baseline="none")
    [dispatch] = launch.dispatches
    record = json.loads((dispatch.folder / "run.json").read_text())
    assert dispatch.status == DONE and record["changed_files"] == ["answer.txt"], record
    assert (dispatch.folder / "outputs" / "answer.txt").read_text() == "JSON please"


def test_a_hanging_agent_is_killed_with_its_children(skill, tmp_path):
    _command_suite(skill, turns=False)
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    launch = _run(
        skill, "command", agent_command=_agent("hang", AGENT_CHILD_PID=pid_file), baseline="none", timeout=1.5
    )
    assert time.monotonic() - started < 20
    [dispatch] = launch.dispatches
    assert dispatch.status == FAILED and "timed out after 1.5 s" in dispatch.detail
    child = int(pid_file.read_text())
    time.sleep(0.2)
    assert not _alive(child)  # the agent's own child went with it: no orphans


def _alive(pid: int) -> bool:
    """Running (a killed process whose parent is gone may linger as a zombie: that is dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_runs_refuse_an_invalid_suite(tmp_path):
    target = tmp_path / "changelog-entry"
    shutil.copytree(DEMO.parent / "mistakes" / "changelog-entry", target)
    with pytest.raises(RunRefused) as refused:
        prepare_launch(target, executors.make("demo"), RunOptions())
    assert any(d.path == "/evals/1/turns/1/deliver_when" for d in refused.value.diagnostics)


def _cli(*args, cwd=None):
    """`workbench run`, in this process: its output, exit codes and files are what these tests read."""
    return workbench("run", *args, cwd=cwd)


def test_cli_needs_trust_for_a_command_and_reports_failures(skill):
    _command_suite(skill, turns=False)
    refused = _cli(skill, "--executor", "command", "--agent-command", _agent("ok"))
    assert refused.returncode == 2 and "--trust" in refused.stderr
    failed = _cli(skill, "--executor", "command", "--agent-command", _agent("crash"), "--trust", "--baseline", "none")
    assert failed.returncode == 2 and "exited with status 3" in failed.stderr


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_killed_mid_run_then_resumed_loses_and_duplicates_nothing(skill, tmp_path):
    data = {
        "skill_name": "changelog-entry",
        "evals": [{"id": f"case-{i}", "prompt": f"case {i}", "expected_output": "e"} for i in range(6)],
    }
    (skill / "evals" / "evals.json").write_text(json.dumps(data))
    log = tmp_path / "agent.log"
    command = _agent("slow", AGENT_LOG=log, AGENT_DELAY="0.5")
    args = workbench_command(
        "run",
        str(skill),
        "--executor",
        "command",
        "--agent-command",
        command,
        "--trust",
        "--baseline",
        "none",
        "-j",
        "1",
        "--sandbox",
        "none",  # the agent logs to a file outside its workspace: the sandbox would (rightly) refuse it
    )
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 3):
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    before = len(log.read_text().splitlines())
    assert 3 <= before < 6
    resumed = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    calls = [json.loads(line)["prompt"] for line in log.read_text().splitlines()]
    assert sorted(set(calls)) == sorted(f"case {i}" for i in range(6))  # nothing lost
    assert len(calls) <= 6 + 1  # at most the one interrupted dispatch ran twice
    records = list((skill.parent.parent / "changelog-entry-workspace").glob("iteration-1/eval-*/*/run-*/run.json"))
    assert len(records) == 6 and all(json.loads(r.read_text())["status"] == DONE for r in records)


def test_codex_events_map_into_the_same_transcript():
    from workbench.runs.executors.codex import CodexExecutor

    stdout = (
        "\n".join(
            json.dumps(e)
            for e in [
                {"type": "thread.started", "thread_id": "th_1"},
                {"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": "Reading the file."}},
                {
                    "type": "item.completed",
                    "item": {
                        "id": "i2",
                        "type": "command_execution",
                        "command": "cat CHANGELOG.md",
                        "aggregated_output": "# Changelog",
                        "exit_code": 0,
                    },
                },
                {
                    "type": "item.completed",
                    "item": {
                        "id": "i3",
                        "type": "file_change",
                        "changes": [{"path": "CHANGELOG.md", "kind": "update"}],
                    },
                },
                {"type": "turn.completed", "usage": {"input_tokens": 30, "output_tokens": 12}},
            ]
        )
        + "\nnot json\n"
    )
    outcome = CodexExecutor().parse(stdout, 1)
    assert outcome.session_id == "th_1" and outcome.tokens == 42 and outcome.garbage == ["not json"]
    assert [e.rendered for e in outcome.events] == [
        "Reading the file.",
        'Bash {"command":"cat CHANGELOG.md"}',
        "# Changelog",
        'apply_patch {"changes":[{"path":"CHANGELOG.md","kind":"update"}]}',
    ]
    command = CodexExecutor(model="m").turn("hi", "th_1")
    assert command.argv[:3] == ["codex", "exec", "--json"] and "resume" in command.argv and command.stdin == "hi"


def test_old_skill_is_a_condition_of_its_own(skill, tmp_path):
    old = tmp_path / "v0" / "changelog-entry"
    shutil.copytree(skill, old)
    text = (old / "SKILL.md").read_text().replace("1. **Read `CHANGELOG.md` first.**", "1. **Start writing.**")
    (old / "SKILL.md").write_text(text)
    executor = executors.make("demo")
    options = RunOptions(jobs=4, timeout=30, baseline="old_skill", only={"export-json-flag"})
    launch = prepare_launch(skill, executor, options, old_skill=old)
    asyncio.run(run_launch(launch, executor, options))
    by = {d.configuration: d for d in launch.dispatches}
    assert set(by) == {"with_skill", "old_skill"} and {d.status for d in by.values()} == {DONE}
    assert any(e.get("name") == "Read" for e in _events(by["with_skill"].folder))
    assert not any(e.get("name") == "Read" for e in _events(by["old_skill"].folder))


def test_ctrl_c_stops_the_run_without_orphans(skill, tmp_path):
    _command_suite(skill, turns=False)
    pid_file = tmp_path / "child.pid"
    args = workbench_command(
        "run",
        str(skill),
        "--executor",
        "command",
        "--agent-command",
        _agent("hang", AGENT_CHILD_PID=pid_file),
        "--trust",
        "--baseline",
        "none",
        "--sandbox",
        "none",  # the agent writes its child's pid outside its workspace, as seen from the machine
    )
    # Ctrl-C as a terminal gives it: the test command started in the background of a script inherits
    # SIGINT ignored (POSIX), and a workbench started so ignores it too, rightly; that is not this test.
    process = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not pid_file.exists():
        time.sleep(0.05)
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 2 and "cancelled" in stderr and "Traceback" not in stderr
    time.sleep(0.3)
    assert not _alive(int(pid_file.read_text()))


def _responder_suite(skill, **responder):
    """The demo's ambiguous timeout eval, its scripted turn replaced by eval-magic's responder."""
    suite = skill / "evals" / "evals.json"
    data = json.loads(suite.read_text())
    case = next(c for c in data["evals"] if c["id"] == "ambiguous-timeout-change")
    case.pop("turns")
    # eval-magic refuses assistant_message_matches on an eval without turns, a responder's too.
    case["assertions"] = [a for a in case["assertions"] if a.get("check") != "assistant_message_matches"]
    case["responder"] = {"type": "llm", **responder}
    data["evals"] = [case]
    suite.write_text(json.dumps(data, indent=2))


def test_a_responder_eval_is_played_by_the_demo_judge_end_to_end(skill):
    from workbench.grading import judges

    _responder_suite(skill, max_turns=3)
    executor = executors.make("demo")
    options = RunOptions(jobs=2, timeout=30, runs=1)
    launch = prepare_launch(skill, executor, options)
    asyncio.run(run_launch(launch, executor, options, responder=judges.make("demo")))
    by = {d.configuration: d for d in launch.dispatches}
    asked = json.loads((by["with_skill"].folder / "run.json").read_text())
    # The agent asked; the demo judge answered from its script; the agent finished; the judge said done.
    assert asked["status"] == DONE and asked["turns"] == 2 and asked["stop_reason"] is None
    assert asked["responder_outcome"]["ending"] == "done"
    users = [e["text"] for e in _events(by["with_skill"].folder) if e["kind"] == "user"]
    assert users[1] == "Take the option you recommend."
    said = [e["text"] for e in _events(by["with_skill"].folder) if e["kind"] == "turn"]
    assert "scripted answers, not a model" in said[0]  # the demo judge says what it is, wherever it shows
    kept = json.loads((by["with_skill"].folder / "responder" / "turn-1" / "verdict.json").read_text())
    assert kept["verdict"] == "answer" and "demo judge" in kept["responder"]
    prompt = (by["with_skill"].folder / "responder" / "turn-1" / "prompt.txt").read_text()
    case = launch.dispatches[0].case
    assert case.prompt in prompt and case.expected_output not in prompt  # never the grading criteria
    quiet = json.loads((by["without_skill"].folder / "run.json").read_text())
    assert quiet["turns"] == 1 and quiet["responder_outcome"]["ending"] == "done"


def test_a_responder_still_answering_at_max_turns_stops_the_conversation(skill, tmp_path):
    from workbench.grading.judges.base import Judge

    class Chatty(Judge):
        label = "chatty test judge"

        def ask(self, prompt, model, token):
            said = {"token": token, "verdict": "answer", "reply": f"more {prompt.count('- ')}", "rationale": "r"}
            return json.dumps(said)

    _responder_suite(skill, max_turns=1)
    executor = executors.make("demo")
    options = RunOptions(jobs=2, timeout=30, runs=1, baseline="none")
    launch = prepare_launch(skill, executor, options)
    asyncio.run(run_launch(launch, executor, options, responder=Chatty()))
    record = json.loads((launch.dispatches[0].folder / "run.json").read_text())
    assert record["stop_reason"] == "max_turns_reached" and record["turns"] == 2
    assert "responder_outcome" not in record  # the runner's bound, not a verdict


def test_files_root_and_a_path_codebase_make_the_agents_repository(skill):
    evals = skill / "evals"
    (evals / "codebases" / "app" / "src").mkdir(parents=True)
    (evals / "codebases" / "app" / "src" / "main.py").write_text("print('app')\n")
    (evals / "codebases" / "app" / "CHANGELOG.md").write_text("# Changelog\n\nfrom the codebase\n")
    (evals / "overlay" / "docs").mkdir(parents=True)
    (evals / "overlay" / "docs" / "TASK.md").write_text("the task\n")
    data = json.loads((evals / "evals.json").read_text())
    case = next(c for c in data["evals"] if c["id"] == "question-not-a-request")
    case.update(files_root="overlay", files=["docs/TASK.md"])
    data.update(codebase={"path": "codebases/app"}, evals=[case])
    (evals / "evals.json").write_text(json.dumps(data, indent=2))
    launch = _run(skill, runs=1, baseline="none")
    repo = launch.dispatches[0].folder / "repo"
    assert (repo / "src" / "main.py").read_text() == "print('app')\n"
    assert (repo / "docs" / "TASK.md").read_text() == "the task\n"  # keeps its declared path
    assert not (repo / "TASK.md").exists()


def test_a_codebase_outside_the_skill_is_asked_for_before_a_run_copies_it(skill, tmp_path):
    # eval-magic lets a codebase be any folder of the machine; a suite from a stranger could name
    # one with secrets in it, so the run lists it for trust first, and copies it only once trusted.
    project = tmp_path / "projects" / "legacy-service"
    project.mkdir(parents=True)
    (project / "service.py").write_text("print('legacy')\n")
    data = json.loads((skill / "evals" / "evals.json").read_text())
    case = next(c for c in data["evals"] if c["id"] == "question-not-a-request")
    data.update(codebase={"path": "../../../projects/legacy-service"}, evals=[case])
    (skill / "evals" / "evals.json").write_text(json.dumps(data, indent=2))
    command = ("run", skill, "--sandbox", "none", "--baseline", "none")
    env = {**os.environ, "WORKBENCH_CONFIG_DIR": str(tmp_path / "config")}
    asked = workbench(*command, env=env, cwd=tmp_path)
    assert asked.returncode == 2, asked.stderr
    assert f"copy {project} (a codebase outside evals/)" in asked.stderr
    workspace = default_workspace(skill)
    assert not workspace.exists()  # nothing copied, nothing written
    ran = workbench(*command, "--trust", env=env, cwd=tmp_path)
    assert ran.returncode in (0, 1), ran.stderr
    [repo] = workspace.glob("iteration-1/eval-*/with_skill/run-1/repo")
    assert (repo / "service.py").read_text() == "print('legacy')\n"
