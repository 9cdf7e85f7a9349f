"""Screens that fit: save-all (and "save all and run"), Start focused on the Runs
screen, ctrl+t from any screen, the case form and the problems panel at 80x24,
key hints never cut, panes that follow the terminal, dialogs whose question shows,
and every state said by a character as well as a colour."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.widgets import Button, Checkbox, Footer, Static, Tree
from textual.widgets._footer import FooterKey

from tui.helpers import SIZE, settle
from workbench.formats.edits import Set
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.dialogs import ConfirmDialog, QuitDialog, TrustDialog
from workbench.tui.screens.editor import EditorScreen
from workbench.tui.screens.results import ResultsScreen
from workbench.tui.screens.runs import RunsScreen
from workbench.tui.widgets.diagnostics import DiagnosticsPane
from workbench.tui.widgets.form import FieldRow, FormView
from workbench.tui.widgets.status import StatusBar


def _two_unsaved(app) -> tuple:
    """An unsaved edit in each suite of the demo: (evals.json, skill-creator.evals.json)."""
    session = app.screen.session
    first, second = session.file("evals/evals.json"), session.file("evals/skill-creator.evals.json")
    session.apply(first, Set("/evals/0/runs", 3))
    session.apply(second, Set("/evals/0/prompt", "Changed while the other file was open."))
    return first, second


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_save_all_saves_every_unsaved_file(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first, second = _two_unsaved(app)
        await pilot.press("alt+s")
        await settle(pilot)
        assert not app.screen.session.dirty_files()
    assert '"runs": 3' in (skill / "evals" / "evals.json").read_text()
    assert "Changed while the other file was open." in (skill / "evals" / "skill-creator.evals.json").read_text()


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_save_all_is_in_the_palette(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Save all" in titles


@pytest.mark.slow  # 25 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_run_with_unsaved_files_names_them_and_saves_all_then_runs(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _two_unsaved(app)
        await pilot.press("ctrl+g")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        assert "evals/evals.json" in dialog.question and "evals/skill-creator.evals.json" in dialog.question
        assert str(dialog.query_one("#yes", Button).label) == "Save all and run"
        await pilot.click("#yes")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        assert not app.screen.session.dirty_files()
    assert '"runs": 3' in (skill / "evals" / "evals.json").read_text()


@pytest.mark.slow  # 21 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_start_has_focus_when_the_runs_screen_opens(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        assert app.focused is app.screen.query_one("#start")


@pytest.mark.slow  # 32 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("where", ["runs", "history", "triggers", "editor"])
async def test_ctrl_t_opens_the_latest_iteration_from_any_screen(graded, where):
    skill, iteration = graded
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys = {"runs": "ctrl+g", "history": "ctrl+o", "triggers": "ctrl+l", "editor": None}[where]
        if keys:
            await pilot.press(keys)
            await settle(pilot)
            assert not isinstance(app.screen, EditorScreen)
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert isinstance(app.screen, ResultsScreen)
        assert app.screen.iteration == iteration


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_at_80x24_the_form_shows_five_fields_and_no_problems_take_one_line(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        pane = app.screen.query_one(DiagnosticsPane)
        assert pane.outer_size.height == 1
        form = app.screen.query_one(FormView)
        seen = form.content_region
        whole = [
            row
            for row in form.query(FieldRow)
            if row.parent is not None
            and row.region.height
            and row.region.y >= seen.y
            and row.region.bottom <= seen.bottom
        ]
        assert len(whole) >= 5, [r.pointer for r in whole]


SCREENS = {
    "editor": None,
    "runs": "ctrl+g",
    "history": "ctrl+o",
    "triggers": "ctrl+l",
}


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("where", list(SCREENS))
async def test_at_100x30_no_key_hint_or_heading_is_cut(graded, where):
    skill, _ = graded
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        if SCREENS[where]:
            await pilot.press(SCREENS[where])
            await settle(pilot)
        footer = app.screen.query_one(Footer)
        keys = [k for k in footer.query(FooterKey) if k.display]
        assert keys
        right = footer.region.right
        for key in keys:  # whole, inside the footer, not under the palette's key docked at the right
            assert key.region.width >= len(key.key_display) + len(key.description)
            assert key.region.right <= right
        ordinary = sorted((k for k in keys if not k.has_class("-command-palette")), key=lambda k: k.region.x)
        palette = next(k for k in keys if k.has_class("-command-palette"))
        assert all(k.region.right <= palette.region.x for k in ordinary)
        for a, b in zip(ordinary, ordinary[1:], strict=False):
            assert a.region.right <= b.region.x
        described = [k.description for k in ordinary]
        assert "Quit" in described, described  # on every screen
        if where == "editor":  # the hints a newcomer needs first, in order
            for hint in ("Save", "Runs", "Results", "History", "Triggers", "Quit"):
                assert hint in described, described
            assert palette.description == "more…"
            status = app.screen.query_one(StatusBar)
            assert Text.from_markup(str(status.content)).cell_len <= status.content_region.width


@pytest.mark.slow  # 20 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_panes_follow_the_terminal_width(graded):
    skill, _ = graded
    widths = []
    for size in ((80, 24), (160, 45)):
        app = WorkbenchApp([skill], watch=False)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            navigator = app.screen.query_one("#navigator")
            await pilot.press("ctrl+o")
            await settle(pilot)
            widths.append((navigator.outer_size.width, app.screen.query_one("#versions", Tree).outer_size.width))
    (nav_small, tree_small), (nav_big, tree_big) = widths
    assert tree_big > tree_small and nav_big > nav_small
    assert tree_small <= 32  # at 80 columns the version's detail keeps most of the width


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_dialogs_show_their_question_whole_at_80x24(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        await pilot.click("#start")
        await settle(pilot)
        assert isinstance(app.screen, TrustDialog)
        _question_whole(app)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        _two_unsaved(app)
        await pilot.press("ctrl+q")
        await settle(pilot)
        assert isinstance(app.screen, QuitDialog)
        _question_whole(app)


def _question_whole(app) -> None:
    screen = app.screen.region
    dialog = app.screen.query_one("#dialog")
    question = app.screen.query_one("#question", Static)
    assert question.region.height >= 1 and screen.contains_region(question.region)
    assert screen.contains_region(dialog.region)
    left, right = dialog.region.x - screen.x, screen.right - dialog.region.right
    assert abs(left - right) <= 1  # centred
    assert question.virtual_size.height <= question.content_region.height  # wrapped, every line shown
    assert question.virtual_size.width <= question.content_region.width


async def test_checkboxes_and_switches_say_their_state_by_a_character(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        box = app.screen.query_one("#fresh", Checkbox)
        off = box.render().plain
        box.value = True
        await pilot.pause()
        on = box.render().plain
        assert off != on and "✓" in on and "✓" not in off


async def test_a_form_switch_says_on_or_off_in_words():
    from textual.app import App

    from workbench.tui.widgets.field_kinds import FieldSwitch

    class One(App):
        def compose(self):
            yield FieldSwitch(value=False)

    app = One()
    async with app.run_test(size=(40, 5)) as pilot:
        switch = app.query_one(FieldSwitch)
        assert "off" in str(switch.render())
        switch.value = True
        await pilot.pause()
        assert "on" in str(switch.render()) and "off" not in str(switch.render())
