"""--runs auto through the pipeline: rounds into one iteration, each settled eval
and the decision said with after how many runs and why; a clear difference
stops early, a tie on the edge runs to the maximum, and the same command
resumes (workbench/app/rounds.py, docs/improve.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.cli import workbench

from workbench.app import pipeline
from workbench.app.choices import Agent, Judge, Limits, Placement
from workbench.workspace.layout import default_workspace

# Passes or fails by the eval's pattern (its prompt: "<new>-<old>") and the version staged (SKILL.md's MARK):
# one: always, zero: never, alt: every other run of that eval and version (counted in AGENT_STATE).
AGENT = r"""
import os, pathlib, sys
prompt = sys.stdin.read().strip()
staged = pathlib.Path(".claude/skills/changelog-entry/SKILL.md")
mark = "none"
if staged.exists():
    mark = "new" if "MARK=new" in staged.read_text() else "old"
new, old = prompt.split("-")
pattern = {"new": new, "old": old, "none": "zero"}[mark]
counter = pathlib.Path(os.environ["AGENT_STATE"]) / f"{prompt}.{mark}"
count = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(count + 1))
passed = pattern == "one" or (pattern == "alt" and count % 2 == 0)
pathlib.Path("answer.txt").write_text("pass\n" if passed else "fail\n")
print('{"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}}')
print('{"type": "result", "result": "done", "session_id": "s", "cost_usd": 0.01}')
"""


def _versions(skill: Path, patterns: list[str]) -> None:
    """v0 (MARK=old) and v1 (MARK=new) of a skill whose evals are the patterns."""
    data = {
        "skill_name": "changelog-entry",
        "evals": [
            {
                "id": f"e{i}-{pattern}",
                "prompt": pattern,
                "expected_output": "pass",
                "assertions": [{"id": "passed", "type": "command_check", "command": "grep -qx pass answer.txt"}],
            }
            for i, pattern in enumerate(patterns)
        ],
    }
    (skill / "evals" / "evals.json").write_text(json.dumps(data, indent=2))
    text = (skill / "SKILL.md").read_text()
    (skill / "SKILL.md").write_text(text + "\nMARK=old\n")
    assert workbench("version", "new", skill).returncode == 0
    (skill / "SKILL.md").write_text(text + "\nMARK=new\n")
    assert workbench("version", "new", skill).returncode == 0


def _evaluate(skill: Path, tmp_path: Path) -> pipeline.Outcome:
    (tmp_path / "state").mkdir(exist_ok=True)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    request = pipeline.RunRequest(
        skill,
        agent=Agent("command", f"AGENT_STATE={tmp_path / 'state'} {sys.executable} {agent}"),
        judge=Judge("demo"),
        limits=Limits(adaptive=True, max_runs=8, jobs=2),
        placement=Placement("none"),
        version="v1",
    )
    prepared = pipeline.prepare(request)
    prepared.trust()
    return pipeline.run(prepared)


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_clear_difference_stops_early_and_says_why(demo_copy, tmp_path):
    _versions(demo_copy, ["one-zero"] * 6)
    outcome = _evaluate(demo_copy, tmp_path)
    assert outcome.evaluation is not None and outcome.evaluation.result == "won"
    plan = json.loads((outcome.iteration / "plan.json").read_text())
    decision = plan["adaptive"]["decision"]
    assert decision["result"] == "won" and decision["runs"] == 1 and decision["by"] == "early look"
    assert "won after 1 run of at most 8, an early look" in decision["why"]
    assert len(plan["dispatches"]) == 12 == len(outcome.prepared.dispatches)  # of at most 96
    assert plan["adaptive"]["rounds"] == [{"round": 1, "dispatches": 12}]
    # recorded in history.json's evaluations with when and why it settled
    workspace = default_workspace(demo_copy)
    recorded = json.loads((workspace / "evaluations.json").read_text())["v1"]
    assert recorded["decision"]["settled"]["by"] == "early look" and recorded["adaptive"]["max_runs"] == 8


@pytest.mark.slow  # 11 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_tie_on_the_edge_runs_to_the_maximum_in_one_iteration(demo_copy, tmp_path):
    # Four evals the new version fixes, one it breaks every other run, one both pass: too close to call
    # until the last look.
    _versions(demo_copy, ["one-zero"] * 4 + ["alt-one", "one-one"])
    outcome = _evaluate(demo_copy, tmp_path)
    assert outcome.evaluation is not None and outcome.evaluation.result == "tie"
    plan = json.loads((outcome.iteration / "plan.json").read_text())
    adaptive = plan["adaptive"]
    assert adaptive["decision"]["by"] == "maximum" and adaptive["decision"]["runs"] == 8
    assert len(adaptive["rounds"]) == 8
    # the evals whose runs agreed stopped after 3 runs (one eval of six disagreed from round 2: 3 agreeing runs
    # needed, not 2); the one whose runs disagree ran all 8
    assert {k: v["runs"] for k, v in adaptive["evals"].items()} == {
        **{f"e{i}-one-zero": 3 for i in range(4)},
        "e5-one-one": 3,
        "e4-alt-one": 8,
    }
    assert adaptive["evals"]["e4-alt-one"]["why"] == "reached the maximum of 8 runs"
    runs = sorted(p.parent.name for p in outcome.iteration.glob("eval-e4-alt-one/*/run-*/run.json"))
    assert len(runs) == 16  # with_skill and old_skill, 8 each, all in this one iteration
    assert len(list(default_workspace(demo_copy).glob("iteration-*"))) == 1


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("value", ["auto", "3"])
def test_runs_takes_a_number_or_auto(value, demo_copy):
    shown = workbench("run", demo_copy, "--runs", value, "--only", "export-json-flag", "--trust")
    assert shown.returncode == 0, shown.stderr
    if value == "auto":
        # the suite's one eval agreed on both sides: 2 agreeing runs settle it
        assert "--runs auto: 4 dispatches in 2 round(s), of at most 16 (--max-runs 8)" in shown.stdout
        assert "eval export-json-flag: every run of both sides agreed after 2 runs" in shown.stdout
        records = {p: p.stat().st_mtime_ns for p in default_workspace(demo_copy).glob("iteration-1/*/*/*/run.json")}
        again = workbench("run", demo_copy, "--runs", "auto", "--only", "export-json-flag", "--trust")
        assert again.returncode == 0 and "4 dispatches in 2 round(s)" in again.stdout
        assert [p.name for p in default_workspace(demo_copy).glob("iteration-*")] == ["iteration-1"]
        assert len(records) == 4 and all(p.stat().st_mtime_ns == t for p, t in records.items())  # resumed: none ran
    wrong = workbench("run", demo_copy, "--runs", "often")
    assert wrong.returncode == 2 and "'often' is neither a number of runs nor auto" in wrong.stderr


@pytest.mark.slow  # 14 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_plan_whose_adaptive_record_is_not_an_object_starts_a_new_iteration(demo_copy):
    """Found by an attacker: "adaptive": "x" in plan.json crashed --runs auto with a traceback."""
    first = workbench("run", demo_copy, "--runs", "auto", "--only", "export-json-flag", "--trust")
    assert first.returncode == 0, first.stderr
    plan = default_workspace(demo_copy) / "iteration-1" / "plan.json"
    data = json.loads(plan.read_text())
    data["adaptive"] = "x"
    plan.write_text(json.dumps(data))
    again = workbench("run", demo_copy, "--runs", "auto", "--only", "export-json-flag", "--trust")
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert (default_workspace(demo_copy) / "iteration-2" / "plan.json").exists()
