"""Saving from the app: the text view's unparsed text, conflicts found right before
writing (and merging both), failed writes, and every way out rescuing first."""

from __future__ import annotations

import errno
import json
import os
import signal
from pathlib import Path

import pytest
from textual.widgets import Button, Input, Static, TextArea

from tui.helpers import SIZE, field_at, settle
from workbench.formats import save
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.dialogs import ConfirmDialog, ConflictDialog, QuitDialog
from workbench.tui.widgets.diagnostics import DiagnosticsPane
from workbench.tui.widgets.form import FormView
from workbench.tui.widgets.raw import RawView
from workbench.tui.widgets.status import StatusBar


def _status(app) -> str:
    return str(app.screen.query_one(StatusBar).render())


async def _type_in_id(app, pilot, text: str) -> None:
    field_at(app, Input, "/evals/0/id").focus()
    await pilot.press("end", *text)
    await pilot.pause()


@pytest.mark.slow  # 25 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_text_that_does_not_parse_is_unsaved_shown_and_saved_as_typed_after_asking(skill):
    path = skill / "evals" / "evals.json"
    original = path.read_text()
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        area = app.screen.query_one("#raw-text", TextArea)
        typed = area.text.replace('"runs": 2,', '"runs": 2,,')
        area.text = typed
        await settle(pilot)
        assert "unsaved" in _status(app)
        pane = app.screen.query_one(DiagnosticsPane)
        assert "1 error" in str(pane.border_title)
        [problem] = app.screen.current.diagnostics
        assert problem.line == 52 and problem.column and "invalid JSON" in problem.message
        await pilot.press("ctrl+r")  # the form would hide what was typed: it asks, and escape keeps editing
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog) and "does not parse" in app.screen.question
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.query_one(RawView).display and not app.screen.query_one(FormView).display
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog) and "does not parse" in app.screen.question
        await pilot.press("escape")
        await pilot.pause()
        assert path.read_text() == original and app.screen.current.dirty
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.click("#yes")
        await settle(pilot)
        assert path.read_text() == typed  # exactly as typed, not the last valid version
        assert "unsaved" not in _status(app)


@pytest.mark.slow  # 47 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_quitting_with_unparsed_text_asks_and_lists_it(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        area = app.screen.query_one("#raw-text", TextArea)
        area.text = area.text + "}"
        await settle(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, QuitDialog)
        assert "evals/evals.json (its text does not parse: saved as typed)" in app.screen.files
        await pilot.click("#cancel")
        await pilot.pause()
        assert app.is_running


async def test_quitting_twice_asks_once_and_cancel_keeps_the_edit_then_save_all_quits(skill):
    """The quit question is one flow: a second Ctrl+Q while it is up stacks no second question (whose
    answer would go nowhere), Cancel leaves the edit unsaved, and Save all then saves it and quits."""
    path = skill / "evals" / "evals.json"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _type_in_id(app, pilot, "Q")
        await pilot.press("ctrl+q", "ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, QuitDialog)
        assert sum(isinstance(s, QuitDialog) for s in app.screen_stack) == 1
        await pilot.click("#cancel")
        await settle(pilot)
        assert app.is_running and not isinstance(app.screen, QuitDialog)
        assert "Q" not in json.loads(path.read_text())["evals"][0]["id"] and "unsaved" in _status(app)
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.click("#save")
        await pilot.pause()
    assert not app.is_running
    assert json.loads(path.read_text())["evals"][0]["id"].endswith("Q")


@pytest.mark.slow  # 32 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_in_the_text_view_a_problem_made_in_the_app_jumps_to_its_line(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")  # a new case: its problems have no line yet
        await settle(pilot)
        editor = app.screen
        diagnostic = next(d for d in editor.current.diagnostics if d.path.startswith("/evals/1"))
        assert diagnostic.line is None
        await pilot.press("ctrl+r")
        await settle(pilot)
        area = editor.query_one("#raw-text", TextArea)
        editor.post_message(DiagnosticsPane.Jump(diagnostic))
        await settle(pilot)
        row = area.cursor_location[0]
        assert row > 0 and area.has_focus
        lines = area.text.splitlines()
        # the new case is the second: the cursor is inside it, past the first case's lines
        second = [i for i, line in enumerate(lines) if line.startswith("    {")][1]
        third = [i for i, line in enumerate(lines) if line.startswith("    {")][2]
        assert second <= row < third


@pytest.mark.slow  # 24 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_saving_over_an_unseen_change_asks_and_merge_both_keeps_both(skill):
    path = skill / "evals" / "evals.json"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _type_in_id(app, pilot, "-mine")
        path.write_text(path.read_text().replace('"runs": 2', '"runs": 3'))  # no watcher event
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConflictDialog)
        assert '"runs": 3' in path.read_text() and '"export-json-flag-mine"' not in path.read_text()
        merge = app.screen.query_one("#merge", Button)
        assert not merge.disabled
        await pilot.click("#merge")
        await settle(pilot)
        skill_file = app.screen.current
        assert skill_file.dirty and "unsaved" in _status(app)  # merged, for review, not yet saved
        assert skill_file.document.data["evals"][0]["id"] == "export-json-flag-mine"
        assert skill_file.document.data["evals"][1]["runs"] == 3
        await pilot.press("ctrl+s")
        await settle(pilot)
    text = path.read_text()
    assert '"export-json-flag-mine"' in text and '"runs": 3' in text


@pytest.mark.slow  # 17 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_merge_both_is_disabled_with_the_reason_when_the_edits_overlap(skill):
    path = skill / "evals" / "evals.json"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _type_in_id(app, pilot, "-mine")
        theirs = path.read_text().replace('"id": "export-json-flag"', '"id": "export-json-flag-theirs"')
        path.write_text(theirs)
        await pilot.press("ctrl+s")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ConflictDialog) and dialog.query_one("#merge", Button).disabled
        assert "same lines" in str(dialog.query_one("#no-merge", Static).render())
        await pilot.press("escape")  # decide later: nothing written, nothing dropped
        await pilot.pause()
        assert path.read_text() == theirs and app.screen.current.dirty
        await pilot.press("ctrl+s")  # and the next save asks again
        await pilot.pause()
        assert isinstance(app.screen, ConflictDialog)


@pytest.mark.parametrize(
    "failure",
    [PermissionError(errno.EACCES, "Permission denied"), OSError(errno.ENOSPC, "No space left on device")],
    ids=["read-only-folder", "disk-full"],
)
@pytest.mark.slow  # 18 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_failed_save_says_why_keeps_the_edits_and_rescues_to_the_config_folder(
    skill, tmp_path, monkeypatch, failure
):
    path = skill / "evals" / "evals.json"
    original = path.read_bytes()
    real = save._temporary

    def temporary(path):  # where every save makes its temporary file (a path as a string)
        if Path(path).parent == skill / "evals":
            raise failure
        return real(path)

    monkeypatch.setattr(save, "_temporary", temporary)
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _type_in_id(app, pilot, "-kept")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.is_running and app.screen.current.dirty and "unsaved" in _status(app)
        [notice] = [n for n in app._notifications if n.title == "Save failed"]
        assert failure.strerror in notice.message and "kept" in notice.message
        [rescued] = app.rescued
        assert rescued.is_relative_to(tmp_path / "config" / "rescued" / "changelog-entry")
        assert '"export-json-flag-kept"' in rescued.read_text()
        await pilot.press("ctrl+z")  # the history is intact
        await settle(pilot)
        assert app.screen.current.document.data["evals"][0]["id"] != "export-json-flag-kept"
        app.quit_confirmed = True  # leave without another rescue
    assert path.read_bytes() == original


@pytest.mark.slow  # 16 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_an_exit_without_the_quit_dialog_rescues_first(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _type_in_id(app, pilot, "-keep")
        app.exit()  # some code path quits without asking
        await pilot.pause()
    [rescued] = app.rescued
    assert rescued.parent == skill / "evals" and '"export-json-flag-keep"' in rescued.read_text()


@pytest.mark.slow  # 22 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_terminating_signal_rescues_into_the_config_folder_when_the_folder_is_read_only(
    skill, tmp_path, monkeypatch
):
    real = save._temporary

    def temporary(path):  # where every save makes its temporary file (a path as a string)
        if Path(path).parent.is_relative_to(skill):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path)

    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _type_in_id(app, pilot, "-keep")
        monkeypatch.setattr(save, "_temporary", temporary)
        app._signalled(signal.SIGTERM)
        await pilot.pause()
    assert app.return_code == 128 + signal.SIGTERM
    [rescued] = app.rescued
    assert rescued.parent == tmp_path / "config" / "rescued" / "changelog-entry" / "evals"
    assert '"export-json-flag-keep"' in rescued.read_text()


@pytest.mark.slow  # 17 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_quit_without_saving_rescues_nothing(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _type_in_id(app, pilot, "x")
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.click("#discard")
        await pilot.pause()
    assert app.rescued == [] and not [p for p in os.listdir(skill / "evals") if ".unsaved-" in p]


@pytest.mark.slow  # 11 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_file_that_is_not_utf8_is_shown_read_only_and_never_saved(skill):
    path = skill / "evals" / "evals.json"
    raw = path.read_bytes().replace(b"Please note", b"Pl\xe9ase note")
    path.write_bytes(raw)
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(RawView)
        area = view.query_one("#raw-text", TextArea)
        assert view.display and area.read_only
        assert "not UTF-8" in str(view.query_one("#raw-problem", Static).render())
        area.focus()
        await pilot.press("x")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not app.screen.current.dirty and "unsaved" not in _status(app)
        assert any("not UTF-8" in n.message for n in app._notifications)
    assert path.read_bytes() == raw


@pytest.mark.slow  # 11 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_saving_a_file_with_errors_says_how_many(skill):
    """Invalid work is saved (nothing is lost), and the notice says it is saved with its errors."""
    import json

    path = skill / "evals" / "evals.json"
    data = json.loads(path.read_text())
    data["evals"][0]["skill_should_trigger"] = "yes"
    data["evals"][1]["skill_should_trigger"] = "no"
    path.write_text(json.dumps(data, indent=2) + "\n")
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        errors = [d for d in app.screen.current.diagnostics if d.severity == "error"]
        assert len(errors) == 2, errors
        await _type_in_id(app, pilot, "x")
        await pilot.press("ctrl+s")
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert "Saved evals/evals.json with 2 errors" in said, said
        assert json.loads(path.read_text())["evals"][0]["id"].endswith("x")
