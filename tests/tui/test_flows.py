"""The main flows, driven as a person would, with Pilot."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Select, TextArea

from tui.helpers import SIZE, field_at, focused, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.dialogs import ConflictDialog, QuitDialog
from workbench.tui.widgets.diagnostics import DiagnosticsPane
from workbench.tui.widgets.form import FormView
from workbench.tui.widgets.raw import RawView


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_opening_a_skill_selects_its_evals_file_and_first_case(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.current.rel == "evals/evals.json"
        assert screen.place.pointer == "/evals/0"
        status = str(screen.query_one("#status").render())
        assert "changelog-entry" in status and "slow-powers" in status and "0 errors · 0 warnings" in status
        assert field_at(app, Input, "/evals/0/id").value == "export-json-flag"


@pytest.mark.slow  # 14 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_selecting_a_case_in_the_navigator_shows_its_form(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#navigator").focus()
        await pilot.press("down")
        await settle(pilot)
        assert app.screen.place.pointer == "/evals/1"
        assert field_at(app, Input, "/evals/1/id").value == "ambiguous-timeout-change"


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_typing_a_bad_value_shows_the_error_live_and_fixing_it_clears_it(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = field_at(app, Input, "/evals/0/id")
        box.focus()
        await pilot.press("end", "_", "X")
        await pilot.pause()
        screen = app.screen
        assert screen.current.document.data["evals"][0]["id"] == "export-json-flag_X"
        assert screen.current.counts() == (1, 0)
        row = app.screen.query_one(FormView).rows["/evals/0/id"]
        assert row.has_class("-error") and "kebab-case" in str(row.problem.render())
        assert "1 error" in app.screen.query_one(DiagnosticsPane).border_title
        assert "● unsaved" in str(screen.query_one("#status").render())
        await pilot.press("backspace", "backspace")
        await pilot.pause()
        assert screen.current.counts() == (0, 0) and not row.has_class("-error")


@pytest.mark.slow  # 26 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_switching_an_assertion_kind_keeps_its_id(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        picker = field_at(app, Select, "/evals/0/assertions/3")
        (await focused(pilot, picker)).value = "diff_scope"
        await settle(pilot)
        assertion = app.screen.current.document.data["evals"][0]["assertions"][3]
        assert assertion == {"id": "user-facing-wording", "type": "diff_scope"}
        # diff_scope without a limit: the rule is shown as the problem of that assertion
        assert any("needs a limit" in d.message for d in app.screen.current.diagnostics)
        limit = field_at(app, Input, "/evals/0/assertions/3/max_files_touched")
        limit.focus()
        await pilot.press("1")
        await pilot.pause()
        assert app.screen.current.counts() == (0, 0)


@pytest.mark.slow  # 26 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_adding_a_turn_and_undoing_it(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        add = next(b for b in app.screen.query("Button.add") if b.name and '"/evals/0/turns"' in b.name)
        add.press()
        await settle(pilot)
        data = app.screen.current.document.data["evals"][0]
        assert data["turns"] == [{"prompt": "", "deliver_when": "always"}]
        assert any(d.path == "/evals/0/turns/0/prompt" for d in app.screen.current.diagnostics)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert "turns" not in app.screen.current.document.data["evals"][0]
        assert not app.screen.current.dirty
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert len(app.screen.current.document.data["evals"][0]["turns"]) == 1


@pytest.mark.slow  # 15 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_save_writes_atomically_and_only_the_edit(skill):
    path = skill / "evals" / "evals.json"
    original = path.read_text()
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = field_at(app, Input, "/evals/0/id")
        box.focus()
        await pilot.press("end", "-", "v", "2")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not app.screen.current.dirty
    saved = path.read_text()
    assert saved == original.replace('"id": "export-json-flag"', '"id": "export-json-flag-v2"')
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_external_change_shows_then_clears_the_diagnostic(skill):
    path = skill / "evals" / "evals.json"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        data = json.loads(path.read_text())
        data["evals"][2]["skill_should_trigger"] = "no"
        path.write_text(json.dumps(data, indent=2))
        app.screen.disk_changed(path)
        await settle(pilot)
        [problem] = app.screen.current.diagnostics
        assert problem.path == "/evals/2/skill_should_trigger" and problem.line
        assert "1 error" in app.screen.query_one(DiagnosticsPane).border_title
        data["evals"][2]["skill_should_trigger"] = False
        path.write_text(json.dumps(data, indent=2))
        app.screen.disk_changed(path)
        await settle(pilot)
        assert app.screen.current.diagnostics == []


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_real_watcher_reloads_within_a_moment(skill):
    import asyncio
    import time

    path = skill / "evals" / "evals.json"
    app = WorkbenchApp([skill], watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)  # let the watcher start
        text = path.read_text().replace('"runs": 2', '"runs": 0')
        started = time.monotonic()
        path.write_text(text)
        while time.monotonic() - started < 5 and not app.screen.current.diagnostics:
            await asyncio.sleep(0.02)
        assert [d.path for d in app.screen.current.diagnostics] == ["/evals/1/runs"]
        # our own save does not come back as an external change
        app.screen.session.save(app.screen.current)
        await pilot.pause(0.5)
        assert not isinstance(app.screen, ConflictDialog)


@pytest.mark.slow  # 17 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_conflict_dialog_keeps_both_sides_until_the_user_decides(skill):
    path = skill / "evals" / "evals.json"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = field_at(app, Input, "/evals/0/id")
        box.focus()
        await pilot.press("end", "-", "m", "i", "n", "e")
        theirs = path.read_text().replace("Please note the timeout change", "Note the timeout change")
        path.write_text(theirs)
        editor = app.screen
        editor.disk_changed(path)
        await pilot.pause()
        assert isinstance(app.screen, ConflictDialog)
        assert editor.current.document.data["evals"][0]["id"] == "export-json-flag-mine"
        assert path.read_text() == theirs
        await pilot.click("#show-diff")
        await pilot.pause()
        diff = app.screen.query_one("#diff", TextArea)
        # from the file on disk (theirs) to the edits (mine): both sides are there to read
        assert '-      "id": "export-json-flag",' in diff.text
        assert '+      "id": "export-json-flag-mine",' in diff.text
        assert '-      "prompt": "Note the timeout change' in diff.text
        await pilot.click("#mine")
        await pilot.pause()
        assert app.screen is editor and editor.current.dirty
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert '"export-json-flag-mine"' in path.read_text()


@pytest.mark.slow  # 17 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_conflict_take_theirs_reloads(skill):
    path = skill / "evals" / "evals.json"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        field_at(app, Input, "/evals/0/id").focus()
        await pilot.press("end", "-", "x")
        path.write_text(path.read_text().replace('"runs": 2', '"runs": 3'))
        app.screen.disk_changed(path)
        await pilot.pause()
        await pilot.click("#theirs")
        await settle(pilot)
        document = app.screen.current.document
        assert document.data["evals"][0]["id"] == "export-json-flag" and document.data["evals"][1]["runs"] == 3
        assert not app.screen.current.dirty


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_case_actions_do_nothing_once_the_open_file_no_longer_parses(skill):
    # The case stays selected when its file breaks on disk; duplicating, deleting
    # or moving it used to crash on the missing document.
    path = skill / "evals" / "evals.json"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        path.write_text('{"skill_name": ', encoding="utf-8")
        app.screen.disk_changed(path)
        await settle(pilot)
        assert app.screen.current.document is None and app.screen.place.pointer == "/evals/0"
        for action in ("duplicate_case", "delete_case", "move_case(1)", "new_case"):
            await app.screen.run_action(action)
            await settle(pilot)
        assert app.screen.current.document is None
        assert path.read_text(encoding="utf-8") == '{"skill_name": '


async def test_new_case_in_a_suite_whose_case_list_is_not_an_array_only_warns(skill):
    path = skill / "evals" / "evals.json"
    data = json.loads(path.read_text())
    data["evals"] = "not a list"
    path.write_text(json.dumps(data, indent=2))
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.screen.run_action("new_case")  # used to raise EditError: a string takes no insertions
        await settle(pilot)
        assert app.screen.current.document.data["evals"] == "not a list"


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_quitting_with_unsaved_edits_asks(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        field_at(app, Input, "/evals/0/id").focus()
        await pilot.press("end", "x")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, QuitDialog)
        await pilot.click("#cancel")
        await pilot.pause()
        assert app.is_running and app.screen.current.dirty
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.click("#save")
        await pilot.pause()
    assert '"export-json-flagx"' in (skill / "evals" / "evals.json").read_text()


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_raw_view_shows_syntax_errors_in_place_and_updates_the_data(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        raw = app.screen.query_one(RawView)
        area = raw.query_one("#raw-text", TextArea)
        assert raw.display and area.text == (skill / "evals" / "evals.json").read_text()
        area.text = area.text.replace('"runs": 2,', '"runs": 2,,')
        await pilot.pause()
        problem = raw.query_one("#raw-problem")
        assert problem.display and "line 52" in str(problem.render())
        assert app.screen.current.document.data["evals"][1]["runs"] == 2
        area.text = area.text.replace('"runs": 2,,', '"runs": 5,')
        await pilot.pause()
        assert not problem.display
        assert app.screen.current.document.data["evals"][1]["runs"] == 5
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.screen.query_one(FormView).display


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_skill_md_form_counts_description_and_validates(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#navigator").focus()
        await pilot.press("home")
        await settle(pilot)
        screen = app.screen
        assert screen.current.rel == "SKILL.md"
        name = field_at(app, Input, "/frontmatter/name")
        name.focus()
        await pilot.press("end", "X")
        await pilot.pause()
        assert any(d.path == "/frontmatter/name" and "lowercase" in d.message for d in screen.current.diagnostics)
        description = field_at(app, TextArea, "/frontmatter/description")
        assert "/ 1024" in str(
            screen.query_one(FormView).rows["/frontmatter/description"].query_one(".field-label").render()
        )
        (await focused(pilot, description)).text = "x" * 1030
        await pilot.pause()
        assert any("1030 characters" in d.message for d in screen.current.diagnostics)


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("theme", ["workbench-light", "solarized-dark"])
async def test_theme_choice_persists(skill, theme):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert {"workbench-dark", "workbench-light", "solarized-dark", "solarized-light"} <= set(app.available_themes)
        app.theme = theme
        await pilot.pause()
    again = WorkbenchApp([skill], watch=False)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.theme == theme
