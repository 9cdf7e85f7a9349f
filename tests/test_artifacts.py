"""Run artifacts in skill-creator's shapes: recognised by name and structure, and
checked for the traps skill-creator's own tools fall into."""

from __future__ import annotations

import json

import pytest

from workbench.validate.validator import validate_file

HISTORY = {
    "started_at": "2026-01-15T10:30:00Z",
    "skill_name": "pdf",
    "current_best": "v2",
    "iterations": [
        {
            "version": "v0",
            "parent": None,
            "expectation_pass_rate": 0.65,
            "grading_result": "baseline",
            "is_current_best": False,
        },
        {
            "version": "v1",
            "parent": "v0",
            "expectation_pass_rate": 0.75,
            "grading_result": "won",
            "is_current_best": False,
        },
        {
            "version": "v2",
            "parent": "v1",
            "expectation_pass_rate": 0.85,
            "grading_result": "won",
            "is_current_best": True,
        },
    ],
}

BENCHMARK = {
    "metadata": {
        "skill_name": "pdf",
        "timestamp": "2026-01-15T10:30:00Z",
        "evals_run": [1],
        "runs_per_configuration": 1,
    },
    "runs": [
        {
            "eval_id": 1,
            "eval_name": "Ocean",
            "configuration": "with_skill",
            "run_number": 1,
            "result": {"pass_rate": 0.75, "passed": 3, "failed": 1, "total": 4},
        },
        {
            "eval_id": 1,
            "eval_name": "Ocean",
            "configuration": "without_skill",
            "run_number": 1,
            "result": {"pass_rate": 0.25, "passed": 1, "failed": 3, "total": 4},
        },
    ],
    "run_summary": {
        "with_skill": {"pass_rate": {"mean": 0.75, "stddev": 0, "min": 0.75, "max": 0.75}},
        "without_skill": {"pass_rate": {"mean": 0.25, "stddev": 0, "min": 0.25, "max": 0.25}},
        "delta": {"pass_rate": "+0.50"},
    },
    "notes": [],
}

SAMPLES = {
    "history.json": HISTORY,
    "benchmark.json": BENCHMARK,
    "grading.json": {
        "expectations": [{"text": "t", "passed": True, "evidence": "e"}],
        "summary": {"passed": 1, "failed": 0, "total": 1, "pass_rate": 1.0},
    },
    "metrics.json": {
        "tool_calls": {"Read": 2, "Write": 1},
        "total_tool_calls": 3,
        "total_steps": 2,
        "files_created": ["a"],
        "errors_encountered": 0,
        "output_chars": 10,
        "transcript_chars": 20,
    },
    "timing.json": {"total_tokens": 10, "duration_ms": 2000, "total_duration_seconds": 2.0},
    "comparison-1.json": {"winner": "A", "reasoning": "A is complete."},
    "analysis.json": {"comparison_summary": {"winner": "A"}, "winner_strengths": ["clear"]},
    "eval_metadata.json": {"eval_id": 1, "eval_name": "Ocean", "prompt": "p", "assertions": ["x"]},
    "feedback.json": {
        "reviews": [{"run_id": "eval-1-with_skill", "feedback": "ok", "timestamp": "2026-01-15T10:30:00Z"}],
        "status": "complete",
    },
}
DIALECT = {
    "history.json": "history",
    "benchmark.json": "benchmark",
    "grading.json": "grading",
    "metrics.json": "metrics",
    "timing.json": "timing",
    "comparison-1.json": "comparison",
    "analysis.json": "analysis",
    "eval_metadata.json": "eval_metadata",
    "feedback.json": "feedback",
}


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2))
    return validate_file(path, explicit=False)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_artifact_is_recognised_by_name_and_valid(tmp_path, name):
    report = _write(tmp_path, name, SAMPLES[name])
    assert (report.dialect, report.diagnostics) == (DIALECT[name], [])


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_artifact_is_recognised_by_structure_alone(tmp_path, name):
    report = _write(tmp_path, "renamed-" + name, SAMPLES[name])
    assert report.dialect == DIALECT[name]


def _paths(report):
    return [(d.severity, d.path) for d in report.diagnostics]


def test_history_with_two_bests(tmp_path):
    data = json.loads(json.dumps(HISTORY))
    data["iterations"][0]["is_current_best"] = True
    report = _write(tmp_path, "history.json", data)
    assert ("error", "/iterations/2/is_current_best") in _paths(report)
    assert "2 iterations are marked is_current_best; expected exactly one" in report.diagnostics[0].message


def test_history_best_disagrees_with_current_best(tmp_path):
    data = json.loads(json.dumps(HISTORY))
    data["current_best"] = "v1"
    assert ("error", "/current_best") in _paths(_write(tmp_path, "history.json", data))


def test_history_missing_parent_and_cycle(tmp_path):
    data = json.loads(json.dumps(HISTORY))
    data["iterations"][1]["parent"] = "v9"
    data["iterations"][2]["parent"] = "v2"
    report = _write(tmp_path, "history.json", data)
    messages = {d.path: d.message for d in report.diagnostics}
    assert messages["/iterations/1/parent"] == 'parent "v9" of "v1" does not exist'
    assert "its own parent: a cycle" in messages["/iterations/2/parent"]


def test_history_parent_that_comes_later_is_a_cycle(tmp_path):
    data = json.loads(json.dumps(HISTORY))
    data["iterations"][1]["parent"] = "v2"
    report = _write(tmp_path, "history.json", data)
    [d] = [d for d in report.diagnostics if d.path == "/iterations/1/parent"]
    assert "comes later" in d.message and d.line == 15


def test_history_grading_result_enum(tmp_path):
    data = json.loads(json.dumps(HISTORY))
    data["iterations"][1]["grading_result"] = "better"
    assert ("error", "/iterations/1/grading_result") in _paths(_write(tmp_path, "history.json", data))


def test_benchmark_with_zero_runs_is_an_error(tmp_path):
    data = dict(BENCHMARK, runs=[])
    [d] = [d for d in _write(tmp_path, "benchmark.json", data).diagnostics if d.path == "/runs"]
    assert d.severity == "error" and "zero runs" in d.message


def test_benchmark_traps_of_the_viewer(tmp_path):
    data = json.loads(json.dumps(BENCHMARK))
    run = data["runs"][0]
    run["config"] = run.pop("configuration")
    run["pass_rate"] = run.pop("result")["pass_rate"]
    paths = _paths(_write(tmp_path, "benchmark.json", data))
    assert ("error", "/runs/0/config") in paths and ("error", "/runs/0/pass_rate") in paths


def test_benchmark_delta_must_be_new_minus_baseline(tmp_path):
    data = json.loads(json.dumps(BENCHMARK))
    data["run_summary"]["delta"]["pass_rate"] = "-0.50"
    [d] = _write(tmp_path, "benchmark.json", data).diagnostics
    assert d.path == "/run_summary/delta/pass_rate" and "with_skill minus without_skill is +0.50" in d.message


def test_benchmark_runs_per_configuration_is_counted(tmp_path):
    data = json.loads(json.dumps(BENCHMARK))
    data["metadata"]["runs_per_configuration"] = 3
    [d] = _write(tmp_path, "benchmark.json", data).diagnostics
    assert d.path == "/metadata/runs_per_configuration" and "count up to 1" in d.message


def test_grading_summary_must_match_expectations(tmp_path):
    data = json.loads(json.dumps(SAMPLES["grading.json"]))
    data["summary"] = {"passed": 2, "failed": 0, "total": 2, "pass_rate": 1.0}
    paths = _paths(_write(tmp_path, "grading.json", data))
    assert ("warning", "/summary/passed") in paths and ("warning", "/summary/total") in paths


def test_metrics_total_must_add_up(tmp_path):
    data = dict(SAMPLES["metrics.json"], total_tool_calls=5)
    assert _paths(_write(tmp_path, "metrics.json", data)) == [("warning", "/total_tool_calls")]


def test_eval_magic_files_under_artifact_names_are_not_broken_artifacts(tmp_path):
    grading = {
        "assertion_results": [{"id": "a", "passed": True, "evidence": "e", "grader": "llm_judge"}],
        "summary": {"passed": 1, "failed": 0, "total": 1, "pass_rate": 1},
    }
    benchmark = {
        "conditions_compared": ["old_skill", "new_skill"],
        "run_summary": {"old_skill": {}},
        "delta": {"direction": "old_skill - new_skill", "pass_rate": -0.25},
    }
    assert _write(tmp_path, "grading.json", grading).dialect == "eval-magic-grading"
    report = _write(tmp_path, "benchmark.json", benchmark)
    assert (report.dialect, report.diagnostics) == ("eval-magic-benchmark", [])
