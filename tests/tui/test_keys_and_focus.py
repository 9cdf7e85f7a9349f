"""Keys people know, and the keyboard staying where the person works (issue 12)."""

from __future__ import annotations

import json
import re

import pytest
from textual import events
from textual.widgets import Button, Input, Select, Static, TextArea

from tui.helpers import SIZE, field_at, restyled, settle
from workbench.formats.edits import Set
from workbench.formats.fields import fresh_id
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.editor import FOCUS_CLASS
from workbench.tui.widgets.diagnostics import DiagnosticsPane
from workbench.tui.widgets.footer import FittingFooter
from workbench.tui.widgets.form import FormView
from workbench.tui.widgets.navigator import DOCUMENT, Navigator, Place


def _ids(app) -> list:
    return [case["id"] for case in app.screen.current.document.data["evals"]]


def _title(app) -> str:
    return str(app.screen.query_one(FormView).query_one(".form-title", Static).content)


def _button(app, action: str, pointer: str) -> Button:
    return next(
        b for b in app.screen.query(Button) if b.name and json.loads(b.name)[:2] == [action, pointer] and b.display
    )


async def _typed(pilot) -> None:
    """Settled: every key sent handled, and the rebuilds it started done."""
    for _ in range(3):
        await settle(pilot)
        await pilot.pause(0.02)


def _burst(app, *keys: str) -> None:
    """Keys sent in one go, as a paste or a fast typist's terminal does: all queued
    before the app has handled the first (Pilot's press waits for each)."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


@pytest.mark.slow  # 14 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_editor_opens_on_the_case_list_and_tab_moves_into_the_form_and_back(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.focused, Navigator)
        assert app.screen.place.pointer == "/evals/0"
        assert _title(app) == "[b]evals/evals.json[/b] · case export-json-flag"
        await pilot.press("tab")
        assert getattr(app.focused, "pointer", None) == "/evals/0/id"
        await pilot.press("shift+tab")
        assert isinstance(app.focused, Navigator)
        await pilot.press("down")
        await settle(pilot)
        assert app.screen.place.pointer == "/evals/1"
        assert field_at(app, Input, "/evals/1/id").value == "ambiguous-timeout-change"
        assert _title(app) == "[b]evals/evals.json[/b] · case ambiguous-timeout-change"


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_title_follows_the_id_as_it_is_typed(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "end", "-", "v", "2")
        await pilot.pause()
        assert _title(app).endswith("· case export-json-flag-v2")


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_ctrl_r_moves_focus_into_the_raw_text_and_back_to_the_field(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        field_at(app, Input, "/evals/0/id").focus()
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.focused is app.screen.query_one("#raw-text", TextArea)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert getattr(app.focused, "pointer", None) == "/evals/0/id"


@pytest.mark.slow  # 37 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_focus_stays_in_the_field_after_add_remove_select_undo_and_redo(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        data = lambda: app.screen.current.document.data["evals"]  # noqa: E731
        # add: the new item's field, and typing goes there (not into the prompt)
        _button(app, "append", "/evals/0/files").press()
        await settle(pilot)
        assert getattr(app.focused, "pointer", None) == "/evals/0/files/2"
        await pilot.press(*"notes.md")
        assert data()[0]["files"][2] == "notes.md"
        # remove: the neighbour
        _button(app, "remove", "/evals/0/files/2").press()
        await settle(pilot)
        assert getattr(app.focused, "pointer", None) == "/evals/0/files/1"
        # a new assertion: its first field, and a rubric typed lands in it
        _button(app, "append", "/evals/0/assertions").press()
        await settle(pilot)
        focused = app.focused
        assert getattr(focused, "pointer", "").startswith("/evals/0/assertions/4")
        # a select: focus stays on it
        picker = field_at(app, Select, "/evals/0/assertions/4")
        picker.focus()
        await pilot.pause()
        picker.value = "llm_judge"
        await settle(pilot)
        assert app.focused is field_at(app, Select, "/evals/0/assertions/4")
        rubric = field_at(app, TextArea, "/evals/0/assertions/4/rubric")
        rubric.focus()
        await pilot.press(*"cites")
        assert data()[0]["assertions"][4]["rubric"] == "cites"
        assert "cites" not in data()[0]["prompt"]
        # undo and redo from the case list: the field the operation touched
        app.screen.query_one(Navigator).focus()
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert getattr(app.focused, "pointer", None) == "/evals/0/assertions/4/rubric"
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert getattr(app.focused, "pointer", None) == "/evals/0/assertions/4/rubric"
        assert data()[0]["assertions"][4]["rubric"] == "cites"


@pytest.mark.slow  # 11 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_undo_of_an_edit_in_another_case_opens_that_case_at_the_field(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "end", "x")
        await pilot.press("shift+tab", "down", "down")
        await settle(pilot)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert app.screen.place.pointer == "/evals/0"
        assert getattr(app.focused, "pointer", None) == "/evals/0/id"
        assert _ids(app)[0] == "export-json-flag"


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_duplicate_and_copy_make_unique_ids(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+d")
        await settle(pilot)
        assert _ids(app)[:2] == ["export-json-flag", "export-json-flag-copy"]
        await pilot.press("up", "ctrl+d")
        await settle(pilot)
        assert _ids(app)[:3] == ["export-json-flag", "export-json-flag-copy-2", "export-json-flag-copy"]
        await pilot.press("up")
        await settle(pilot)
        _button(app, "copy", "/evals/0/assertions/0").press()
        await settle(pilot)
        assertions = [a["id"] for a in app.screen.current.document.data["evals"][0]["assertions"]]
        assert assertions[:2] == [assertions[0], f"{assertions[0]}-copy"]
        assert app.screen.current.counts() == (0, 0)


def test_fresh_ids_count_on_and_integers_take_the_next():
    assert fresh_id("a", {"a"}) == "a-copy"
    assert fresh_id("a-copy", {"a", "a-copy"}) == "a-copy-2"
    assert fresh_id("a-copy-2", {"a", "a-copy", "a-copy-2"}) == "a-copy-3"
    assert fresh_id(3, {1, 3, 7}) == 8


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_suite_settings_show_the_suites_own_fields_never_its_case_list(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.open_place(Place("evals/evals.json", DOCUMENT))
        await settle(pilot)
        form = screen.query_one(FormView)
        assert not [w for w in form.query(Input) if getattr(w, "pointer", None) == "/evals"]
        row = form.rows["/evals"]
        text = " ".join(str(s.content) for s in row.query(Static))
        assert "10 cases" in text and "not in the schema" not in text
        assert field_at(app, Input, "/skill_name").value == "changelog-entry"
        # an empty suite: the case list's own problem, once, and no contradiction
        screen.session.apply(screen.current, Set("/evals", []))
        screen.render_editor()
        await settle(pilot)
        row = form.rows["/evals"]
        text = " ".join(str(s.content) for s in row.query(Static))
        assert "0 cases" in text and "not in the schema" not in text
        assert text.count("at least 1 item") == 1
        # a case's own problem is not shown on the settings form's case-list row
        screen.session.apply(screen.current, Set("/evals", [{"id": "Bad Id", "prompt": "p"}]))
        screen.render_editor()
        await settle(pilot)
        assert "kebab-case" not in " ".join(str(s.content) for s in form.rows["/evals"].query(Static))


@pytest.mark.slow  # 16 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_every_problem_old_or_new_jumps_to_its_field(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        # a problem made in the app, in case 3
        await pilot.press("down", "down", "down")
        await settle(pilot)
        field_at(app, Input, "/evals/3/id").focus()
        await pilot.press("end", "X")
        await pilot.press("shift+tab", "up", "up", "up")
        await settle(pilot)
        assert screen.place.pointer == "/evals/0"
        pane = screen.query_one(DiagnosticsPane)
        pane.focus()
        await pilot.press("home", "enter")
        await settle(pilot)
        assert screen.place.pointer == "/evals/3"
        assert getattr(app.focused, "pointer", None) == "/evals/3/id"
        # a problem in the case shown, in a nested field
        screen.session.apply(screen.current, Set("/evals/3/files/0", "../../etc"))
        screen.after_change(screen.current, "/evals/3/files/0", rebuild=False)
        await settle(pilot)
        pane.focus()
        index = next(i for i, d in enumerate(pane._diagnostics) if d.path == "/evals/3/files/0")
        pane.highlighted = index
        await pilot.press("enter")
        await settle(pilot)
        assert getattr(app.focused, "pointer", None) == "/evals/3/files/0"


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_fast_switching_ends_on_the_right_case_with_its_values(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _burst(app, *["down"] * 7, "up", "up")
        await _typed(pilot)
        assert app.screen.place.pointer == "/evals/5"
        expected = app.screen.current.document.data["evals"][5]
        assert field_at(app, Input, "/evals/5/id").value == expected["id"]
        assert field_at(app, TextArea, "/evals/5/prompt").text == expected["prompt"]
        assert not [w for w in app.screen.query(Input) if getattr(w, "pointer", "").startswith("/evals/4/")]


@pytest.mark.slow  # 12 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_burst_of_keys_across_case_switches_lands_where_it_was_typed(skill):
    """The garbled id (CHANOPECHANG): keys sent in one go while the form was being
    replaced went into the old form's fields, read against the new case, or into
    the case list; End was looked at after the letters behind it."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _burst(app, "down", "down", "tab", "end", *"CHAN", "shift+tab", "up", "tab", "end", *"OPE")
        await _typed(pilot)
        assert _ids(app)[:3] == ["export-json-flag", "ambiguous-timeout-changeOPE", "question-not-a-requestCHAN"]
        # and a burst while the field flips between valid and invalid, then back
        _burst(app, *"-a-B-", *["backspace"] * 5)
        await _typed(pilot)
        assert _ids(app)[1] == "ambiguous-timeout-changeOPE"
        assert getattr(app.focused, "pointer", None) == "/evals/1/id"


async def test_tab_between_fields_moves_the_focus_not_the_whole_screen(skill):
    """The form's border follows the focus in and out of it, and a Tab between two of its fields
    restyles neither the form's other fields nor composes the footer again (its hints are the same):
    both did, at every Tab, before (~0.3 s of CPU a Tab on the demo's case form)."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form, footer = app.screen.query_one(FormView), app.screen.query_one("FittingFooter")
        assert isinstance(app.focused, Navigator) and not form.has_class("-focus-within")
        with restyled(app) as nodes:
            await pilot.press("tab")
            await settle(pilot)
            assert form in app.focused.ancestors and form.has_class("-focus-within")
            fields = [w for w in form.query("*") if w.can_focus]
            # into the form: its border, the field's own focus, the footer's hints; not every widget of the form
            assert len({id(n) for n in nodes} & {id(w) for w in form.query("*")}) <= 12, len(nodes)
            first = app.focused
            hints = list(footer.children)
            nodes.clear()
            await pilot.press("tab")
            await settle(pilot)
        assert app.focused is not first and form in app.focused.ancestors and form.has_class("-focus-within")
        assert list(footer.children) == hints  # the same widgets: not composed again
        assert len({id(n) for n in nodes} & {id(w) for w in fields}) <= 4, len(nodes)
        await pilot.press("shift+tab", "shift+tab")
        await settle(pilot)
        assert isinstance(app.focused, Navigator) and not form.has_class("-focus-within")


async def test_no_rule_names_a_descendant_of_the_forms_focus_class(skill):
    """The form's focus class restyles the form alone when it changes (EditorScreen._focus_moved):
    right only while no rule, ours or Textual's, selects a widget inside a form with the class."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        named = [
            selectors.css
            for rule in app.stylesheet.rules
            for selectors in rule.selector_set
            if any(f".{FOCUS_CLASS}" in part for part in re.split(r"[\s>]+", selectors.css.strip())[:-1])
        ]
        assert named == []
        assert any(f".{FOCUS_CLASS}" in s.css for rule in app.stylesheet.rules for s in rule.selector_set)


async def test_the_footers_keys_follow_the_focus_in_place(skill):
    """Into the form and back, the footer shows what a footer composed anew would (its hints, their keys
    and actions, the palette's key last), with the keys it had, changed in place: composed again at
    each Tab into or out of the form, it laid the screen out three times."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer = app.screen.query_one(FittingFooter)

        def shown() -> list[tuple[str, str, str, bool]]:
            return [(k.key, k.description, k.action, k.has_class("-disabled")) for k in footer.children]

        def composed() -> list[tuple[str, str, str, bool]]:
            fitted, palette, left_out = footer._hints()
            out = [(b.key, b.description, b.action, not enabled) for b, enabled, _ in fitted]
            if palette is not None:
                out.append((palette[0].key, "more…" if left_out else palette[0].description, palette[0].action, False))
            return out

        in_the_list = shown()
        assert in_the_list == composed()
        before = list(footer.children)
        await pilot.press("tab")
        await settle(pilot)
        assert form_focused(app) and shown() == composed() != in_the_list
        assert len(set(map(id, before)) & set(map(id, footer.children))) >= len(footer.children) - 1
        await pilot.press("shift+tab")
        await settle(pilot)
        assert isinstance(app.focused, Navigator) and shown() == composed() == in_the_list


def form_focused(app) -> bool:
    return app.screen.query_one(FormView) in app.focused.ancestors
