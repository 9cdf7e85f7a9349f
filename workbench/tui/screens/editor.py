"""The main screen: navigator | form (or raw text) over the diagnostics pane."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

from textual import messages, on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.markup import escape
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import TextArea

from workbench.formats import pointer as ptr
from workbench.formats import skill_md
from workbench.formats.dialect import load_schema
from workbench.formats.drafts import is_drafts
from workbench.formats.edits import Batch, Insert, Move, Operation, Remove, Set
from workbench.formats.fields import case_spec, compile_schema, document_spec
from workbench.session import CONFLICT, GONE, RELOADED, SaveConflict, SkillFile, SkillSession, cases
from workbench.tui import compat
from workbench.tui.screens.dialogs import KEEP_MINE, MERGE_BOTH, ConfirmDialog, ConflictDialog, flow
from workbench.tui.widgets.diagnostics import DiagnosticsPane
from workbench.tui.widgets.footer import FittingFooter
from workbench.tui.widgets.form import Edit, FormView
from workbench.tui.widgets.navigator import DOCUMENT, PAGE_MARK, Navigator, Place
from workbench.tui.widgets.raw import RawView
from workbench.tui.widgets.status import StatusBar
from workbench.validate.diagnostic import ERROR

# The form's class while the focus is in it (workbench.tcss draws its border). No rule may name a
# descendant of it: setting it restyles the form alone (_focus_moved; tests/tui/test_keys_and_focus.py).
FOCUS_CLASS = "-focus-within"


class EditorScreen(Screen):
    class ShownAsText(Message):
        """The open file is painted as text, not as a form: the app's start-up is over."""

    BINDINGS = [
        Binding(
            "ctrl+s",
            "save",
            "Save",
            tooltip="Save the open file (atomic; keeps your formatting)",
            id="save",
            priority=True,
        ),
        Binding("ctrl+z", "undo", "Undo", tooltip="Undo the last edit", id="undo", priority=True),
        Binding("ctrl+y", "redo", "Redo", tooltip="Redo what was undone", id="redo", priority=True),
        Binding(
            "ctrl+r",
            "toggle_raw",
            "Raw/Form",
            tooltip="Switch between the form and the file's text",
            id="raw",
            priority=True,
        ),
        Binding("ctrl+n", "new_case", "New case", tooltip="Add a case after the selected one", id="new-case"),
        # Shown in the case's stead while the skill has no suite (check_action picks one).
        Binding("ctrl+n", "new_suite", "New suite", tooltip="Write a first eval suite, in a dialect", id="new-suite"),
        Binding("ctrl+d", "duplicate_case", "Duplicate", tooltip="Duplicate the selected case", id="duplicate-case"),
        Binding(
            "ctrl+b",
            "accept_draft",
            "Accept draft",
            tooltip="Move the selected drafted case into its suite (an unsaved edit of both files)",
            id="accept-draft",
        ),
        Binding(
            "ctrl+k",
            "delete_case",
            "Delete case",
            tooltip="Delete the selected case (undo brings it back)",
            id="delete-case",
        ),
        Binding("alt+up", "move_case(-1)", "Move up", tooltip="Move the selected case up", id="case-up", show=False),
        Binding(
            "alt+down", "move_case(1)", "Move down", tooltip="Move the selected case down", id="case-down", show=False
        ),
        Binding(
            "ctrl+e",
            "external_editor",
            "Edit in $EDITOR",
            tooltip="Open the file in your own editor ($VISUAL or $EDITOR); it reloads when you are back",
            id="external-editor",
            show=False,
        ),
        Binding(
            "ctrl+g", "runs", "Runs", tooltip="Run the evals through an agent, with and without the skill", id="runs"
        ),
        Binding(
            "ctrl+o",
            "history",
            "History",
            tooltip="Versions of the skill: new version, evaluate, compare, promote (Improve mode)",
            id="history",
        ),
        Binding(
            "ctrl+l",
            "triggers",
            "Triggers",
            tooltip="Does the skill trigger? Its trigger eval set measured, and its description optimized",
            id="triggers",
        ),
        # Tab moves focus from any field, before the field sees the key.
        Binding(
            "tab",
            "focus_step(1)",
            "Next field",
            tooltip="Move focus to the next field (from the case list: the form's first)",
            id="next-field",
            show=False,
            priority=True,
        ),
        Binding(
            "shift+tab",
            "focus_step(-1)",
            "Previous field",
            tooltip="Move focus to the previous field (from the form's first: the case list)",
            id="previous-field",
            show=False,
            priority=True,
        ),
        # From any widget: the text view's TextArea would take F6 (select the line) and keep the focus.
        Binding(
            "f6",
            "focus_next_pane",
            "Next pane",
            tooltip="Move focus to the next pane",
            id="next-pane",
            show=False,
            priority=True,
        ),
    ]

    # The hints the footer shows first; the rest, as width allows, then in the palette.
    KEY_HINTS = ("save", "runs", "latest-results", "history", "triggers", "quit", "save-all", "undo", "raw")
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-tall")]  # short: one line per input, help for the focused field

    def __init__(self, session: SkillSession, watch: bool = True) -> None:
        super().__init__()
        self.session = session
        self.watching = watch
        self.current: SkillFile | None = None
        self.place: Place | None = None
        self.raw = False
        self._form_focus: str | None = None  # the field focused when the raw view opened

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Horizontal(id="main"):
            yield Navigator(self.session, id="navigator")
            with Vertical(id="editor"):
                yield FormView(id="form")
                yield RawView(id="raw")
        yield DiagnosticsPane(id="diagnostics")
        yield FittingFooter()

    def on_mount(self) -> None:
        form = self.query_one(FormView)
        form.on_edit = self.apply_edit
        form.read = self.read
        self.query_one(Navigator).moved = self.navigate
        self.query_one("#raw").display = False
        self.query_one("#navigator").border_title = "Skill"
        self.query_one("#diagnostics").border_title = "Problems"
        primary = self.session.primary()
        if primary is not None:
            cases = primary.cases()
            self.open_place(Place(primary.rel, cases[0][0] if cases else DOCUMENT if primary.document else None))
        self.refresh_status()
        self.watch(self, "focused", self._focus_moved, init=False)
        self.query_one(Navigator).focus()  # keys people know: the case list first, Tab into the form
        if self.watching:
            self.watch_disk()

    def _focus_moved(self, focused: Widget | None) -> None:
        """The form's border says the focus is in it, by a class set only when the focus enters or leaves
        it. Not :focus-within: with it, Textual restyled every widget of the form at every move of the
        focus inside it (all descendants of the outermost node such a rule names): ~0.3 s of CPU a Tab
        on the demo's case form. And only the form is restyled when the class changes: Textual restyles
        a node's every descendant at a change of its classes (~80 ms of CPU a Tab into or out of the
        demo's case form), and no rule names a descendant of the class (FOCUS_CLASS)."""
        form = self.query_one(FormView)
        inside = focused is not None and (focused is form or form in focused.ancestors)
        if inside != form.has_class(FOCUS_CLASS):
            form.set_class(inside, FOCUS_CLASS, update=False)
            self.app.stylesheet.update_nodes([form], animate=True)

    async def _on_update(self, message: messages.Update) -> None:
        """A widget out of sight that changed only its content (a case switch sets the
        texts of the whole form in place) is not this frame's: its own cache is cleared,
        so it is drawn anew when scrolled to. Passed on, it made Textual arrange every
        widget of the screen again (one out of sight may be new, for all it knows): most
        of a case switch. A new widget, or one whose size changes, comes with a layout."""
        if compat.out_of_sight(self, message.widget):
            message.stop()
            message.prevent_default()
            return
        await super()._on_update(message)

    def read(self, pointer: str, default: object = None, owner: str = "") -> object:
        """The value at pointer in the file the form shows (owner), else the open one:
        the form reads its fields' values here."""
        skill_file = self.session.file(owner) if owner else self.current
        document = skill_file.document if skill_file else None
        if document is None:
            return default
        try:
            return ptr.resolve(document.data, ptr.split(pointer))
        except (KeyError, IndexError, TypeError, ValueError):
            return default

    # ------------------------------------------------------------ showing things

    def open_place(self, place: Place, focus_pointer: str | None = None) -> None:
        skill_file = self.session.file(place.rel)
        if skill_file is None:
            return
        self.current, self.place = skill_file, place
        self.query_one(Navigator).select_place(place)
        self.render_editor(focus_pointer)
        self.show_diagnostics()
        self.refresh_status()

    def render_editor(self, focus: str | None = None) -> None:
        """Show the open place in the form (or the raw text); focus: the field to focus once shown."""
        form, raw = self.query_one(FormView), self.query_one(RawView)
        skill_file, place = self.current, self.place
        if skill_file is None or place is None:
            return
        document, fmt = skill_file.document, skill_file.format
        text = self.text_shown
        form.display, raw.display = not text, text
        # What is hidden cannot take the focus, whatever asks (F6, Tab, a jump, a rebuild): disabled.
        form.disabled, raw.disabled = text, not text
        if text or document is None or fmt is None:
            raw.show(skill_file)
            self.call_after_refresh(self.post_message, self.ShownAsText())  # no form is coming: start-up is over
            return
        data = document.data
        marks = (skill_file.diagnostics, focus)
        form.owner = skill_file.rel  # the file of the form asked for: its edits go there
        if fmt.name == skill_md.NAME:
            spec = compile_schema(load_schema(skill_md.FORM_SCHEMA))
            form.show(f"[b]{skill_file.rel}[/b] · frontmatter and instructions", spec, "", data, *marks)
        elif place.pointer is None or place.pointer == DOCUMENT:
            form.show(f"[b]{skill_file.rel}[/b] · suite settings", document_spec(fmt), "", data, *marks)
        else:
            list_pointer = ptr.join(ptr.split(place.pointer)[:-1])
            try:
                value = ptr.resolve(data, ptr.split(place.pointer))
            except (KeyError, IndexError, TypeError, ValueError):
                form.show("This case no longer exists.", None, "", None)
                return
            form.show(
                self.case_title(skill_file, place.pointer, value),
                case_spec(fmt, list_pointer),
                place.pointer,
                value,
                *marks,
            )

    @property
    def text_shown(self) -> bool:
        """The open file is shown as text: asked for (ctrl+r), or the only way to show
        it (it does not parse, its format is not known, or text typed for it does
        not parse: the form would show its last good data as if that were it)."""
        skill_file = self.current
        if skill_file is None:
            return self.raw
        return (
            self.raw or skill_file.document is None or skill_file.format is None or skill_file.raw_problem is not None
        )

    @staticmethod
    def case_title(skill_file: SkillFile, pointer: str, value: object) -> str:
        """`<file> · case <id>` (the case's pointer while it has no id)."""
        name = value.get("id") if isinstance(value, dict) else None
        return f"[b]{skill_file.rel}[/b] · case {name if name not in (None, '') else pointer}"

    def mark_form(self) -> None:
        if self.current is not None:
            self.query_one(FormView).mark(self.current.diagnostics)

    def show_diagnostics(self) -> None:
        pane = self.query_one(DiagnosticsPane)
        if self.current is None:
            pane.show([])
            return
        pane.show(self.current.diagnostics)
        errors, warnings = self.current.counts()
        title = (
            f"Problems in {self.current.rel}: {errors} error{'s' * (errors != 1)} · "
            f"{warnings} warning{'s' * (warnings != 1)}"
        )
        if pane.border_title != title:
            pane.border_title = title

    def refresh_status(self) -> None:
        self.query_one(StatusBar).show(self.session, self.current)

    # ------------------------------------------------------------ events

    def navigate(self, place: Place | None) -> None:
        """Show what the case list's cursor is on (called at once when it moves)."""
        if place is not None and (place.pointer or "").startswith(PAGE_MARK):
            return  # a page of cases: opening it is enough
        if place is not None and place != self.place:
            self.current, self.place = self.session.file(place.rel), place
            self.render_editor()
            self.show_diagnostics()
            self.refresh_status()

    @on(Edit)
    def on_edit(self, event: Edit) -> None:
        event.stop()
        self.apply_edit(event)

    def apply_edit(self, event: Edit) -> None:
        # To the file the form showed when the person made it (the open file may have changed since).
        skill_file = self.session.file(event.owner) if event.owner else self.current
        if skill_file is None or skill_file.document is None:
            return
        from workbench.formats.edits import EditError

        try:
            self.session.apply(skill_file, event.operation, event.coalesce)
        except EditError as exc:
            self.notify(str(exc), severity="error")
            return
        if skill_file is not self.current:
            self.query_one(Navigator).refresh_file(skill_file)
            self.refresh_status()
            return
        focus = focus_after(event.operation, skill_file.document.data) if event.structural else None
        self.after_change(skill_file, event.operation.pointer, rebuild=event.structural, focus=focus)

    def after_change(self, skill_file: SkillFile, pointer: str, rebuild: bool, focus: str | None = None) -> None:
        """Show an edit applied to the session; focus: the field to focus when the form is rebuilt."""
        form = self.query_one(FormView)
        navigator = self.query_one(Navigator)
        document = skill_file.document  # edited, so there
        if rebuild or self.text_shown or document is None:
            if self.text_shown:
                self.query_one(RawView).show(skill_file, keep_cursor=True)
            else:
                self.render_editor(focus)
            navigator.refresh_file(skill_file)
        else:
            place = self.place
            if place and place.pointer is not None and place.pointer != DOCUMENT:
                try:
                    value = ptr.resolve(document.data, ptr.split(place.pointer))
                    form.sync_value(value)
                    form.set_title(self.case_title(skill_file, place.pointer, value))  # follows an id as typed
                except (KeyError, IndexError, TypeError, ValueError):
                    pass
            else:
                form.sync_value(document.data)
            form.mark(skill_file.diagnostics)
            case = skill_file.format.case_of(pointer) if skill_file.format else None
            if case:
                navigator.refresh_case(skill_file, case)
            else:
                navigator.refresh_file(skill_file)
        self.show_diagnostics()
        self.refresh_status()

    @on(DiagnosticsPane.Jump)
    def on_jump(self, event: DiagnosticsPane.Jump) -> None:
        if self.current is None:
            return
        pointer = event.diagnostic.path
        case = self.current.format.case_of(pointer) if self.current.format else None
        place = Place(self.current.rel, case if case else (DOCUMENT if self.current.document else None))
        if self.text_shown:
            self.query_one(RawView).go_to(event.diagnostic)
            return
        if place != self.place:
            self.open_place(place, focus_pointer=pointer)
        else:
            self.query_one(FormView).focus_pointer(pointer)

    @on(RawView.Edited)
    def on_raw_parsed(self, event: RawView.Edited) -> None:
        skill_file = self.current
        raw = self.query_one(RawView)
        if skill_file is None or raw.skill_file is not skill_file:
            return
        # Parsed, it flows into the data; not, it is held as typed: an unsaved edit either way.
        self.session.raw_edit(skill_file, event.text)
        raw.show_problem()
        self.query_one(Navigator).refresh_file(skill_file)
        self.show_diagnostics()
        self.refresh_status()

    # ------------------------------------------------------------ actions

    def action_save(self) -> None:
        skill_file = self.current
        if skill_file is None:
            return
        if skill_file.refused:
            self.notify(skill_file.refused, severity="error", timeout=15)
            return
        if skill_file.document is None and skill_file.raw_text is None:
            self.notify(
                f"{skill_file.rel} does not parse: fix it in the text view or your editor first.", severity="error"
            )
            return
        if skill_file.raw_problem is not None:  # what was typed is saved, exactly, but only once the person says so
            self.save_as_typed(skill_file)
            return
        self.save_file(skill_file)

    @flow("save-as-typed")
    async def save_as_typed(self, skill_file: SkillFile) -> None:
        yes = await self.app.push_screen_wait(
            ConfirmDialog(f"{_unparsed(skill_file)} Save it as typed?", "Save as typed")
        )
        if yes and skill_file.raw_problem is not None:
            self.save_file(skill_file)

    def save_file(self, skill_file: SkillFile, quiet: bool = False) -> bool:
        """Save one file; a conflict asks, a failure says why and keeps every edit."""
        try:
            self.session.save(skill_file)
        except SaveConflict:
            self.ask_conflict(skill_file, saving=True)
            return False
        except OSError as exc:
            rescued = self.session.rescue_one(skill_file)
            if rescued is not None and hasattr(self.app, "rescued"):
                self.app.rescued.append(rescued)
            copy = f" A copy is in {rescued}." if rescued else " No copy could be written either."
            self.notify(
                f"{skill_file.rel} was not saved: {exc.strerror or exc}. Your edits are kept, unsaved.{copy}",
                title="Save failed",
                severity="error",
                timeout=30,
            )
            self.refresh_status()
            return False
        if not quiet:
            self.notify("Saved " + _with_errors(skill_file))
        self.query_one(Navigator).refresh_file(skill_file)
        if skill_file is self.current and self.text_shown:
            self.query_one(RawView).show(skill_file, keep_cursor=True)  # the cursor stays where it was
        elif skill_file is self.current and skill_file.document is not None and self.query_one(FormView).display:
            self.mark_form()  # the form is already this data: rebuilding it would move the focus
        elif skill_file is self.current:
            self.render_editor()  # it had no form (did not parse) and may have one now
        self.show_diagnostics()
        self.refresh_status()
        return True

    def action_undo(self) -> None:
        self._history("undo")

    def action_redo(self) -> None:
        self._history("redo")

    def _history(self, which: str) -> None:
        skill_file = self.current
        if skill_file is not None and self.query_one(RawView).display:
            self._text_history(which)  # the text is the truth while it is shown
            return
        if skill_file is None or skill_file.document is None:
            return
        operation = getattr(self.session, which)(skill_file)
        if operation is None:
            self.notify(f"Nothing to {which}.")
            return
        # Focus the field the operation touched, opening its case if another one is shown.
        focus = focus_after(operation, skill_file.document.data)
        case = skill_file.format.case_of(focus) if skill_file.format else None
        shown = self.place.pointer if self.place else None
        if case and case != shown and not self.raw:
            self.query_one(Navigator).refresh_file(skill_file)
            self.open_place(Place(skill_file.rel, case), focus_pointer=focus)
            return
        self.after_change(skill_file, operation.pointer, rebuild=True, focus=focus)

    def _text_history(self, which: str) -> None:
        """Undo or redo in the text view: the text's own edits, each where it was
        made (the cursor goes there); what follows flows to the session as typing
        does. Edits made in the form are undone in the form."""
        area = self.query_one("#raw-text", TextArea)
        stack = area.history.undo_stack if which == "undo" else area.history.redo_stack
        if area.read_only or not stack:
            self.notify(f"Nothing to {which} in the text. Edits made in the form are undone there (ctrl+r).")
            return
        if which == "undo":
            area.undo()
        else:
            area.redo()
        area.scroll_cursor_visible()

    def action_toggle_raw(self) -> None:
        skill_file = self.current
        if skill_file is None:
            return
        if not self.text_shown:
            self.raw = True
            form = self.query_one(FormView)
            focused = self.focused
            self._form_focus = getattr(focused, "pointer", None) if focused and form in focused.ancestors else None
            self.render_editor()
            self.show_diagnostics()
            self.query_one("#raw-text").focus()  # the keys go where the person now looks
            return
        if skill_file.document is None or skill_file.format is None:
            why = "it does not parse" if skill_file.document is None else "its format is not known here"
            self.notify(f"{skill_file.rel} can only be shown as text: {why}.", severity="warning")
            return
        if skill_file.raw_problem is None:
            self._show_form()
            return
        self.leave_text(skill_file)

    @flow("leave-text")
    async def leave_text(self, skill_file: SkillFile) -> None:
        """The form would show the last text that parsed, not this one: asked, never dropped silently."""
        discard = await self.app.push_screen_wait(
            ConfirmDialog(
                f"{_unparsed(skill_file)} The form can only show the last text that parsed. "
                "Keep editing the text, or discard what was typed since it last parsed?",
                "Discard the text edit",
                "Keep editing",
            )
        )
        if discard and skill_file.raw_problem is not None:
            self.session.discard_raw_text(skill_file)
            self.query_one(Navigator).refresh_file(skill_file)
            if skill_file is self.current:
                self._show_form()

    def _show_form(self) -> None:
        """From the text view back to the form, the focus where it was when the text opened."""
        refocus = self.focused is None or self.focused is self.query_one("#raw-text")
        self.raw = False
        place = self.place.pointer if self.place else None
        self.render_editor((self._form_focus or place or "") if refocus else None)
        self.show_diagnostics()
        self.refresh_status()

    def _selected(self) -> cases.Selected | None:
        """The case selected in the open file, if one is (workbench/session/cases.py)."""
        return cases.selected(self.current, self.place.pointer if self.place else None)

    def _change(self, change: cases.Change | None) -> None:
        if change is not None:
            self._structural(change.file, change.operation, change.then)

    def _structural(self, skill_file: SkillFile, operation: Operation, place_pointer: str | None) -> None:
        self.session.apply(skill_file, operation)
        self.query_one(Navigator).refresh_file(skill_file)
        if place_pointer is not None:
            self.open_place(Place(skill_file.rel, place_pointer))
        else:
            self.render_editor()
            self.show_diagnostics()
            self.refresh_status()

    def action_new_case(self) -> None:
        skill_file = self.current
        fmt = skill_file.format if skill_file else None
        if skill_file is None or skill_file.document is None or fmt is None or not fmt.cases:
            if not self.has_suite():
                self.action_new_suite()
            return
        try:
            self._change(cases.new_case(skill_file, self.place.pointer if self.place else None))
        except cases.CaseRefused as refused:
            self.notify(str(refused), severity=refused.severity)  # type: ignore[arg-type]

    # ------------------------------------------------------------ new suite

    def has_suite(self) -> bool:
        return any(f.rel != "SKILL.md" for f in self.session.files)

    def action_new_suite(self) -> None:
        from workbench.tui.screens.new_suite import NewSuiteDialog

        def written(path: Path | None) -> None:
            if path is None:
                return
            skill_file, _ = self.session.disk_changed(path)  # the session picks the new file up
            if skill_file is None:
                self.notify(f"{path.name} was written but is not read as a suite here.", severity="warning")
                return
            self.query_one(Navigator).refresh_file(skill_file)
            cases = skill_file.cases()
            self.open_place(Place(skill_file.rel, cases[0][0] if cases else DOCUMENT))
            self.refresh_bindings()
            self.notify(f"Wrote {skill_file.rel}: its first cases are open; ctrl+n adds one.")

        self.app.push_screen(NewSuiteDialog(self.session.root, self.session.name), written)

    def action_duplicate_case(self) -> None:
        case = self._selected()
        if case is not None:
            self._change(cases.duplicate(case))

    def action_accept_draft(self) -> None:
        """The selected drafted case joins its suite (with an id of its own there) and leaves the drafts:
        two unsaved edits, each undone in its own file."""
        try:
            accepted = cases.accept_draft(self.session, self._selected())
        except cases.CaseRefused as refused:
            self.notify(str(refused), severity=refused.severity)  # type: ignore[arg-type]
            return
        into, out = accepted.into_suite, accepted.out_of_drafts
        self.session.apply(into.file, into.operation)
        self.query_one(Navigator).refresh_file(into.file)
        self._change(out)
        self.open_place(Place(into.file.rel, into.then or DOCUMENT))
        renamed = f" as {accepted.renamed[1]} ({accepted.renamed[0]} is taken there)" if accepted.renamed else ""
        self.notify(
            f"Accepted into {into.file.rel}{renamed}. Both files are unsaved: ctrl+s saves the one shown, so save "
            f"{out.file.rel} too; ctrl+z in each file undoes it.",
            timeout=10,
        )

    def action_delete_case(self) -> None:
        case = self._selected()
        if case is not None:
            self._change(cases.delete(case))
            self.notify("Case deleted (ctrl+z brings it back).")

    def action_move_case(self, step: int) -> None:
        case = self._selected()
        if case is not None:
            self._change(cases.move(case, step))

    def action_runs(self) -> None:
        from workbench.tui.screens.runs import RunsScreen

        self.saved_then(
            "runs use the files on disk",
            "run",
            lambda: self.app.push_screen(RunsScreen(self.session, self.current.rel if self.current else None)),
        )

    def action_history(self) -> None:
        from workbench.tui.screens.history import HistoryScreen

        self.app.push_screen(HistoryScreen(self.session))

    def action_triggers(self) -> None:
        from workbench.tui.screens.triggers import TriggersScreen

        self.saved_then(
            "a trigger evaluation uses the files on disk",
            "evaluate",
            lambda: self.app.push_screen(TriggersScreen(self.session)),
        )

    def saved_then(self, why: str, verb: str, then: Callable[[], object]) -> None:
        """then() once nothing is unsaved; with unsaved files, names them and offers to save all first."""
        if not self.session.dirty_files():
            then()
            return
        self.save_all_first(why, verb, then)

    @flow("save-all-first")
    async def save_all_first(self, why: str, verb: str, then: Callable[[], object]) -> None:
        names = ", ".join(f"[b]{escape(f.rel)}[/b]" for f in self.session.dirty_files())
        yes = await self.app.push_screen_wait(
            ConfirmDialog(f"Unsaved edits in {names}: {why}. Save them all first?", f"Save all and {verb}")
        )
        if yes and self.save_all() and not self.session.dirty_files():
            then()

    def save_all(self) -> bool:
        """Save every file with unsaved edits; one whose text does not parse is named and left
        unsaved (ctrl+s on it saves it as typed, after asking). True when every one was saved."""
        saved, left = [], []
        for skill_file in self.session.dirty_files():
            if skill_file.refused or skill_file.raw_problem is not None:
                left.append(skill_file.rel)
                continue
            if self.save_file(skill_file, quiet=True):
                saved.append(_with_errors(skill_file))
            else:
                left.append(skill_file.rel)
        if saved:
            self.notify("Saved " + ", ".join(saved))
        elif not left:
            self.notify("Nothing to save: every file is as on disk.")
        if left:
            self.notify(
                "Not saved: " + ", ".join(left) + " (its text does not parse, or it changed on disk: open it "
                "and press ctrl+s to decide).",
                severity="warning",
                timeout=10,
            )
        return not left

    def action_external_editor(self) -> None:
        skill_file = self.current
        if skill_file is None:
            return
        if skill_file.dirty:
            self.notify(
                f"{skill_file.rel} has unsaved edits: save them first (ctrl+s), then edit it elsewhere.",
                severity="warning",
            )
            return
        command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            with self.app.suspend():
                result = subprocess.run([*shlex.split(command), str(skill_file.path)])
        except SuspendNotSupported:  # no terminal to hand over (headless): run it as it is
            result = subprocess.run(
                [*shlex.split(command), str(skill_file.path)], stdin=subprocess.DEVNULL, capture_output=True
            )
        except OSError as exc:
            self.notify(f"Could not start {command!r}: {exc.strerror or exc}", severity="error")
            return
        if result.returncode != 0:
            self.notify(f"{command} exited with status {result.returncode}.", severity="warning")
        self.disk_changed(skill_file.path)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_step":  # a text area that indents with Tab keeps it (the raw view)
            return getattr(self.focused, "tab_behavior", "focus") != "indent"
        # ctrl+n: "New suite" while the skill has none, "New case" once it has one.
        if action == "new_suite":
            return not self.has_suite()
        if action == "new_case":
            return self.has_suite()
        if action == "accept_draft":  # only where drafted cases are (workbench draft-cases)
            return self.current is not None and is_drafts(self.current.rel)
        return True

    def action_focus_step(self, step: int) -> None:
        if step > 0:
            self.focus_next()
        else:
            self.focus_previous()

    def action_focus_next_pane(self) -> None:
        panes = [self.query_one(Navigator), self.query_one("#editor"), self.query_one(DiagnosticsPane)]
        focused = self.focused
        current = next(
            (i for i, pane in enumerate(panes) if focused is pane or (focused and pane in focused.ancestors)), -1
        )
        target = panes[(current + 1) % len(panes)]
        focusable = (
            target if target.focusable else next((w for w in target.query("*") if w.focusable and w.display), None)
        )
        if focusable is not None:
            focusable.focus()

    # ------------------------------------------------------------ the disk

    @work(exclusive=True, group="watch", exit_on_error=False)
    async def watch_disk(self) -> None:
        """Watch the skill's folder for other programs' edits. The watcher never
        dies silently: when it fails (the folder gone, the system's watch limit)
        it says so and starts again, backing off; a file it could not handle is
        said and skipped."""
        import asyncio

        from watchfiles import awatch

        failures = 0
        while True:
            try:
                async for changes in awatch(self.session.root, debounce=30, step=10, recursive=True):
                    failures = 0
                    for path in sorted({Path(p) for _, p in changes}):
                        if path.name.startswith(".") and path.suffix == ".tmp":
                            continue  # our own atomic write in progress
                        try:
                            self.disk_changed(path)
                        except Exception as exc:  # noqa: BLE001 - one file must not stop the watching
                            self.notify(f"Could not reload {path.name}: {exc}", severity="error", timeout=10)
                raise RuntimeError("the watcher ended")  # leaving the screen cancels this task instead
            except Exception as exc:  # noqa: BLE001 - said, then watched again
                failures += 1
                wait = min(30, 2**failures)
                self.notify(
                    f"Watching {self.session.root} for outside edits stopped ({exc}); starting again in {wait} s.",
                    severity="warning",
                    timeout=10,
                )
                await asyncio.sleep(wait)

    def disk_changed(self, path: Path) -> None:
        skill_file, what = self.session.disk_changed(path)
        if skill_file is None:
            return
        if what == RELOADED:
            self.query_one(Navigator).refresh_file(skill_file)
            if skill_file is self.current:
                self.render_editor()
            self.notify(f"{skill_file.rel} changed on disk: reloaded.", timeout=2)
        elif what == GONE:
            self.query_one(Navigator).refresh_file(skill_file)
            self.notify(
                f"{skill_file.rel} was deleted or renamed on disk; your copy is kept until you save.",
                severity="warning",
            )
        elif what == CONFLICT:
            self.ask_conflict(skill_file)
            return
        else:
            return
        self.show_diagnostics()
        self.refresh_status()

    @flow("conflict", exclusive=False)
    async def ask_conflict(self, skill_file: SkillFile, saving: bool = False) -> None:
        """saving: asked because a save found the disk changed; keeping mine then saves."""
        merged = self.session.merge_both(skill_file)
        choice = await self.app.push_screen_wait(
            ConflictDialog(
                skill_file.rel, skill_file.unsaved_text(), self.session.theirs(skill_file), merged.text, merged.problem
            )
        )
        if choice is None:  # decided later: nothing changes, the next save asks again
            return
        if choice == KEEP_MINE:
            self.session.keep_mine(skill_file)
            if saving:
                self.save_file(skill_file)
                return
        else:
            if choice == MERGE_BOTH and merged.text is not None:
                self.session.take_merged(skill_file, merged.text)
                self.notify(f"{skill_file.rel}: both edits merged, not saved yet: review, then ctrl+s.")
            else:
                self.session.take_theirs(skill_file)
            self.query_one(Navigator).refresh_file(skill_file)
            if skill_file is self.current:
                self.render_editor()
        self.show_diagnostics()
        self.refresh_status()


def focus_after(operation: Operation, data: object) -> str:
    """The field to focus after an operation is applied: the new item after an
    insertion, the neighbour after a removal, the moved item, the field set."""
    if isinstance(operation, Batch):
        return focus_after(operation.operations[-1], data) if operation.operations else operation.pointer
    tokens = ptr.split(operation.pointer)
    parent = tokens[:-1]
    try:
        container = ptr.resolve(data, parent)
    except (KeyError, IndexError, TypeError, ValueError):
        return ptr.join(parent)
    if isinstance(operation, Insert) and isinstance(container, list) and tokens and tokens[-1] == "-":
        return ptr.join(parent + (str(len(container) - 1),))
    if isinstance(operation, Remove) and isinstance(container, list):
        if not container:
            return ptr.join(parent)
        return ptr.join(parent + (str(min(int(tokens[-1]), len(container) - 1)),))
    if isinstance(operation, Remove):
        return ptr.join(parent)
    if isinstance(operation, Move):
        return ptr.join(parent + (str(operation.to),))
    if isinstance(operation, Set) and isinstance(operation.value, list) and len(operation.value) == 1:
        return ptr.join((*tokens, "0"))  # the list's first item, just made
    return operation.pointer


def _unparsed(skill_file: SkillFile) -> str:
    """`The text of evals.json does not parse (line 3, column 5: ...).`, as both questions about it begin."""
    problem = skill_file.raw_problem
    assert problem is not None
    return (
        f"The text of [b]{escape(skill_file.rel)}[/b] does not parse (line {problem.line}, column "
        f"{problem.column}: {escape(problem.message)})."
    )


def _with_errors(skill_file: SkillFile) -> str:
    """`evals/evals.json with 2 errors`: saved as it is (nothing is lost), and said to be invalid."""
    errors = sum(d.severity == ERROR for d in skill_file.diagnostics)
    return f"{skill_file.rel}" + (f" with {errors} error{'s' if errors > 1 else ''}" if errors else "")
