"""What runs cost: recorded, summed, estimated before launch, bounded by --max-cost
and --max-dispatches, and fresh samples on demand (docs/cost.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import workbench

from workbench.app import pipeline
from workbench.app.choices import Agent, Judge, Limits, Placement
from workbench.config import ConfigProblem, config_path, load_config
from workbench.formats.money import money
from workbench.grading.report import render
from workbench.grading.review import load_review
from workbench.runs.estimate import Estimate
from workbench.runs.executors.codex import CodexExecutor
from workbench.workspace.layout import default_workspace

# A command-protocol agent: logs when it starts and ends, sleeps AGENT_SLEEP, reports AGENT_COST dollars.
AGENT = r"""
import json, os, sys, time
prompt = sys.stdin.read()
log = os.environ.get("AGENT_LOG")
if log:
    with open(log, "a") as f: f.write(json.dumps({"start": time.time(), "prompt": prompt}) + "\n")
time.sleep(float(os.environ.get("AGENT_SLEEP", "0")))
result = {"type": "result", "result": "done", "session_id": "s", "usage": {"input_tokens": 10}}
if os.environ.get("AGENT_COST"):
    result["cost_usd"] = float(os.environ["AGENT_COST"])
print(json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}}))
print(json.dumps(result))
"""


@pytest.fixture
def agent(tmp_path) -> Path:
    path = tmp_path / "agent.py"
    path.write_text(AGENT)
    return path


def _suite(skill: Path, evals: int) -> None:
    data = {
        "skill_name": "changelog-entry",
        "evals": [
            {
                "id": f"case-{i}",
                "prompt": f"case {i}",
                "expected_output": "e",
                "assertions": [{"id": "ran", "type": "command_check", "command": "true"}],
            }
            for i in range(evals)
        ],
    }
    (skill / "evals" / "evals.json").write_text(json.dumps(data, indent=2))


def _command(agent: Path, **env: object) -> str:
    return " ".join(f"{k}={v}" for k, v in env.items()) + f" {sys.executable} {agent}"


def _cli(*args: str | Path) -> subprocess.CompletedProcess:
    """`workbench run`, in this process; its stdin is not a terminal: nothing can be asked."""
    return workbench("run", *args)


def test_the_agents_cost_is_recorded_summed_and_reported_apart_from_the_judges(demo_copy, agent):
    _suite(demo_copy, 3)
    request = pipeline.RunRequest(
        demo_copy,
        agent=Agent("command", _command(agent, AGENT_COST="0.25")),
        judge=Judge("demo"),
        placement=Placement("none"),
    )
    prepared = pipeline.prepare(request)
    prepared.trust()
    outcome = pipeline.run(prepared)
    iteration = outcome.iteration
    record = json.loads((iteration / "eval-case-0" / "with_skill" / "run-1" / "run.json").read_text())
    metrics = json.loads((iteration / "eval-case-0" / "with_skill" / "run-1" / "metrics.json").read_text())
    assert record["cost_usd"] == metrics["cost_usd"] == 0.25
    benchmark = json.loads((iteration / "benchmark.json").read_text())
    assert benchmark["run_summary"]["with_skill"]["cost_usd"]["total"] == 0.75
    assert benchmark["run_summary"]["without_skill"]["cost_usd"]["mean"] == 0.25
    assert benchmark["run_summary"]["delta"]["cost_usd"] == "+0.0000"
    # the demo judge is not a model: its calls cost nothing, and are counted apart
    assert benchmark["metadata"]["cost_usd"] == {
        "agents": 1.5,
        "judge": 0.0,
        "total": 1.5,
        "agents_unknown": 0,
        "judge_unknown": 0,
    }
    review = load_review(iteration)
    assert "Cost: agents $1.50 · judge $0.00 · total $1.50" in render(review, str(iteration), "text")
    assert json.loads(render(review, str(iteration), "json"))["cost_usd"]["configurations"]["with_skill"][
        "agents"
    ] == pytest.approx(0.75)
    assert '<property name="cost_usd.agents" value="0.750000"' in render(review, str(iteration), "junit")


def test_an_agent_that_says_nothing_of_its_cost_is_unknown_never_free(demo_copy, agent):
    _suite(demo_copy, 1)
    request = pipeline.RunRequest(
        demo_copy, agent=Agent("command", _command(agent)), baseline="none", placement=Placement("none")
    )
    prepared = pipeline.prepare(request)
    assert prepared.estimate is not None and prepared.estimate.cost_usd is None  # a command agent never ran
    prepared.trust()
    outcome = pipeline.run(prepared)
    benchmark = json.loads((outcome.iteration / "benchmark.json").read_text())
    assert benchmark["metadata"]["cost_usd"]["agents_unknown"] == 1
    assert "cost_usd" not in benchmark["run_summary"]["with_skill"]
    assert "(at least: 1 run(s) did not report the agent's cost)" in (outcome.iteration / "benchmark.md").read_text()


def test_codex_usage_is_priced_by_the_dated_table_and_the_config_overrides_it(tmp_path, monkeypatch):
    line = json.dumps(
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 1_000_000, "cached_input_tokens": 400_000, "output_tokens": 100_000},
        }
    )
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    outcome = CodexExecutor(model="gpt-6.1-sol").parse(line, 1)
    # 600k uncached input at $2, 400k cached at $0.10, 100k output at $10, per million
    assert outcome.cost_usd == pytest.approx(1.2 + 0.04 + 1.0)
    assert CodexExecutor(model="a-model-nobody-priced").parse(line, 1).cost_usd is None
    config = config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"prices": {"a-model-nobody-priced": {"input": 1, "output": 1}}}))
    assert CodexExecutor(model="a-model-nobody-priced").parse(line, 1).cost_usd == pytest.approx(1.1)
    config.write_text('{\n  "prices": {"m": {"input": "cheap"}}\n}\n')
    with pytest.raises(ConfigProblem) as problem:
        load_config()
    assert str(problem.value).endswith(
        ':2:13: "prices" must be an object {"<model>": {"input": <dollars per '
        'million tokens>, "output": <...>, "cached_input": <...>}} (or null), found an object'
    )
    assert money(0.0042) == "$0.0042" and money(12.5) == "$12.50" and money(None) == "unknown"


@pytest.mark.slow  # 18 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_max_cost_stops_at_the_right_dispatch_under_j_and_a_higher_limit_resumes(demo_copy, agent, tmp_path):
    _suite(demo_copy, 8)
    log = tmp_path / "starts.log"
    command = _command(agent, AGENT_COST="0.1", AGENT_SLEEP="0.3", AGENT_LOG=log)
    common = ("--executor", "command", "--agent-command", command, "--trust", "--baseline", "none")
    common += ("--sandbox", "none", "-j", "2")
    first = _cli(demo_copy, *common, "--max-dispatches", "1")
    assert first.returncode == 2, first.stderr
    assert "the budget stopped the run: --max-dispatches 1 reached. 7 dispatch(es) not started" in first.stderr
    assert "cost unknown" in first.stderr  # a command agent that never ran: nothing to estimate from
    # Now one run says what a dispatch costs: $0.10. With $0.35, three more fit and the fourth would pass it:
    # it starts neither beside the third (0.2 spent + 2 x 0.1 in flight) nor after it (0.3 + 0.1).
    second = _cli(demo_copy, *common, "--max-cost", "0.35")
    assert second.returncode == 2, second.stderr
    assert "8 dispatches (1 of them resumed or reused, free), about $0.70" in second.stderr
    assert "from 1 earlier run(s) of this suite" in second.stderr
    assert "spent $0.30 of --max-cost $0.35; the next dispatch, expected at $0.10, would pass it" in second.stderr
    assert len(log.read_text().splitlines()) == 1 + 3
    iteration = default_workspace(demo_copy) / "iteration-1"
    plan = json.loads((iteration / "plan.json").read_text())
    # a record, not words: each reader says it its own way (the command line with its flag names)
    assert plan["stopped"] == {
        "by": "budget",
        "limit": "max_cost",
        "spent_usd": 0.3,
        "limit_usd": 0.35,
        "next_usd": 0.1,
    }
    review = load_review(iteration)
    assert review.errors == 4  # the four never started are errors, never passes
    assert sum("not run: the budget stopped the run" in f.evidence for f in review.failures) == 4
    # The same command with a higher limit finishes the same iteration.
    third = _cli(demo_copy, *common, "--max-cost", "5")
    assert third.returncode == 0, third.stderr
    assert len(log.read_text().splitlines()) == 8
    assert "stopped" not in json.loads((iteration / "plan.json").read_text())
    assert load_review(iteration).errors == 0


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_estimate_says_the_limits_that_cut_it_short_and_asks_about_what_they_let_it_spend():
    def guess(cost: float | None = 10.0) -> Estimate:
        return Estimate(20, 20, cost, None if cost is None else cost / 20, 60.0, "assumed")

    plain = guess()
    assert plain.most_usd == 10.0 and plain.line() == "20 dispatches, about $10.00, about 60 s"
    assert guess().limited(50, 20.0).line() == plain.line()  # limits it stays within: nothing said
    assert guess().limited(50, 20.0).most_usd == 10.0
    four = guess().limited(4, None)
    assert four.most_usd == 2.0 and four.line().endswith("about 60 s; its max dispatches stops it after 4")
    three = guess().limited(None, 3.0)
    assert three.most_usd == 3.0 and three.line().endswith("; its max cost stops it at $3.00")
    both = guess().limited(8, 3.0)  # 8 dispatches would cost $4: both cut it
    assert both.most_usd == 3.0 and both.line().endswith("; its max dispatches stops it after 8, its max cost at $3.00")
    assert guess().limited(4, 3.0).line().endswith("; its max dispatches stops it after 4")  # $2: within $3
    unknown = guess(None).limited(None, 3.0)
    assert unknown.most_usd is None and unknown.line() == "20 dispatches, cost unknown, about 60 s"

    def rounds() -> Estimate:  # --runs auto: 20 dispatches in the first round, at most 60 in all
        return Estimate(60, 60, 30.0, 0.5, 180.0, "assumed").within(guess())

    assert rounds().limited(80, None).most_usd == 30.0 and "stops" not in rounds().limited(80, None).line()
    cut = rounds().limited(40, None)
    assert cut.most_usd == 20.0 and cut.line().endswith("(at most 3 min); its max dispatches stops it after 40")


def test_the_command_line_estimate_and_question_keep_the_limits(demo_copy, agent):
    _suite(demo_copy, 4)
    common = ("--executor", "command", "--trust", "--baseline", "none", "--sandbox", "none")
    config = config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"confirm_above_usd": 0.2}))
    command = _command(agent, AGENT_COST="0.5")
    assert _cli(demo_copy, *common, "--agent-command", command, "--yes").returncode == 0  # its cost is known now
    dry = _cli(demo_copy, *common, "--agent-command", command, "--fresh", "--max-dispatches", "1", "--dry-run")
    assert "its max dispatches stops it after 1" in dry.stderr + dry.stdout, dry.stderr + dry.stdout
    asked = _cli(demo_copy, *common, "--agent-command", command, "--fresh", "--max-cost", "1")
    assert asked.returncode == 2 and "At most" not in asked.stderr
    assert "About $1.00 is above confirm_above_usd" in asked.stderr, asked.stderr


def test_an_estimate_above_the_threshold_asks_and_yes_skips_the_question(demo_copy, agent):
    _suite(demo_copy, 2)
    config = config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    common = ("--executor", "command", "--trust", "--baseline", "none", "--sandbox", "none")
    command = _command(agent, AGENT_COST="0.5")
    assert _cli(demo_copy, *common, "--agent-command", command, "--max-dispatches", "1").returncode == 2
    config.write_text(json.dumps({"confirm_above_usd": 0.2}))
    asked = _cli(demo_copy, *common, "--agent-command", command)
    assert asked.returncode == 2
    assert "About $0.50 is above confirm_above_usd, $0.20 (config). Pass --yes to run it" in asked.stderr
    assert _cli(demo_copy, *common, "--agent-command", command, "--yes").returncode == 0


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_fresh_draws_new_samples_and_failed_reruns_fresh_by_default(demo_copy):
    workspace = default_workspace(demo_copy)

    def run(**options) -> pipeline.Outcome:
        prepared = pipeline.prepare(pipeline.RunRequest(demo_copy, only=frozenset({"export-json-flag"}), **options))
        prepared.trust()
        return pipeline.run(prepared)

    first = run()
    again = run()  # the same plan: resumed, nothing runs
    assert again.iteration == first.iteration and {d.status for d in again.prepared.dispatches} == {"skipped"}
    fresh = run(limits=Limits(fresh=True))  # new samples: a new iteration, nothing taken from the cache
    assert fresh.iteration != first.iteration
    assert {d.status for d in fresh.prepared.dispatches} == {"done"}
    assert json.loads((fresh.iteration / "plan.json").read_text())["sample"]
    # --failed: the with-skill reruns are fresh samples; the without-skill baseline is the same dispatch, reused.
    (workspace / "iteration-2" / "eval-export-json-flag" / "with_skill" / "run-1" / "grading.json").write_text(
        json.dumps({"expectations": [{"text": "x", "passed": False, "evidence": ""}], "summary": {"failed": 1}})
    )
    failed = run(failed=True)
    statuses = {d.configuration: d.status for d in failed.prepared.dispatches}
    assert statuses == {"with_skill": "done", "without_skill": "reused"}
    assert json.loads((failed.iteration / "plan.json").read_text())["sample"]


@pytest.mark.parametrize("said", ["Infinity", "NaN", "-5", "1e308", '"0.5"', "true"])
def test_a_cost_that_is_not_a_cost_is_unknown_and_breaks_nothing_after_it(demo_copy, agent, said):
    """Found by an attacker: an agent's cost_usd of Infinity was written as a bare Infinity into run.json (no
    longer JSON: the run read as ungraded) and made every later estimate of the suite crash; a forged -1000 in
    an earlier run.json made the estimate negative and switched --max-cost off."""
    _suite(demo_copy, 1)
    script = agent.read_text().replace('float(os.environ["AGENT_COST"])', "json.loads(os.environ['AGENT_COST'])")
    agent.write_text(script)
    request = pipeline.RunRequest(
        demo_copy,
        agent=Agent("command", _command(agent, AGENT_COST=f"'{said}'")),
        baseline="none",
        placement=Placement("none"),
    )
    prepared = pipeline.prepare(request)
    prepared.trust()
    outcome = pipeline.run(prepared)
    record_file = outcome.iteration / "eval-case-0" / "with_skill" / "run-1" / "run.json"
    record = json.loads(record_file.read_text())  # strict JSON: no Infinity, no NaN
    assert record["cost_usd"] is None and outcome.review.errors == 0
    # a forged negative cost in that record is not believed by the next estimate, nor by --max-cost
    record["cost_usd"] = -1000
    record_file.write_text(json.dumps(record))
    again = pipeline.prepare(replace_request(request, limits=Limits(max_cost=1.0, fresh=True)))
    assert again.estimate is not None and again.estimate.per_dispatch_usd is None
    assert again.budget().expected == 0.0 and again.budget().learn


def replace_request(request, **changes):
    from dataclasses import replace

    return replace(request, **changes)


def test_a_stop_is_a_record_said_with_flag_names_only_by_the_command_line():
    from workbench.runs.budget import Stop
    from workbench.runs.stopped import said_of

    cost = Stop("budget", "max_cost", 0.1 + 0.2, 0.35, 0.1)
    assert cost.as_json() == {"by": "budget", "limit": "max_cost", "spent_usd": 0.3, "limit_usd": 0.35, "next_usd": 0.1}
    assert "--" not in cost.said() and "the cost limit, $0.35" in cost.said()
    assert "of --max-cost $0.35" in cost.said(flags=True)
    count = Stop("budget", "max_dispatches", limit_dispatches=3)
    assert said_of(count.as_json()) == "the budget stopped the run: the limit of 3 dispatches reached"
    assert count.said(flags=True) == "the budget stopped the run: --max-dispatches 3 reached"
    # a plan an earlier workbench wrote keeps its words
    assert said_of("the budget stopped the run: --max-dispatches 1 reached") == (
        "the budget stopped the run: --max-dispatches 1 reached"
    )
    assert said_of(None) is None and said_of({}) is None
