"""The form of one case (or of a suite's own fields), rendered from field specs.

Nothing here knows a field by name: every widget comes from a FieldSpec kind.
Edits leave as Edit messages carrying pointer operations; the screen applies
them to the session and tells the form which fields are now wrong."""

from __future__ import annotations

import json
from typing import Any

from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static, Switch, TextArea

from workbench.formats import pointer as ptr
from workbench.formats.edits import Batch, Insert, Move, Operation, Remove, Set
from workbench.formats.fields import (ANY, BOOL, ENUM, INTEGER, KEY_VALUE, KINDS, LONG_TEXT, NUMBER, OBJECT,
                                      OBJECT_LIST, STRING_LIST, FieldSpec, switch_kind)
from workbench.validate.diagnostic import Diagnostic

_ABSENT = object()


class Edit(Message):
    """A change the person made in the form."""

    def __init__(self, operation: Operation, coalesce: bool = False, structural: bool = False) -> None:
        super().__init__()
        self.operation = operation
        self.coalesce = coalesce  # typing: one undo step per field, not per key
        self.structural = structural  # the form must be rebuilt


class FieldInput(Input):
    """An Input of the form. Its changes go straight to the form instead of
    bubbling through every container (each hop is a queue: keystroke latency)."""

    form: FormView | None = None

    def on_input_changed(self, event: Input.Changed) -> None:
        if self.form is not None:
            self.form.on_input_changed(event)


class FieldTextArea(TextArea):
    form: FormView | None = None

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self.form is not None:
            self.form.on_text_area_changed(event)


class FieldRow(Vertical):
    """One field: its label, its editor, its help, and its problem if any."""

    def __init__(self, spec: FieldSpec, pointer: str, children: list[Widget]) -> None:
        self.label = next((c for c in children if isinstance(c, Label)), None)
        self.problem = Static("", classes="field-problem")
        self.problem.display = False
        super().__init__(*children, self.problem, classes="field")
        self.spec = spec
        self.pointer = pointer
        if spec.hidden_when:
            self.add_class("conditional")

    @staticmethod
    def label_for(spec: FieldSpec, text: str | None = None, value: Any = None) -> Label:
        return Label(FieldRow.label_text(spec, text, value), classes="field-label")

    @staticmethod
    def label_text(spec: FieldSpec, text: str | None, value: Any) -> str:
        required = " [b red]*[/]" if spec.required else ""
        notes = "".join(f"  [i $warning]({note})[/]" for note in spec.notes)
        count = ""
        if spec.max_length:  # a live count against the limit
            length = len(value) if isinstance(value, str) else 0
            colour = "$error" if length > spec.max_length else "$foreground 60%"
            count = f"  [{colour}]{length} / {spec.max_length}[/]"
        return f"[b]{text if text is not None else spec.title}[/]{required}{count}{notes}"

    def update_count(self, value: Any) -> None:
        if self.spec.max_length and self.label is not None:
            self.label.update(self.label_text(self.spec, self.spec.title, value))

    def set_problem(self, diagnostics: list[Diagnostic]) -> None:
        shown = [(d.severity, d.message) for d in diagnostics]
        if shown == getattr(self, "_shown", []):
            return  # unchanged: touching classes or text would cost a layout pass
        self._shown = shown
        errors = any(d.severity == "error" for d in diagnostics)
        self.set_class(bool(diagnostics) and errors, "-error")
        self.set_class(bool(diagnostics) and not errors, "-warning")
        if diagnostics:
            self.problem.update("\n".join(f"{'✗' if d.severity == 'error' else '!'} {d.message}"
                                          for d in diagnostics))
        self.problem.display = bool(diagnostics)


class FormView(VerticalScroll):
    """The editor pane. `show` renders a value against its spec at a pointer."""

    can_focus = False  # Tab goes straight to the first field

    class Rendered(Message):
        """The form for the latest show() is on screen."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._generation = 0
        self.on_edit = None  # set by the screen: called with each Edit
        self.rows: dict[str, FieldRow] = {}
        self.spec: FieldSpec | None = None
        self.pointer = ""
        self.value: Any = None
        self.title = ""

    def show(self, title: str, spec: FieldSpec | None, pointer: str, value: Any,
             diagnostics: list[Diagnostic] | None = None, focus: str | None = None) -> None:
        """Render a form. Renders are serialised: when several are asked for in a
        row, only the last one is built (a half-mounted form is never reused)."""
        self.spec, self.pointer, self.value, self.title = spec, pointer, value, title
        self._generation += 1
        self.run_worker(self._build_form(self._generation, diagnostics or [], focus), group="form", exclusive=True,
                        exit_on_error=False)

    async def _build_form(self, generation: int, diagnostics: list[Diagnostic], focus: str | None) -> None:
        async with self.batch():
            await self.remove_children()
            if generation != self._generation:
                return
            self.rows = {}
            widgets: list[Widget] = [Static(self.title, classes="form-title")]
            if self.spec is not None:
                if self.spec.help:
                    widgets.append(Static(self.spec.help, classes="help"))
                value = self.value if isinstance(self.value, dict) else {}
                widgets.extend(self.object_fields(self.spec, self.pointer, value))
            await self.mount_all(widgets)
        self.apply_conditions()
        self.mark(diagnostics)
        if focus:
            self.call_after_refresh(self.focus_pointer, focus)
        self.post_message(self.Rendered())

    # ------------------------------------------------------------ building

    def object_fields(self, spec: FieldSpec, pointer: str, value: dict) -> list[Widget]:
        widgets: list[Widget] = [Static(f"[i]{note}[/]", classes="note") for note in spec.notes]
        for field in spec.fields:
            widgets.append(self.field(field, ptr.child(pointer, field.name), value.get(field.name, _ABSENT)))
        known = {f.name for f in spec.fields}
        for key, extra in value.items():
            if key not in known:  # never dropped: shown, editable as JSON, saved as it was
                note = "not in the schema" + ("; the schema forbids it" if spec.closed else "; kept as it is")
                unknown = FieldSpec(key, ANY, help=note)
                widgets.append(self.field(unknown, ptr.child(pointer, key), extra))
        return widgets

    def field(self, spec: FieldSpec, pointer: str, value: Any, label: str | None = None) -> FieldRow:
        children: list[Widget] = [FieldRow.label_for(spec, label, value if value is not _ABSENT else None),
                                  *self.editor(spec, pointer, value)]
        if spec.help:
            children.append(Static(spec.help, classes="help"))
        row = FieldRow(spec, pointer, children)
        self.rows[pointer] = row
        return row

    def editor(self, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        present = value is not _ABSENT
        kind = spec.kind
        if spec.const is not None:
            return [Static(json.dumps(spec.const), classes="const")]
        if kind in (LONG_TEXT,):
            area = FieldTextArea(value if isinstance(value, str) else ("" if not present else json.dumps(value)),
                                 soft_wrap=True, classes="long-text")
            area.form = self
            area.pointer = pointer
            return [area]
        if kind == ENUM:
            options = [(str(o), o) for o in spec.options]
            select = Select(options, allow_blank=True, value=value if present and value in spec.options else Select.NULL,
                            prompt="(not set)")
            select.pointer = pointer
            return [select]
        if kind == BOOL:
            switch = Switch(value=bool(value) if present else bool(spec.default))
            switch.pointer = pointer
            hint = "" if present else f"[dim](not set; default {json.dumps(spec.default)})[/]"
            return [Horizontal(switch, Static(hint, classes="inline-hint"), classes="switch-row")]
        if kind in (INTEGER, NUMBER):
            bounds = _bounds(spec)
            box = FieldInput(_scalar_text(value) if present else "", placeholder=bounds or "(not set)",
                             type="integer" if kind == INTEGER else "number")
            box.form = self
            box.pointer, box.spec = pointer, spec
            return [box]
        if kind == STRING_LIST:
            return [self.string_list(spec, pointer, value if isinstance(value, list) else [])]
        if kind == OBJECT_LIST:
            return [self.object_list(spec, pointer, value if isinstance(value, list) else [])]
        if kind == KEY_VALUE:
            return [self.key_value(spec, pointer, value if isinstance(value, dict) else {})]
        if kind == OBJECT:
            if not present:
                return [Button(f"+ add {spec.title}", classes="add", name=json.dumps(["set", pointer, spec.blank()]))]
            group = Vertical(*self.object_fields(spec, pointer, value if isinstance(value, dict) else {}),
                             classes="group")
            remove = [] if spec.required else [Button("remove", classes="small remove", name=json.dumps(["remove", pointer]))]
            return [group, *remove]
        if kind == KINDS:
            return self.kinds(spec, pointer, value if present else None)
        if kind == ANY:
            box = FieldInput(_json_text(value) if present else "", placeholder="any JSON value")
            box.form = self
            box.pointer, box.spec = pointer, spec
            return [box]
        box = FieldInput(value if isinstance(value, str) else ("" if not present else _json_text(value)),
                         placeholder="" if spec.required else "(not set)")
        box.form = self
        box.pointer, box.spec = pointer, spec
        return [box]

    def string_list(self, spec: FieldSpec, pointer: str, items: list) -> Widget:
        rows = []
        for index, item in enumerate(items):
            item_pointer = ptr.child(pointer, index)
            box = FieldInput(item if isinstance(item, str) else _json_text(item))
            box.form = self
            box.pointer, box.spec = item_pointer, spec.item or FieldSpec("", "text")
            rows.append(Horizontal(box, Button("✕", classes="small remove", tooltip="Remove this item",
                                               name=json.dumps(["remove", item_pointer])), classes="list-item"))
        add = Button("+ add", classes="small add", tooltip=f"Add an item to {spec.title}",
                     name=json.dumps(["append", pointer, ""]))
        return Vertical(*rows, add, classes="string-list")

    def object_list(self, spec: FieldSpec, pointer: str, items: list) -> Widget:
        parts: list[Widget] = []
        item_spec = spec.item or FieldSpec("", OBJECT)
        for index, item in enumerate(items):
            item_pointer = ptr.child(pointer, index)
            name = item.get("id") if isinstance(item, dict) else None
            heading = f"{_singular(spec.title)} {index + 1}" + (f": {name}" if name not in (None, "") else "")
            tools = Horizontal(
                Static(f"[b]{heading}[/]", classes="item-title"),
                Button("↑", classes="small", tooltip="Move up", name=json.dumps(["move", item_pointer, index - 1]),
                       disabled=index == 0),
                Button("↓", classes="small", tooltip="Move down", name=json.dumps(["move", item_pointer, index + 1]),
                       disabled=index == len(items) - 1),
                Button("copy", classes="small", tooltip="Duplicate", name=json.dumps(["insert", ptr.child(pointer, index + 1), item])),
                Button("✕", classes="small remove", tooltip="Delete", name=json.dumps(["remove", item_pointer])),
                classes="item-tools")
            if item_spec.kind == KINDS:
                body = self.kinds(item_spec, item_pointer, item)
            else:
                body = self.object_fields(item_spec, item_pointer, item if isinstance(item, dict) else {})
            row = FieldRow(item_spec, item_pointer, [tools, *body])
            row.add_class("item")
            self.rows[item_pointer] = row
            parts.append(row)
        blank = item_spec.blank()
        parts.append(Button(f"+ add {_singular(spec.title)}", classes="add", tooltip=f"Add to {spec.title}",
                            name=json.dumps(["append", pointer, blank])))
        return Vertical(*parts, classes="object-list")

    def kinds(self, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        current = spec.kind_for(value)
        picker = Select([(k.label, k.label) for k in spec.kinds], value=current.label if current else Select.NULL,
                        allow_blank=current is None, prompt="(choose a kind)", classes="kind-picker")
        picker.pointer, picker.spec = pointer, spec
        label = Label("[b]kind[/]", classes="field-label")
        if current is None:
            note = Static("[i $error]matches none of the kinds: choose one to fix it[/]", classes="note")
            return [label, picker, note]
        fields = [f for f in current.spec.fields if f.name != current.key]
        shown = FieldSpec(current.label, OBJECT, fields=tuple(fields), notes=current.spec.notes,
                          closed=current.spec.closed)
        data = value if isinstance(value, dict) else {}
        body = self.object_fields(shown, pointer, {k: v for k, v in data.items() if k != current.key})
        return [label, picker, *body]

    def key_value(self, spec: FieldSpec, pointer: str, mapping: dict) -> Widget:
        rows: list[Widget] = []
        value_spec = spec.item or FieldSpec("", ANY)
        for key, value in mapping.items():
            entry_pointer = ptr.child(pointer, key)
            key_box = Input(key, classes="key")
            key_box.key_of, key_box.rename_of = entry_pointer, key  # a key, not a value: no `pointer`
            remove = Button("✕", classes="small remove", tooltip="Remove this entry",
                            name=json.dumps(["remove", entry_pointer]))
            if value_spec.kind in (OBJECT, STRING_LIST, KEY_VALUE, OBJECT_LIST, LONG_TEXT):
                inner = self.field(value_spec, entry_pointer, value, label="value")
                rows.append(Vertical(Horizontal(key_box, remove, classes="kv-head"), inner, classes="kv-entry"))
            else:
                editors = self.editor(value_spec, entry_pointer, value)
                rows.append(Horizontal(key_box, *editors, remove, classes="kv-row"))
        new_key = _fresh_key(mapping)
        add = Button("+ add entry", classes="small add", tooltip=f"Add a key to {spec.title}",
                     name=json.dumps(["set", ptr.child(pointer, new_key), value_spec.blank()]))
        return Vertical(*rows, add, classes="key-value")

    # ------------------------------------------------------------ events -> edits

    def on_input_changed(self, event: Input.Changed) -> None:
        widget = event.input
        pointer = getattr(widget, "pointer", None)
        if pointer is None:
            return
        event.stop()
        spec: FieldSpec = getattr(widget, "spec", FieldSpec("", "text"))
        text = event.value
        current = self._value_at(pointer, _ABSENT)
        if current is not _ABSENT and text == (current if isinstance(current, str) else _json_text(current)):
            return  # the widget showing its value, not the person changing it
        if current is _ABSENT and text == "":
            return
        if spec.kind in (INTEGER, NUMBER):
            if text.strip() in ("", "-"):
                self._remove_if_optional(spec, pointer)
                return
            try:
                number: Any = int(text) if spec.kind == INTEGER else float(text)
            except ValueError:
                return  # mid-typing; the Input's own type check shows it
            self.emit(Edit(Set(pointer, number), coalesce=True))
        elif spec.kind == ANY:
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = text
            self.emit(Edit(Set(pointer, parsed), coalesce=True))
        elif text == "" and not spec.required and not _is_item(pointer):
            self._remove_if_optional(spec, pointer)
        else:
            self.emit(Edit(Set(pointer, text), coalesce=True))
        if pointer in self.rows:
            self.rows[pointer].update_count(text)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._maybe_rename(event.input)

    def on_descendant_blur(self, event) -> None:
        widget = event.widget if hasattr(event, "widget") else None
        if isinstance(widget, Input):
            self._maybe_rename(widget)

    def _maybe_rename(self, widget: Input) -> None:
        old = getattr(widget, "rename_of", None)
        if old is None or widget.value == old or not widget.value:
            return
        pointer = widget.key_of
        parent = ptr.join(ptr.split(pointer)[:-1])
        container = self._value_at(parent)
        if not isinstance(container, dict) or widget.value in container:
            return
        position = list(container).index(old)
        operation = Batch([Remove(pointer), Insert(ptr.child(parent, widget.value), container[old], position)],
                          "rename")
        self.emit(Edit(operation, structural=True))

    def _remove_if_optional(self, spec: FieldSpec, pointer: str) -> None:
        container = self._value_at(ptr.join(ptr.split(pointer)[:-1]))
        key = ptr.split(pointer)[-1]
        if isinstance(container, dict) and key in container:
            if spec.required:
                self.emit(Edit(Set(pointer, ""), coalesce=True))
            else:
                self.emit(Edit(Remove(pointer)))

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        pointer = getattr(event.text_area, "pointer", None)
        if pointer is None:
            return
        event.stop()
        text = event.text_area.text
        if pointer in self.rows:
            self.rows[pointer].update_count(text)
        if text == "" and not self._spec_required(pointer) and not _is_item(pointer):
            self._remove_if_optional(FieldSpec("", "text"), pointer)
        elif self._value_at(pointer) != text:
            self.emit(Edit(Set(pointer, text), coalesce=True))

    def on_select_changed(self, event: Select.Changed) -> None:
        select = event.select
        pointer = getattr(select, "pointer", None)
        if pointer is None:
            return
        event.stop()
        spec = getattr(select, "spec", None)
        if spec is not None and spec.kind == KINDS:
            target = next((k for k in spec.kinds if k.label == event.value), None)
            current = self._value_at(pointer)
            if target is None or spec.kind_for(current) == target:
                return
            new_value = switch_kind(current if isinstance(current, dict) else {}, target)
            self.emit(Edit(Set(pointer, new_value), structural=True))
            return
        current = self._value_at(pointer, _ABSENT)
        if event.value is Select.NULL or event.value == Select.BLANK:
            if current is not _ABSENT:
                self.emit(Edit(Remove(pointer), structural=True))
        elif current != event.value:
            self.emit(Edit(Set(pointer, event.value), structural=True))

    def on_switch_changed(self, event: Switch.Changed) -> None:
        pointer = getattr(event.switch, "pointer", None)
        if pointer is None:
            return
        event.stop()
        if self._value_at(pointer, _ABSENT) != event.value:
            self.emit(Edit(Set(pointer, event.value)))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if not event.button.name:
            return
        event.stop()
        action, pointer, *rest = json.loads(event.button.name)
        if action == "remove":
            operation: Operation = Remove(pointer)
        elif action == "append":
            if isinstance(self._value_at(pointer, _ABSENT), list):
                operation = Insert(ptr.child(pointer, "-"), rest[0])
            else:  # the list is not there yet: the first item creates it
                operation = Set(pointer, [rest[0]])
        elif action == "insert":
            operation = Insert(pointer, rest[0])
        elif action == "move":
            operation = Move(pointer, rest[0])
        else:
            operation = Set(pointer, rest[0])
        self.emit(Edit(operation, structural=True))

    # ------------------------------------------------------------ state

    def emit(self, edit: Edit) -> None:
        """Hand an edit to whoever applies it: directly when the screen asked for
        that (the fast path for typing), else as a message."""
        if self.on_edit is not None:
            self.on_edit(edit)
        else:
            self.post_message(edit)

    def _value_at(self, pointer: str, default: Any = None) -> Any:
        tokens = ptr.split(pointer)
        base = ptr.split(self.pointer)
        try:
            return ptr.resolve(self.value, tokens[len(base):])
        except (KeyError, IndexError, TypeError, ValueError):
            return default

    def _spec_required(self, pointer: str) -> bool:
        row = self.rows.get(pointer)
        return bool(row and row.spec.required)

    def sync_value(self, value: Any) -> None:
        """The case's value after an edit made here (no re-render needed)."""
        self.value = value
        self.apply_conditions()

    def apply_conditions(self) -> None:
        """Hide fields whose rule says they do not apply (and show why elsewhere)."""
        for pointer, row in self.rows.items():
            condition = row.spec.hidden_when
            if not condition:
                continue
            sibling = ptr.join(ptr.split(pointer)[:-1] + (condition[0],))
            applies = self._value_at(sibling, _ABSENT) != condition[1]
            present = self._value_at(pointer, _ABSENT) is not _ABSENT
            row.display = applies or present  # a value that should not be there stays visible, flagged

    def mark(self, diagnostics: list[Diagnostic]) -> None:
        """Show each problem on the deepest field it belongs to."""
        by_row: dict[str, list[Diagnostic]] = {pointer: [] for pointer in self.rows}
        stray = []
        for diagnostic in diagnostics:
            tokens = ptr.split(diagnostic.path)
            while tokens and ptr.join(tokens) not in by_row:
                tokens = tokens[:-1]
            target = ptr.join(tokens)
            if target in by_row:
                by_row[target].append(diagnostic)
            else:
                stray.append(diagnostic)
        for pointer, row in self.rows.items():
            row.set_problem(by_row[pointer])

    def focus_pointer(self, pointer: str) -> bool:
        tokens = ptr.split(pointer)
        while tokens and ptr.join(tokens) not in self.rows:
            tokens = tokens[:-1]
        row = self.rows.get(ptr.join(tokens))
        if row is None:
            return False
        row.display = True
        focusable = next((w for w in row.query("*") if w.focusable), None)
        self.scroll_to_widget(row, animate=False, top=True)
        if focusable is not None:
            focusable.focus()
        return True


def _singular(title: str) -> str:
    return title[:-1] if title.endswith("s") and not title.endswith("ss") else title


def _is_item(pointer: str) -> bool:
    return ptr.split(pointer)[-1].isdigit() if pointer else False


def _bounds(spec: FieldSpec) -> str:
    low = "" if spec.minimum is None else f"{spec.minimum:g}"
    high = "" if spec.maximum is None else f"{spec.maximum:g}"
    return f"{low}..{high}" if low or high else ""


def _scalar_text(value: Any) -> str:
    return str(value) if not isinstance(value, bool) else json.dumps(value)


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _fresh_key(mapping: dict) -> str:
    index = 1
    while f"KEY{index}" in mapping:
        index += 1
    return f"KEY{index}"
