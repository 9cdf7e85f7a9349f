"""Re-validating one edited case gives exactly what validating the whole
document says about that case."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from suite_gen import write_suite  # noqa: E402

from workbench.formats import chock, slow_powers  # noqa: E402
from workbench.formats.document import load  # noqa: E402
from workbench.validate.validator import validate_case, validate_document  # noqa: E402


def _key(d):
    return (d.severity, d.path, d.line, d.column, d.message)


def test_case_diagnostics_equal_the_documents_for_that_case(tmp_path):
    path = write_suite(tmp_path, 40)
    data = json.loads(path.read_text())
    data["evals"][3]["turns"][0]["deliver_when"] = "sometimes"
    data["evals"][7]["assertions"][2].pop("rubric")
    data["evals"][7]["files"].append("fixtures/missing.txt")
    data["evals"][12]["assertions"][0]["pattern"] = "(?=x)"
    data["evals"][20]["runs"] = 0
    path.write_text(json.dumps(data, indent=2))
    doc = load(path)
    whole = validate_document(doc, slow_powers.FORMAT)
    assert len(whole) >= 5
    for index in range(40):
        pointer = f"/evals/{index}"
        expected = sorted(_key(d) for d in whole if d.path == pointer or d.path.startswith(pointer + "/"))
        assert sorted(_key(d) for d in validate_case(doc, slow_powers.FORMAT, pointer)) == expected, index


def test_an_edit_in_memory_is_seen_by_validate_case(tmp_path):
    doc = load(write_suite(tmp_path, 5))
    assert validate_case(doc, slow_powers.FORMAT, "/evals/2") == []
    doc.data["evals"][2]["isolation"] = "private"
    [d] = validate_case(doc, slow_powers.FORMAT, "/evals/2")
    assert d.path == "/evals/2/isolation" and '"shared", "isolated"' in d.message


def test_chock_cases_validate_one_at_a_time(tmp_path):
    path = tmp_path / "evals" / "suite.yaml"
    path.parent.mkdir()
    path.write_text(
        "suite:\n  id: s\n  policy_id: p\n  metrics: {}\n  cases:\n"
        "  - {id: a, category: trigger, prompt: p, expect: e}\n"
        "  - {id: b, category: nonsense, prompt: p, expect: e}\n"
        "  - {id: c, category: behavior, prompt: p}\n"
    )
    doc = load(path)
    assert validate_case(doc, chock.FORMAT, "/suite/cases/0") == []
    [bad] = validate_case(doc, chock.FORMAT, "/suite/cases/1")
    assert (bad.path, bad.line) == ("/suite/cases/1/category", 7)
    [missing] = validate_case(doc, chock.FORMAT, "/suite/cases/2")
    assert (missing.path, missing.line, "expect" in missing.message) == ("/suite/cases/2", 8, True)


def test_a_pointer_that_is_not_a_case_is_refused(tmp_path):
    doc = load(write_suite(tmp_path, 2))
    with pytest.raises(ValueError):
        validate_case(doc, slow_powers.FORMAT, "/skill_name")
