"""The one pipeline, from the command line: nothing is written or run before
trust, an evaluation is recorded only when it is whole and sound, the best is
re-measured when the judge changed, and a failing gate says why."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import DEMO
from support.cli import workbench

DRAFT = DEMO.parent / "draft" / "changelog-entry" / "SKILL.md"


@pytest.fixture()
def skill(tmp_path):
    target = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target


def _workspace(skill):
    return skill.parent.parent / "changelog-entry-workspace"


def test_a_refused_run_writes_nothing_and_runs_nothing(skill, tmp_path):
    marker = tmp_path / "judge-ran"
    refused = workbench("run", skill, "--judge", "command", "--judge-command", f"touch {marker}; echo '{{}}'")
    assert refused.returncode == 2 and f"touch {marker}" in refused.stderr and "(the judge" in refused.stderr
    assert not marker.exists() and not _workspace(skill).exists()  # no iteration to take for the latest later
    nothing = workbench("run", skill, "--only", "no-such-eval", "--trust")
    assert nothing.returncode == 2 and "nothing to run" in nothing.stderr and not _workspace(skill).exists()


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_partial_or_broken_evaluation_is_shown_not_recorded(weak_v0):
    skill = weak_v0  # `version new` and `evaluate v0 --trust` of the weak skill, each exit 0
    history = _workspace(skill) / "history.json"
    before = history.read_text()
    partial = workbench("evaluate", skill, "v0", "--only", "question-not-a-request")
    assert partial.returncode == 0 and "not recorded" in partial.stderr
    broken = workbench("evaluate", skill, "v0", "--judge", "command", "--judge-command", "echo no verdict", "--trust")
    assert broken.returncode == 2 and "not recorded" in broken.stderr
    # Its runs are resumed with the demo judge's gradings, which a judge giving no verdict never replaces.
    assert "kept their earlier grading" in broken.stderr
    assert history.read_text() == before


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_another_judge_makes_the_best_run_again(weak_v0):
    skill = weak_v0  # `version new` and `evaluate v0 --trust` of the weak skill, each exit 0
    shutil.copy(DEMO / "SKILL.md", skill / "SKILL.md")
    workbench("version", "new", skill)
    judge = 'echo "{\\"token\\": \\"$WORKBENCH_JUDGE_TOKEN\\", \\"passed\\": true, \\"evidence\\": \\"ok\\"}"'
    result = workbench("evaluate", skill, "v1", "--judge", "command", "--judge-command", judge, "--trust")
    assert result.returncode == 0, result.stderr
    assert "ran here as old_skill" in result.stdout  # v0 was graded by the demo judge, not this one
    evaluations = json.loads((_workspace(skill) / "evaluations.json").read_text())
    assert evaluations["v0"]["measured_as"] == "old_skill" and "judge command" in evaluations["v0"]["judge"]


def test_validate_skips_the_workspace_internals(skill):
    workbench("version", "new", skill)
    workbench("evaluate", skill, "v0", "--trust", "--only", "question-not-a-request")
    assert (_workspace(skill) / ".snapshots" / "v0" / "SKILL.md").exists()  # a skill copy in a folder named v0
    checked = workbench("validate", skill.parent.parent)
    assert checked.returncode == 0, checked.stdout
    assert ".snapshots" not in checked.stdout and "history.json" not in checked.stdout.split("checked")[0]


def test_a_failing_gate_says_why(skill):
    ran = workbench("run", skill, "--trust", "--only", "question-not-a-request", "--fail-under", "0.5")
    assert ran.returncode == 0, ran.stderr
    iteration = _workspace(skill) / "iteration-1"
    shutil.copy(DRAFT, skill / "SKILL.md")
    weak = workbench("run", skill, "--trust", "--only", "export-json-flag", "--fail-under", "0.9")
    assert weak.returncode == 1 and "The with-skill pass rate, 50%, is under --fail-under 0.9." in weak.stderr
    assert workbench("report", iteration, "--fail-under", "1").returncode == 0
