"""What the screen looks like, at a fixed size, cursor blink and file watching off.
Update after a deliberate change with: pytest tests/tui/test_snapshots.py --snapshot-update"""

from __future__ import annotations

import shutil

import pytest
from conftest import DEMO, MISTAKES

from tui.helpers import settle
from workbench.tui.app import WorkbenchApp

SIZE = (120, 40)


@pytest.fixture
def fixed_demo():
    """The demo at a path that is the same on every run, for screens that show where it is
    (the History screen's workspace, the trust dialog's commands); a lock keeps two test
    runs on this machine (other worktrees) from sharing it at once."""
    import fcntl
    import tempfile
    from pathlib import Path

    base = Path(tempfile.gettempdir()) / "workbench-snapshot"
    base.mkdir(exist_ok=True)
    with open(base.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(base, ignore_errors=True)
        target = base / "changelog-entry"
        shutil.copytree(DEMO, target)
        yield target
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def demo(tmp_path):
    target = tmp_path / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target


async def _ready(pilot):
    await settle(pilot)
    pilot.app.apply_blink()
    await pilot.pause()


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
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


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
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


# Every screen at the three sizes a newcomer meets: the smallest usual terminal, a
# half-screen one, a full one. One test per screen, parametrised over the sizes.
SIZES = [(80, 24), (100, 30), (160, 45)]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@sizes
def test_editor_screen(snap_compare, demo, size):
    assert snap_compare(WorkbenchApp([demo], watch=False, blink=False), terminal_size=size, run_before=_ready)


async def _runs(pilot):
    await _ready(pilot)
    await pilot.press("ctrl+g")
    await _ready(pilot)
    for _ in range(100):  # the estimate beside Start comes from a worker, shortly after the screen opens
        if str(pilot.app.screen.query_one("#estimate").render()):
            break
        await pilot.pause(0.05)
    await _ready(pilot)


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@sizes
def test_runs_screen(snap_compare, demo, size):
    assert snap_compare(WorkbenchApp([demo], watch=False, blink=False), terminal_size=size, run_before=_runs)


@pytest.mark.slow  # 11 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@sizes
def test_trust_dialog(snap_compare, fixed_demo, size):
    demo = fixed_demo

    async def trust(pilot):
        await _runs(pilot)
        await pilot.press("enter")  # Start has the focus; the suite's command checks ask first
        await _ready(pilot)

    assert snap_compare(WorkbenchApp([demo], watch=False, blink=False), terminal_size=size, run_before=trust)


@pytest.mark.slow  # 14 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@sizes
def test_quit_dialog(snap_compare, demo, size):
    async def quitting(pilot):
        await _ready(pilot)
        screen = pilot.app.screen
        from workbench.formats.edits import Set

        screen.session.apply(screen.current, Set("/evals/0/runs", 3))
        other = screen.session.file("evals/skill-creator.evals.json")
        screen.session.apply(other, Set("/evals/0/prompt", "Changed."))
        await pilot.press("ctrl+q")
        await _ready(pilot)

    assert snap_compare(WorkbenchApp([demo], watch=False, blink=False), terminal_size=size, run_before=quitting)


@pytest.mark.slow  # 28 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@sizes
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


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@sizes
def test_history_screen(snap_compare, fixed_demo, size):
    demo = fixed_demo

    async def history(pilot):
        await _ready(pilot)
        await pilot.press("ctrl+o")
        await _ready(pilot)

    assert snap_compare(WorkbenchApp([demo], watch=False, blink=False), terminal_size=size, run_before=history)


@pytest.mark.slow  # 12 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@sizes
def test_triggers_screen(snap_compare, demo, size):
    async def triggers(pilot):
        await _ready(pilot)
        await pilot.press("ctrl+l")
        await _ready(pilot)

    assert snap_compare(WorkbenchApp([demo], watch=False, blink=False), terminal_size=size, run_before=triggers)
