"""One pass rate: the mean of the runs' pass rates (skill-creator's definition),
and delta = new minus baseline of those, the same in benchmark.json, every
report format and the Results screen. The iteration below is built so that
pooling assertions instead would give a delta of the other sign."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from support.cli import workbench

from workbench.grading.benchmark import write_benchmark
from workbench.grading.review import load_review, outcome

# (eval, configuration, run) -> (passed, total)
RUNS = {
    ("short", "with_skill", 1): (1, 1),
    ("short", "without_skill", 1): (0, 1),
    ("long", "with_skill", 1): (0, 9),
    ("long", "without_skill", 1): (3, 9),
}
# Mean of runs: with 0.5, without 1/6 -> delta +0.33. Pooled: with 1/10, without 3/10 -> -0.20.
MEAN_DELTA = 0.5 - 1 / 6


def build_iteration(folder, runs=RUNS):
    for (eval_id, configuration, number), (passed, total) in runs.items():
        eval_folder = folder / f"eval-{eval_id}"
        eval_folder.mkdir(parents=True, exist_ok=True)
        (eval_folder / "eval_metadata.json").write_text(
            json.dumps({"eval_id": eval_id, "eval_name": eval_id, "prompt": "p", "assertions": []})
        )
        run = eval_folder / configuration / f"run-{number}"
        run.mkdir(parents=True)
        expectations = [
            {"text": f"assertion {i}", "passed": i < passed, "evidence": "e", "id": f"a{i}", "kind": "transcript_check"}
            for i in range(total)
        ]
        (run / "grading.json").write_text(
            json.dumps(
                {
                    "eval_id": eval_id,
                    "configuration": configuration,
                    "run_number": number,
                    "judge": "demo judge",
                    "expectations": expectations,
                    "summary": {
                        "passed": passed,
                        "failed": total - passed,
                        "total": total,
                        "pass_rate": round(passed / total, 4),
                    },
                    "execution_metrics": {"total_tool_calls": 0, "errors_encountered": 0},
                    "timing": {"executor_duration_seconds": 1.0, "total_tokens": 10},
                }
            )
        )
    return folder


@pytest.fixture()
def iteration(tmp_path):
    return build_iteration(tmp_path / "iteration-1")


def test_the_two_definitions_differ_in_sign_here():
    pooled = (
        sum(p for (_, c, _), (p, t) in RUNS.items() if c == "with_skill") / 10
        - sum(p for (_, c, _), (p, t) in RUNS.items() if c == "without_skill") / 10
    )
    assert pooled < 0 < MEAN_DELTA


def test_one_delta_in_benchmark_json_report_and_junit(iteration):
    benchmark = write_benchmark(iteration)
    assert benchmark["run_summary"]["delta"]["pass_rate"] == f"{MEAN_DELTA:+.2f}" == "+0.33"
    assert benchmark["run_summary"]["with_skill"]["pass_rate"]["mean"] == 0.5
    review = load_review(iteration)
    assert review.delta() == pytest.approx(MEAN_DELTA)
    assert review.rate("with_skill") == 0.5 and review.totals("with_skill") == (1, 10)  # counts stay counts

    as_json = json.loads(workbench("report", iteration, "--format", "json").stdout)
    assert as_json["delta"] == pytest.approx(MEAN_DELTA)
    assert as_json["pass_rate"] == {"with_skill": 0.5, "without_skill": pytest.approx(1 / 6)}
    assert [e["eval_id"] for e in as_json["evals"]] == ["long", "short"]
    assert as_json["difference"]["delta"] == pytest.approx(MEAN_DELTA, abs=1e-4)
    assert as_json["difference"]["evals"] == 2

    text = workbench("report", iteration).stdout
    assert "pass rate: with_skill 50%  without_skill 17%  delta +0.33" in text
    assert "-0.20" not in text and "10%" not in text

    junit = ET.fromstring(workbench("report", iteration, "--format", "junit").stdout)
    suites = {s.get("name"): s for s in junit}
    assert suites["with_skill"].get("failures") == "9"
    # The baseline failing is what the skill is for: expected failures, not test failures.
    assert suites["without_skill"].get("failures") == "0" and suites["without_skill"].get("skipped") == "7"


def test_eval_fail_under_fails_on_a_single_weak_eval(tmp_path):
    runs = {("good", "with_skill", k): (6, 6) for k in (1, 2, 3)} | {
        ("weak", "with_skill", 1): (0, 6),
        ("other", "with_skill", 1): (6, 6),
    }
    iteration = build_iteration(tmp_path / "iteration-1", runs)
    review = load_review(iteration)
    assert review.rate("with_skill") == pytest.approx(0.8)  # 4 of 5 runs passed fully
    assert outcome(review, fail_under=0.3) == 0  # the whole rate clears the bar...
    assert outcome(review, eval_fail_under=0.3) == 1  # ...while one eval sits at 0/6
    shown = workbench("report", iteration, "--eval-fail-under", "0.3")
    assert shown.returncode == 1 and "weak" in shown.stderr
    assert "pass^3 yes" in shown.stdout  # all three repeats of `good` passed
    row = next(
        e
        for e in json.loads(workbench("report", iteration, "--format", "json").stdout)["evals"]
        if e["eval_id"] == "good"
    )
    assert row["configurations"]["with_skill"]["pass_all"] is True
