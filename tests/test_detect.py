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
