"""The field kinds registry: every kind the core compiles has one FieldKind, and a
new kind is one class plus one registration."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import Input, Select

from tui.helpers import field_at, settle
from workbench.formats.fields import FieldSpec, Kind, KindName
from workbench.tui.widgets.field_kinds import (
    ABSENT,
    CLEARED,
    FIELD_KINDS,
    NO_EDIT,
    FieldKind,
    TextKind,
    kind_of,
    register,
)
from workbench.tui.widgets.form import FormView


def test_every_kind_the_core_compiles_is_registered_once():
    assert set(FIELD_KINDS) == set(KindName)
    assert all(kind.name == name for name, kind in FIELD_KINDS.items())
    assert {name for name, kind in FIELD_KINDS.items() if kind.block} == {
        KindName.LONG_TEXT,
        KindName.STRING_LIST,
        KindName.OBJECT_LIST,
        KindName.KEY_VALUE,
        KindName.OBJECT,
    }


def test_a_kind_is_registered_only_once():
    with pytest.raises(ValueError, match="already registered"):
        register(type("Again", (TextKind,), {}))
    with pytest.raises(LookupError, match="no FieldKind"):
        kind_of(FieldSpec("x", "no-such-kind"))


def _parse(kind, text, required=False, in_list=False):
    spec = FieldSpec("x", kind, required=required)
    return FIELD_KINDS[kind].parse(spec, text, in_list)


def test_typed_text_becomes_a_value():
    assert _parse(KindName.TEXT, "hi") == "hi"
    assert _parse(KindName.TEXT, "") is CLEARED  # an optional field emptied goes
    assert _parse(KindName.TEXT, "", required=True) == ""
    assert _parse(KindName.TEXT, "", in_list=True) == ""
    assert _parse(KindName.INTEGER, "42") == 42 and _parse(KindName.NUMBER, "0.5") == 0.5
    assert _parse(KindName.INTEGER, "-") is CLEARED and _parse(KindName.INTEGER, " ") is CLEARED
    assert _parse(KindName.INTEGER, "4.") is NO_EDIT  # half-typed: no edit yet
    assert _parse(KindName.ANY, '{"a": 1}') == {"a": 1} and _parse(KindName.ANY, "{a") == "{a"


def test_a_picked_option_becomes_a_value():
    enum = FieldSpec("x", KindName.ENUM, options=("a", "b"))
    choose = FIELD_KINDS[KindName.ENUM].choose
    assert choose(enum, ABSENT, "a") == "a" and choose(enum, "a", "a") is NO_EDIT
    assert choose(enum, "a", Select.NULL) is CLEARED
    first = Kind(
        "first",
        "type",
        "first",
        FieldSpec(
            "",
            KindName.OBJECT,
            fields=(FieldSpec("type", KindName.TEXT, required=True, const="first"), FieldSpec("id", KindName.TEXT)),
        ),
    )
    second = Kind(
        "second",
        "type",
        "second",
        FieldSpec(
            "",
            KindName.OBJECT,
            fields=(
                FieldSpec("type", KindName.TEXT, required=True, const="second"),
                FieldSpec("id", KindName.TEXT),
                FieldSpec("n", KindName.INTEGER, required=True),
            ),
        ),
    )
    kinds = FieldSpec("x", KindName.KINDS, kinds=(first, second))
    choose = FIELD_KINDS[KindName.KINDS].choose
    assert choose(kinds, {"type": "first", "id": "a"}, "second") == {"type": "second", "id": "a", "n": 0}
    assert choose(kinds, {"type": "first"}, "first") is NO_EDIT


class _StarsKind(FieldKind):
    """A rating typed as stars: "***" is 3."""

    name = "stars"

    def text(self, spec, value):
        return "*" * value if isinstance(value, int) else str(value)

    def build(self, form, spec, pointer, value):
        return [form.input(spec, pointer, "" if value is ABSENT else self.text(spec, value), placeholder="***")]

    def parse(self, spec, text, in_list):
        if not text:
            return CLEARED
        return len(text) if set(text) == {"*"} else NO_EDIT


class _FormApp(App):
    def compose(self):
        yield FormView()


async def test_a_new_kind_is_one_class_and_one_registration():
    register(_StarsKind)
    try:
        spec = FieldSpec(
            "",
            KindName.OBJECT,
            fields=(
                FieldSpec("rating", "stars"),
                FieldSpec("by_reviewer", KindName.KEY_VALUE, item=FieldSpec("", "stars")),
            ),
        )
        app = _FormApp()
        async with app.run_test(size=(100, 30)) as pilot:
            form = app.query_one(FormView)
            edits = []
            form.on_edit = edits.append
            form.show("review", spec, "", {"rating": 2, "by_reviewer": {"ann": 1}})
            await settle(pilot)
            rating = field_at(app, Input, "/rating")
            assert rating.value == "**"
            entry = field_at(app, Input, "/by_reviewer/ann")
            assert entry.value == "*" and "kv-row" in entry.parent.classes  # not a block: beside its key
            rating.focus()
            await pilot.press("end", "*")
            await pilot.pause()
            assert edits[-1].operation.value == 3 and edits[-1].operation.pointer == "/rating"
            await pilot.press("x")  # not stars: no edit
            await pilot.pause()
            assert edits[-1].operation.value == 3 and len(edits) == 1
    finally:
        FIELD_KINDS.pop("stars")
