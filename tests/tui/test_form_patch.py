"""A structural edit or a case switch builds again only the parts of the form that changed shape
(FormView._patch: a field's row, or an object list's items one by one), and leaves the form exactly as
a form built anew shows it."""

from __future__ import annotations

import json

from textual import events
from textual.app import App
from textual.css.model import SelectorType
from textual.widgets import Button, Input, Select, Static, Switch, TextArea

from tui.helpers import SIZE, field_at, restyled, settle
from workbench.formats.fields import FieldSpec, KindName
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.field_kinds import KeyInput, ObjectListKind, kind_of
from workbench.tui.widgets.form import FieldRow, FormView
from workbench.tui.widgets.navigator import DOCUMENT, Place


def _button(app, action: str, pointer: str, *rest) -> Button:
    wanted = [action, pointer, *rest]
    return next(b for b in app.screen.query(Button) if b.name and json.loads(b.name)[: len(wanted)] == wanted)


def _seen(form: FormView) -> list[tuple]:
    """What the form shows and what each of its widgets does, in order."""
    seen = []
    for widget in form.walk_children():
        if isinstance(widget, Input):
            text = widget.value
        elif isinstance(widget, TextArea):
            text = widget.text
        elif isinstance(widget, Switch | Select):
            text = repr(widget.value)
        elif isinstance(widget, Static):
            text = str(widget.content)
        else:
            text = None
        seen.append(
            (
                type(widget).__name__,
                getattr(widget, "pointer", None),
                getattr(widget, "key_of", None),
                widget.name,
                tuple(sorted(widget.classes - {"-valid"})),  # set by Input once it validates; no rule styles it
                widget.disabled,
                widget.display,
                text,
            )
        )
    rows = sorted(
        (pointer, row.pointer, row.is_attached and form in row.ancestors) for pointer, row in form.rows.items()
    )
    return [*seen, ("rows", tuple(rows))]


async def _built_anew(pilot, form: FormView) -> list[tuple]:
    """The same form, every widget built again (as the first form of a case is)."""
    form._built_shape = None
    pilot.app.screen.render_editor()
    await settle(pilot)
    return _seen(form)


async def test_each_structural_edit_shows_what_a_form_built_anew_shows_and_keeps_the_rest(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = app.screen.query_one(FormView)
        data = lambda: app.screen.current.document.data["evals"]  # noqa: E731

        async def edit(act, largest: int) -> None:
            """act, then: the form as built anew; the prompt's editor kept; at most `largest` widgets new."""
            prompt = field_at(app, TextArea, "/evals/0/prompt")
            before = set(map(id, form.walk_children()))
            act()
            await settle(pilot)
            assert field_at(app, TextArea, "/evals/0/prompt") is prompt  # not built again
            new = [w for w in form.walk_children() if id(w) not in before]
            assert len(new) <= largest, (len(new), largest)
            patched = _seen(form)
            assert patched == await _built_anew(pilot, form)

        await edit(lambda: _button(app, "append", "/evals/0/files").press(), 20)  # the files' row
        assert len(data()[0]["files"]) == 3
        await edit(lambda: _button(app, "remove", "/evals/0/files/0").press(), 20)
        assert len(data()[0]["files"]) == 2
        # an object list: one item more, its neighbours kept (the last one's "move down" now works)
        await edit(lambda: _button(app, "append", "/evals/0/assertions").press(), 40)
        assert len(data()[0]["assertions"]) == 5
        await edit(lambda: _button(app, "move", "/evals/0/assertions/0", 1).press(), 120)
        assert data()[0]["assertions"][0]["type"] == "command_check"
        # an entry added to a map inside an item: that item alone built again
        adds = [b for b in app.screen.query(Button) if b.name and json.loads(b.name)[0] == "set" and "/env/" in b.name]
        await edit(adds[0].press, 100)
        # an item put in or taken out: those after it shift, built again where their kinds differ
        await edit(lambda: _button(app, "copy", "/evals/0/assertions/1").press(), 200)
        await edit(lambda: _button(app, "remove", "/evals/0/assertions/0").press(), 200)
        # another kind for an item
        await edit(lambda: setattr(field_at(app, Select, "/evals/0/assertions/0"), "value", "llm_judge"), 100)
        assert data()[0]["assertions"][0]["type"] == "llm_judge"


async def test_a_switch_to_a_case_of_another_shape_shows_what_a_form_built_anew_shows(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = app.screen.query_one(FormView)
        for pointer in ("/evals/1", "/evals/2", "/evals/9", "/evals/0", DOCUMENT, "/evals/4"):
            rows = {id(row) for row in form.walk_children(FieldRow)}
            case_after_case = form.pointer != "" and pointer != DOCUMENT
            app.screen.open_place(Place("evals/evals.json", pointer))
            await settle(pilot)
            if pointer != DOCUMENT:
                case = app.screen.current.document.data["evals"][int(pointer.rsplit("/", 1)[1])]
                assert str(form.query_one(".form-title", Static).content).endswith(case["id"])
            if case_after_case:  # the rows of the same shape kept, shown in place
                assert rows & {id(row) for row in form.walk_children(FieldRow)}, pointer
            patched = _seen(form)
            assert patched == await _built_anew(pilot, form), pointer


async def test_a_structural_edit_restyles_the_widgets_it_builds_not_the_form(skill):
    """The form holds the focus while it is built again; Textual restyled all it holds when it took the
    focus and when it gave it back (twice ~250 widgets on the demo's first case)."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = app.screen.query_one(FormView)
        field_at(app, Input, "/evals/0/files/0").focus()
        await settle(pilot)
        with restyled(app) as nodes:
            _button(app, "append", "/evals/0/files").press()
            await settle(pilot)
        assert getattr(app.focused, "pointer", None) == "/evals/0/files/2"
        kept = {id(w) for w in form.walk_children()} & {id(n) for n in nodes}
        assert len(kept) <= 30, len(kept)


async def test_no_rule_selects_a_widget_inside_a_focused_form(skill):
    """The form restyles itself alone when it takes or gives back the focus (FormView.watch_has_focus):
    right only while no rule, ours or Textual's, selects a widget inside a focused (or blurred) form."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = app.screen.query_one(FormView)

        def may_be_the_form(selector) -> bool:
            if selector.type == SelectorType.UNIVERSAL:
                return True
            if selector.type == SelectorType.TYPE:
                return selector.name in form._css_type_names
            return selector.name in form.classes or selector.name == form.id

        ancestors = [
            selectors.css
            for rule in app.stylesheet.rules
            for selectors in rule.selector_set
            for selector in selectors.selectors[:-1]
            if selector.pseudo_classes & {"focus", "blur"}
        ]
        assert "Select:focus > SelectCurrent" in ancestors  # what the check looks at
        named = [
            selectors.css
            for rule in app.stylesheet.rules
            for selectors in rule.selector_set
            for selector in selectors.selectors[:-1]
            if selector.pseudo_classes & {"focus", "blur"} and may_be_the_form(selector)
        ]
        assert named == []


async def test_the_suite_settings_case_count_follows_the_case_list_in_and_out_of_existence(skill):
    """The settings form's line about the case list ("1 case", "0 cases", "not a list") is built again
    whenever what it says changes: a key that told an absent list by True and one case by 1 held them
    equal, and the line kept the old count."""
    path = skill / "evals" / "evals.json"
    data = json.loads(path.read_text())
    one = {"skill_name": data["skill_name"], "evals": data["evals"][:1]}
    none = {"skill_name": data["skill_name"]}
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.open_place(Place("evals/evals.json", DOCUMENT))
        await settle(pilot)
        form = screen.query_one(FormView)
        for shown, said in (
            (none, "0 cases"),
            (one, "1 case:"),
            ({**none, "evals": "x"}, "not a list"),
            (one, "1 case:"),
        ):
            screen.action_toggle_raw()
            await settle(pilot)
            screen.session.raw_edit(screen.current, json.dumps(shown, indent=2))
            await settle(pilot)
            screen.action_toggle_raw()
            await settle(pilot)
            assert any(said in str(s.content) for s in form.query(Static)), said
            assert _seen(form) == await _built_anew(pilot, form), said


async def test_a_refused_rename_and_an_empty_optional_number_look_as_built_anew_after_an_edit_elsewhere(skill):
    """A key box emptied (a rename refused: no key) shows its entry's key again once the form changes
    elsewhere, as a form built anew does; an optional number left empty is not marked invalid."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = app.screen.query_one(FormView)
        key = next(k for k in form.query(KeyInput) if k.key_of == "/evals/0/assertions/1/matrix/CHECK")
        key.focus()
        await pilot.press("end", *["backspace"] * 5, "tab")
        await settle(pilot)
        assert key.value == "" and "CHECK" in app.screen.current.document.data["evals"][0]["assertions"][1]["matrix"]
        runs = field_at(app, Input, "/evals/0/runs")
        runs.focus()
        await pilot.press("tab")
        await settle(pilot)
        assert "-invalid" not in runs.classes
        _button(app, "append", "/evals/0/files").press()
        await settle(pilot)
        assert key.value == "CHECK"
        assert _seen(form) == await _built_anew(pilot, form)


async def test_tab_after_a_switch_that_built_some_rows_again_goes_to_the_first_field(skill):
    """Textual orders the focus by where widgets are laid out; a row just built again is nowhere until the
    next layout, so the form's change is done only once it is laid out. Before, this burst (the terminal
    test's "pages") tabbed into the row built again, and the rest of the keys went astray."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=(120, 40)) as pilot:  # the terminal test's size
        await settle(pilot)
        for key in ("pagedown", "up", "tab", "x", "shift+tab", "pageup", "down", "tab", "end", "a"):
            app.post_message(events.Key(key, key if len(key) == 1 else None))  # all queued before the first is handled
        for _ in range(5):
            await settle(pilot)
            await pilot.pause(0.05)
        assert (app.screen.current.rel, app.screen.place.pointer) == ("evals/evals.json", "/evals/0")
        assert getattr(app.focused, "pointer", None) == "/evals/0/id"
        assert app.screen.current.document.data["evals"][0]["id"] == "export-json-flaga"


async def test_an_item_recounted_in_its_list_leaves_a_list_inside_it_alone():
    """A kept item's moves follow its own list's new length; those of a list inside the item keep theirs."""
    step = FieldSpec("", KindName.OBJECT, fields=(FieldSpec("name", KindName.TEXT),))
    inner = FieldSpec("steps", KindName.OBJECT_LIST, item=step)
    outer = FieldSpec("plans", KindName.OBJECT_LIST, item=FieldSpec("", KindName.OBJECT, fields=(inner,)))
    app = App()
    async with app.run_test() as pilot:
        form = FormView()
        await app.screen.mount(form)
        row = kind_of(outer).item(form, outer, "/plans", 1, {"steps": [{"name": "a"}, {"name": "b"}]}, 2)
        await form.mount(row)
        await pilot.pause()

        def moves() -> list[tuple[str, bool]]:
            return [(b.name, b.disabled) for b in row.query(Button) if b.name and json.loads(b.name)[0] == "move"]

        before = moves()
        assert ('["move", "/plans/1", 2]', True) in before  # the last of two: no way down
        ObjectListKind.recount(row, 3)  # an item added after it
        after = moves()
        assert ('["move", "/plans/1", 2]', False) in after
        assert [m for m in after if "/steps/" in m[0]] == [m for m in before if "/steps/" in m[0]]
