"""Field kinds: what the form knows about each kind of field, registered once.

The core (workbench.formats.fields) compiles a schema into FieldSpecs, each of
one kind (a KindName). Here every kind is one FieldKind class, registered with
@register in FIELD_KINDS: how to build its widgets for a value, how text typed
into it becomes a value, how an option picked in its Select does, whether it is
laid out as a block. The form (form.py) looks kinds up with kind_of and never
switches on their names.

Adding a kind: a KindName member and the rule that produces it in fields.py,
then one FieldKind subclass here with @register (docs/form-fields.md)."""

from __future__ import annotations

import json
from typing import Any, ClassVar, Protocol

from rich.text import Text
from textual import events
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Static, Switch

from workbench.formats import pointer as ptr
from workbench.formats.fields import FieldSpec, Kind, KindName, switch_kind
from workbench.tui import compat
from workbench.tui.compat import SelectCurrent, SelectOverlay
from workbench.tui.widgets.keys import OrderedInput
from workbench.tui.widgets.mounted import FormButton


class FormView(Protocol):
    """What a kind may ask of the form it builds in (form.py's FormView): described
    here, not imported, so the form and its kinds do not import each other."""

    def editor(self, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]: ...
    def field(self, spec: FieldSpec, pointer: str, value: Any, label: str | None = None) -> Widget: ...
    def input(self, spec: FieldSpec, pointer: str, text: str, **options: Any) -> Widget: ...
    def text_area(self, spec: FieldSpec, pointer: str, text: str, **options: Any) -> Widget: ...
    def row(self, spec: FieldSpec, pointer: str, children: list[Widget]) -> Widget: ...
    def object_fields(self, spec: FieldSpec, pointer: str, value: dict) -> list[Widget]: ...


class FieldSelect(Select[Any]):
    """A Select choosing the value at `pointer`; its kind's `choose` reads the option."""

    pointer: str
    spec: FieldSpec

    # A form rebuilt while a Select mounts removes the Select's own parts before
    # its Mount handler or a value watcher runs; Textual's Select then queries
    # them and raises NoMatches, which closed the app (seen on a reload and on
    # save-and-quit). A Select whose parts are gone is being removed: skip.
    def _on_mount(self, event: events.Mount) -> None:
        if not self._parts_present():
            event.prevent_default()

    def _watch_value(self, value: Any) -> None:
        if not self._parts_present():
            compat.set_select_value_quietly(self, value)
            return
        super()._watch_value(value)

    def _parts_present(self) -> bool:
        try:
            self.query_one(SelectOverlay)
            self.query_one(SelectCurrent).query_one("#label")
        except NoMatches:
            return False
        return True


class FieldSwitch(Switch):
    """A Switch setting the boolean at `pointer`; it says on or off in words, not by colour alone.

    Never animated: Textual's Switch slides its knob for 0.3 s, a slide this one never
    draws (render says the state in words), and while it ran the key after a case switch
    waited for it (keystrokes.py waits for animations): the case switch's tail."""

    pointer: str
    spec: FieldSpec

    def __init__(self, value: bool = False) -> None:
        super().__init__(value=value, animate=False)

    def render(self) -> Content:
        style = self.get_component_rich_style("switch--slider")
        # The knob's side and a word: the state reads on a terminal without colour.
        return Content.from_rich_text(Text(" on ●" if self.value else "● off", style=style))

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return 5


class ItemTitle(Static):
    """The heading of an item of an object list (its number and id)."""

    pointer: str  # the item's
    spec: FieldSpec  # the list's


class KeyInput(OrderedInput):
    """The key of a key/value entry: a key, not a value, so no `pointer`. Renaming it moves the entry."""

    key_of: str  # the entry's pointer
    rename_of: str  # the key it showed


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


ABSENT: Any = _Marker("ABSENT")  # the field is not in the document (not the same as null)
CLEARED: Any = _Marker("CLEARED")  # parse/choose: the person emptied it; an optional field goes
NO_EDIT: Any = _Marker("NO_EDIT")  # parse/choose: nothing to change (half-typed, or already so)


class FieldKind:
    """One kind of field. Subclasses set `name` and implement `build`; the other
    answers have defaults that suit text-like and object-like kinds."""

    name: ClassVar[KindName]
    block: ClassVar[bool] = False  # laid out as a block of its own: a key/value entry puts it under its key

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        """The editor widgets for the value at pointer (ABSENT: not set). Widgets
        that edit it come from form.input / form.text_area, or carry `pointer`
        and `spec` (FieldSelect) or `pointer` (FieldSwitch); nested fields come from
        form.field / form.object_fields."""
        raise NotImplementedError

    def text(self, spec: FieldSpec, value: Any) -> str:
        """The text its Input shows for a value. The form takes an Input's text
        equal to this for the Input showing the value, not an edit."""
        return json_text(value)

    def parse(self, spec: FieldSpec, text: str, in_list: bool) -> Any:
        """The value of text typed into its Input or TextArea, CLEARED, or NO_EDIT.
        Text is text; emptied, an optional field (not a list item) goes."""
        return CLEARED if text == "" and not spec.required and not in_list else text

    def choose(self, spec: FieldSpec, current: Any, choice: Any) -> Any:
        """The value of an option picked in its Select (current: the value now,
        or ABSENT), CLEARED, or NO_EDIT. The option is the value."""
        # (Select.BLANK is Widget.BLANK, i.e. False: an option False or 0 reads as
        # blank too. Kept as the form always did; docs/form-fields.md, Known limits.)
        if choice is Select.NULL or choice == Select.BLANK:
            return CLEARED
        return NO_EDIT if current == choice else choice

    def body(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        """The widgets of a value shown as an item of an object list: its fields."""
        return form.object_fields(spec, pointer, value if isinstance(value, dict) else {})

    def shape(self, spec: FieldSpec, value: Any) -> Any:
        """What decides the widgets `build` makes for a value (not what they show):
        two values of the same shape are shown by the same widgets, so switching
        between them updates the widgets in place (`refresh`) instead of rebuilding."""
        return None if value is ABSENT else type(value).__name__

    def shown(self, spec: FieldSpec, value: Any) -> str:
        """The text its editor shows for a value (ABSENT: not set)."""
        return "" if value is ABSENT else self.text(spec, value)

    def refresh(self, widget: Widget, spec: FieldSpec, value: Any) -> None:
        """Show another value of the same shape in a widget `build` made (one carrying
        `pointer` and `spec`); the form holds back the change messages meanwhile."""
        if isinstance(widget, Input):
            text = self.shown(spec, value)
            if widget.value != text:
                widget.value = text
                widget.cursor_position = len(text)
        elif hasattr(widget, "load_text"):  # a TextArea: another case's text, its undo does not apply
            text = self.shown(spec, value)
            if widget.text != text:  # type: ignore[attr-defined]
                widget.load_text(text)


FIELD_KINDS: dict[str, FieldKind] = {}


def register(cls: type[FieldKind]) -> type[FieldKind]:
    """Class decorator: the form builds fields of kind `cls.name` with it."""
    if cls.name in FIELD_KINDS:
        raise ValueError(f"field kind {cls.name!r} is already registered ({type(FIELD_KINDS[cls.name]).__name__})")
    FIELD_KINDS[cls.name] = cls()
    return cls


def kind_of(spec: FieldSpec) -> FieldKind:
    try:
        return FIELD_KINDS[spec.kind]
    except KeyError:
        raise LookupError(
            f"no FieldKind is registered for kind {spec.kind!r} (workbench/tui/widgets/field_kinds.py)"
        ) from None


# ------------------------------------------------------------ scalars


@register
class TextKind(FieldKind):
    name = KindName.TEXT

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        return [form.input(spec, pointer, self.shown(spec, value), placeholder="" if spec.required else "(not set)")]


@register
class LongTextKind(FieldKind):
    name = KindName.LONG_TEXT
    block = True

    def text(self, spec: FieldSpec, value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value)

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        return [form.text_area(spec, pointer, self.shown(spec, value), soft_wrap=True, classes="long-text")]


@register
class EnumKind(FieldKind):
    name = KindName.ENUM

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        options = [(str(o), o) for o in spec.options]
        select = FieldSelect(options, allow_blank=True, value=self.chosen(spec, value), prompt="(not set)")
        select.pointer, select.spec = pointer, spec
        return [select]

    @staticmethod
    def chosen(spec: FieldSpec, value: Any) -> Any:
        return value if value is not ABSENT and _hashable(value) and value in spec.options else Select.NULL

    def refresh(self, widget: Widget, spec: FieldSpec, value: Any) -> None:
        chosen = self.chosen(spec, value)
        if isinstance(widget, Select) and widget.value != chosen:
            widget.value = chosen


@register
class BoolKind(FieldKind):
    name = KindName.BOOL

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        present = value is not ABSENT
        switch = FieldSwitch(value=bool(value) if present else bool(spec.default))
        switch.pointer, switch.spec = pointer, spec
        hint = "" if present else f"[dim](not set; default {json.dumps(spec.default)})[/]"
        return [Horizontal(switch, Static(hint, classes="inline-hint"), classes="switch-row")]

    def shape(self, spec: FieldSpec, value: Any) -> Any:
        return value is not ABSENT  # the hint "(not set; default ...)" is there or not

    def refresh(self, widget: Widget, spec: FieldSpec, value: Any) -> None:
        on = bool(value) if value is not ABSENT else bool(spec.default)
        if isinstance(widget, Switch) and widget.value != on:
            widget.value = on


class _NumberKind(FieldKind):
    input_type: ClassVar[str]  # the Input's own check while typing
    convert: ClassVar[type]

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        return [
            form.input(
                spec,
                pointer,
                self.shown(spec, value),
                placeholder=_bounds(spec) or "(not set)",
                type=self.input_type,
                valid_empty=not spec.required,  # an optional number left empty is not set, not wrong
            )
        ]

    def shown(self, spec: FieldSpec, value: Any) -> str:
        # Shown with str() (bools as JSON); text() stays JSON: for a number both are the same.
        return _scalar_text(value) if value is not ABSENT else ""

    def parse(self, spec: FieldSpec, text: str, in_list: bool) -> Any:
        if text.strip() in ("", "-"):
            return CLEARED
        try:
            return self.convert(text)
        except ValueError:
            return NO_EDIT  # mid-typing; the Input's own type check shows it


@register
class IntegerKind(_NumberKind):
    name = KindName.INTEGER
    input_type = "integer"
    convert = int


@register
class NumberKind(_NumberKind):
    name = KindName.NUMBER
    input_type = "number"
    convert = float


@register
class AnyKind(FieldKind):
    """Anything the other kinds do not cover, edited as JSON (plain text if it is not JSON)."""

    name = KindName.ANY

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        return [form.input(spec, pointer, self.shown(spec, value), placeholder="any JSON value")]

    def parse(self, spec: FieldSpec, text: str, in_list: bool) -> Any:
        try:
            return json.loads(text)
        except ValueError:
            return text


# ------------------------------------------------------------ containers


@register
class StringListKind(FieldKind):
    name = KindName.STRING_LIST
    block = True

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        rows = []
        item_spec = spec.item or FieldSpec("", KindName.TEXT)
        item_kind = kind_of(item_spec)
        for index, item in enumerate(value if isinstance(value, list) else []):
            item_pointer = ptr.child(pointer, index)
            box = form.input(item_spec, item_pointer, item_kind.text(item_spec, item))
            rows.append(
                Horizontal(
                    box,
                    FormButton(
                        "✕",
                        classes="small remove",
                        tooltip="Remove this item",
                        name=json.dumps(["remove", item_pointer]),
                    ),
                    classes="list-item",
                )
            )
        add = FormButton(
            "+ add",
            classes="small add",
            tooltip=f"Add an item to {spec.title}",
            name=json.dumps(["append", pointer, ""]),
        )
        return [Vertical(*rows, add, classes="string-list")]

    def shape(self, spec: FieldSpec, value: Any) -> Any:
        return len(value) if isinstance(value, list) else None  # one text box an item


@register
class ObjectListKind(FieldKind):
    name = KindName.OBJECT_LIST
    block = True

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        items = value if isinstance(value, list) else []
        parts = [self.item(form, spec, pointer, index, item, len(items)) for index, item in enumerate(items)]
        item_spec = spec.item or FieldSpec("", KindName.OBJECT)
        parts.append(
            FormButton(
                f"+ add {_singular(spec.title)}",  # the last part: ObjectListKind.shape counts on it
                classes="add",
                tooltip=f"Add to {spec.title}",
                name=json.dumps(["append", pointer, item_spec.blank()]),
            )
        )
        return [Vertical(*parts, classes="object-list")]

    def item(self, form: FormView, spec: FieldSpec, pointer: str, index: int, item: Any, count: int) -> Widget:
        """The row of one of `count` items: its tools (move, copy, delete) and its fields. The form builds
        an item again on its own when only it changed shape (FormView._patch)."""
        item_spec = spec.item or FieldSpec("", KindName.OBJECT)
        item_pointer = ptr.child(pointer, index)
        heading = ItemTitle(self.heading(spec, item_pointer, item), classes="item-title")
        heading.pointer, heading.spec = item_pointer, spec
        tools = Horizontal(
            heading,
            FormButton(
                "↑",
                classes="small",
                tooltip="Move up",
                name=json.dumps(["move", item_pointer, index - 1]),
                disabled=index == 0,
            ),
            FormButton(
                "↓",
                classes="small",
                tooltip="Move down",
                name=json.dumps(["move", item_pointer, index + 1]),
                disabled=index == count - 1,
            ),
            FormButton(
                "copy",
                classes="small",
                tooltip="Duplicate",
                name=json.dumps(["copy", item_pointer]),
            ),
            FormButton("✕", classes="small remove", tooltip="Delete", name=json.dumps(["remove", item_pointer])),
            classes="item-tools",
        )
        row = form.row(item_spec, item_pointer, [tools, *kind_of(item_spec).body(form, item_spec, item_pointer, item)])
        row.add_class("item")
        return row

    @staticmethod
    def recount(row: Widget, count: int) -> None:
        """An item row kept while its list grew or shrank around it: its moves say where they can go now
        (its own tools only: a list inside the item keeps its own count)."""
        tools = next((child for child in row.children if child.has_class("item-tools")), None)
        for button in tools.children if tools is not None else ():
            action = json.loads(button.name) if isinstance(button, FormButton) and button.name else None
            if action and action[0] == "move":
                button.disabled = not 0 <= action[2] < count

    @staticmethod
    def heading(spec: FieldSpec, pointer: str, item: Any) -> str:
        name = item.get("id") if isinstance(item, dict) else None
        index = int(ptr.split(pointer)[-1])
        return f"[b]{_singular(spec.title)} {index + 1}" + (f": {name}" if name not in (None, "") else "") + "[/]"

    def shape(self, spec: FieldSpec, value: Any) -> Any:
        if not isinstance(value, list):
            return None
        item_spec = spec.item or FieldSpec("", KindName.OBJECT)
        return tuple(kind_of(item_spec).shape(item_spec, item) for item in value)

    def refresh(self, widget: Widget, spec: FieldSpec, value: Any) -> None:
        if isinstance(widget, ItemTitle):
            text = self.heading(spec, widget.pointer, value)
            if widget.content != text:
                widget.update(text)


@register
class KeyValueKind(FieldKind):
    """An object with free keys: each entry a key box and the value's editor,
    beside the key, or under it when the value's kind is a block."""

    name = KindName.KEY_VALUE
    block = True

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        mapping = value if isinstance(value, dict) else {}
        rows: list[Widget] = []
        value_spec = spec.item or FieldSpec("", KindName.ANY)
        value_kind = kind_of(value_spec)
        for key, entry in mapping.items():
            entry_pointer = ptr.child(pointer, key)
            key_box = KeyInput(key, classes="key")
            key_box.key_of, key_box.rename_of = entry_pointer, key
            remove = FormButton(
                "✕", classes="small remove", tooltip="Remove this entry", name=json.dumps(["remove", entry_pointer])
            )
            if value_kind.block:
                inner = form.field(value_spec, entry_pointer, entry, label="value")
                rows.append(Vertical(Horizontal(key_box, remove, classes="kv-head"), inner, classes="kv-entry"))
            else:
                editors = form.editor(value_spec, entry_pointer, entry)
                rows.append(Horizontal(key_box, *editors, remove, classes="kv-row"))
        add = FormButton(
            "+ add entry",
            classes="small add",
            tooltip=f"Add a key to {spec.title}",
            name=json.dumps(["set", ptr.child(pointer, _fresh_key(mapping)), value_spec.blank()]),
        )
        return [Vertical(*rows, add, classes="key-value")]

    def shape(self, spec: FieldSpec, value: Any) -> Any:
        if not isinstance(value, dict):
            return None
        value_spec = spec.item or FieldSpec("", KindName.ANY)
        return tuple((key, kind_of(value_spec).shape(value_spec, entry)) for key, entry in value.items())


@register
class ObjectKind(FieldKind):
    """Named fields in a group; an optional object not set yet is an add button."""

    name = KindName.OBJECT
    block = True

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        if value is ABSENT:
            return [FormButton(f"+ add {spec.title}", classes="add", name=json.dumps(["set", pointer, spec.blank()]))]
        group = Vertical(*self.body(form, spec, pointer, value), classes="group")
        remove = (
            []
            if spec.required
            else [FormButton("remove", classes="small remove", name=json.dumps(["remove", pointer]))]
        )
        return [group, *remove]

    def shape(self, spec: FieldSpec, value: Any) -> Any:
        return None if value is ABSENT else object_shape(spec, value)


@register
class KindsKind(FieldKind):
    """A oneOf: a picker of the kind, then the fields of the chosen kind."""

    name = KindName.KINDS

    def build(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        return self.body(form, spec, pointer, None if value is ABSENT else value)

    def body(self, form: FormView, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        current = spec.kind_for(value)
        picker = FieldSelect(
            [(k.label, k.label) for k in spec.kinds],
            value=current.label if current else Select.NULL,
            allow_blank=current is None,
            prompt="(choose a kind)",
            classes="kind-picker",
        )
        picker.pointer, picker.spec = pointer, spec
        label = Label("[b]kind[/]", classes="field-label")
        if current is None:
            note = Static("[i $error]matches none of the kinds: choose one to fix it[/]", classes="note")
            return [label, picker, note]
        shown = self._shown(current)
        data = value if isinstance(value, dict) else {}
        return [label, picker, *form.object_fields(shown, pointer, {k: v for k, v in data.items() if k != current.key})]

    def shape(self, spec: FieldSpec, value: Any) -> Any:
        current = spec.kind_for(None if value is ABSENT else value)
        if current is None:
            return None
        data = value if isinstance(value, dict) else {}
        return current.label, object_shape(self._shown(current), {k: v for k, v in data.items() if k != current.key})

    @staticmethod
    def _shown(current: Kind) -> FieldSpec:
        fields = [f for f in current.spec.fields if f.name != current.key]
        return FieldSpec(
            current.label, KindName.OBJECT, fields=tuple(fields), notes=current.spec.notes, closed=current.spec.closed
        )

    def refresh(self, widget: Widget, spec: FieldSpec, value: Any) -> None:
        current = spec.kind_for(None if value is ABSENT else value)
        chosen = current.label if current else Select.NULL
        if isinstance(widget, Select) and widget.value != chosen:
            widget.value = chosen

    def choose(self, spec: FieldSpec, current: Any, choice: Any) -> Any:
        """Picking another kind re-makes the value as that kind (switch_kind)."""
        target = next((k for k in spec.kinds if k.label == choice), None)
        if target is None or spec.kind_for(current) == target:
            return NO_EDIT
        return switch_kind(current if isinstance(current, dict) else {}, target)


# ------------------------------------------------------------ helpers


def object_shape(spec: FieldSpec, value: Any) -> Any:
    """The shape of an object's fields as the form lays them out (FieldKind.shape):
    each member's, in the value's order (unknown members are edited as JSON), and
    how many items a list edited elsewhere has (its count is shown)."""
    if not isinstance(value, dict):
        return None
    fields = {f.name: f for f in spec.fields}
    present = tuple(
        (key, kind_of(fields[key]).shape(fields[key], entry) if key in fields else "?")
        for key, entry in value.items()
        if key not in spec.elsewhere
    )
    counted = tuple(len(value[k]) if isinstance(value.get(k), list) else None for k in spec.elsewhere)
    return present, counted


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def json_text(value: Any) -> str:
    """A value as the text of an Input: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _scalar_text(value: Any) -> str:
    return str(value) if not isinstance(value, bool) else json.dumps(value)


def _bounds(spec: FieldSpec) -> str:
    low = "" if spec.minimum is None else f"{spec.minimum:g}"
    high = "" if spec.maximum is None else f"{spec.maximum:g}"
    return f"{low}..{high}" if low or high else ""


def _singular(title: str) -> str:
    return title[:-1] if title.endswith("s") and not title.endswith("ss") else title


def _fresh_key(mapping: dict) -> str:
    index = 1
    while f"KEY{index}" in mapping:
        index += 1
    return f"KEY{index}"
