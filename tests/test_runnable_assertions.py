"""What cannot run is an error before it runs: an assertion with an empty required
field or a check no grader knows is a validation error at its line, with a
did-you-mean, so `validate` says it, `run` refuses it (exit 2, not a failed
expectation, exit 1), and no Python None reaches a report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import workbench

from workbench.grading import kinds
from workbench.validate.validator import validate_file


def _cli(*args, cwd=None):
    """The command line, in this process: its output, exit codes and files are what these tests read."""
    return workbench(*args, cwd=cwd)


def _skill(tmp_path: Path, assertions: list[dict]) -> Path:
    skill = tmp_path / "skills" / "tidy-notes"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: tidy-notes\ndescription: Use when the user asks to tidy notes. Sorts them.\n---\n\n# Tidy\n"
    )
    suite = {
        "skill_name": "tidy-notes",
        "evals": [{"id": "first", "prompt": "Tidy my notes.", "expected_output": "Sorted.", "assertions": assertions}],
    }
    (skill / "evals" / "evals.json").write_text(json.dumps(suite, indent=2) + "\n")
    return skill


def _errors(skill: Path) -> dict[str, str]:
    report = validate_file(skill / "evals" / "evals.json")
    return {d.path: d.message for d in report.diagnostics if d.severity == "error"}


def test_a_new_assertion_with_its_required_fields_empty_is_an_error_on_each(tmp_path):
    """What "+ add assertion" makes: 0 errors before; now the id and the check are flagged where they are."""
    skill = _skill(tmp_path, [{"id": "", "type": "transcript_check", "check": ""}])
    errors = _errors(skill)
    assert set(errors) == {"/evals/0/assertions/0/id", "/evals/0/assertions/0/check"}, errors
    assert "tool_invocation_matches" in errors["/evals/0/assertions/0/check"]
    done = _cli("validate", skill)
    assert done.returncode == 1
    assert "evals.json:10:11: error: id is empty" in done.stdout and "[/evals/0/assertions/0/id]" in done.stdout


@pytest.mark.parametrize("field", ["id", "check"])
def test_a_blank_required_field_is_an_error_too(tmp_path, field):
    assertion = {"id": "reads-first", "type": "transcript_check", "check": "tool_invocation_matches", "pattern": "x"}
    assertion[field] = "   "
    errors = _errors(_skill(tmp_path, [assertion]))
    assert list(errors) == [f"/evals/0/assertions/0/{field}"], errors


def test_an_unknown_check_is_an_error_with_did_you_mean_and_run_refuses_it(tmp_path):
    assertion = {"id": "reads-first", "type": "transcript_check", "check": "tool_invocation_matche", "pattern": "^Read"}
    skill = _skill(tmp_path, [assertion])
    errors = _errors(skill)
    assert list(errors) == ["/evals/0/assertions/0/check"]
    assert 'did you mean "tool_invocation_matches"?' in errors["/evals/0/assertions/0/check"]
    assert _cli("validate", skill).returncode == 1
    run = _cli("run", skill, "--trust")
    assert run.returncode == 2, run.stdout + run.stderr  # could not run: not "ran and failed"
    assert "evals.json:" in run.stderr and "tool_invocation_matche" in run.stderr
    assert not (skill.parent.parent / "tidy-notes-workspace").exists()


def test_every_kind_reads_out_an_assertion_without_a_none(tmp_path):
    """A field left out is said as missing, never as Python's None, in every report and screen."""
    for name, kind in kinds.KINDS.items():
        if kind.describe is None:
            continue
        said = kinds.describe({"type": name, "id": "x"})
        assert "None" not in said, (name, said)


def test_a_check_without_a_pattern_is_a_warning_and_its_report_has_no_none(tmp_path):
    skill = _skill(tmp_path, [{"id": "any-call", "type": "transcript_check", "check": "tool_invocation_matches"}])
    report = validate_file(skill / "evals" / "evals.json")
    assert [(d.severity, d.path) for d in report.diagnostics] == [("warning", "/evals/0/assertions/0")]
    assert _cli("run", skill).returncode in (0, 1)
    iteration = skill.parent.parent / "tidy-notes-workspace" / "iteration-1"
    for fmt in ("text", "html", "json", "junit"):
        shown = _cli("report", iteration, "--format", fmt)
        assert "None" not in shown.stdout, (fmt, shown.stdout)


def test_blank_expectations_of_the_other_dialects_are_errors(tmp_path):
    """skill-creator's expectation strings and chock's texts a judge reads: an empty one cannot be judged."""
    suite = tmp_path / "evals" / "evals.json"
    suite.parent.mkdir()
    suite.write_text(
        json.dumps(
            {
                "skill_name": "x",
                "evals": [{"id": 1, "prompt": "p", "expected_output": "o", "expectations": ["fine", " "]}],
            },
            indent=2,
        )
    )
    found = [(d.severity, d.path) for d in validate_file(suite).diagnostics]
    assert found == [("error", "/evals/0/expectations/1")], found


def test_a_blank_chock_check_is_an_error(tmp_path):
    """A structural check of "" is found in any reply: it could only pass, so it is refused."""
    suite = tmp_path / "evals" / "suite.yaml"
    suite.parent.mkdir()
    suite.write_text(
        "eval_suite:\n  id: s\n  skill_id: x\n  metrics: {}\n  test_cases:\n"
        "    - {id: t1, category: trigger, description: d, input: {prompt: p}, expected_behavior: fires}\n"
        "    - {id: t2, category: negative_trigger, description: d, input: {prompt: p}, expected_behavior: quiet}\n"
        "    - {id: t3, category: behavior, description: d, input: {prompt: p}, expected_behavior: does,\n"
        "       structural_checks: ['']}\n"
    )
    found = [(d.severity, d.path, d.line) for d in validate_file(suite).diagnostics if d.severity == "error"]
    assert found == [("error", "/eval_suite/test_cases/2/structural_checks/0", 9)], found


@pytest.mark.parametrize(
    "config,verb,said",
    [
        (
            {"judge": "claud", "executor": "command"},
            "run",
            "unknown judge 'claud' in the config file (did you mean \"claude\"?)",
        ),
        ({"executor": "codx"}, "run", "unknown executor 'codx' in the config file (did you mean \"codex\"?)"),
        ({"executor": "codx"}, "trigger", "unknown executor 'codx' in the config file (did you mean \"codex\"?)"),
    ],
)
def test_a_mistyped_name_in_the_config_is_said_with_did_you_mean(tmp_path, config, verb, said):
    skill = _skill(tmp_path, [{"id": "rubric", "type": "llm_judge", "rubric": "Is it tidy?"}])
    (skill / "evals" / "trigger-evals.json").write_text('[{"query": "tidy", "should_trigger": true}]')
    folder = Path(os.environ["WORKBENCH_CONFIG_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    done = _cli(verb, skill, "--agent-command", "true")
    assert done.returncode == 2 and said in done.stderr, done.stderr
