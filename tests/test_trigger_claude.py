"""workbench trigger with the real Claude Code against the scripted model server,
whose choice to use a skill depends on the request and the description in
Claude Code's skills listing (agents/trigger_rule.py): recall and precision are
known. A copy of the skill installed in the user's own scope, with a
description that would trigger on everything, changes nothing: the runs use a
private agent config."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from agents.scripted_model import ScriptedServer
from test_claude_executor import CLAUDE, _offline
from test_triggers import QUERIES, skill_with, workbench

pytestmark = pytest.mark.skipif(
    not CLAUDE,
    reason="the Claude Code CLI is not installed (tests/run.sh installs it with npm; npm is missing "
    "or the install failed)",
)
EVERYTHING = "Use for every request about a variable, a database, a deprecation, binary search or anything else."


def _trigger(skill, *extra: str) -> dict:
    done = workbench(
        "trigger",
        skill,
        "--executor",
        "claude",
        "--runs",
        "1",
        "-j",
        "3",
        "--sandbox",
        "none",
        "--format",
        "json",
        *extra,
        env={"WORKBENCH_CLAUDE": CLAUDE},
    )
    assert done.returncode == 1, done.stderr  # one miss, one false trigger
    return json.loads(done.stdout)


@pytest.mark.slow  # 18 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_claude_code_gives_the_known_recall_and_precision_and_a_user_installed_copy_changes_nothing(
    tmp_path, monkeypatch
):
    skill = skill_with(tmp_path, QUERIES)
    with ScriptedServer() as server:
        _offline(monkeypatch, server, tmp_path)
        clean = _trigger(skill)
        assert (clean["recall"], clean["precision"], clean["accuracy"]) == (0.6667, 0.6667, 0.6667)
        assert [q["triggered"] for q in clean["queries"]] == [1, 1, 0, 1, 0, 0]
        assert clean["cost_unknown"] == 0 and clean["cost_usd"] > 0
        first = os.path.join(clean["iteration"], "eval-1", "with_skill", "run-1", "run.json")
        record = json.loads(open(first).read())
        assert record["stop_reason"] == "triggering decided"  # stopped at the Skill call: one short turn
        assert record["cost_basis"].startswith("usage before the stop")

        # The same skill, installed by the user with a description that matches every query above.
        mine = tmp_path / "home" / ".claude" / "skills" / "changelog-entry"
        mine.mkdir(parents=True)
        (mine / "SKILL.md").write_text(f"---\nname: changelog-entry\ndescription: {EVERYTHING}\n---\n\nMine.\n")
        requests_before = len(server.model.requests)
        again = _trigger(skill, "--fresh")
        assert [q["triggered"] for q in again["queries"]] == [1, 1, 0, 1, 0, 0]
        assert (again["recall"], again["precision"]) == (0.6667, 0.6667)
        seen = json.dumps(server.model.requests[requests_before:])
        assert "anything else" not in seen  # the agent never saw the user's copy

        # The test can fail: Claude Code run as run_eval.py runs it, with the user's own config, sees the copy.
        subprocess.run(
            [CLAUDE, "-p", "--output-format", "stream-json", "--verbose"],
            input="Explain how binary search works",
            cwd=skill,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "anything else" in json.dumps(server.model.requests[-1])
