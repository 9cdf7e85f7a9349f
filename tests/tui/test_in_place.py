"""A diagnostic appears without laying the screen out again (issue 26).

Textual lays out the whole screen (every widget of the form, the case list, the
problems list) whenever one widget asks for it; on a case form of hundreds of
widgets that is most of a keystroke's time. The class: an edit that changes no
widget's size must not ask for a layout. Each test types as a person does and
counts the screen's layouts (Compositor.reflow) from the key to the screen
updated: the field's message, the counts, the problems list and the case list
are updated in place. A size that does change (a second problem on a field,
a list that needs a scrollbar, a short terminal) still gets its layout."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from textual._compositor import Compositor
from textual.widgets import Input

from tui.helpers import SIZE, field_at, focused, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.diagnostics import DiagnosticsPane
from workbench.tui.widgets.form import FormView


@contextmanager
def layouts():
    """Counts the screen's layouts while the block runs."""
    counted: list[int] = []
    original = Compositor.reflow

    def reflow(self, parent, size):
        counted.append(1)
        return original(self, parent, size)

    Compositor.reflow = reflow  # type: ignore[method-assign]
    try:
        yield counted
    finally:
        Compositor.reflow = original  # type: ignore[method-assign]


async def _in_first_id(pilot):
    box = await focused(pilot, field_at(pilot.app, Input, "/evals/0/id"))
    await pilot.press("end")
    await settle(pilot)
    return box


@pytest.mark.parametrize(
    "keys, errors",
    [
        (["x"], 0),  # still a valid id: the value and the case's label change, nothing else
        (["X"], 1),  # now wrong: the field's message, the counts, the problems list
        (["X", "backspace"], 0),  # right again: all of it cleared
        (["X", "Y"], 1),  # wrong either way: the same message in place
    ],
    ids=["valid", "to-wrong", "back-to-right", "still-wrong"],
)
@pytest.mark.slow  # 14 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_typing_in_a_case_id_lays_out_nothing(skill, keys, errors):
    app = WorkbenchApp([skill], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _in_first_id(pilot)
        with layouts() as counted:
            for key in keys:
                await pilot.press(key)
                await settle(pilot)
        screen = app.screen
        assert screen.current.counts() == (errors, 0)
        row = screen.query_one(FormView).rows["/evals/0/id"]
        assert row.has_class("-error") == bool(errors)
        assert (row.problem.display and "kebab-case" in str(row.problem.render())) == bool(errors)
        pane = screen.query_one(DiagnosticsPane)
        assert f"{errors} error" in pane.border_title
        assert f"file: {errors} error" in str(screen.query_one("#status").render())
        assert counted == [], f"{len(counted)} layouts for {keys}"


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_message_longer_than_its_line_is_cut_on_the_field_and_whole_in_the_list(skill):
    """The field shows each problem on one line, cut to the width with an ellipsis (its
    size stays); the problems list, right below, has it whole."""
    app = WorkbenchApp([skill], watch=False, blink=False)
    async with app.run_test(size=(80, 44)) as pilot:
        await settle(pilot)
        await _in_first_id(pilot)
        with layouts() as counted:
            await pilot.press("X")
            await settle(pilot)
        row = app.screen.query_one(FormView).rows["/evals/0/id"]
        message = next(d.message for d in app.screen.current.diagnostics)
        assert len(message) > row.problem.size.width and row.problem.size.height == 1
        shown = "".join(segment.text for segment in row.problem.render_line(0))
        assert shown.rstrip().endswith("…") and shown.startswith("✗ expected")
        pane = app.screen.query_one(DiagnosticsPane)
        assert message in str(pane.get_option_at_index(0).prompt)
        assert counted == []


@pytest.mark.slow  # 18 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_many_problems_scroll_in_the_problems_list(skill):
    """More problems than the list shows: it scrolls (its scrollbar laid out), all there."""
    app = WorkbenchApp([skill], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for case in range(3):
            box = await focused(pilot, field_at(app, Input, f"/evals/{case}/id"))
            box.value = f"Bad {case}"
            await settle(pilot)
            pilot.app.screen.query_one("#navigator").focus()
            await pilot.press("down")
            await settle(pilot)
        pane = app.screen.query_one(DiagnosticsPane)
        assert pane.option_count == 3 and "3 errors" in pane.border_title
        assert pane.virtual_size.height > pane.scrollable_content_region.height
        assert pane.show_vertical_scrollbar
