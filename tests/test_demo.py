"""The bundled demo skill is valid in all three dialects; its mistakes copy shows
one diagnostic per deliberate mistake, at the right place."""

from __future__ import annotations

from conftest import DEMO, MISTAKES
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
    }
    assert [(n, d.message) for n, r in reports.items() for d in r.diagnostics] == []


def test_demo_slow_powers_suite_uses_every_assertion_kind_and_a_turn():
    import json

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
        ("evals/skill-creator.evals.json", "error", "/evals/0/id", 5),
        ("evals/skill-creator.evals.json", "warning", "/evals/0/assertions", 10),
        ("evals/skill-creator.evals.json", "warning", "/evals/1", 12),
        ("evals/skill-creator.evals.json", "error", "/evals/1/files/0", 15),
        ("evals/skill-creator.evals.json", "error", "/evals/1/expectations/1", 16),
        ("evals/suite.yaml", "error", "/eval_suite/metrics/pass_rate/direction", 9),
        ("evals/suite.yaml", "warning", "/eval_suite/test_cases", 10),
        ("evals/suite.yaml", "error", "/eval_suite/test_cases/1/category", 17),
        ("evals/suite.yaml", "error", "/eval_suite/test_cases/2", 21),
        ("evals/suite.yaml", "error", "/eval_suite/test_cases/2/expected_error_pattern", 25),
    }
    assert found == expected
