"""New suite in the app: a skill with only SKILL.md gets its first suite from
ctrl+n, in the dialect picked, with the cases `workbench init` writes; it opens
in the editor and ctrl+n adds cases there. Nothing is ever overwritten."""

from __future__ import annotations

import pytest
from textual.widgets import Input, RadioSet

from tui.helpers import SIZE, settle
from workbench.app.new_skill import suite_text
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.new_suite import NewSuiteDialog
from workbench.tui.widgets.navigator import Navigator
from workbench.validate.tree import validate_paths


def _bare(tmp_path):
    skill = tmp_path / "tidy-imports"
    skill.mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: tidy-imports\ndescription: Use when the user asks to tidy the imports of a file.\n---\n\n# Tidy\n"
    )
    return skill


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_ctrl_n_on_a_skill_without_a_suite_makes_one_and_then_adds_cases(tmp_path):
    skill = _bare(tmp_path)
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        editor = app.screen
        footer_keys = {b.binding.action for b in editor.active_bindings.values() if b.enabled}
        assert "new_suite" in footer_keys and "new_case" not in footer_keys  # the footer offers it
        await pilot.press("ctrl+n")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, NewSuiteDialog) and dialog.focused is dialog.query_one(RadioSet)
        await pilot.press("down", "down", "enter")  # chock, the keyboard alone
        await pilot.pause()
        assert dialog.dialect() == "chock" and dialog.query_one("#suite-file", Input).value == "suite.yaml"
        await pilot.click("#create")
        await settle(pilot)
        suite = skill / "evals" / "suite.yaml"
        assert app.screen is editor and suite.read_text() == suite_text("tidy-imports", "chock")
        reports = validate_paths([skill], None)
        assert len(reports) == 2 and not [d for r in reports for d in r.diagnostics]
        assert editor.current is not None and editor.current.rel == "evals/suite.yaml"
        assert [p for p, _ in editor.current.cases()][0] == editor.place.pointer  # its first case is open
        tree = editor.query_one(Navigator)
        labels = [str(n.label) for n in tree.file_node("evals/suite.yaml").children]
        assert sum("tc-00" in label for label in labels) == 3
        footer_keys = {b.binding.action for b in editor.active_bindings.values() if b.enabled}
        assert "new_case" in footer_keys and "new_suite" not in footer_keys
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert len(editor.current.cases()) == 4 and editor.current.dirty
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "new-case-1" in suite.read_text()


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_new_suite_never_overwrites_and_says_why(tmp_path):
    skill = _bare(tmp_path)
    (skill / "evals").mkdir()
    mine = skill / "evals" / "notes.json"
    mine.write_text("my own notes\n")
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, NewSuiteDialog)
        dialog.query_one("#suite-file", Input).value = "notes.json"
        await pilot.click("#create")
        await settle(pilot)
        assert app.screen is dialog and mine.read_text() == "my own notes\n"
        problem = str(dialog.query_one("#new-suite-problem").render())
        assert "already there; nothing was written" in problem
        field = dialog.query_one("#suite-file", Input)
        field.value = "../SKILL.json"
        field.focus()
        await pilot.press("enter")  # Enter in the name creates, as the button does
        await settle(pilot)
        assert "give a file name only" in str(dialog.query_one("#new-suite-problem").render())
        await pilot.press("escape")
        await settle(pilot)
        assert sorted(p.name for p in (skill / "evals").iterdir()) == ["notes.json"]  # Cancel wrote nothing
