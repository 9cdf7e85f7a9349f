"""The claude executor end to end: the real Claude Code CLI (pinned, installed by
tests/run.sh) against a scripted Messages API server on 127.0.0.1. It really
runs Write and Bash in the workspace, and the scripted follow-up turn arrives
through --resume."""

from __future__ import annotations

import asyncio
import json
import os
import shutil

import pytest
from agents import answer_skill
from agents.scripted_model import ScriptedServer
from conftest import DEMO

from workbench.formats.drafts import drafts_path
from workbench.runs import sandbox
from workbench.runs.executors.claude import ClaudeExecutor
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.runner import DONE, RunOptions

CLAUDE = os.environ.get("WORKBENCH_TEST_CLAUDE") or shutil.which("claude")
pytestmark = pytest.mark.skipif(
    not CLAUDE,
    reason="the Claude Code CLI is not installed (tests/run.sh installs it with npm; npm is missing "
    "or the install failed)",
)


def _offline(monkeypatch, server, tmp_path) -> None:
    """Claude Code talks to the scripted server only, with a home of its own."""
    for name, value in {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-scripted",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "HOME": str(tmp_path / "home"),
    }.items():
        monkeypatch.setenv(name, value)


BWRAP = pytest.param(
    "bwrap",
    marks=pytest.mark.skipif(
        bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()} (tests/run.sh installs it)"
    ),
)


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("mode", ["none", BWRAP])
def test_claude_code_runs_tools_turns_and_timings(tmp_path, monkeypatch, mode):
    skill = answer_skill(tmp_path, DEMO)
    with ScriptedServer() as server:
        _offline(monkeypatch, server, tmp_path)
        executor = ClaudeExecutor(binary=CLAUDE)
        options = RunOptions(jobs=1, timeout=120, baseline="none", sandbox=mode)
        launch = prepare_launch(skill, executor, options)
        asyncio.run(run_launch(launch, executor, options))
    [dispatch] = launch.dispatches
    record = json.loads((dispatch.folder / "run.json").read_text())
    assert dispatch.status == DONE, record
    assert record["sandbox"] == mode
    assert record["turns"] == 2 and record["stop_reason"] is None and record["session_id"]
    events = [json.loads(line) for line in (dispatch.folder / "transcript.jsonl").read_text().splitlines()]
    rendered = [e["rendered"] for e in events if e["kind"] == "tool_use"]
    assert rendered[0].startswith('Write {"file_path":"') and rendered[0].endswith('/answer.txt","content":"42\\n"}')
    assert rendered[1] == 'Bash {"command":"cat answer.txt","description":"Show the answer"}'
    assert [e["text"] for e in events if e["kind"] == "user"] == ["Write the answer.", "JSON please"]
    assert any(e["kind"] == "assistant" and e["text"] == "Done: the answer is in JSON now." for e in events)
    assert (dispatch.folder / "outputs" / "answer.txt").read_text() == "42\n"
    metrics = json.loads((dispatch.folder / "metrics.json").read_text())
    assert metrics["tool_calls"] == {"Write": 1, "Bash": 1} and metrics["files_created"] == ["answer.txt"]
    timing = json.loads((dispatch.folder / "timing.json").read_text())
    assert timing["total_tokens"] > 0 and timing["duration_ms"] > 0
    # the staged skill sat where Claude Code discovers skills
    assert (dispatch.folder / "repo" / ".claude" / "skills" / "changelog-entry" / "SKILL.md").is_file()


@pytest.mark.slow  # 16 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_scripted_claude_code_iteration_grades_to_known_outcomes(tmp_path, monkeypatch):
    """The real CLI as agent and as judge, against the scripted server."""
    from workbench.grading.benchmark import write_benchmark
    from workbench.grading.grade import GradeOptions, grade_iteration
    from workbench.grading.judges.claude import ClaudeJudge
    from workbench.grading.review import load_review, outcome
    from workbench.grading.suite import suite_of_iteration

    skill = answer_skill(
        tmp_path,
        DEMO,
        # the scripted turn stays: eval-magic checks assistant messages only in a scripted conversation
        assertions=[
            {
                "id": "wrote-first",
                "type": "transcript_check",
                "check": "tool_invocation_matches",
                "pattern": "^Write .*answer\\.txt",
                "must_precede": "completion_claim",
            },
            {
                "id": "asked",
                "type": "transcript_check",
                "check": "assistant_message_matches",
                "pattern": "(?i)which format",
            },
            {"id": "answer-is-42", "type": "command_check", "command": "grep -qx 42 answer.txt"},
            {"id": "touched-nothing", "type": "diff_scope", "max_files_touched": 0},
            {"id": "judge-sees-42", "type": "llm_judge", "rubric": "Does answer.txt hold '42'?"},
            {"id": "judge-garbles", "type": "llm_judge", "rubric": "UNPARSABLE: is it good?"},
        ],
    )
    with ScriptedServer() as server:
        _offline(monkeypatch, server, tmp_path)
        executor = ClaudeExecutor(binary=CLAUDE)
        options = RunOptions(jobs=1, timeout=120, baseline="none")
        launch = prepare_launch(skill, executor, options)
        asyncio.run(run_launch(launch, executor, options))
        iteration = launch.workspace / f"iteration-{launch.iteration}"
        suite = suite_of_iteration(iteration)
        grade_iteration(iteration, suite, GradeOptions(ClaudeJudge(binary=CLAUDE), trusted=True))
    grading = json.loads((iteration / "eval-write-the-answer" / "with_skill" / "run-1" / "grading.json").read_text())
    verdicts = {e["id"]: e["passed"] for e in grading["expectations"]}
    assert verdicts == {
        "wrote-first": True,
        "asked": True,
        "answer-is-42": True,
        "touched-nothing": False,
        "judge-sees-42": True,
        "judge-garbles": False,
    }, grading["expectations"]
    garbled = next(e for e in grading["expectations"] if e["id"] == "judge-garbles")
    assert garbled["error"] and "after one retry" in garbled["evidence"]
    assert grading["summary"] == {"passed": 4, "failed": 2, "total": 6, "pass_rate": 0.6667}
    assert grading["triggering"]["invoked"] is False and grading["triggering"]["as_expected"] is False
    assert grading["judge"] == "Claude Code judge"
    write_benchmark(iteration)
    assert outcome(load_review(iteration)) == 2  # a judge error is an error, not a pass
    # What it cost, as Claude Code reported it (it prices usage by the model id the server answers with):
    # the agent's in run.json and metrics.json, the judge's apart in grading.json, both summed in benchmark.json.
    record = json.loads((iteration / "eval-write-the-answer" / "with_skill" / "run-1" / "run.json").read_text())
    agent = record["cost_usd"]
    assert agent > 0 and grading["execution_metrics"]["cost_usd"] == agent
    assert grading["judge_cost_usd"] > 0
    benchmark = json.loads((iteration / "benchmark.json").read_text())
    spent = benchmark["metadata"]["cost_usd"]
    assert spent["agents"] == agent and spent["judge"] == grading["judge_cost_usd"] and spent["agents_unknown"] == 0
    assert benchmark["run_summary"]["with_skill"]["cost_usd"]["total"] == agent
    assert f"Cost: agents ${agent:.4f}" in (iteration / "benchmark.md").read_text()
    # and the next launch of this suite with this agent is estimated from it
    from workbench.runs.estimate import earlier_runs

    assert [c for c, _seconds in earlier_runs(launch.workspace, launch.suite, executor.label)] == [agent]


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_skill_installed_in_the_users_claude_config_is_not_seen_by_the_baseline(tmp_path, monkeypatch):
    """The user's ~/.claude/skills holds a copy of the skill: with the private
    CLAUDE_CONFIG_DIR of every run (no sandbox here), no request mentions it."""
    from workbench.app import pipeline
    from workbench.app.choices import Agent, Limits, Placement

    skill = answer_skill(tmp_path, DEMO, turns=None)
    installed = tmp_path / "home" / ".claude" / "skills" / "changelog-entry"
    shutil.copytree(skill, installed)
    text = (installed / "SKILL.md").read_text()
    (installed / "SKILL.md").write_text(text.replace("description: ", "description: USER-INSTALLED-COPY ", 1))
    with ScriptedServer() as server:
        _offline(monkeypatch, server, tmp_path)
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        monkeypatch.setenv("WORKBENCH_CLAUDE", CLAUDE)
        request = pipeline.RunRequest(
            skill, agent=Agent("claude"), limits=Limits(jobs=1, timeout=120), placement=Placement("none")
        )
        prepared = pipeline.prepare(request)
        assert any("is installed in your user scope" in w and str(installed) in w for w in prepared.warnings)
        asyncio.run(run_launch(prepared.launch, prepared.executor, prepared.options))
        bodies = [json.dumps(body) for body in server.model.requests]
    assert bodies and {d.status for d in prepared.dispatches} == {DONE}
    assert not any("USER-INSTALLED-COPY" in body for body in bodies)
    assert not (tmp_path / "home" / ".claude" / "projects").exists()  # the user's config was not written either


@pytest.mark.slow  # 23 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_claude_code_as_the_proposer_makes_a_real_edit_that_becomes_a_version(tmp_path, monkeypatch):
    """workbench improve with the real CLI as proposer: it reads SKILL.md, edits it with its Edit
    tool in the private copy, and the edit is evaluated (by the demo agent) as v1."""
    from workbench.app import pipeline
    from workbench.app.choices import Agent, Limits, Placement, Proposer
    from workbench.app.improve_loop import ImproveRequest, improve
    from workbench.workspace.layout import default_workspace
    from workbench.workspace.versions import VersionStore

    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    shutil.copy(DEMO.parent / "draft" / "changelog-entry" / "SKILL.md", skill / "SKILL.md")
    with ScriptedServer() as server:
        _offline(monkeypatch, server, tmp_path)
        monkeypatch.setenv("WORKBENCH_CLAUDE", CLAUDE)
        run = pipeline.RunRequest(skill, agent=Agent("demo"), limits=Limits(jobs=4), placement=Placement("none"))
        done = improve(ImproveRequest(run, Proposer("claude"), rounds=1), lambda _text: None, lambda _asks: True)
    [first] = done.rounds
    assert first.proposal == "changed SKILL.md" and first.version == "v1", first
    assert first.said == "Step 1 now says to read CHANGELOG.md before writing anything."
    assert first.outcome == "won" and first.cost_usd is not None and first.cost_usd > 0
    files = VersionStore(default_workspace(skill)).files("v1")
    assert b"1. **Read `CHANGELOG.md` first.** Never write" in files["SKILL.md"]


def test_claude_code_drafts_cases_through_the_scripted_model_into_the_drafts_file(tmp_path, monkeypatch):
    from workbench.improve import drafts
    from workbench.improve.proposal import make_proposer

    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    suite = skill / "evals" / "evals.json"
    before = suite.read_bytes()
    with ScriptedServer() as server:
        _offline(monkeypatch, server, tmp_path)
        monkeypatch.setenv("WORKBENCH_CLAUDE", CLAUDE)
        written, drafted, spent = drafts.draft(skill, suite, make_proposer("claude"), 1, [], "none", 120)
    assert written == drafts_path(suite) and [c["id"] for c in drafted] == ["drafted-by-the-model"]
    assert spent is not None and spent > 0
    assert suite.read_bytes() == before
    assert json.loads(written.read_text())["evals"][0]["prompt"] == "We removed the --legacy flag. Changelog?"
