"""What a case switch does besides showing the next case (issue 26: case switch p95 <=
floor + 50 ms). Down in the case list shows the next case in the same widgets; the
class: work per switch that does not change what is on screen. Counted here: the
objects a full garbage collection walks mid-switch. What the start-up built (the suite,
the form) is frozen once it is over, so a full pass walks only what is new since;
before, the suite was frozen before its form was built, and every full pass walked
the form's ~370 widgets and their parts (the case switch's tail)."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import pytest

from tui.helpers import SIZE, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.form import FormView

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from suite_gen import write_suite  # noqa: E402


@pytest.fixture
def big_cases(tmp_path) -> Path:
    """Five cases of the bench suite's shape (turns, five assertions: ~370 widgets each)."""
    suite = write_suite(tmp_path, 5, "suite-5")
    suite.write_text(json.dumps(json.loads(suite.read_text()), indent=2))
    return suite.parent.parent


async def _switches(pilot, count: int) -> None:
    for case in range(1, count + 1):
        await pilot.press("down")
        await settle(pilot)
        assert pilot.app.screen.query_one(FormView).title.endswith(f"case-0000{case}")


@pytest.mark.slow  # 17 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_full_collection_walks_only_what_is_new_since_the_start(big_cases):
    """The suite and the form live as long as the app: frozen once the start-up is over
    (the first form built), a full collection mid-switch walks none of them."""
    app = WorkbenchApp([big_cases], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#navigator").focus()
        await settle(pilot)
        await _switches(pilot, 3)
        walked = len(gc.get_objects())  # what a full collection walks (the frozen are not)
        form = app.screen.query_one(FormView)
        widgets = list(form.walk_children())
        assert len(widgets) > 300
        assert sum(gc.is_tracked(w) for w in widgets) == len(widgets)
        frozen_ids = {id(o) for o in gc.get_objects()}
        assert not any(id(w) in frozen_ids for w in widgets), "the form's widgets are walked by every full pass"
        assert walked < gc.get_freeze_count(), f"{walked} objects walked, {gc.get_freeze_count()} frozen"
