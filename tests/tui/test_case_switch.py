"""What a case switch does besides showing the next case (issue 26: case switch p95 <=
floor + 50 ms). Down in the case list shows the next case in the same widgets; the
class: work per switch that does not change what is on screen. Counted here: the
objects a full garbage collection walks mid-switch. What the start-up built (the suite,
the form) is frozen once it is over, so a full pass walks only what is new since;
before, the suite was frozen before its form was built, and every full pass walked
the form's ~370 widgets and their parts (the case switch's tail)."""

from __future__ import annotations

import asyncio
import gc
import json
import sys
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Switch

from tui.helpers import SIZE, field_at, settle
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


async def test_a_switch_shows_its_case_value_at_once(big_cases):
    """Case 1 of the bench suite should trigger the skill, case 0 should not: the switch
    shows the new value with its look at once. Textual's Switch slid its knob for 0.3 s
    (a slide this form's switch never draws: it says on or off in words), and the key
    after a case switch waited for that animation to end (workbench/tui/keystrokes.py):
    the case switch's tail, every switch that followed a change of the value."""
    app = WorkbenchApp([big_cases], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#navigator").focus()
        await settle(pilot)
        form = app.screen.query_one(FormView)
        app.post_message(events.Key("down", None))  # as the terminal sends it (pilot.press waits for animations)
        for _ in range(500):
            await asyncio.sleep(0.005)
            if form.title.endswith("case-00001"):
                break
        switch = field_at(app, Switch, "/evals/1/skill_should_trigger")
        assert switch.value is True
        assert not app.animator.is_being_animated(switch, "_slider_position"), "the next key waits for it"
        assert switch.has_class("-on"), "the switch's look lags its value"
