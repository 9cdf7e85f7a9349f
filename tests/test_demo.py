"""The bundled demo skill is valid in all three dialects; its mistakes copy shows
one diagnostic per deliberate mistake, at the right place; with the demo agent the
skill passes every eval and its first draft fails enough of them to lose by evals."""

from __future__ import annotations

import asyncio
import json
import math
import shutil

import pytest
from conftest import DEMO, MISTAKES

from workbench.grading.grade import GradeOptions, grade_iteration
from workbench.grading.judges import make
from workbench.grading.suite import suite_of_iteration
from workbench.runs import executors
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.runner import RunOptions
from workbench.validate.tree import validate_paths


def _by_file(root):
    return {r.file.replace(str(root) + "/", ""): r for r in validate_paths([root])}


def test_demo_is_valid_in_every_dialect():
    reports = _by_file(DEMO)
    assert {name: r.dialect for name, r in reports.items()} == {
        "SKILL.md": "skill-md",
        "evals/evals.json": "slow-powers",
        "evals/skill-creator.evals.json": "skill-creator",
        "evals/suite.yaml": "chock",
        "evals/trigger-evals.json": "trigger-set",
    }
    assert [(n, d.message) for n, r in reports.items() for d in r.diagnostics] == []


def test_demo_slow_powers_suite_uses_every_assertion_kind_and_a_turn():
    data = json.loads((DEMO / "evals/evals.json").read_text())
    kinds = {a["type"] for case in data["evals"] for a in case.get("assertions", [])}
    assert kinds == {"transcript_check", "llm_judge", "command_check", "diff_scope"}
    assert any(case.get("turns") for case in data["evals"])
    assert any(case.get("skill_should_trigger") is False for case in data["evals"])


def test_mistakes_are_each_reported_where_they_are():
    reports = _by_file(MISTAKES)
    found = {(name, d.severity, d.path, d.line) for name, r in reports.items() for d in r.diagnostics}
    expected = {
        ("SKILL.md", "error", "/version", 5),
        ("SKILL.md", "warning", "/description", 3),
        ("evals/broken.evals.json", "error", "", 8),
        ("evals/evals.json", "warning", "/skill_name", 2),
        ("evals/evals.json", "error", "/evals/0/files/1", 8),
        ("evals/evals.json", "error", "/evals/0/assertions/0/pattern", 14),
        ("evals/evals.json", "error", "/evals/0/assertions/1", 17),
        ("evals/evals.json", "error", "/evals/0/assertions/2", 21),
        ("evals/evals.json", "error", "/evals/1/id", 29),
        ("evals/evals.json", "error", "/evals/1/files/0", 32),
        ("evals/evals.json", "error", "/evals/1/turns/0", 34),
        ("evals/evals.json", "error", "/evals/1/turns/1/deliver_when", 41),
        ("evals/evals.json", "error", "/evals/1/runs", 44),
        ("evals/evals.json", "error", "/evals/1/assertions/0/expect_stdout", 50),
        ("evals/evals.json", "error", "/evals/2/id", 55),
        ("evals/evals.json", "error", "/evals/2/skill_should_trigger", 58),
        # its wrong id (a kebab-case string) is evidence for the other JSON dialect: said, once
        ("evals/skill-creator.evals.json", "warning", "", 1),
        ("evals/skill-creator.evals.json", "error", "/evals/0/id", 5),
        ("evals/skill-creator.evals.json", "warning", "/evals/0/assertions", 10),
        ("evals/skill-creator.evals.json", "warning", "/evals/1", 12),
        ("evals/skill-creator.evals.json", "error", "/evals/1/files/0", 15),
        ("evals/skill-creator.evals.json", "error", "/evals/1/expectations/1", 16),
        ("evals/suite.yaml", "error", "/eval_suite/metrics/pass_rate/direction", 9),
        ("evals/suite.yaml", "error", "/eval_suite/test_cases", 10),
        ("evals/suite.yaml", "error", "/eval_suite/test_cases/1/category", 17),
        ("evals/suite.yaml", "error", "/eval_suite/test_cases/2", 21),
        ("evals/suite.yaml", "error", "/eval_suite/test_cases/2/expected_error_pattern", 25),
    }
    assert found == expected


def _with_skill_rates(skill, agent):
    """Each eval's with-skill pass rate: the mean over its runs of passed/total (the demo agent's behaviour,
    run in this process: tests/test_fake_agent.py shows it is the demo agent's, turn for turn)."""
    executor, options = executors.make(agent), RunOptions(jobs=4, timeout=30, baseline="none")
    launch = prepare_launch(skill, executor, options)
    asyncio.run(run_launch(launch, executor, options))
    iteration = launch.workspace / f"iteration-{launch.iteration}"
    grade_iteration(iteration, suite_of_iteration(iteration), GradeOptions(make("demo"), trusted=True))
    rates = {}
    for folder in sorted(iteration.glob("eval-*")):
        runs = [json.loads(p.read_text())["summary"] for p in sorted(folder.glob("with_skill/run-*/grading.json"))]
        rates[folder.name.removeprefix("eval-")] = sum(r["passed"] / (r["passed"] + r["failed"]) for r in runs) / len(
            runs
        )
    return rates


@pytest.mark.slow  # 12 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_skill_passes_every_eval_and_its_first_draft_fails_most(tmp_path, fake_agent):
    """Evals, not assertions, are what a version wins: the suite is big enough, and
    the draft bad enough in enough of it, for the good skill to win by evals."""
    good = tmp_path / "good" / "changelog-entry"
    draft = tmp_path / "draft" / "changelog-entry"
    shutil.copytree(DEMO, good)
    shutil.copytree(DEMO, draft)
    shutil.copy(DEMO.parent / "draft" / "changelog-entry" / "SKILL.md", draft / "SKILL.md")
    best, first = _with_skill_rates(good, fake_agent), _with_skill_rates(draft, fake_agent)
    assert len(best) == 10 and set(best.values()) == {1.0}
    third = 1 / 3
    assert first == {
        "export-json-flag": 0.5,
        "ambiguous-timeout-change": 0.0,
        "question-not-a-request": 1.0,
        "removed-legacy-csv-option": 0.0,
        "ambiguous-upload-limit": 0.0,
        "no-unreleased-heading": 0.0,
        "refuse-released-edit": 0.0,
        "deprecated-option": third,
        "kind-named-in-request": third,
        "multi-file-fix": third,
    }
    differences = [best[e] - first[e] for e in best]
    n, delta = len(differences), sum(differences) / len(differences)
    # the Wilson score interval (95%) of the mean of (d + 1) / 2 over the evals, mapped back with x -> 2x - 1
    p, z = (delta + 1) / 2, 1.959964
    low = (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
    assert round(delta, 4) == 0.75 and round(2 * low - 1, 2) == 0.14  # won: delta >= 0.05 and the low end > 0
