"""The file's text, syntax-highlighted and editable. What is typed goes to the
session: while it parses it flows into the data (and the form); while it does
not, it is held as typed (an unsaved edit) and its syntax error is shown where
it is. A file that is not UTF-8 is shown read-only: editing it would re-encode it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static, TextArea

from workbench.formats.document import JSON, MARKDOWN, YAML, syntax_for
from workbench.session import SkillFile
from workbench.tui.widgets.keys import OrderedTextArea
from workbench.validate.diagnostic import Diagnostic

LANGUAGES = {JSON: "json", YAML: "yaml", MARKDOWN: "markdown"}


class RawView(Vertical):
    class Edited(Message):
        """The text as typed, for the session to take."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def compose(self) -> ComposeResult:
        yield OrderedTextArea.code_editor("", id="raw-text", soft_wrap=False)
        yield Static("", id="raw-problem")

    def on_mount(self) -> None:
        self.skill_file: SkillFile | None = None
        self.query_one("#raw-problem").display = False

    def show(self, skill_file: SkillFile, keep_cursor: bool = False) -> None:
        """Show the file's text as the session has it now. What is typed here reaches
        the session without coming back through show(), so a text that differs is
        another change (undo, redo, a case added, a save): it is shown, always (a
        stale view here once hid an undo from the person and from the save check)."""
        self.skill_file = skill_file
        area = self.query_one("#raw-text", TextArea)
        text = skill_file.shown_text()
        syntax = skill_file.document.syntax if skill_file.document else syntax_for(skill_file.path)
        area.language = LANGUAGES.get(syntax)
        area.read_only = bool(skill_file.refused)
        if area.text != text:
            row, column = area.cursor_location
            with self.prevent(TextArea.Changed):
                area.load_text(text)
            if keep_cursor:
                last = area.document.line_count - 1
                row = min(row, last)
                area.cursor_location = (row, min(column, len(area.document.get_line(row))))
        self.border_title = f"{skill_file.rel} (text{', read-only' if skill_file.refused else ''})"
        self.show_problem()

    def show_problem(self) -> None:
        label = self.query_one("#raw-problem", Static)
        skill_file = self.skill_file
        problem = (skill_file.raw_problem or skill_file.problem) if skill_file else None
        if skill_file is not None and skill_file.refused:
            label.update(f"[b red]✗[/] {skill_file.refused}")
        elif problem is None:
            label.display = False
            return
        else:
            label.update(f"[b red]✗ line {problem.line}, column {problem.column}:[/] {problem.message}")
        label.display = True

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        if self.skill_file is None or self.skill_file.refused:
            return
        event.text_area.cursor_location = event.text_area.cursor_location
        self.post_message(self.Edited(event.text_area.text))

    def go_to(self, diagnostic: Diagnostic) -> None:
        """To the problem's line in the text shown, wherever the data now puts it."""
        area = self.query_one("#raw-text", TextArea)
        where = self.skill_file.position_shown(diagnostic) if self.skill_file else None
        if where is not None:
            area.cursor_location = (where[0] - 1, max(0, where[1] - 1))
            area.scroll_cursor_visible()
        area.focus()
