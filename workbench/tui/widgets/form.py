"""The form of one case (or of a suite's own fields), rendered from field specs.

Nothing here knows a field by name, nor a kind of field by its name: every
editor comes from the FieldKind registered for its spec's kind (field_kinds.py).
Edits leave as Edit messages carrying pointer operations; the screen applies
them to the session and tells the form which fields are now wrong."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Collection, Iterator
from functools import partial
from typing import Any

from textual import events
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static, Switch, TextArea

from workbench.formats import pointer as ptr
from workbench.formats.edits import Batch, Insert, Move, Operation, Remove, Set
from workbench.formats.fields import FieldSpec, KindName, copy_of
from workbench.tui import compat
from workbench.tui.keystrokes import rebuild_between_keys
from workbench.tui.widgets.field_kinds import ABSENT, CLEARED, NO_EDIT, KeyInput, ObjectListKind, kind_of
from workbench.tui.widgets.keys import KeysInOrder
from workbench.tui.widgets.mounted import StyledWhenMounted
from workbench.tui.widgets.steady import SteadyInput, update_in_place
from workbench.tui.widgets.wrapped import RepaintedWhenResized
from workbench.validate.diagnostic import Diagnostic

Part = tuple[Any, Callable[[], Widget]]  # a top-level widget of a form: (what decides it, how to build it)


class Edit(Message):
    """A change the person made in the form."""

    def __init__(self, operation: Operation, coalesce: bool = False, structural: bool = False) -> None:
        super().__init__()
        self.operation = operation
        self.coalesce = coalesce  # typing: one undo step per field, not per key
        self.structural = structural  # the form must be rebuilt
        self.owner = ""  # the file the form on screen shows: the edit is to that file, whatever is open now


class FieldInput(KeysInOrder, SteadyInput):
    """An Input of the form. Its changes go straight to the form instead of
    bubbling through every container (each hop is a queue: keystroke latency)."""

    form: FormView | None = None
    pointer: str  # the value it edits
    spec: FieldSpec

    def on_input_changed(self, event: Input.Changed) -> None:
        if self.form is not None:
            self.form.on_input_changed(event)


class FieldTextArea(KeysInOrder, RepaintedWhenResized, TextArea):
    form: FormView | None = None
    pointer: str  # the value it edits
    spec: FieldSpec

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """Its height (auto, between the CSS bounds) at the width it is being laid out at: its text wrapped
        there. Textual's is the wrap of the width it had before, none for a new field, so a form's first
        layout gave each long text one line and its Resize laid the whole screen out twice more."""
        if not self.soft_wrap or width <= 0:
            return super().get_content_height(container, viewport, width)
        wrap = max(0, width - self.gutter_width - 1)  # as TextArea.wrap_width: its gutter, a cell for the cursor
        height = self._wrapped_height(wrap)
        limit = compat.most_content_lines(self, container)
        if limit is not None and height > limit:
            # more lines than it shows: its scrollbar takes a column of the wrap, as TextArea's own rewrap does
            height = self._wrapped_height(max(0, wrap - self.styles.scrollbar_size_vertical))
        # as its Resize will set it (no layout asked for again): what it shows now is what it holds
        self.set_reactive(Widget.virtual_size, Size(0, height))
        return height

    def _wrapped_height(self, width: int) -> int:
        """Its lines wrapped at width: wrapped again only at another width (its edits keep the wrap up to
        date), so a layout of the screen does not wrap every long text of the form again (a megabyte of
        text is ~0.1 s of wrapping)."""
        if compat.wrapped_at(self) != (width, self.indent_width):
            self.wrapped_document.wrap(width, tab_width=self.indent_width)
        return self.wrapped_document.height

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self.form is not None:
            self.form.on_text_area_changed(event)


class FieldRow(StyledWhenMounted, Vertical):
    """One field: its label, its editor, its help, and its problem if any. The problem's
    line is the gap below the field, there while it is empty: a problem coming or
    going changes no size, so nothing is laid out again (a short screen, which has
    no gaps, hides it while empty)."""

    def __init__(self, spec: FieldSpec, pointer: str, children: list[Widget]) -> None:
        self.label = next((c for c in children if isinstance(c, Label)), None)
        self.problem = Static("", classes="field-problem -clear")
        super().__init__(*children, self.problem, classes="field")
        self.spec = spec
        self.pointer = pointer
        self.exact = False  # shows only problems of its own value, none of what it holds
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
        self.problem.set_class(not diagnostics, "-clear")
        update_in_place(
            self.problem, "\n".join(f"{'✗' if d.severity == 'error' else '!'} {d.message}" for d in diagnostics)
        )


class FormView(VerticalScroll):
    """The editor pane. `show` renders a value against its spec at a pointer."""

    can_focus = False  # Tab goes straight to the first field

    class Rendered(Message):
        """The form for the latest show() is on screen."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._generation = 0
        self._building = False  # a builder is running; it builds again while show() asks for newer forms
        self._pending: tuple[list[Diagnostic], str | None] = ([], None)
        self.on_edit: Callable[[Edit], None] | None = None  # set by the screen: called with each Edit
        # Set by the screen: the document's value at an absolute pointer (or the default).
        # Edits are read against it, not against the case asked for last: a field of the
        # form still on screen while the next one is built edits what it shows.
        self.read: Callable[[str, Any, str], Any] | None = None
        self.rows: dict[str, FieldRow] = {}
        self.spec: FieldSpec | None = None
        self.pointer = ""
        self.value: Any = None
        self.title = ""
        self._built_pointer = ""  # the pointer of the case the widgets on screen were built for
        self.owner = ""  # set by the screen before show(): the file of the form asked for
        self._built_owner = ""  # the file the widgets on screen show
        self._building_now = False  # between removing the old widgets and mounting the new
        self._parked: str | None = None  # the field to focus once the rebuild is on screen
        self._added: str | None = None  # the item "+ add" made: it opens on its first empty required field
        self._built_shape: Any = None  # the shape of the form on screen (None: build anew)
        self._built: asyncio.Future[None] | None = None  # done once the form being built is on screen

    def watch_has_focus(self, _has_focus: bool) -> None:
        """The form itself holds the focus only while it is built again (_park_focus), and it alone is
        restyled when it takes the focus or gives it back. Textual restyles every widget it holds (~40 ms
        of CPU each way on the demo's case form), right only were a rule to select a widget inside a
        focused form, and none does (tests/tui/test_form_patch.py)."""
        self.app.stylesheet.update_nodes([self], animate=True)

    def show(
        self,
        title: str,
        spec: FieldSpec | None,
        pointer: str,
        value: Any,
        diagnostics: list[Diagnostic] | None = None,
        focus: str | None = None,
    ) -> None:
        """Render a form. Renders are serialised: when several are asked for in a
        row, only the last one is built (a half-mounted form is never reused).

        A build is never cancelled: cancelling one while it awaits the removal or
        mounting of widgets let the cancellation reach the app's own task, which
        Textual takes for a normal stop (an arrow key held in the case list closed
        the app, unsaved edits and all). One builder runs at a time instead, and
        builds again, the latest only, while newer forms were asked for."""
        self.spec, self.pointer, self.value, self.title = spec, pointer, value, title
        self._generation += 1
        self._pending = (diagnostics or [], focus)
        if self._building:
            return  # the running builder builds this one next
        if self._reuse(diagnostics or [], focus):
            return  # same shape: updated in place, at once (no window where keys reach an old form)
        self._building = True
        self._park_focus()
        self._built = asyncio.get_running_loop().create_future()
        # Keys typed meanwhile are for the new form; keys already typed come first.
        rebuild_between_keys(self, self._built, self._start_building)

    def _start_building(self) -> None:
        self.run_worker(self._build_latest(), group="form", exit_on_error=False)

    async def _build_latest(self) -> None:
        focus: str | None = None
        try:
            while True:
                generation = self._generation
                diagnostics, focus = self._pending
                if not self._reuse(diagnostics, focus):
                    await self._build_form(generation, diagnostics, focus)
                if generation == self._generation:  # nothing newer was asked for meanwhile
                    break
        finally:
            self._building = False
            self._unpark_focus(focus)
            if self._built is not None and not self._built.done():
                self._built.set_result(None)

    async def _build_form(self, generation: int, diagnostics: list[Diagnostic], focus: str | None) -> None:
        self._building_now = True
        try:
            parts = self._parts()
            changed = self._changed_parts(parts)
            if changed is not None:  # the same form but for some rows: those alone are built again
                await self._patch(parts, changed)
            elif not await self._build_anew(generation, parts):
                return  # a newer form was asked for meanwhile: the builder builds that one
        finally:
            self._building_now = False
        self._after_build(diagnostics, None)  # the builder gives the focus once it is done

    async def _build_anew(self, generation: int, parts: list[Part]) -> bool:
        """Every widget of the form asked for (its parts), the old ones removed. False: abandoned for a
        newer form (the parts are those of the generation asked for: show() changes both together)."""
        async with self.batch():
            await self.remove_children()
            if generation != self._generation:
                return False
            self.rows = {}
            widgets = [build() for _key, build in parts]
            first, rest = widgets, list[Widget]()
            if self._built_shape is None and self._parked is None:
                # The editor's first form only: a rebuild while keys are typed into the
                # case list was seen to send later keys elsewhere (tests/terminal/test_bursts.py).
                first, rest = _first_screenful(widgets, self.size.height or self.app.size.height)
            self._built_pointer, self._built_shape = self.pointer, self._shape(parts)
            self._built_owner = self.owner
            await self.mount_all(first)
        if rest:
            # The rest is built once the first screenful is painted: mounting, styling
            # and laying out a few hundred widgets was most of a cold start's wait.
            await self._laid_out()
            async with self.batch():
                await self.mount_all(rest)
        return True

    def _after_build(self, diagnostics: list[Diagnostic], focus: str | None) -> None:
        self.apply_conditions()
        self.mark(diagnostics)
        if focus is not None:
            self.focus_pointer(focus)
        self.post_message(self.Rendered())

    # ------------------------------------------------------------ the focus across a rebuild

    def _park_focus(self) -> None:
        """Until the new form is on screen, the form itself keeps the focus when a
        field of the old one had it (removed, the field would hand it to whatever
        Textual picks next, the case list or the problems); the field at the same
        place in the new form gets it back. Keys typed meanwhile wait for the new
        form (rebuild_between_keys), so none reaches the old one or the case list."""
        focused = self.screen.focused if self.is_attached else None
        if focused is None or self not in focused.ancestors:
            return
        row = next((w for w in focused.ancestors_with_self if isinstance(w, FieldRow)), None)
        pointer = getattr(focused, "pointer", None) or (row.pointer if row else None)
        self._parked = self._rebase(pointer) if pointer is not None else ""
        self.can_focus, self.can_focus_children = True, False
        self.screen.set_focus(self, scroll_visible=False)

    def _unpark_focus(self, focus: str | None) -> None:
        """The focus, once the new form is on screen: the field asked for, else the
        one parked (the form's first field when it is gone), else where it is."""
        parked, self._parked = self._parked, None
        self.can_focus, self.can_focus_children = False, True
        if not self.is_attached:
            return
        if parked is not None and self.screen.focused is self:
            if not self.focus_pointer(focus or parked):
                self.screen.set_focus(None)
        elif focus is not None:
            self.focus_pointer(focus)

    def _rebase(self, pointer: str) -> str:
        """A pointer of the form on screen, moved to the case shown now (same place in it)."""
        old, new = ptr.split(self._built_pointer), ptr.split(self.pointer)
        tokens = ptr.split(pointer)
        if tokens[: len(old)] == old:
            return ptr.join(new + tokens[len(old) :])
        return pointer

    # ------------------------------------------------------------ reusing the form on screen

    def _shape(self, parts: list[Part] | None = None) -> Any:
        """What decides the widgets of the form asked for: its spec and its parts' keys (_parts)."""
        if self.spec is None:
            return None
        return self.spec, tuple(key for key, _build in (parts if parts is not None else self._parts()))

    def _reuse(self, diagnostics: list[Diagnostic], focus: str | None) -> bool:
        """Show the form asked for in the widgets on screen when it has their shape
        (same fields, kinds, list lengths): values, labels and problems are updated
        in place, a fraction of the cost of a rebuild (constructing Textual widgets
        is most of it). False: a rebuild is needed."""
        if not self.is_attached or self._building_now or self._built_shape is None:
            return False
        if self._shape() != self._built_shape or self.owner != self._built_owner:
            return False  # another file's form is never this one's widgets re-pointed
        self._show_in_place()
        self._after_build(diagnostics, focus)
        return True

    def _show_in_place(self, leaving: Collection[Widget] = ()) -> None:
        """The widgets on screen, but those `leaving` it (and what they hold), re-pointed at the
        case asked for and showing its values."""
        old, new = ptr.split(self._built_pointer), ptr.split(self.pointer)

        def moved(pointer: str) -> str:
            tokens = ptr.split(pointer)
            return ptr.join(new + tokens[len(old) :]) if tokens[: len(old)] == old else pointer

        with self.prevent(Input.Changed, TextArea.Changed, Select.Changed, Switch.Changed):
            for widget in _walk(self, leaving):
                if isinstance(widget, FieldRow):
                    widget.pointer = moved(widget.pointer)
                elif isinstance(widget, Button) and widget.name:
                    action = json.loads(widget.name)
                    action[1] = moved(action[1])
                    compat.rename(widget, json.dumps(action))  # the action it carries
                elif isinstance(widget, KeyInput):
                    widget.key_of = moved(widget.key_of)
                    widget.rename_of = ptr.split(widget.key_of)[-1]
                    if widget.value != widget.rename_of and not widget.has_focus:
                        widget.value = widget.rename_of  # a rename it refused (empty, or a key there already)
                elif isinstance(widget, Static) and widget.has_class("form-title"):
                    _retitle(widget, self.title)
                pointer = getattr(widget, "pointer", None)
                spec = getattr(widget, "spec", None)
                if pointer is not None and spec is not None and not isinstance(widget, FieldRow):
                    widget.pointer = moved(pointer)  # type: ignore[attr-defined]
                    value = self._value_at(widget.pointer, ABSENT)  # type: ignore[attr-defined]
                    kind_of(spec).refresh(widget, spec, value)
        gone = {row for widget in leaving for row in widget.walk_children(FieldRow, with_self=True)}
        self.rows = {row.pointer: row for row in self.rows.values() if row not in gone}
        for row in self.rows.values():
            row.update_count(self._value_at(row.pointer, None))
        self._built_pointer = self.pointer
        self._built_owner = self.owner

    # ------------------------------------------------------------ building again what changed

    def _changed_parts(self, parts: list[Part]) -> list[int] | None:
        """The parts of the form on screen to build again for the one asked for, when it is the same
        form but for them (the same file and spec, the same parts in the same places); else None."""
        if not self.is_attached or self._built_shape is None or self.spec is None:
            return None
        spec, built = self._built_shape
        if (spec is not self.spec and spec != self.spec) or self.owner != self._built_owner:
            return None
        if len(built) != len(parts) or len(self.children) != len(parts):
            return None
        changed = []
        for index, (was, (now, _build)) in enumerate(zip(built, parts, strict=True)):
            if was[:2] != now[:2]:
                return None  # another part in this place
            if was != now:
                changed.append(index)
        return changed

    async def _patch(self, parts: list[Part], changed: list[int]) -> None:
        """The form on screen made into the one asked for, which differs from it in the parts `changed`:
        each of those is built again (an object list's items one by one, those that changed); every
        other widget stays and shows its new value in place. Building a whole form again cost ~0.5 s
        of CPU on the demo's first case: a file added to a list of two rebuilt its 250 widgets."""
        top = list(self.children)
        built = self._built_shape[1]
        leaving: list[Widget] = []
        coming: list[tuple[Widget, Callable[[], Widget], Widget]] = []  # (parent, build, placed before)
        recount: list[tuple[Widget, int]] = []  # items kept in a list whose length changed
        for index in changed:
            was, (now, build) = built[index], parts[index]
            items = _object_list(top[index], was, now)
            if items is None:
                leaving.append(top[index])
                coming.append((self, build, top[index]))
                continue
            row, box = items
            kind = kind_of(row.spec)
            assert isinstance(kind, ObjectListKind)
            before, after = was[-1], now[-1]
            mounted, add = list(box.children[:-1]), box.children[-1]
            where = ptr.child(self.pointer, now[1])  # the list's pointer in the case asked for
            value = self.value[now[1]]  # the list its shape was read from (an object list: a list)
            for at in range(max(len(before), len(after))):
                if at < len(before) and at < len(after) and before[at] == after[at]:
                    if len(before) != len(after):
                        recount.append((mounted[at], len(after)))
                    continue
                if at < len(before):
                    leaving.append(mounted[at])
                if at < len(after):
                    make = partial(kind.item, self, row.spec, where, at, value[at], len(after))
                    coming.append((box, make, mounted[at] if at < len(before) else add))
        self._show_in_place(leaving)
        new = [(parent, build(), before) for parent, build, before in coming]  # registers their rows
        async with self.batch():
            for parent, widget, before in new:
                await parent.mount(widget, before=before)
            for widget in leaving:
                await widget.remove()
        for kept, count in recount:
            ObjectListKind.recount(kept, count)
        self._built_shape = self._shape(parts)
        if new:
            await self._laid_out()

    async def _laid_out(self) -> None:
        """Until the screen has laid the form out. Textual orders the focus by where widgets are, and a
        widget just mounted is nowhere yet: until the layout, Tab from the case list went to the row just
        built again, not to the first field (tests/terminal/test_bursts.py, the burst "pages")."""
        painted = asyncio.get_running_loop().create_future()

        def on_screen() -> None:
            if not painted.done():
                painted.set_result(None)

        self.call_after_refresh(on_screen)
        await asyncio.wait([painted], timeout=1.0)  # a screen on top may paint nothing

    def set_title(self, title: str) -> None:
        """The form's title changed (its case's id was edited): updated in place."""
        self.title = title
        heading = next(iter(self.children), None)
        if isinstance(heading, Static) and heading.has_class("form-title"):
            _retitle(heading, title)

    # ------------------------------------------------------------ building

    def _parts(self) -> list[Part]:
        """The form's top-level widgets, each as (what decides it, how to build it)."""
        parts: list[Part] = [(("title",), lambda: Static(self.title, classes="form-title"))]
        if self.spec is None:
            return parts
        if self.spec.help:
            parts.append((("help", self.spec.help), partial(Static, self.spec.help, classes="help")))
        value = self.value if isinstance(self.value, dict) else {}
        return parts + self.object_parts(self.spec, self.pointer, value)

    def object_parts(self, spec: FieldSpec, pointer: str, value: dict) -> list[Part]:
        """An object's widgets, each as (what decides it, how to build it). A key's first two items
        say which part it is (the same in every value of the spec but for the keys not in it); the
        rest is its shape (FieldKind.shape): the same key, the same widgets."""
        parts: list[Part] = [(("note", note), partial(Static, f"[i]{note}[/]", classes="note")) for note in spec.notes]
        for field in spec.fields:
            entry = value.get(field.name, ABSENT)
            key: tuple[Any, ...] = ("field", field.name, entry is not ABSENT, kind_of(field).shape(field, entry))
            parts.append((key, partial(self.field, field, ptr.child(pointer, field.name), entry)))
        for name in spec.elsewhere:  # a case list: edited case by case, never here
            entry = value.get(name, ABSENT)
            # what its text says: a count, none, or not a list (never a bool: True == 1 in a key)
            counted = ("cases", len(entry)) if isinstance(entry, list) else ("absent" if entry is ABSENT else "other",)
            parts.append((("elsewhere", name, counted), partial(self.elsewhere, name, ptr.child(pointer, name), entry)))
        known = {f.name for f in spec.fields} | set(spec.elsewhere)
        for name, extra in value.items():
            if name not in known:  # never dropped: shown, editable as JSON, saved as it was
                note = "not in the schema" + ("; the schema forbids it" if spec.closed else "; kept as it is")
                unknown = FieldSpec(name, KindName.ANY, help=note)
                key = ("unknown", name, kind_of(unknown).shape(unknown, extra))
                parts.append((key, partial(self.field, unknown, ptr.child(pointer, name), extra)))
        return parts

    def object_fields(self, spec: FieldSpec, pointer: str, value: dict) -> list[Widget]:
        return [build() for _key, build in self.object_parts(spec, pointer, value)]

    def elsewhere(self, key: str, pointer: str, value: Any) -> FieldRow:
        """A suite's case list on its settings form: how many cases, and where they are
        edited; the list's own problems (too few cases) are shown here."""
        count = len(value) if isinstance(value, list) else 0
        text = f"{count} case{'s' * (count != 1)}: each is edited on its own (the list on the left)"
        if value is not ABSENT and not isinstance(value, list):
            text = "not a list of cases: fix it in the text view (ctrl+r)"
        spec = FieldSpec(key, KindName.ANY)
        row = self.row(spec, pointer, [FieldRow.label_for(spec), Static(text, classes="help")])
        row.exact = True
        return row

    def field(self, spec: FieldSpec, pointer: str, value: Any, label: str | None = None) -> FieldRow:
        children: list[Widget] = [
            FieldRow.label_for(spec, label, value if value is not ABSENT else None),
            *self.editor(spec, pointer, value),
        ]
        if spec.help:
            children.append(Static(spec.help, classes="help"))
        return self.row(spec, pointer, children)

    def row(self, spec: FieldSpec, pointer: str, children: list[Widget]) -> FieldRow:
        """A row the form marks problems on and finds fields by (see `rows`)."""
        row = FieldRow(spec, pointer, children)
        self.rows[pointer] = row
        return row

    def editor(self, spec: FieldSpec, pointer: str, value: Any) -> list[Widget]:
        """The widgets editing the value at pointer (ABSENT: not set)."""
        if spec.const is not None:
            return [Static(json.dumps(spec.const), classes="const")]
        return kind_of(spec).build(self, spec, pointer, value)

    def input(self, spec: FieldSpec, pointer: str, text: str, **options: Any) -> FieldInput:
        """A one-line editor of the value at pointer: its text goes through the kind's parse."""
        box = FieldInput(text, **options)
        box.form = self
        box.pointer, box.spec = pointer, spec
        return box

    def text_area(self, spec: FieldSpec, pointer: str, text: str, **options: Any) -> FieldTextArea:
        """A multi-line editor of the value at pointer: its text goes through the kind's parse."""
        area = FieldTextArea(text, **options)
        area.form = self
        area.pointer, area.spec = pointer, spec
        return area

    # ------------------------------------------------------------ events -> edits

    def _by_the_person(self, widget: Widget) -> bool:
        """A change in the focused field (or in a Select's open list) is the person's;
        any other is the form showing a value, however late its message comes (one
        arriving after a case switch was taken for an edit, and wrote the old case's
        values into the new one)."""
        focused = self.screen.focused if self.is_attached else None
        return focused is not None and (focused is widget or widget in focused.ancestors)

    def on_input_changed(self, event: Input.Changed) -> None:
        widget = event.input
        pointer = getattr(widget, "pointer", None)
        if pointer is None:
            return
        event.stop()
        if not self._by_the_person(widget):
            return
        spec: FieldSpec = getattr(widget, "spec", FieldSpec("", KindName.TEXT))
        text = event.value
        kind = kind_of(spec)
        current = self._value_at(pointer, ABSENT)
        if current is not ABSENT and text == kind.text(spec, current):
            return  # the widget showing its value, not the person changing it
        if current is ABSENT and text == "":
            return
        value = kind.parse(spec, text, _is_item(pointer))
        if value is NO_EDIT:
            return
        if value is CLEARED:
            self._remove_if_optional(spec, pointer)
        else:
            self.emit(Edit(Set(pointer, value), coalesce=True))
        if pointer in self.rows:
            self.rows[pointer].update_count(text)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._maybe_rename(event.input)

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        widget = event.widget if hasattr(event, "widget") else None
        if isinstance(widget, Input):
            self._maybe_rename(widget)

    def _maybe_rename(self, widget: Input) -> None:
        if not isinstance(widget, KeyInput):
            return
        old = widget.rename_of
        if widget.value == old or not widget.value:
            return
        pointer = widget.key_of
        parent = ptr.join(ptr.split(pointer)[:-1])
        container = self._value_at(parent)
        if not isinstance(container, dict) or widget.value in container:
            return
        position = list(container).index(old)
        operation = Batch(
            [Remove(pointer), Insert(ptr.child(parent, widget.value), container[old], position)], "rename"
        )
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
        if not self._by_the_person(event.text_area):
            return
        spec: FieldSpec = getattr(event.text_area, "spec", FieldSpec("", KindName.LONG_TEXT))
        text = event.text_area.text
        if pointer in self.rows:
            self.rows[pointer].update_count(text)
        value = kind_of(spec).parse(spec, text, _is_item(pointer))
        if value is CLEARED:
            self._remove_if_optional(spec, pointer)
        elif value is not NO_EDIT and self._value_at(pointer) != value:
            self.emit(Edit(Set(pointer, value), coalesce=True))

    def on_select_changed(self, event: Select.Changed) -> None:
        select = event.select
        pointer = getattr(select, "pointer", None)
        if pointer is None:
            return
        event.stop()
        if not self._by_the_person(select):
            return
        spec: FieldSpec = getattr(select, "spec", FieldSpec("", KindName.ENUM))
        current = self._value_at(pointer, ABSENT)
        value = kind_of(spec).choose(spec, current, event.value)
        if value is CLEARED:
            if current is not ABSENT:
                self.emit(Edit(Remove(pointer), structural=True))
        elif value is not NO_EDIT:
            self.emit(Edit(Set(pointer, value), structural=True))

    def on_switch_changed(self, event: Switch.Changed) -> None:
        pointer = getattr(event.switch, "pointer", None)
        if pointer is None:
            return
        event.stop()
        if not self._by_the_person(event.switch):
            return
        if self._value_at(pointer, ABSENT) != event.value:
            self.emit(Edit(Set(pointer, event.value)))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if not event.button.name:
            return
        event.stop()
        action, pointer, *rest = json.loads(event.button.name)
        if action == "remove":
            operation: Operation = Remove(pointer)
        elif action == "append":
            here = self._value_at(pointer, ABSENT)
            self._added = ptr.child(pointer, str(len(here) if isinstance(here, list) else 0))
            if isinstance(self._value_at(pointer, ABSENT), list):
                operation = Insert(ptr.child(pointer, "-"), rest[0])
            else:  # the list is not there yet: the first item creates it
                operation = Set(pointer, [rest[0]])
        elif action == "insert":
            operation = Insert(pointer, rest[0])
        elif action == "copy":  # the item as it is now, under an id none of its siblings has
            item = self._value_at(pointer, ABSENT)
            siblings = self._value_at(ptr.join(ptr.split(pointer)[:-1]), [])
            if item is ABSENT or not isinstance(siblings, list):
                return
            index = int(ptr.split(pointer)[-1]) + 1
            operation = Insert(ptr.child(ptr.join(ptr.split(pointer)[:-1]), index), copy_of(item, siblings))
        elif action == "move":
            operation = Move(pointer, rest[0])
        else:
            operation = Set(pointer, rest[0])
        self.emit(Edit(operation, structural=True))

    # ------------------------------------------------------------ state

    def emit(self, edit: Edit) -> None:
        """Hand an edit to whoever applies it: directly when the screen asked for
        that (the fast path for typing), else as a message."""
        edit.owner = self._built_owner
        if self.on_edit is not None:
            self.on_edit(edit)
        else:
            self.post_message(edit)

    def _value_at(self, pointer: str, default: Any = None) -> Any:
        if self.read is not None:
            return self.read(pointer, default, self._built_owner)
        tokens = ptr.split(pointer)
        base = ptr.split(self.pointer)
        try:
            return ptr.resolve(self.value, tokens[len(base) :])
        except (KeyError, IndexError, TypeError, ValueError):
            return default

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
            applies = self._value_at(sibling, ABSENT) != condition[1]
            present = self._value_at(pointer, ABSENT) is not ABSENT
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
            if target in by_row and self.rows[target].exact and target != diagnostic.path:
                stray.append(diagnostic)  # a case's own problem, not the case list's
            elif target in by_row:
                by_row[target].append(diagnostic)
            else:
                stray.append(diagnostic)
        for pointer, row in self.rows.items():
            row.set_problem(by_row[pointer])

    def focus_pointer(self, pointer: str) -> bool:
        """Focus the field editing pointer: its own editor if it has one (a kind's
        picker, an item's first field), else the first field of the nearest row
        holding it, else the form's first field. False: the form has no field (or
        none can take the focus: the form is hidden behind the text view).

        The focus is given at once, so the next key goes there; the form scrolls
        to the field once it is laid out (a form just built has no layout yet)."""
        editors = [w for w in self.query("*") if w.focusable]
        exact = next((w for w in editors if getattr(w, "pointer", None) == pointer), None)
        tokens = ptr.split(pointer)
        while tokens and ptr.join(tokens) not in self.rows:
            tokens = tokens[:-1]
        row = self.rows.get(ptr.join(tokens))
        if row is not None:
            row.display = True
        target = exact
        if target is None and row is not None:
            inside = [w for w in row.query("*") if w.focusable]
            # an item's own editors before its move/copy/remove buttons
            target = next((w for w in inside if not isinstance(w, Button)), inside[0] if inside else None)
        if pointer == self._added and row is not None:  # a new item: its first required field, still empty
            self._added = None
            target = next((w for w in row.query("*") if w.focusable and _empty_required(self, w)), target)
        if target is None:
            target = next((w for w in editors if not isinstance(w, Button)), None)
        if target is None:
            return False
        self.screen.set_focus(target, scroll_visible=False)
        shown = row if row is not None and exact is None else target
        self.call_after_refresh(self._scroll_into_view, shown)
        return True

    def _scroll_into_view(self, widget: Widget) -> None:
        if widget.is_attached and self in widget.ancestors:  # not removed by a rebuild meanwhile
            self.scroll_to_widget(widget, animate=False, top=True)


def _first_screenful(widgets: list[Widget], height: int) -> tuple[list[Widget], list[Widget]]:
    """The form's top-level widgets that fill its first screen (by their least height), and the rest."""
    lines = 0
    for count, widget in enumerate(widgets):
        if lines >= height:
            return widgets[:count], widgets[count:]
        lines += _least_lines(widget)
    return widgets, []


def _least_lines(widget: Widget) -> int:
    """The fewest lines a widget not yet mounted takes (a short screen's, when they differ)."""
    children = compat.pending_children(widget)
    if not children:
        return 1
    lines = [_least_lines(child) for child in children]
    return max(lines) if isinstance(widget, Horizontal) else sum(lines)


def _retitle(heading: Static, title: str) -> None:
    """A new title; the form is laid out again only when its height may change (a
    layout of the whole form is most of a case switch's cost)."""
    if heading.content == title:
        return
    old = Content.from_markup(str(heading.content)).cell_length
    new = Content.from_markup(title).cell_length
    width = heading.content_size.width
    heading.update(title, layout="\n" in title or max(old, new) >= width)


def _empty_required(form: FormView, widget: Widget) -> bool:
    """A required field with nothing in it yet: what validation flags on a new item, and where typing starts."""
    spec = getattr(widget, "spec", None)
    return bool(getattr(spec, "required", False)) and not form._value_at(getattr(widget, "pointer", ""), "")


def _is_item(pointer: str) -> bool:
    return ptr.split(pointer)[-1].isdigit() if pointer else False


def _walk(root: Widget, leaving: Collection[Widget]) -> Iterator[Widget]:
    """Every widget under root, but those leaving and what they hold."""
    stack = list(reversed(root.children))
    while stack:
        widget = stack.pop()
        if widget not in leaving:
            yield widget
            stack.extend(reversed(widget.children))


def _object_list(widget: Widget, was: Any, now: Any) -> tuple[FieldRow, Widget] | None:
    """(its row, its items' box) when a part is an object list before and after, its items as mounted."""
    if not (isinstance(widget, FieldRow) and isinstance(kind_of(widget.spec), ObjectListKind)):
        return None
    if not (was[0] == "field" and isinstance(was[-1], tuple) and isinstance(now[-1], tuple)):
        return None
    box = next((child for child in widget.children if child.has_class("object-list")), None)
    if box is None or len(box.children) != len(was[-1]) + 1:  # its items and "+ add"
        return None
    return widget, box
