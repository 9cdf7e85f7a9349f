"""The Results screen: from the run summary to the evidence of every failed
expectation with the keyboard alone; the conversation, outputs and diff of a run;
feedback saved in skill-creator's viewer format; reviewed marks."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest
from conftest import DEMO, copy_prepared
from textual.widgets import DataTable, Log, RichLog, Static, TextArea

from tui.helpers import SIZE, settle
from workbench.grading.benchmark import write_benchmark
from workbench.grading.grade import GradeOptions, grade_iteration
from workbench.grading.judges import make
from workbench.grading.suite import suite_of_iteration
from workbench.runs import executors
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.runner import RunOptions
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.results import ResultsScreen


async def _graded_demo_iteration(skill):
    executor = executors.make("demo")
    options = RunOptions()
    launch = prepare_launch(skill, executor, options)
    await run_launch(launch, executor, options)
    iteration = launch.workspace / f"iteration-{launch.iteration}"
    await asyncio.to_thread(
        grade_iteration, iteration, suite_of_iteration(iteration), GradeOptions(make("demo"), trusted=True)
    )
    write_benchmark(iteration)
    return iteration


@pytest.fixture(scope="module")
def graded_demo(tmp_path_factory):
    """The demo run by the demo agent and graded by the demo judge, once: the tests copy it."""
    base = tmp_path_factory.mktemp("graded-demo")
    skill = base / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    asyncio.run(_graded_demo_iteration(skill))
    return base


@pytest.fixture
def graded(graded_demo, tmp_path):
    """A private copy of the graded demo: (the skill, its iteration)."""
    copy_prepared(graded_demo, tmp_path)
    skill = tmp_path / "skills" / "changelog-entry"
    return skill, tmp_path / "changelog-entry-workspace" / "iteration-1"


async def _open(pilot, iteration) -> ResultsScreen:
    await settle(pilot)
    pilot.app.push_screen(ResultsScreen(iteration))
    await settle(pilot)
    return pilot.app.screen


def _text(widget) -> str:
    return str(widget.render())


@pytest.mark.slow  # 34 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_keyboard_alone_from_the_editor_to_each_failures_evidence(graded):
    skill, iteration = graded
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+t")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ResultsScreen) and screen.iteration == iteration
        summary = _text(screen.query_one("#results-summary", Static))
        # the means of the runs: without the skill 2 of 11 runs pass (5/33 assertions)
        assert "with_skill 100%" in summary and "without_skill 18%" in summary and "Δ +0.82" in summary
        assert "demo judge (offline heuristic, not a model)" in summary
        evals = screen.query_one("#evals", DataTable)
        rows = {str(evals.get_row_at(i)[0]): evals.get_row_at(i) for i in range(evals.row_count)}
        assert str(rows["export-json-flag"][1]) == "✓ 100% (4/4)" and str(rows["export-json-flag"][2]) == "✗ 0% (0/4)"
        assert str(rows["ambiguous-timeout-change"][1]) == "✓ 100% (6/6) pass^2 yes"
        assert rows["export-json-flag"][3] == "+1.00" and rows["export-json-flag"][6] == "1/1"
        failures = screen.query_one("#failures", DataTable)
        assert failures.row_count == 28 and screen.focused is failures
        seen = []
        for _ in range(failures.row_count):
            evidence = _text(screen.query_one("#evidence-text", Static))
            seen.append(evidence)
            await pilot.press("n")
            await pilot.pause()
        assert failures.cursor_row == 0  # n wraps around after the last failure
        assert any("the added line names code (cli.py)" in e for e in seen)
        assert any("2 files touched, more than 1" in e for e in seen)
        assert all("Evidence" in e for e in seen) and len(set(seen)) == 28
        await pilot.press("p")
        assert failures.cursor_row == 27


@pytest.mark.slow  # 25 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_conversation_outputs_and_diff_of_the_selected_run(graded):
    skill, iteration = graded
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, iteration)
        failures = screen.query_one("#failures", DataTable)
        rows = [failures.get_row_at(i) for i in range(failures.row_count)]
        index = next(
            i for i, row in enumerate(rows) if str(row[1]) == "export-json-flag" and str(row[2]) == "only-the-changelog"
        )
        screen.select_failure(index)
        await pilot.press("c")
        await pilot.pause()
        conversation = "\n".join(strip.text for strip in screen.query_one("#conversation-log", RichLog).lines)
        assert "▶ user: I just added a --json flag" in conversation and "⚙ tool call: Edit" in conversation
        await pilot.press("d")
        await pilot.pause()
        diff = "\n".join(screen.query_one("#diff-log", Log).lines)
        assert diff.count("diff --git") == 2 and "+- add json arg to cli.py" in diff
        await pilot.press("o")
        await pilot.pause()
        outputs = "\n".join(screen.query_one("#outputs-log", Log).lines)
        assert "═══ CHANGELOG.md ═══" in outputs and "═══ cli.py ═══" in outputs


@pytest.mark.slow  # 40 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_feedback_and_reviewed_marks_are_kept(graded):
    skill, iteration = graded
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, iteration)
        failures = screen.query_one("#failures", DataTable)
        await pilot.press("m")
        await pilot.pause()
        assert failures.get_row_at(0)[0] == "✓" and failures.cursor_row == 1  # marked, then on to the next
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(screen.focused, TextArea)
        await pilot.press(*"no question asked")
        await pilot.press("escape")  # leaves the box and saves
        await pilot.pause()
        run = screen.review.failures[1].folder.replace("/", "-")
        feedback = json.loads((iteration / "feedback.json").read_text())
        assert [(r["run_id"], r["feedback"]) for r in feedback["reviews"]] == [(run, "no question asked")]
        assert run == "eval-ambiguous-timeout-change-without_skill-run-1" and "timestamp" in feedback["reviews"][0]
        reviewed = json.loads((iteration / "reviewed.json").read_text())["reviewed"]
        assert reviewed == [f"{run}/asked-before-writing"]
        await pilot.press("escape")
        await pilot.pause()
        # Opened again: the feedback and the mark are back.
        screen = await _open(pilot, iteration)
        assert screen.query_one("#failures", DataTable).get_row_at(0)[0] == "✓"
        screen.select_failure(1)
        assert screen.query_one("#feedback-text", TextArea).text == "no question asked"


@pytest.mark.slow  # 20 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_results_screen_shows_the_one_delta(skill, tmp_path):
    """The iteration where pooling assertions would say -0.20: the screen says +0.33, as benchmark.json does."""
    from test_pass_rate import build_iteration

    iteration = build_iteration(tmp_path / "iteration-1")
    write_benchmark(iteration)
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, iteration)
        summary = _text(screen.query_one("#results-summary", Static))
        assert "with_skill 50%" in summary and "without_skill 17%" in summary and "Δ +0.33" in summary
        assert "-0.20" not in summary
        evals = screen.query_one("#evals", DataTable)
        long_row = [str(c) for c in evals.get_row("long")]
        assert long_row[1].startswith("✗ 0% (0/9)") and long_row[3] == "-0.33"


@pytest.mark.slow  # 14 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 45)])
async def test_names_are_never_cut_and_the_screen_is_used(graded, size):
    skill, iteration = graded
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=size) as pilot:
        screen = await _open(pilot, iteration)
        review = screen.review
        evals, failures = screen.query_one("#evals", DataTable), screen.query_one("#failures", DataTable)
        # every eval id and assertion id fits its column whole ...
        columns = list(evals.columns.values())
        assert columns[0].width >= max(len(str(r.eval_id)) for r in review.rows)
        columns = list(failures.columns.values())
        assert [str(c.label) for c in columns[:3]] == ["✓", "eval", "assertion"]
        assert columns[1].width >= max(len(str(f.eval_id)) for f in review.failures)
        assert columns[2].width >= max(len(f.id) for f in review.failures)
        # ... and the name columns are on screen without scrolling sideways
        names = sum(c.get_render_width(failures) for c in columns[:3])
        assert names <= failures.scrollable_content_region.width, (names, failures.scrollable_content_region)
        assert sum(c.get_render_width(evals) for c in list(evals.columns.values())[:1]) <= evals.size.width
        # the cells hold the names as written
        assert {str(failures.get_row_at(i)[2]) for i in range(failures.row_count)} == {f.id for f in review.failures}
        # nothing left empty: the failures and the detail reach the footer, the detail has room
        detail = screen.query_one("#detail")
        assert max(failures.region.bottom, detail.region.bottom) >= size[1] - 1
        assert detail.region.height >= 6 and failures.region.height >= 5
        if size[1] >= 40:  # tall enough: every eval shown, no scrolling
            assert evals.max_scroll_y == 0


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_evidence_is_shown_exactly_as_written(graded):
    skill, iteration = graded
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, iteration)
        # a regex in the evidence keeps its single backslashes (grading no longer quotes with repr)
        evidence = {f.evidence for f in screen.review.failures}
        assert "no tool invocation of 2 matched '^Read \\{.*CHANGELOG\\.md'" in evidence
        written = "C:\\tmp\\new [b]not bold[/b] [red]x[/] \"double\" 'single' \\d+ \\\\ end\\"
        failure = screen.review.failures[0]
        failure.evidence, failure.text = written, "[i]expected[/i] \\n"
        screen.show_failure(failure)
        shown = _text(screen.query_one("#evidence-text", Static))
        assert f"\nEvidence\n{written}" in shown and "\nExpected\n[i]expected[/i] \\n\n" in shown
        assert str(screen._failure_row(failure)[5]) == written  # the table row too, never read as markup
        # a judge's evidence that starts with [brackets] keeps them in the table
        row = next(screen._failure_row(f) for f in screen.review.failures if f.evidence.startswith("[demo judge"))
        assert str(row[5]).startswith("[demo judge (offline heuristic, not a model)]")


@pytest.mark.slow  # 15 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_checks_command_is_copied_with_its_environment(graded):
    skill, iteration = graded
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, iteration)
        failures = screen.review.failures
        index = next(
            i for i, f in enumerate(failures) if f.kind == "command_check" and f.eval_id == "ambiguous-timeout-change"
        )
        screen.select_failure(index)
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == "env CHECK=entry SECTION=Fixed bash -c 'python3 checks/check_changelog.py CHANGELOG.md'"
        said = [n.message for n in app._notifications]
        assert any("Copied 1 command line(s) of entry-under-fixed, with its environment" in m for m in said)
        # a matrix: one line per cell, each with its values
        matrix = next(i for i, f in enumerate(failures) if f.kind == "command_check" and "cell(s)" in f.evidence)
        screen.select_failure(matrix)
        await pilot.press("y")
        await pilot.pause()
        lines = app.clipboard.splitlines()
        assert len(lines) >= 2 and all(line.startswith("env ") and "CHECK=" in line for line in lines)
        # an expectation that ran no command copies nothing and says so
        other = next(i for i, f in enumerate(failures) if f.kind != "command_check")
        screen.select_failure(other)
        before = app.clipboard
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == before
        assert "this expectation ran none" in [n.message for n in app._notifications][-1]


@pytest.mark.slow  # 12 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_corrupt_grading_is_an_error_on_the_screen_and_the_app_stays(graded):
    skill, iteration = graded
    (iteration / "benchmark.json").unlink()
    damaged = next(iteration.glob("eval-*/with_skill/run-1/grading.json"))
    damaged.write_text(damaged.read_text()[:40])  # a kill mid-write
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, iteration)
        assert isinstance(screen, ResultsScreen)
        failures = screen.query_one("#failures", DataTable)
        shown = [" ".join(str(c) for c in failures.get_row_at(i)) for i in range(failures.row_count)]
        assert any("grading" in row for row in shown)
        evals = screen.query_one("#evals", DataTable)
        cells = [str(c) for i in range(evals.row_count) for c in evals.get_row_at(i)]
        assert any("error" in cell for cell in cells)
        assert app.is_running


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_run_json_cut_short_beside_its_grading_is_an_error_on_the_screen(graded):
    skill, iteration = graded  # benchmark.json up to date, as grading left it
    record = next(iteration.glob("eval-*/with_skill/run-1/run.json"))
    record.write_text(record.read_text()[:40])  # a kill mid-write; its grading.json is intact
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, iteration)
        failures = screen.query_one("#failures", DataTable)
        shown = [" ".join(str(c) for c in failures.get_row_at(i)) for i in range(failures.row_count)]
        assert any("grading unusable" in row for row in shown), shown
        evals = screen.query_one("#evals", DataTable)
        cells = [str(c) for i in range(evals.row_count) for c in evals.get_row_at(i)]
        assert any("error" in cell for cell in cells)


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_every_evals_cell_is_shown_whole(graded, size):
    """Each evals column is as wide as its widest cell, header included: a cell is never cut
    (the table scrolls sideways when the columns are wider than the screen)."""
    skill, iteration = graded
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=size) as pilot:
        screen = await _open(pilot, iteration)
        evals = screen.query_one("#evals", DataTable)
        for index, column in enumerate(evals.columns.values()):
            texts = [str(column.label)] + [str(evals.get_row_at(i)[index]) for i in range(evals.row_count)]
            widest = max(len(t) for t in texts)
            assert column.get_render_width(evals) - 2 * evals.cell_padding >= widest, (str(column.label), texts)


@pytest.mark.slow  # 12 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_case_that_should_not_trigger_and_did_is_marked_failed(graded):
    """skill_should_trigger: false and the agent invoked the skill: the cell is ✗ and says why,
    in the words benchmark.md has for it, from benchmark.json as from the gradings."""
    skill, iteration = graded
    grading_path = iteration / "eval-question-not-a-request" / "with_skill" / "run-1" / "grading.json"
    grading = json.loads(grading_path.read_text())
    grading["triggering"] = {"invoked": True, "should_trigger": False, "as_expected": False, "evidence": "event 2"}
    grading_path.write_text(json.dumps(grading))
    write_benchmark(iteration)
    note = "the skill was invoked in 1/1 run(s) with it staged; it should not trigger"
    assert note in (iteration / "benchmark.md").read_text()
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, iteration)
        evals = screen.query_one("#evals", DataTable)
        row = [str(c) for c in evals.get_row("question-not-a-request")]
        assert row[1].startswith("✗ ") and "should not trigger" in row[1], row
        assert row[-1].startswith("! 1/1"), row
        evals.focus()
        await pilot.pause()
        evals.move_cursor(row=evals.get_row_index("question-not-a-request"))
        await settle(pilot)
        assert note in _text(screen.query_one("#evidence-text", Static))
        # a case whose triggering went as it should stays ✓
        assert [str(c) for c in evals.get_row("deprecated-option")][1].startswith("✓ ")
