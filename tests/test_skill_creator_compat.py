"""Both ways with skill-creator: our iterations open in its viewer and aggregator
(run from the unchanged reference copy beside the checkout), and iterations it
made (its SKILL.md's layouts, grader.md's grading.json) open in `report`,
`grade` and the Results screen."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DEMO, REPO, SHARED

from workbench.runs import layout

SKILL_CREATOR = SHARED / "reference" / "skill-creator"
needs_skill_creator = pytest.mark.skipif(
    not (SKILL_CREATOR / "scripts" / "aggregate_benchmark.py").is_file(),
    reason=f"skill-creator's reference copy is not at {SKILL_CREATOR}",
)
FIXTURE = Path(__file__).parent / "skill_creator_made"


def _workbench(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO), "WORKBENCH_CONFIG_DIR": str(cwd / "config")},
    )


@pytest.fixture(scope="module")
def demo_iteration(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("sc-compat")
    skill = base / "changelog-entry"
    shutil.copytree(DEMO, skill)
    result = _workbench(base, "run", str(skill), "--sandbox", "none", "--trust")
    assert result.returncode == 0, result.stdout + result.stderr
    return base / "changelog-entry-workspace" / "iteration-1"


def _viewer_runs(iteration: Path, out: Path) -> list[dict]:
    subprocess.run(
        [
            sys.executable,
            str(SKILL_CREATOR / "eval-viewer" / "generate_review.py"),
            str(iteration),
            "--static",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    match = re.search(r"const EMBEDDED_DATA = (\{.*?\});\n", out.read_text(), re.S)
    assert match, "the viewer's page embeds its data"
    return json.loads(match.group(1))["runs"]


@needs_skill_creator
def test_the_viewer_shows_every_run_with_prompt_answer_outputs_and_grading(demo_iteration, tmp_path):
    runs = _viewer_runs(demo_iteration, tmp_path / "review.html")
    ours = layout.runs(demo_iteration)
    assert sorted(r["id"] for r in runs) == sorted(run.relative.replace("/", "-") for run in ours)
    for run in runs:
        names = [o["name"] for o in run["outputs"]]
        assert run["prompt"] and run["prompt"] != "(No prompt found)", run["id"]
        assert layout.FINAL_ANSWER in names, run["id"]
        assert run["grading"]["summary"]["total"] == len(run["grading"]["expectations"]) > 0
    # A run that changed no file is there too, its reply shown as its answer.
    question = next(r for r in runs if r["id"] == "eval-question-not-a-request-with_skill-run-1")
    answer = next(o for o in question["outputs"] if o["name"] == layout.FINAL_ANSWER)["content"]
    assert "release notes" in answer and [o["name"] for o in question["outputs"]] == [layout.FINAL_ANSWER]
    assert question["prompt"].startswith("What's the difference between a changelog and release notes?")


@needs_skill_creator
def test_the_aggregator_computes_our_pass_rates_stddevs_and_delta(demo_iteration, tmp_path):
    out = tmp_path / "theirs.json"
    subprocess.run(
        [sys.executable, "-m", "scripts.aggregate_benchmark", str(demo_iteration), "--output", str(out)],
        cwd=SKILL_CREATOR,
        check=True,
        capture_output=True,
        timeout=120,
    )
    theirs = json.loads(out.read_text())
    ours = json.loads((demo_iteration / layout.BENCHMARK).read_text())
    for configuration in ("with_skill", "without_skill"):
        assert theirs["run_summary"][configuration]["pass_rate"] == ours["run_summary"][configuration]["pass_rate"]
    assert theirs["run_summary"]["delta"]["pass_rate"] == ours["run_summary"]["delta"]["pass_rate"] == "+0.82"
    assert len(theirs["runs"]) == len(ours["runs"]) == 22


def test_metrics_stay_in_the_run_folder_and_are_also_where_skill_creator_looks(demo_iteration):
    run = demo_iteration / "eval-export-json-flag" / "with_skill" / "run-1"
    ours = json.loads((run / layout.METRICS).read_text())
    assert json.loads((run / layout.OUTPUTS / layout.METRICS).read_text()) == ours
    assert ours["total_tool_calls"] > 0
    transcript = (run / layout.TRANSCRIPT_MD).read_text()
    assert "## Eval Prompt\n\nI just added a --json flag" in transcript and "## Final Answer" in transcript
    metadata = json.loads((run / layout.EVAL_METADATA).read_text())
    assert metadata["eval_id"] == "export-json-flag" and metadata["prompt"].startswith("I just added")
