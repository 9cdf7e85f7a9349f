"""The text view is the truth while it is shown (issue 25): undo and redo there
act on the text, no field of the hidden form can take the focus, and leaving it
with text that does not parse asks (keep editing, or discard the text edit);
nothing edited anywhere vanishes."""

from __future__ import annotations

import pytest
from textual.widgets import Input, TextArea

from tui.helpers import SIZE, field_at, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.dialogs import ConfirmDialog
from workbench.tui.widgets.form import FormView
from workbench.tui.widgets.navigator import Navigator
from workbench.tui.widgets.raw import RawView


def _ids(app) -> list:
    return [case["id"] for case in app.screen.session.file("evals/evals.json").document.data["evals"]]


def _in_form(app) -> bool:
    focused = app.focused
    form = app.screen.query_one(FormView) if not isinstance(app.screen, ConfirmDialog) else None
    return focused is not None and form is not None and form in focused.ancestors_with_self


async def _edited_in_form_then_raw(app, pilot) -> TextArea:
    """The first case's id edited in the form (export-json-flagXY), then the text view open."""
    await pilot.press("tab", "end", "X", "Y")
    await settle(pilot)
    assert _ids(app)[0] == "export-json-flagXY"
    await pilot.press("ctrl+r")
    await settle(pilot)
    area = app.screen.query_one("#raw-text", TextArea)
    assert app.focused is area and area.cursor_location == (0, 0)
    return area


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_undo_and_redo_in_the_text_view_act_on_the_text(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        area = await _edited_in_form_then_raw(app, pilot)
        before = area.text
        await pilot.press("{")  # the text no longer parses
        await settle(pilot)
        assert area.text == "{" + before and app.screen.current.raw_problem is not None
        await pilot.press("ctrl+z")
        await settle(pilot)
        # the text's own edit is undone, not the form's (the list kept the edited id)
        assert area.text == before and app.screen.current.raw_problem is None
        assert _ids(app)[0] == "export-json-flagXY"
        assert area.cursor_location == (0, 0) and app.focused is area
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert area.text == "{" + before and app.screen.current.raw_problem is not None
        assert _ids(app)[0] == "export-json-flagXY"
        await pilot.press("ctrl+z", "Q")  # the next key lands where the undone edit was
        await settle(pilot)
        assert area.text == "Q" + before
        assert _ids(app)[0] == "export-json-flagXY"


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_undo_in_the_text_view_with_no_text_edit_undoes_nothing_of_the_form(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        area = await _edited_in_form_then_raw(app, pilot)
        before = area.text
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert area.text == before and _ids(app)[0] == "export-json-flagXY"
        assert any("Nothing to undo in the text" in n.message for n in app._notifications)


@pytest.mark.slow  # 30 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_no_field_of_the_hidden_form_takes_the_focus_in_the_text_view(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _edited_in_form_then_raw(app, pilot)
        for key in ["f6"] * 6 + ["tab"] * 8 + ["shift+tab"] * 8:
            await pilot.press(key)
            await settle(pilot)
            assert not _in_form(app), (key, app.focused)
        field = field_at(app, Input, "/evals/0/id")
        field.focus()
        await settle(pilot)
        assert not _in_form(app)
        for _ in range(3):  # typing after F6, wherever the focus is, never renames the case
            await pilot.press("f6", "Z")
            await settle(pilot)
        assert _ids(app)[0] == "export-json-flagXY"


@pytest.mark.slow  # 11 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_leaving_the_text_view_with_text_that_does_not_parse_asks(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        area = await _edited_in_form_then_raw(app, pilot)
        # a text edit that parses (runs 2 -> 5), then one that does not
        area.cursor_location = (0, 0)
        parsed = area.text.replace('"runs": 2,', '"runs": 5,', 1)
        area.replace(parsed, (0, 0), area.document.end)
        await settle(pilot)
        assert app.screen.current.document.data["evals"][1]["runs"] == 5
        await pilot.press("{")
        await settle(pilot)
        typed = area.text
        assert app.screen.current.raw_problem is not None
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog) and "does not parse" in app.screen.question
        await pilot.press("escape")  # keep editing
        await settle(pilot)
        editor = app.screen
        assert editor.query_one(RawView).display and not editor.query_one(FormView).display
        assert area.text == typed and editor.current.raw_text == typed
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.click("#yes")  # discard the text edit
        await settle(pilot)
        assert app.screen is editor and editor.query_one(FormView).display
        assert not editor.query_one(RawView).display
        skill_file = editor.current
        assert skill_file.raw_text is None and skill_file.raw_problem is None
        # only the text that did not parse is gone: the form's edit and the parsed text edit stay
        assert _ids(app)[0] == "export-json-flagXY" and skill_file.document.data["evals"][1]["runs"] == 5
        assert skill_file.dirty and _in_form(app)


@pytest.mark.slow  # 12 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_text_that_does_not_parse_stays_shown_as_text_wherever_the_form_is_asked_for(skill):
    """Left for another file and back in the form: the file whose typed text does not
    parse is shown as that text (the form would show its last good data as if that
    were the file, and an edit there would be lost behind the text)."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        area = await _edited_in_form_then_raw(app, pilot)
        await pilot.press("{")
        await settle(pilot)
        typed = area.text
        editor = app.screen
        editor.query_one(Navigator).focus()
        await pilot.press("home")  # SKILL.md, as text
        await settle(pilot)
        assert editor.current.rel == "SKILL.md" and editor.query_one(RawView).display
        await pilot.press("ctrl+r")  # SKILL.md parses: its form
        await settle(pilot)
        assert editor.query_one(FormView).display
        await pilot.press("down", "down", "down")  # the first case of evals.json again
        await settle(pilot)
        assert (editor.current.rel, editor.place.pointer) == ("evals/evals.json", "/evals/0")
        assert editor.query_one(RawView).display and not editor.query_one(FormView).display
        assert area.text == typed and editor.current.raw_text == typed
        await pilot.press("tab", "tab", "Z")
        await settle(pilot)
        assert not _in_form(app) and _ids(app)[0] == "export-json-flagXY"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog) and "does not parse" in app.screen.question
