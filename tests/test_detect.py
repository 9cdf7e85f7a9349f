"""Which format a file is in: $schema/$id first, then name and place, then structure."""

from __future__ import annotations

import json

from workbench.validate.validator import validate_file

SLOW = {"skill_name": "s", "evals": [{"id": "a", "prompt": "p", "expected_output": "e"}]}
CREATOR = {"skill_name": "s", "evals": [{"id": 1, "prompt": "p", "expectations": ["x"]}]}


def _report(tmp_path, relative, data, text=None):
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else json.dumps(data))
    return validate_file(path, explicit=False)


def test_schema_id_wins_over_name_and_place(tmp_path):
    data = {
        "$schema": "https://open-coder-ai.github.io/chock/schemas/v0/eval.schema.json",
        "suite": {"id": "s", "policy_id": "p", "metrics": {}, "cases": []},
    }
    assert _report(tmp_path, "evals/evals.json", data).dialect == "chock"


def test_evals_json_dialect_follows_its_ids(tmp_path):
    assert _report(tmp_path, "a/evals/evals.json", SLOW).dialect == "slow-powers"
    assert _report(tmp_path, "b/evals/evals.json", CREATOR).dialect == "skill-creator"
    # skill-creator with the newer `assertions` name for its strings
    newer = {"skill_name": "s", "evals": [{"id": 1, "prompt": "p", "assertions": ["x"]}]}
    assert _report(tmp_path, "c/evals/evals.json", newer).dialect == "skill-creator"


def test_suites_elsewhere_are_found_by_structure(tmp_path):
    assert _report(tmp_path, "suites/first.json", SLOW).dialect == "slow-powers"
    assert _report(tmp_path, "suites/second.json", CREATOR).dialect == "skill-creator"
    yaml = "eval_suite:\n  id: s\n  skill_id: k\n  metrics: {}\n  test_cases: []\n"
    assert _report(tmp_path, "policies/x/tests.yaml", None, yaml).dialect == "chock"


def test_a_broken_file_named_like_a_suite_reports_its_syntax_error(tmp_path):
    report = _report(tmp_path, "evals/suite.yaml", None, "suite: [\n")
    assert report.dialect == "chock" and report.diagnostics[0].message.startswith("invalid YAML")
    report = _report(tmp_path, "evals/evals.json", None, "{\n")
    assert report.dialect == "slow-powers" and report.diagnostics[0].line == 2


def test_unknown_structure_is_skipped(tmp_path):
    report = _report(tmp_path, "config/settings.json", {"theme": "dark"})
    assert report.skipped and report.dialect is None and report.diagnostics == []


# ---------------------------------------------------------------- by content, not by place


def test_a_top_level_suite_key_alone_is_not_chock(tmp_path):
    text = "suite: smoke\ntests:\n  - name: greets\n    input: hi\n"
    report = _report(tmp_path, "evals/suite.yaml", None, text)
    assert report.skipped and report.diagnostics == []
    generic = {"suite": {"name": "regression", "tests": []}}
    assert _report(tmp_path, "x/evals/suite.json", generic).skipped


def test_an_incomplete_chock_suite_at_its_place_is_still_chock(tmp_path):
    # Only keys chock knows: a chock suite in progress, whose missing keys are the errors.
    report = _report(tmp_path, "evals/suite.yaml", None, "suite:\n  id: s\n  metrics: {}\n")
    assert report.dialect == "chock" and any("policy_id" in d.message for d in report.diagnostics)


def test_another_runners_evals_json_is_skipped_even_when_named(tmp_path):
    data = {"evals": [{"name": "refund", "input": "money back", "expected": "policy"}]}
    path = tmp_path / "evals/evals.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    for explicit in (False, True):
        report = validate_file(path, explicit=explicit)
        assert report.skipped and report.dialect is None and report.diagnostics == []


def test_a_named_file_that_does_not_parse_is_an_error(tmp_path):
    path = tmp_path / "notes" / "data.json"
    path.parent.mkdir()
    path.write_text('{"a": ')
    report = validate_file(path, explicit=True)
    assert not report.skipped and report.diagnostics[0].severity == "error"
    assert validate_file(path, explicit=False).skipped  # found in a walk: not ours to judge


def test_an_empty_evals_list_is_a_suite_only_at_its_place(tmp_path):
    assert _report(tmp_path, "a/evals/evals.json", {"evals": []}).dialect == "slow-powers"
    assert _report(tmp_path, "b/config.json", {"evals": []}).skipped


def test_integer_ids_with_object_assertions_read_as_skill_creator(tmp_path):
    """The ids decide a tie of checks: the errors are about the assertions, not every
    id, and a warning says which dialect was assumed and why."""
    cases = [
        {"id": i, "prompt": "p", "expected_output": "e", "assertions": [{"text": "t", "weight": 1}]} for i in range(40)
    ]
    report = _report(tmp_path, "evals/evals.json", {"skill_name": "s", "evals": cases})
    assert report.dialect == "skill-creator"
    errors = [d for d in report.diagnostics if d.severity == "error"]
    assert len(errors) == 40 and all(d.path.endswith("/assertions/0") for d in errors)
    (mixed,) = [d for d in report.diagnostics if d.severity == "warning"]
    assert "read as skill-creator" in mixed.message and "integer ids (40)" in mixed.message
    assert "--dialect slow-powers" in mixed.message and (mixed.line, mixed.column) == (1, 1)
    assert report.as_json()["detected"].startswith("integer ids (40)")


def test_typed_checks_outweigh_a_stray_integer_id(tmp_path):
    case = {
        "id": 1,
        "prompt": "p",
        "expected_output": "e",
        "turns": [],
        "assertions": [{"id": "a", "type": "transcript_check", "check": "tool_invocation_matches", "pattern": "x"}],
    }
    report = _report(tmp_path, "evals/evals.json", {"skill_name": "s", "evals": [case]})
    assert report.dialect == "slow-powers"
    assert any(d.path == "/evals/0/id" for d in report.diagnostics)


def test_a_pure_suite_gets_no_mixed_warning(tmp_path):
    for name, data in (("a", CREATOR), ("b", SLOW)):
        report = _report(tmp_path, f"{name}/evals/evals.json", data)
        assert not [d for d in report.diagnostics if "read as" in d.message]


def test_a_bare_array_of_evals_is_one_error(tmp_path):
    cases = [{"id": i, "prompt": "p", "expectations": ["x"]} for i in range(1, 30)]
    report = _report(tmp_path, "evals/evals.json", cases)
    assert report.dialect == "skill-creator" and not report.skipped
    (only,) = report.diagnostics
    assert only.severity == "error" and (only.line, only.column) == (1, 1)
    assert "bare array of 29 evals" in only.message and '"skill_name"' in only.message


# ---------------------------------------------------------------- trigger eval sets

TRIGGERS = [
    {"query": "turn this quarterly sales xlsx into a pivot summary", "should_trigger": True},
    {"query": "what's the capital of France", "should_trigger": False},
]


def test_a_trigger_set_is_read_at_its_place_and_anywhere(tmp_path):
    assert _report(tmp_path, "evals/trigger-evals.json", TRIGGERS).dialect == "trigger-set"
    assert _report(tmp_path, "work/my_queries.json", TRIGGERS).dialect == "trigger-set"
    assert _report(tmp_path, "evals/trigger-evals.json", TRIGGERS).diagnostics == []
    # an empty array is a trigger set only where one belongs
    assert _report(tmp_path, "x/evals/trigger-evals.json", []).dialect == "trigger-set"
    assert _report(tmp_path, "x/evals/other.json", []).skipped


def test_trigger_set_problems_are_at_their_lines(tmp_path):
    items = [
        {"query": "make a pivot table from sales.xlsx", "should_trigger": True},
        {"query": "", "should_trigger": True},
        {"query": "   ", "should_trigger": True},
        {"query": "Make a  pivot table from sales.xlsx", "should_trigger": True},
        {"query": "summarise this pdf", "should_trigger": "yes"},
        {"should_trigger": True},
    ]
    text = json.dumps(items, indent=2)
    report = _report(tmp_path, "evals/trigger-evals.json", None, text)
    found = {(d.path, d.severity): d for d in report.diagnostics}
    lines = text.splitlines()
    for path in ("/1/query", "/2/query", "/3/query", "/4/should_trigger"):
        diagnostic = found[(path, "error")]
        assert f'"{path.split("/")[-1]}"' in lines[diagnostic.line - 1], path
    assert "duplicate query: /0/query asks the same" in found[("/3/query", "error")].message
    assert "empty query" in found[("/2/query", "error")].message
    assert 'missing required property "query"' in found[("/5", "error")].message
    # every valid class is should_trigger: true: the other class is missing
    assert "should_trigger: false" in found[("", "warning")].message


def test_a_trigger_set_with_both_classes_has_no_class_warning(tmp_path):
    report = _report(tmp_path, "evals/trigger-evals.json", TRIGGERS + [{"query": "q", "should_trigger": True}])
    assert report.diagnostics == []


def test_a_bare_eval_array_is_not_a_trigger_set(tmp_path):
    mixed = [{"query": "q", "should_trigger": True, "prompt": "p", "id": 1}]
    assert _report(tmp_path, "evals/trigger-evals.json", mixed).dialect != "trigger-set"
