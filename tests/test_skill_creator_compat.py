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
from conftest import REPO, SHARED
from support.cli import workbench

from workbench.workspace import layout

SKILL_CREATOR = SHARED / "reference" / "skill-creator"
needs_skill_creator = pytest.mark.skipif(
    not (SKILL_CREATOR / "scripts" / "aggregate_benchmark.py").is_file(),
    reason=f"skill-creator's reference copy is not at {SKILL_CREATOR}",
)
FIXTURE = Path(__file__).parent / "skill_creator_made"


def _workbench(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The command line, in this process: its output, exit codes and files are what these tests read."""
    return workbench(
        *args, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO), "WORKBENCH_CONFIG_DIR": str(cwd / "config")}
    )


@pytest.fixture(scope="module")
def demo_iteration(demo_run_made) -> Path:
    """The demo run once a session (offline demo agent and judge): these tests only read it."""
    return demo_run_made


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


# ---------------------------------------------------------------- their iterations in ours

LAYOUTS = {"run-k folders": "iteration-1", "flat": "iteration-2"}


@pytest.fixture
def made(tmp_path) -> Path:
    """A private copy of the skill-creator-made fixture: the skill and its workspace."""
    shutil.copytree(FIXTURE, tmp_path / "made")
    return tmp_path / "made"


@pytest.mark.parametrize("layout_name", list(LAYOUTS))
def test_report_reads_a_skill_creator_iteration_one_row_per_eval(made, layout_name):
    iteration = made / "changelog-entry-workspace" / LAYOUTS[layout_name]
    result = _workbench(made, "report", str(iteration), "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr  # with the skill every assertion passed
    report = json.loads(result.stdout)
    rows = {row["eval_id"]: row for row in report["evals"]}
    assert set(rows) == {1, 2}  # from eval_metadata.json, not the folder names
    assert rows[1]["eval_name"] == "export-json-flag" and rows[2]["eval_name"] == "changelog-vs-release-notes"
    assert rows[1]["prompt"] == "I added a --json flag to export. Put it in the changelog."
    runs = 2 if layout_name == "run-k folders" else 1
    assert rows[1]["configurations"]["with_skill"]["runs"] == runs
    # grader.md's gradings as written: without the skill, eval 1 passes 1 of 2 (and 0 of 2 in its second run)
    assert report["pass_rate"]["with_skill"] == 1.0
    assert report["pass_rate"]["without_skill"] == (0.125 if runs == 2 else 0.25)
    assert report["errors"] == 0
    text = _workbench(made, "report", str(iteration)).stdout
    assert "1 export-json-flag" in text and "2 changelog-vs-release-notes" in text and "None" not in text


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("layout_name", list(LAYOUTS))
def test_grade_grades_a_skill_creator_iteration_from_its_outputs(made, layout_name, tmp_path):
    iteration = made / "changelog-entry-workspace" / LAYOUTS[layout_name]
    judge = tmp_path / "judge.sh"  # passes what it can see in the run's output files
    judge.write_text(
        "if grep -q 'Export can write JSON\\|release notes tell'; then passed=true; else passed=false; fi\n"
        'echo "{\\"token\\": \\"$WORKBENCH_JUDGE_TOKEN\\", \\"passed\\": $passed, \\"evidence\\": \\"$passed\\"}"\n'
    )
    pattern = "eval-*/*/grading.json" if layout_name == "flat" else "eval-*/*/run-*/grading.json"
    theirs = {p: json.loads(p.read_text()) for p in iteration.glob(pattern)}
    result = _workbench(
        made, "grade", str(iteration), "--judge", "command", "--judge-command", f"bash {judge}", "--trust"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 export-json-flag" in result.stdout
    gradings = sorted(
        iteration.glob("eval-*/*/grading.json" if layout_name == "flat" else "eval-*/*/run-*/grading.json")
    )
    assert len(gradings) == (8 if layout_name == "run-k folders" else 4)
    for path in gradings:
        grading = json.loads(path.read_text())
        assert grading["eval_id"] in (1, 2) and grading["summary"]["passed"] == grading["summary"]["total"]
        assert "triggering" not in grading  # no transcript of ours to tell it by: nothing is claimed
        for key in ("claims", "user_notes_summary"):  # what their grader wrote and ours does not make: kept
            assert grading.get(key) == theirs[path].get(key), (path, key)
    assert any(t.get("claims") for t in theirs.values())  # the fixture has some to keep
    report = json.loads(_workbench(made, "report", str(iteration), "--format", "json").stdout)
    assert report["pass_rate"] == {"with_skill": 1.0, "without_skill": 1.0} and len(report["evals"]) == 2


@pytest.mark.slow  # 20 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_results_screen_shows_a_skill_creator_iteration(made):
    from textual.widgets import DataTable, Log, Static
    from tui.helpers import SIZE, settle

    from workbench.tui.app import WorkbenchApp
    from workbench.tui.screens.results import ResultsScreen

    for iteration in (made / "changelog-entry-workspace" / name for name in LAYOUTS.values()):
        app = WorkbenchApp([made / "changelog-entry"], watch=False)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.push_screen(ResultsScreen(iteration))
            await settle(pilot)
            screen = app.screen
            summary = str(screen.query_one("#results-summary", Static).render())
            assert "with_skill 100%" in summary and "Δ +0." in summary, summary
            evals = screen.query_one("#evals", DataTable)
            labels = {str(evals.get_row_at(i)[0]) for i in range(evals.row_count)}
            assert labels == {"1 export-json-flag", "2 changelog-vs-release-notes"}
            failures = screen.query_one("#failures", DataTable)
            assert failures.row_count == (5 if iteration.name == "iteration-1" else 2)
            # The first failure is the baseline's on eval 1: its output files are there to read.
            screen.select_failure(0)
            await pilot.press("o")
            await pilot.pause()
            outputs = "\n".join(screen.query_one("#outputs-log", Log).lines)
            assert "═══ CHANGELOG.md ═══" in outputs and "Export can write JSON" in outputs
            # Its conversation is its transcript.md, as written (there is no transcript.jsonl).
            await pilot.press("c")
            await pilot.pause()
            log = screen.query_one("#conversation-log")
            shown = "\n".join(str(line.text) for line in log.lines)
            assert "transcript.md, as written" in shown and "I added a --json flag to export." in shown, shown


def test_skill_creator_cases_are_named_by_their_own_name_or_id_and_claim_no_should_trigger(tmp_path):
    from workbench.formats import skill_creator
    from workbench.formats.dialect import Format
    from workbench.grading import triggering
    from workbench.runs.cases import run_cases

    data = {"evals": [{"id": 1, "prompt": "p"}, {"id": 2, "prompt": "q", "name": "export-json"}]}
    cases = run_cases(Format(skill_creator.NAME, "", ""), data, tmp_path / "evals" / "evals.json")
    assert [c.name for c in cases] == ["1", "export-json"]
    assert triggering.check([], "changelog-entry", cases[0].skill_should_trigger).as_json().keys() == {
        "invoked",
        "evidence",
    }
