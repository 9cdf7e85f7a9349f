"""A command line that forgives a newcomer: a mistyped command is answered with
the one it resembles, every command that spends has --dry-run (the plan, the
estimate, what would need trust; nothing written, nothing started), exit codes
mean one thing everywhere (2: could not, 1: ran and failed), the init template
passes its own first run, and messages carry one prefix."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import DEMO
from support.cli import workbench

from workbench.workspace.layout import default_workspace

TRIGGER_SET = [
    {"query": "Add a changelog entry for the new --json flag", "should_trigger": True},
    {"query": "Write the changelog line for the timeout fix", "should_trigger": True},
    {"query": "What's the weather like?", "should_trigger": False},
    {"query": "Sort this list of numbers", "should_trigger": False},
]


def _cli(*args, cwd=None, env=None):
    """The command line, in this process: its output, exit codes and files are what these tests read."""
    return workbench(*args, cwd=cwd, env={**os.environ, **(env or {})})


@pytest.fixture
def skill(tmp_path) -> Path:
    target = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, target)
    (target / "evals" / "trigger-evals.json").write_text(json.dumps(TRIGGER_SET))
    return target


# ---------------------------------------------------------------- did you mean


def test_a_mistyped_command_is_answered_with_the_command_it_resembles(tmp_path):
    done = _cli("valdate", cwd=tmp_path)
    assert done.returncode == 2
    assert 'did you mean "validate"?' in done.stderr and done.stderr.count("workbench") == 1, done.stderr
    assert _cli("improv", "x", cwd=tmp_path).stderr.count('did you mean "improve"?') == 1


def test_a_folder_that_exists_is_still_opened_whatever_its_name(tmp_path):
    (tmp_path / "valdate").mkdir()  # a folder, not a command: read as the skill to open
    done = _cli("valdate", cwd=tmp_path)
    assert done.returncode == 2 and "no skill here" in done.stderr and "did you mean" not in done.stderr


# ---------------------------------------------------------------- init, validate, report


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_init_template_passes_its_own_first_demo_run(tmp_path):
    assert _cli("init", "tidy-notes", cwd=tmp_path).returncode == 0
    done = _cli("run", "tidy-notes", "--trust", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "failed expectation" not in done.stdout


def test_validate_warns_on_a_skill_with_no_evals(tmp_path):
    skill = tmp_path / "tidy-notes"
    skill.mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: tidy-notes\ndescription: Use when the user asks to tidy notes. Sorts them.\n---\n\n# Tidy\n"
    )
    done = _cli("validate", skill)
    assert done.returncode == 0
    assert re.search(r"SKILL\.md:1:1: warning: no eval suite: nothing tests this skill; .*ctrl\+n", done.stdout)
    assert done.stdout.strip().endswith("1 file checked: 0 errors · 1 warning")


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_report_on_a_folder_that_is_not_an_iteration_says_what_it_is_and_what_to_pass(skill):
    assert _cli("run", skill, "--trust", "--only", "export-json-flag").returncode == 0
    workspace = default_workspace(skill)
    on_skill = _cli("report", skill)
    assert on_skill.returncode == 2
    assert "is a skill folder, not an iteration" in on_skill.stderr
    assert str(workspace / "iteration-1") in on_skill.stderr and "workbench grade" not in on_skill.stderr
    on_workspace = _cli("report", workspace)
    assert on_workspace.returncode == 2 and "is a workspace, not an iteration" in on_workspace.stderr
    assert str(workspace / "iteration-1") in on_workspace.stderr
    for grading in (workspace / "iteration-1").rglob("grading.json"):
        grading.unlink()
    ungraded = _cli("report", workspace / "iteration-1")  # an iteration with no grading: grade is the answer
    assert ungraded.returncode == 2 and "workbench grade" in ungraded.stdout + ungraded.stderr


# ---------------------------------------------------------------- one figure, no estimate-only run


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_plan_line_and_the_heading_say_the_same_figures_with_runs_auto(skill):
    first = _cli("run", skill, "--trust", "--runs", "auto", "--max-runs", "4", "--only", "export-json-flag")
    assert first.returncode == 0, first.stderr
    again = _cli("run", skill, "--trust", "--runs", "auto", "--max-runs", "4", "--only", "export-json-flag")
    said = again.stderr
    assert "2 dispatches in the first round (all resumed or reused, free), at most 8 in all rounds" in said, said
    assert "Running 2 dispatches (the first round of --runs auto, at most 8)" in said


def test_max_dispatches_zero_is_refused_and_writes_nothing(skill):
    done = _cli("run", skill, "--trust", "--max-dispatches", "0")
    assert done.returncode == 2 and "--dry-run" in done.stderr, done.stderr
    assert not default_workspace(skill).exists()


# ---------------------------------------------------------------- --dry-run


def _marker_agent(tmp_path: Path) -> tuple[str, Path]:
    marker = tmp_path / "agent-started"
    return f"touch {marker}; exit 1", marker


@pytest.mark.parametrize(
    "command",
    [
        ("run", "--judge", "demo"),
        ("trigger",),
        ("improve", "--proposer", "command", "--proposer-command", "PROPOSER", "--judge", "demo"),
        ("optimize-description", "--proposer", "command", "--proposer-command", "PROPOSER"),
    ],
    ids=lambda c: c[0],
)
@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_dry_run_says_the_plan_the_estimate_and_the_trust_list_and_writes_nothing(skill, tmp_path, command):
    agent, marker = _marker_agent(tmp_path)
    proposer = tmp_path / "proposer-started"
    verb, *rest = command
    rest = [f"touch {proposer}" if part == "PROPOSER" else part for part in rest]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    done = _cli(verb, skill, *rest, "--executor", "command", "--agent-command", agent, "--sandbox", "none", "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "dispatches" in out and "cost" in out  # the plan and the estimate
    assert f"$ {agent}" in out and "would ask you to trust" in out  # what --trust would trust
    if proposer.name in " ".join(rest):
        assert f"touch {proposer}" in out
    assert "Nothing was run or written (--dry-run)" in out
    assert not marker.exists() and not proposer.exists()
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


@pytest.mark.slow  # 24 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_dry_run_of_an_evaluation_and_of_drafting(weak_v0):
    skill = weak_v0
    workspace = default_workspace(skill)
    before = sorted(str(p) for p in workspace.rglob("*"))
    evaluate = _cli("evaluate", skill, "v0", "--fresh", "--dry-run")
    assert evaluate.returncode == 0, evaluate.stderr
    assert "Nothing was run or written (--dry-run)" in evaluate.stdout + evaluate.stderr
    drafts = _cli("draft-cases", skill, "--proposer", "command", "--proposer-command", "false", "--dry-run")
    assert drafts.returncode == 0, drafts.stderr
    said = drafts.stdout + drafts.stderr
    assert "$ false" in said and "evals.drafts.json" in said and "Nothing was run or written (--dry-run)" in said
    marker = weak_v0.parent.parent / "judge-ran"
    judge = f"touch {marker}; echo '{{\"passed\": true}}'"
    regrade = _cli("grade", workspace / "iteration-1", "--judge", "command", "--judge-command", judge, "--dry-run")
    assert regrade.returncode == 0, regrade.stderr
    assert f"$ {judge}" in regrade.stdout and "Nothing was run or written (--dry-run)" in regrade.stdout
    assert not marker.exists()
    assert sorted(str(p) for p in workspace.rglob("*")) == before
    assert not (skill / "evals" / "evals.drafts.json").exists()


# ---------------------------------------------------------------- exit codes and prefixes


def test_promote_write_without_a_terminal_could_not_ask_exit_2_naming_yes(weak_v0):
    skill = weak_v0
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nA line of my own.\n")
    assert _cli("version", "new", skill).returncode == 0  # v1: what the folder holds is kept in a version
    done = _cli("promote", skill, "v0", "--write")
    assert done.returncode == 2, done.stderr
    assert "--yes" in done.stderr and "nothing promoted" in done.stderr
    assert "A line of my own." in (skill / "SKILL.md").read_text()


DOUBLED = re.compile(r"workbench[ \w-]*: workbench[ \w-]*:")


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_messages_have_one_prefix(skill, tmp_path):
    refusals = [
        _cli("improve", skill, "--proposer", "command", "--proposer-command", "true", "--sandbox", "none"),
        _cli("draft-cases", skill, "--proposer", "command", "--proposer-command", "true"),
        _cli("improve", skill, "--executor", "command", "--sandbox", "none"),
    ]
    for done in refusals:
        assert done.returncode == 2, done.stderr
        assert not DOUBLED.search(done.stderr), done.stderr
        assert not re.search(r"^workbench: ", done.stderr, re.M), done.stderr  # the verb is always said


@pytest.mark.slow  # 14 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_improve_whose_proposer_fails_every_round_could_not_exit_2(skill):
    """A proposer that never runs to its end proposed nothing: the loop could not work (2), no version lost (1)."""
    done = _cli(
        "improve",
        skill,
        "--proposer",
        "command",
        "--proposer-command",
        "echo 'no key for the model' >&2; exit 3",
        "--rounds",
        "2",
        "--sandbox",
        "none",
        "--trust",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the proposer exited with status 3: no key for the model" in done.stderr
    assert "nothing was proposed or measured" in done.stderr
