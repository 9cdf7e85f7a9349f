"""The codex executor end to end: the real Codex CLI (pinned, installed by
tests/run.sh) against a scripted Responses API on 127.0.0.1, configured the way a
user configures a provider of their own (CODEX_HOME/config.toml). It really runs
its shell tool in the workspace; the scripted follow-up turn arrives through
`codex exec resume`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil

import pytest
from agents import answer_skill
from agents.scripted_responses import ScriptedResponsesServer
from conftest import DEMO

from workbench.grading import transcript_check
from workbench.runs import sandbox
from workbench.runs.executors.codex import CodexExecutor
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.runner import DONE, RunOptions
from workbench.runs.transcript import read_jsonl

CODEX = os.environ.get("WORKBENCH_TEST_CODEX") or shutil.which("codex")
pytestmark = pytest.mark.skipif(
    not CODEX,
    reason="the Codex CLI is not installed (tests/run.sh installs it with npm; npm is missing or the install failed)",
)


@pytest.mark.parametrize(
    "mode",
    [
        "none",
        pytest.param("bwrap", marks=pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"{sandbox.unavailable()}")),
    ],
)
def test_codex_runs_its_shell_tool_turns_and_timings(tmp_path, monkeypatch, mode):
    skill = answer_skill(tmp_path, DEMO)
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    with ScriptedResponsesServer() as server:
        (home / ".codex" / "config.toml").write_text(server.config_toml())
        for name, value in {
            "HOME": str(home),
            "CODEX_HOME": str(home / ".codex"),
            "OPENAI_API_KEY": "sk-scripted",
        }.items():
            monkeypatch.setenv(name, value)
        executor = CodexExecutor(binary=CODEX)
        options = RunOptions(jobs=1, timeout=120, baseline="none", sandbox=mode)
        launch = prepare_launch(skill, executor, options)
        asyncio.run(run_launch(launch, executor, options))
    [dispatch] = launch.dispatches
    record = json.loads((dispatch.folder / "run.json").read_text())
    assert dispatch.status == DONE, record
    assert record["turns"] == 2 and record["stop_reason"] is None and record["session_id"]
    events = read_jsonl((dispatch.folder / "transcript.jsonl").read_text())
    [call] = [e.rendered for e in events if e.kind == "tool_use"]
    assert call.startswith('Bash {"command":"/bin/bash -lc ') and "answer.txt" in call
    assert [e.text for e in events if e.kind == "tool_result"] == ["42\n"]
    assert [e.text for e in events if e.kind == "user"] == ["Write the answer.", "JSON please"]
    assert [e.text for e in events if e.kind == "assistant"] == [
        "Which format do you want?",
        "Done: the answer is in JSON now.",
    ]
    assert (dispatch.folder / "outputs" / "answer.txt").read_text() == "42\n"
    metrics = json.loads((dispatch.folder / "metrics.json").read_text())
    assert metrics["tool_calls"] == {"Bash": 1} and metrics["files_created"] == ["answer.txt"]
    assert json.loads((dispatch.folder / "timing.json").read_text())["total_tokens"] > 0
    # the staged skill sat where Codex discovers skills, and the transcript grades like any other
    assert (dispatch.folder / "repo" / ".agents" / "skills" / "changelog-entry" / "SKILL.md").is_file()
    verdict = transcript_check.grade(
        {"check": "tool_invocation_matches", "pattern": r"^Bash .*answer\.txt", "must_precede": "completion_claim"},
        events,
    )
    assert verdict.passed, verdict.evidence
