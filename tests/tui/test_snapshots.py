"""What the screen looks like, at a fixed size, cursor blink and file watching off.
Update after a deliberate change with: pytest tests/tui/test_snapshots.py --snapshot-update"""

from __future__ import annotations

import shutil

import pytest
from conftest import DEMO, MISTAKES

from workbench.tui.app import WorkbenchApp

SIZE = (120, 40)


@pytest.fixture
def demo(tmp_path):
    target = tmp_path / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target


async def _ready(pilot):
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    pilot.app.apply_blink()
    await pilot.pause()


def test_demo_opens_on_its_first_case(snap_compare, demo):
    assert snap_compare(WorkbenchApp([demo], watch=False, blink=False), terminal_size=SIZE, run_before=_ready)


def test_mistakes_show_errors_inline_and_in_the_pane(snap_compare, tmp_path):
    target = tmp_path / "changelog-entry"
    shutil.copytree(MISTAKES, target)

    async def open_second_case(pilot):
        await _ready(pilot)
        pilot.app.screen.query_one("#navigator").focus()
        await pilot.press("down")
        await _ready(pilot)

    assert snap_compare(
        WorkbenchApp([target], watch=False, blink=False), terminal_size=SIZE, run_before=open_second_case
    )


def test_conflict_dialog(snap_compare, demo):
    async def conflict(pilot):
        await _ready(pilot)
        screen = pilot.app.screen
        from workbench.formats.edits import Set

        screen.session.apply(screen.current, Set("/evals/0/runs", 3))
        path = demo / "evals" / "evals.json"
        path.write_text(path.read_text().replace('"runs": 2', '"runs": 4'))
        screen.disk_changed(path)
        await _ready(pilot)

    assert snap_compare(WorkbenchApp([demo], watch=False, blink=False), terminal_size=SIZE, run_before=conflict)


NEWCOMER_SIZES = [(80, 24), (160, 45)]


@pytest.mark.parametrize("size", NEWCOMER_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_runs_screen(snap_compare, demo, size):
    async def runs(pilot):
        await _ready(pilot)
        await pilot.press("ctrl+g")
        await _ready(pilot)
        for _ in range(100):  # the estimate beside Start comes from a worker, shortly after the screen opens
            if str(pilot.app.screen.query_one("#estimate").render()):
                break
            await pilot.pause(0.05)
        await _ready(pilot)

    assert snap_compare(WorkbenchApp([demo], watch=False, blink=False), terminal_size=size, run_before=runs)


@pytest.mark.parametrize("size", NEWCOMER_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_results_screen(snap_compare, graded, size):
    skill, iteration = graded

    async def results(pilot):
        await _ready(pilot)
        await pilot.press("ctrl+t")
        await _ready(pilot)
        screen = pilot.app.screen
        # times vary from run to run, tokens with the length of the temporary path: the layout is compared
        for row in screen.review.rows:
            for cell in row.cells.values():
                cell.seconds, cell.tokens = float(cell.runs), 100.0 * cell.runs
        screen.fill_evals(0)
        await _ready(pilot)

    assert snap_compare(WorkbenchApp([skill], watch=False, blink=False), terminal_size=size, run_before=results)
