"""workbench trigger and optimize-description: triggering decided from the event
stream and the agent stopped then; known recall, precision and accuracy from a
scripted agent (and, in test_trigger_claude.py, the real Claude Code); errors
never counted as "did not trigger"; an optimizer selecting on held-out queries
only, rejecting a description fitted to the train set."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import DEMO
from support import cli

from workbench.app.optimize_description import optimize_folder
from workbench.grading.trigger_results import QueryResult, Scores, settled, wilson
from workbench.improve import description
from workbench.runs import skill_use
from workbench.runs.processes import run_bounded
from workbench.runs.transcript import ASSISTANT, TOOL_USE, Event
from workbench.workspace.layout import default_workspace
from workbench.workspace.versions import VersionStore

AGENT = Path(__file__).resolve().parent / "agents" / "trigger_agent.py"
START = "Writes changelog entries for releases. Use when asked about a changelog."

# Known answers under the scripted rule (a shared word of 7+ letters with the description):
# recall 2/3, precision 2/3, accuracy 4/6.
QUERIES = [
    {"query": "Add a changelog line for the parser fix", "should_trigger": True},  # hit: changelog
    {"query": "Summarise the releases we shipped", "should_trigger": True},  # hit: releases
    {"query": "Write up the deprecation of the synchronous client", "should_trigger": True},  # miss
    {"query": "Count the entries in this database table", "should_trigger": False},  # false trigger: entries
    {"query": "Rename the variable in parser.py", "should_trigger": False},
    {"query": "Explain how binary search works", "should_trigger": False},
]


def skill_with(tmp_path: Path, queries: list[dict], description_text: str = START) -> Path:
    skill = tmp_path / "skills" / "changelog-entry"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: changelog-entry\ndescription: {description_text}\n---\n\n# Changelog entries\n\nWrite them.\n"
    )
    (skill / "evals").mkdir()
    (skill / "evals" / "trigger-evals.json").write_text(json.dumps(queries, indent=2) + "\n")
    return skill


def workbench(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    """The command line, in this process: its output, exit codes and files are what these tests read."""
    import os

    return cli.workbench(*args, env={**os.environ, **(env or {})})


def agent_args(*extra: str) -> list[str]:
    return ["--executor", "command", "--agent-command", f"{sys.executable} {AGENT}", "--trust", *extra]


# ---------------------------------------------------------------- deciding from the stream


def tool(name: str, given: dict) -> Event:
    return Event(TOOL_USE, 1, name=name, input=given)


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ([tool("Skill", {"skill": "changelog-entry"})], True),
        ([tool("Skill", {"skill": "my-plugin:changelog-entry"})], True),
        ([tool("Read", {"file_path": "/w/repo/.claude/skills/changelog-entry/SKILL.md"})], True),
        ([tool("exec_command", {"cmd": "cat .agents/skills/changelog-entry/SKILL.md"})], True),
        ([tool("TodoWrite", {"todos": []}), tool("Skill", {"skill": "changelog-entry"})], True),
        ([tool("Bash", {"command": "ls"}), tool("Skill", {"skill": "changelog-entry"})], False),
        ([tool("Skill", {"skill": "dataviz"})], False),
        ([tool("Read", {"file_path": "SKILL.md"})], False),  # the project's own SKILL.md is not the staged skill
        ([Event(ASSISTANT, 1, text="I will use the changelog-entry skill")], None),  # words decide nothing
        # found by an attacker: another skill's arguments, a plan, a longer file name decide nothing for this skill
        ([tool("Skill", {"skill": "other-skill", "args": "changelog-entry"})], False),
        ([tool("TodoWrite", {"todos": [{"content": "read .claude/skills/changelog-entry/SKILL.md"}]})], None),
        ([tool("Bash", {"command": "echo .claude/skills/changelog-entry/SKILL.md.bak"})], False),
    ],
)
def test_triggering_is_decided_by_the_first_deciding_event_never_by_text(events, expected):
    use = skill_use.decide(events, "changelog-entry")
    assert (use.invoked if use else None) is expected


def test_an_answer_without_the_skill_decides_once_the_turn_is_over():
    said = [Event(ASSISTANT, 1, text="The changelog-entry skill is not needed here.")]
    assert skill_use.decide(said, "changelog-entry") is None
    use = skill_use.decide(said, "changelog-entry", turn_over=True)
    assert use is not None and use.invoked is False


def test_a_child_is_stopped_as_soon_as_its_output_decides():
    script = "import time; print('{\"a\": 1}', flush=True); time.sleep(30); print('late')"
    started = time.monotonic()
    finished = run_bounded([sys.executable, "-c", script], timeout=60, decided=lambda out: '"a"' in out)
    assert time.monotonic() - started < 10
    assert finished.decided and not finished.timed_out and not finished.cancelled
    assert finished.stdout == '{"a": 1}\n' and "late" not in finished.stdout
    assert any("decided" in line for line in finished.killed)


# ---------------------------------------------------------------- scores


def test_wilson_intervals_are_the_textbook_values():
    low, high = wilson(4, 6) or (0, 0)
    assert (round(low, 4), round(high, 4)) == (0.3000, 0.9032)
    assert wilson(0, 5) is not None and wilson(0, 5)[0] == 0.0
    assert wilson(0, 0) is None


def test_recall_precision_accuracy_count_runs():
    queries = [QueryResult("a", True, 3, 3), QueryResult("b", True, 1, 3), QueryResult("c", False, 2, 3)]
    scores = Scores.of(queries)
    assert scores.value("recall") == 4 / 6
    assert scores.value("precision") == 4 / 6
    assert scores.value("accuracy") == 5 / 9
    assert [q.kind for q in queries] == ["ok", "miss", "false trigger"]


@pytest.mark.parametrize(
    ("k", "n", "max_runs", "settles"),
    [
        (4, 4, 8, True),  # unanimous after 4
        (0, 4, 8, True),
        (2, 2, 8, False),  # unanimous, but only 2
        (1, 2, 8, False),
        (4, 6, 8, True),  # 4 of 8 triggered whatever the last 2 do
        (1, 6, 8, True),  # 5 did not: at most 3 of 8
        (3, 6, 8, False),  # 3 or 5 of 8: still open
        (2, 4, 4, True),  # at --max-runs
    ],
)
def test_an_adaptive_query_settles_when_unanimous_or_when_its_verdict_cannot_change(k, n, max_runs, settles):
    assert (settled(QueryResult("q", True, k, n), n, max_runs) is not None) is settles


def test_the_split_is_stratified_seeded_and_never_empties_a_class():
    classes = [True] * 6 + [False] * 6
    train, held = description.split(classes, 0.4, 7)
    assert (train, held) == description.split(classes, 0.4, 7)
    assert sorted(train + held) == list(range(12))
    assert sum(classes[i] for i in held) == 2 and sum(not classes[i] for i in held) == 2
    assert description.split([True, True, False, False], 0.9, 1)[0]  # a class is never wholly held out


@pytest.mark.parametrize(
    ("after", "changed", "refusal"),
    [
        ("---\nname: x\ndescription: new words\n---\n\nBody\n", ["SKILL.md"], None),
        ("---\nname: x\ndescription: new words\n---\n\nOther body\n", ["SKILL.md"], "body"),
        ("---\nname: y\ndescription: new words\n---\n\nBody\n", ["SKILL.md"], "name"),
        ("---\nname: x\ndescription: new words\n---\n\nBody\n", ["SKILL.md", "notes.md"], "notes.md"),
        ("---\nname: x\ndescription: old words\n---\n\nBody\n", ["SKILL.md"], "the same"),
    ],
)
def test_a_description_proposal_may_change_the_description_only(after, changed, refusal):
    before = b"---\nname: x\ndescription: old words\n---\n\nBody\n"
    new, why = description.description_only(before, after.encode(), changed)
    if refusal is None:
        assert new == "new words" and why is None
    else:
        assert new is None and refusal in why


# ---------------------------------------------------------------- workbench trigger, a scripted agent


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_known_recall_precision_and_accuracy_exactly_with_a_scripted_agent(tmp_path):
    skill = skill_with(tmp_path, QUERIES)
    done = workbench("trigger", skill, *agent_args("--runs", "2", "--sandbox", "none", "--format", "json"))
    assert done.returncode == 1, done.stderr  # a miss and a false trigger
    data = json.loads(done.stdout)
    assert (data["recall"], data["precision"], data["accuracy"]) == (0.6667, 0.6667, 0.6667)
    assert data["intervals"]["recall"] == [round(v, 4) for v in wilson(4, 6)]
    assert [(q["query"], q["triggered"], q["runs"], q["rate"]) for q in data["queries"]] == [
        (q["query"], 2 * hit, 2, float(hit))
        for q, hit in zip(QUERIES, [True, True, False, True, False, False], strict=True)
    ]
    iteration = Path(data["iteration"])
    assert json.loads((iteration / "results.json").read_text())["accuracy"] == 0.6667
    run = iteration / "eval-1" / "with_skill" / "run-1"
    assert json.loads((run / "trigger.json").read_text())["triggered"] is True
    assert json.loads((run / "run.json").read_text())["stop_reason"] == "triggering decided"
    text = workbench("trigger", skill, *agent_args("--runs", "2", "--sandbox", "none"))
    lines = text.stdout.splitlines()
    assert lines[1].strip() == "recall 0.67 [0.30, 0.90] (4/6 runs)"
    # misses and false triggers are listed before the queries that behaved
    marks = [line.split()[0] for line in lines[5:11]]
    assert marks[:2] in (["FALSE", "MISS"], ["MISS", "FALSE"]) and set(marks[2:]) == {"ok"}
    assert "0 dispatch(es) ran here" in text.stdout  # the same command again resumes: nothing re-runs


def test_a_read_of_the_staged_skill_md_is_a_trigger_too(tmp_path):
    skill = skill_with(tmp_path, QUERIES)
    done = workbench(
        "trigger",
        skill,
        *agent_args("--runs", "1", "--sandbox", "none", "--format", "json"),
        env={"TRIGGER_BY_READ": "1"},
    )
    assert json.loads(done.stdout)["recall"] == 0.6667, done.stderr


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_every_query_as_expected_exits_0_and_the_agent_command_needs_trust(tmp_path):
    skill = skill_with(tmp_path, [QUERIES[0], QUERIES[4]])
    args = ["--executor", "command", "--agent-command", f"{sys.executable} {AGENT}", "--sandbox", "none"]
    refused = workbench("trigger", skill, *args)
    assert refused.returncode == 2 and "--trust" in refused.stderr and not default_workspace(skill).exists()
    assert workbench("trigger", skill, *args, "--trust", "--runs", "1").returncode == 0


def test_an_agent_that_fails_is_an_error_never_a_did_not_trigger(tmp_path):
    skill = skill_with(tmp_path, QUERIES[:2])
    done = workbench(
        "trigger",
        skill,
        "--executor",
        "command",
        "--agent-command",
        "exit 3",
        "--trust",
        "--runs",
        "1",
        "--sandbox",
        "none",
        "--format",
        "json",
    )
    assert done.returncode == 2
    data = json.loads(done.stdout)
    assert data["errors"] == 2 and data["recall"] is None and all(q["runs"] == 0 for q in data["queries"])


def test_a_broken_trigger_set_is_refused_with_file_line_and_column(tmp_path):
    skill = skill_with(tmp_path, [QUERIES[0], QUERIES[0]])
    done = workbench("trigger", skill, "--runs", "1")
    assert done.returncode == 2
    assert "trigger-evals.json:" in done.stderr and "duplicate query" in done.stderr
    missing = skill_with(tmp_path / "other", QUERIES)
    (missing / "evals" / "trigger-evals.json").unlink()
    done = workbench("trigger", missing)
    assert done.returncode == 2 and "no trigger eval set here" in done.stderr and "Traceback" not in done.stderr


def test_runs_auto_stops_unanimous_queries_at_four_and_says_why(tmp_path):
    skill = skill_with(tmp_path, QUERIES[:3])
    done = workbench("trigger", skill, *agent_args("--runs", "auto", "--sandbox", "none", "--format", "json"))
    data = json.loads(done.stdout)
    assert [q["runs"] for q in data["queries"]] == [4, 4, 4], done.stderr
    assert [r["runs_each"] for r in data["rounds"]] == [2, 4]
    assert all("agreed" in why for why in data["rounds"][1]["settled"].values())


def test_the_demo_agent_is_measured_and_labelled_not_a_model(tmp_path):
    skill = tmp_path / "skills" / "changelog-entry"
    import shutil

    shutil.copytree(DEMO, skill)
    done = workbench("trigger", skill, "--runs", "1")
    assert done.returncode in (0, 1), done.stderr
    assert "not a model" in done.stdout and "recall" in done.stdout


# ---------------------------------------------------------------- optimize-description

OPTIMIZE_SET = [
    {"query": "Add a changelog line for the parser fix", "should_trigger": True},
    {"query": "Write up the deprecation of the synchronous client", "should_trigger": True},
    {"query": "Note the deprecation of the legacy switch in the installer", "should_trigger": True},
    {"query": "Announce the deprecation of the old settings format", "should_trigger": True},
    {"query": "Tell people about the deprecation of Python support", "should_trigger": True},
    {"query": "Record the deprecation of the version one endpoints", "should_trigger": True},
    {"query": "Count the entries in this database table", "should_trigger": False},
    {"query": "Rename the variable in parser.py", "should_trigger": False},
    {"query": "Explain how binary search works", "should_trigger": False},
    {"query": "Fix the failing unit test in utils", "should_trigger": False},
    {"query": "Write a haiku about autumn leaves", "should_trigger": False},
    {"query": "Refactor the storage layer", "should_trigger": False},
]

# Round 1 copies the missed train requests' own words (fitted to the train set); round 2 names the kind of
# request in general: deprecations. Both change only the description.
PROPOSER = r"""
import json, os, pathlib, re, sys
brief = sys.stdin.read()
assert brief.startswith("# Improve the description of the skill changelog-entry")
for hidden in json.loads(os.environ["HELD_OUT"]):
    assert hidden not in brief, "the proposer saw a held-out query"
round_ = 2 if "## Descriptions tried before" in brief else 1
skill = pathlib.Path("SKILL.md")
text = skill.read_text()
old = re.search(r"^description: (.*)$", text, re.M).group(1)
if round_ == 1:
    missed = [line.split(": ", 1)[1] for line in brief.splitlines() if line.startswith("- MISS")]
    words = sorted({w for q in missed for w in re.findall(r"[a-z]+", q.lower()) if len(w) >= 7} - {"deprecation"})
    new = old + " Also for " + ", ".join(words) + "."
else:
    new = "Writes changelog entries for releases, and notes each deprecation. Use when asked about a changelog."
skill.write_text(text.replace("description: " + old, "description: " + new))
print(json.dumps({"type": "result", "result": "rewrote the description", "session_id": "p", "cost_usd": 0.01}))
"""


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_optimize_keeps_the_description_that_wins_on_held_out_and_rejects_one_fitted_to_train(tmp_path):
    skill = skill_with(tmp_path, OPTIMIZE_SET)
    proposer = tmp_path / "describe.py"
    proposer.write_text(PROPOSER)
    workspace = default_workspace(skill)
    held = [OPTIMIZE_SET[i]["query"] for i in description.split([q["should_trigger"] for q in OPTIMIZE_SET], 0.4, 5)[1]]
    done = workbench(
        "optimize-description",
        skill,
        "--rounds",
        "2",
        "--seed",
        "5",
        "--proposer",
        "command",
        "--proposer-command",
        f"{sys.executable} {proposer}",
        *agent_args("--runs", "1", "--sandbox", "none"),
        env={"HELD_OUT": json.dumps(held)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    folder = optimize_folder(workspace, skill / "evals" / "trigger-evals.json")
    log = json.loads((folder / "optimize.json").read_text())
    first, second = log
    # round 1: its train score rose, its held-out score did not: rejected
    assert first["outcome"] == "rejected" and first["train"]["accuracy"] > first["best_train"]
    assert first["held_out"]["accuracy"] == first["best_held_out"]
    assert second["outcome"] == "kept" and second["version"] == "v1"
    assert second["held_out"]["accuracy"] > second["best_held_out"] == first["best_held_out"]
    split = json.loads((folder / "split.json").read_text())
    assert first["queries_file"].endswith("trigger-evals.json") and first["seed"] == 5
    assert "command" in first["executor"]
    assert split["seed"] == 5 and sorted(split["train"] + split["held_out"]) == list(range(12))
    store = VersionStore(workspace)
    assert store.versions() == ["v0", "v1"] and store.parent_of("v1") == "v0"
    assert "notes each deprecation" in store.files("v1")["SKILL.md"].decode()
    assert "Best: v1, held-out accuracy" in done.stdout and "train" not in done.stdout.split("Best:")[1]
    assert "deprecation" in done.stdout
    assert "notes each deprecation" not in (skill / "SKILL.md").read_text()  # nothing is promoted or written


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{not json", "cannot be read"),
        ('["a"]', "not a split"),
        (None, "does not split"),  # this set's digest, with indices out of range
    ],
)
def test_a_broken_split_is_an_error_never_replaced_silently(tmp_path, text, said):
    from workbench.app import optimize_description, triggers

    skill = skill_with(tmp_path, OPTIMIZE_SET)
    queries = triggers.read_queries(skill / "evals" / "trigger-evals.json")
    folder = tmp_path / "triggers"
    folder.mkdir()
    if text is None:
        text = json.dumps(
            {
                "queries": optimize_description._digest(queries),
                "holdout": 0.4,
                "seed": 1,
                "train": [0, 99],
                "held_out": ["x"],
            }
        )
    (folder / "split.json").write_text(text)
    with pytest.raises(optimize_description.Refused, match=said):
        optimize_description.load_split(folder, queries, 0.4, None)
    assert (folder / "split.json").read_text() == text
    fresh = optimize_description.load_split(tmp_path / "new", queries, 0.4, 3)
    assert optimize_description.load_split(tmp_path / "new", queries, 0.4, None) == fresh  # the saved one, reused


def test_a_measurement_stopped_by_the_person_stops_its_agents_at_once(tmp_path):
    import threading

    from workbench.app import triggers
    from workbench.app.choices import Agent, Limits, Placement

    skill = skill_with(tmp_path, QUERIES[:2])
    slow = tmp_path / "slow.sh"
    slow.write_text(f"#!/bin/sh\nsleep 30\nexec {sys.executable} {AGENT}\n")
    slow.chmod(0o755)
    request = triggers.TriggerRequest(
        skill,
        agent=Agent("command", str(slow)),
        limits=replace(Limits.for_triggers(), runs=1, jobs=2),
        placement=Placement("none"),
    )
    prepared = triggers.prepare(request)
    prepared.trust()
    stop = threading.Event()
    threading.Timer(1.0, stop.set).start()
    started = time.monotonic()
    with pytest.raises(triggers.Cancelled):
        triggers.run(prepared, cancel=stop)
    assert time.monotonic() - started < 15
    assert not list(prepared.iteration_dir.rglob("run.json"))  # nothing recorded: the same measurement resumes


def test_the_demo_agent_and_a_one_class_set_are_said_and_an_empty_set_is_refused(tmp_path):
    skill = skill_with(tmp_path, [QUERIES[0], QUERIES[1]])
    done = workbench("trigger", skill, "--runs", "1")
    assert "the demo agent is not a model" in done.stderr
    assert "every query has should_trigger: true" in done.stderr
    (skill / "evals" / "trigger-evals.json").write_text("[]\n")
    done = workbench("trigger", skill)
    assert done.returncode == 2 and "the set is empty" in done.stderr


def test_a_fresh_measurement_stopped_by_the_budget_resumes_with_the_same_command(tmp_path):
    skill = skill_with(tmp_path, QUERIES[:3])
    args = agent_args("--runs", "2", "--sandbox", "none", "--fresh", "-j", "1", "--format", "json")
    stopped = workbench("trigger", skill, *args, "--max-cost", "0.0025")
    assert stopped.returncode == 2
    first = json.loads(stopped.stdout)
    assert first["incomplete"] is True and first["errors"] > 0
    done = workbench("trigger", skill, *args)
    again = json.loads(done.stdout)
    assert again["iteration"] == first["iteration"]  # the same iteration, resumed
    assert again["dispatches"] == 6 - first["dispatches"] and again["errors"] == 0


def test_optimize_refuses_at_once_when_the_proposer_cannot_start(tmp_path):
    skill = skill_with(tmp_path, OPTIMIZE_SET)
    done = workbench(
        "optimize-description",
        skill,
        "--proposer",
        "claude",
        *agent_args("--runs", "1", "--sandbox", "none"),
        env={"WORKBENCH_CLAUDE": str(tmp_path / "no-such-claude")},
    )
    assert done.returncode == 2 and "cannot start" in done.stderr
    assert not (default_workspace(skill) / "triggers" / "iteration-1").exists()  # nothing was measured first


# ---------------------------------------------------------------- found by an attacker, each its exploit first


@pytest.mark.parametrize(
    "agent",
    [
        "true",  # prints nothing at all
        'echo \'{"type": "system", "subtype": "init"}\'',  # no message, no result
        'echo \'{"type": "result", "is_error": true, "result": "API Error: 401"}\'',  # an error result
        f"{sys.executable} -c \"print('x' * 5_000_000); print('{{}}')\"",  # output cut before any decision
    ],
)
def test_a_run_that_says_nothing_of_triggering_is_an_error_never_a_did_not_trigger(tmp_path, agent):
    skill = skill_with(tmp_path, QUERIES[3:5])  # should not trigger: a silent run would have passed them
    done = workbench(
        "trigger",
        skill,
        "--executor",
        "command",
        "--agent-command",
        agent,
        "--trust",
        "--runs",
        "1",
        "--sandbox",
        "none",
        "--format",
        "json",
    )
    data = json.loads(done.stdout)
    assert done.returncode == 2 and data["errors"] == 2 and all(q["runs"] == 0 for q in data["queries"])


def test_a_corrupt_transcript_is_an_error_when_results_are_read_again(tmp_path):
    skill = skill_with(tmp_path, QUERIES[3:5])
    args = ("trigger", skill, *agent_args("--runs", "1", "--sandbox", "none", "--format", "json"))
    first = json.loads(workbench(*args).stdout)
    iteration = Path(first["iteration"])
    (iteration / "eval-1" / "with_skill" / "run-1" / "transcript.jsonl").write_text("")  # was a false trigger
    (iteration / "eval-2" / "with_skill" / "run-1" / "transcript.jsonl").write_text("[1]\n")
    done = workbench(*args)
    data = json.loads(done.stdout)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert data["errors"] == 2 and [q["runs"] for q in data["queries"]] == [0, 0]


def test_a_query_with_nul_or_terminal_escapes_is_refused_or_shown_inert(tmp_path):
    skill = skill_with(tmp_path, [{"query": "nul \u0000 byte", "should_trigger": False}, QUERIES[0]])
    done = workbench("trigger", skill, "--runs", "1")
    assert done.returncode == 2 and "NUL" in done.stderr and "Traceback" not in done.stderr
    evil = "evil \u001b]0;PWNED\u0007\u001b[2J changelog"
    skill = skill_with(tmp_path / "b", [{"query": evil, "should_trigger": True}, QUERIES[4]])
    done = workbench("trigger", skill, *agent_args("--runs", "1", "--sandbox", "none"))
    assert "\u001b" not in done.stdout and "\u0007" not in done.stdout
    assert "evil \\x1b]0;PWNED\\x07\\x1b[2J changelog" in done.stdout


def test_a_cache_entry_naming_a_folder_outside_the_workspace_is_never_followed(tmp_path):
    skill = skill_with(tmp_path, QUERIES[4:5])
    args = ("trigger", skill, *agent_args("--sandbox", "none", "--format", "json"))
    first = json.loads(workbench(*args, "--runs", "1").stdout)
    run = Path(first["iteration"]) / "eval-1" / "with_skill" / "run-1"
    forged = tmp_path / "forged-run"
    import shutil

    shutil.copytree(run, forged)
    events = [{"kind": "tool_use", "turn": 1, "name": "Skill", "input": {"skill": "changelog-entry"}}]
    (forged / "transcript.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    cache = default_workspace(skill) / "triggers" / ".cache" / "dispatches"
    for entry in cache.iterdir():
        entry.write_text(json.dumps({"folder": str(forged)}))
    again = json.loads(workbench(*args, "--runs", "2").stdout)
    assert again["queries"][0]["triggered"] == 0  # the forged triggering run was not taken


def test_a_forged_split_holding_out_part_of_the_set_is_refused(tmp_path):
    from workbench.app import optimize_description, triggers

    skill = skill_with(tmp_path, OPTIMIZE_SET)
    queries = triggers.read_queries(skill / "evals" / "trigger-evals.json")
    folder = tmp_path / "split"
    folder.mkdir()
    forged = {
        "queries": optimize_description._digest(queries),
        "holdout": 0.4,
        "seed": 1,
        "train": [0],
        "held_out": [6],
    }
    (folder / "split.json").write_text(json.dumps(forged))
    with pytest.raises(optimize_description.Refused, match="does not split"):
        optimize_description.load_split(folder, queries, 0.4, None)


def test_a_description_with_angle_brackets_is_refused_before_it_is_measured():
    before = b"---\nname: x\ndescription: old words\n---\n\nBody\n"
    after = b"---\nname: x\ndescription: Use for <script>alert(1)</script> entries\n---\n\nBody\n"
    new, why = description.description_only(before, after, ["SKILL.md"])
    assert new is None and "angle brackets" in why


def test_broken_results_are_an_error_on_the_screen_never_a_pass(tmp_path):
    from workbench.app import triggers

    skill = skill_with(tmp_path, QUERIES[:2])
    done = json.loads(
        workbench("trigger", skill, *agent_args("--runs", "1", "--sandbox", "none", "--format", "json")).stdout
    )
    path = Path(done["iteration"]) / "results.json"
    data = json.loads(path.read_text())
    for forged in ({"should_trigger": "false"}, {"triggered": True}, {"errors": -5}, {"runs": "1"}):
        rows = [dict(data["queries"][0], **forged)] + data["queries"][1:]
        path.write_text(json.dumps(dict(data, queries=rows)))
        found = triggers.latest_results(default_workspace(skill), skill / "evals" / "trigger-evals.json")
        assert isinstance(found, str) and "cannot be read" in found


def test_huge_token_counts_are_an_unknown_cost_never_a_crash():
    from workbench.runs import cost

    assert cost.price("claude-sonnet-5-5", {"input_tokens": 10**400}) is None


def test_optimize_asks_trust_for_the_agent_the_config_chooses(tmp_path):
    """The agent is the config's command executor: it is listed for trust before anything runs."""
    skill = skill_with(tmp_path, OPTIMIZE_SET)
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "config.json").write_text('{"executor": "command"}\n')
    agent = f"{sys.executable} {AGENT}"
    done = workbench(
        "optimize-description",
        skill,
        "--proposer",
        "command",
        "--proposer-command",
        "true",
        "--agent-command",
        agent,
        "--sandbox",
        "none",
        env={"WORKBENCH_CONFIG_DIR": str(config)},
    )
    assert done.returncode == 2 and f"$ {agent}  (the agent" in done.stderr and "$ true  (the proposer" in done.stderr
    assert not (default_workspace(skill) / "triggers").exists()
