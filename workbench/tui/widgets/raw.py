"""The file's text, syntax-highlighted and editable. While it parses, every
change flows into the data (and the form); while it does not, the syntax error
is shown where it is and the data keeps its last good state."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static, TextArea

from workbench.formats.document import JSON, MARKDOWN, YAML, MarkdownDocument, SyntaxProblem, parse
from workbench.formats.edits import Batch, Operation, Remove, Set
from workbench.session import SkillFile
from workbench.validate.diagnostic import Diagnostic

LANGUAGES = {JSON: "json", YAML: "yaml", MARKDOWN: "markdown"}


def replace_all(old: object, new: object, base: str = "") -> Batch:
    """Operations that turn old into new, key by key at the top (undoable as one)."""
    operations: list[Operation] = []
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                operations.append(Remove(f"{base}/{key}"))
        for key, value in new.items():
            if old.get(key, object()) != value:
                operations.append(Set(f"{base}/{key}", value))
    return Batch(operations, "raw edit")


class RawView(Vertical):
    class Parsed(Message):
        def __init__(self, operation: Batch) -> None:
            super().__init__()
            self.operation = operation

    def compose(self) -> ComposeResult:
        yield TextArea.code_editor("", id="raw-text", soft_wrap=False)
        yield Static("", id="raw-problem")

    def on_mount(self) -> None:
        self.skill_file: SkillFile | None = None
        self.query_one("#raw-problem").display = False

    def show(self, skill_file: SkillFile, keep_text: bool = False) -> None:
        self.skill_file = skill_file
        area = self.query_one("#raw-text", TextArea)
        if skill_file.document is not None:
            text = skill_file.document.render()
            syntax = skill_file.document.syntax
        else:
            text = skill_file.disk_text or ""
            syntax = "yaml" if skill_file.path.suffix in (".yaml", ".yml") else "json"
        area.language = LANGUAGES.get(syntax)
        if not keep_text or area.text != text and not self.has_focus_within:
            with self.prevent(TextArea.Changed):
                area.load_text(text)
        self.border_title = f"{skill_file.rel} (text)"
        self.show_problem(skill_file.problem)

    def show_problem(self, problem: SyntaxProblem | Diagnostic | None) -> None:
        label = self.query_one("#raw-problem", Static)
        if problem is None:
            label.display = False
            return
        label.update(f"[b red]✗ line {problem.line}, column {problem.column}:[/] {problem.message}")
        label.display = True

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        skill_file = self.skill_file
        if skill_file is None or skill_file.document is None:
            return
        parsed = parse(event.text_area.text, skill_file.document.syntax, skill_file.path)
        if isinstance(parsed, SyntaxProblem):
            self.show_problem(parsed)
            event.text_area.cursor_location = event.text_area.cursor_location
            return
        self.show_problem(None)
        if isinstance(parsed, MarkdownDocument):
            new = {"frontmatter": parsed.data, "body": parsed.body}
        else:
            new = parsed.data
        operation = replace_all(skill_file.document.data, new)
        if operation.operations:
            self.post_message(self.Parsed(operation))

    def go_to(self, diagnostic: Diagnostic) -> None:
        area = self.query_one("#raw-text", TextArea)
        if diagnostic.line:
            area.cursor_location = (diagnostic.line - 1, max(0, (diagnostic.column or 1) - 1))
            area.scroll_cursor_visible()
        area.focus()
