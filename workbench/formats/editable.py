"""A document open for editing: its data, its undo history, and how to write it
back into its own text. One per open file; the TUI and scripts share it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.formats import pointer as ptr
from workbench.formats import save, skill_md
from workbench.formats.dialect import Format
from workbench.formats.document import JSON, MARKDOWN, YAML, Document, MarkdownDocument, SyntaxProblem, parse
from workbench.formats.edits import Batch, History, Operation, Remove, Set


def replace_all(old: object, new: object, base: str = "") -> Batch:
    """Operations that turn old into new, key by key at the top (undoable as one)."""
    operations: list[Operation] = []
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                operations.append(Remove(ptr.child(base, key)))
        for key, value in new.items():
            if old.get(key, object()) != value:
                operations.append(Set(ptr.child(base, key), value))
    return Batch(operations, "raw edit")


class EditableDocument:
    def __init__(self, path: Path, fmt: Format | None, doc: Document) -> None:
        self.path = Path(path)
        self.format = fmt
        self.syntax = doc.syntax
        self._reset(doc)

    def _reset(self, doc: Document) -> None:
        self.document = doc  # as last loaded or saved: its text and positions
        self.text = doc.text
        # The history owns the parsed data (no copy: big suites load in half the
        # time); what was loaded is re-read from the text when saving needs it.
        self.history = History(doc.data)
        self._before: str | None = None  # the baseline rendered in the file's style
        # Text typed in the text view that parses: the base the data is rendered
        # into from then on, so what was typed there beyond the data (a comment,
        # spacing, an escape) is saved as typed, not re-rendered away.
        self.typed: str | None = None

    @property
    def data(self) -> Any:
        return self.history.data

    @property
    def dirty(self) -> bool:
        return not self.history.at_saved or self.typed is not None

    def set_typed(self, text: str) -> None:
        """The text view's text, which parses and whose data the history now holds."""
        self.typed = None if text == self.text else text
        self._before = None

    def apply(self, operation: Operation, coalesce: bool = False) -> Operation:
        return self.history.apply(operation, coalesce)

    def undo(self) -> Operation | None:
        return self.history.undo()

    def redo(self) -> Operation | None:
        return self.history.redo()

    def current(self) -> Document:
        """The data as a Document; positions are those of the last saved text."""
        return Document(
            self.path,
            self.text,
            self.syntax,
            self.data,
            self.document.tree,
            getattr(self.document, "_source_map", None),
        )

    def render(self) -> str:
        """The text that saving would write: in the file's own line endings."""
        if not self.dirty:
            return self.text
        base = self.typed if self.typed is not None else self.text
        newline = save.newline_of(base)
        # Merged in LF, so a CRLF file's untouched lines match their rendering.
        return save.with_newline(self._render(base.replace("\r\n", "\n")), newline)

    def _render(self, text: str) -> str:
        if self.syntax == YAML:
            style = save.yaml_style(text)
            if self._before is None:
                self._before = save.render_yaml_tree(save.load_yaml_tree(text), style)
            tree = save.sync_tree(save.load_yaml_tree(text), self.data)
            after = save.render_yaml_tree(tree, style)
        elif self.syntax == JSON:
            style = save.json_style(text)
            if self._before is None:
                saved = parse(text, JSON)
                assert not isinstance(saved, SyntaxProblem)  # it parsed when it was loaded or saved
                self._before = save.render_json(saved.data, style)
            after = save.render_json(self.data, style)
        else:
            raise NotImplementedError(f"saving {self.syntax} documents")
        return save.merge(text, self._before, after)

    def replace_data(self, new: Any) -> Batch:
        """Operations that turn the data into new, key by key at the top (undoable as one)."""
        return replace_all(self.data, new)

    def save(self) -> str:
        """Write atomically; returns the text written."""
        text = self.render()
        if text != self.text or not self.path.exists():
            save.atomic_write(self.path, text, through_link=True)
        parsed = parse(text, self.syntax, self.path)
        if isinstance(parsed, SyntaxProblem):  # never expected: we rendered it ourselves
            raise RuntimeError(f"saved text does not parse: {parsed.message}")
        self._reset_after_save(parsed)
        return text

    def _reset_after_save(self, doc: Document) -> None:
        history = self.history
        self.document, self.text = doc, doc.text
        history.mark_saved()
        self._before = None
        self.typed = None


class SkillMdDocument(EditableDocument):
    """SKILL.md open for editing: data is {"frontmatter": {...}, "body": "..."}; the
    frontmatter is saved like any YAML (comments kept), the body as typed."""

    def _reset(self, doc: Document) -> None:
        # Only parsed SKILL.md text gets here: open_document picks this class for it, save re-parses it as such.
        assert isinstance(doc, MarkdownDocument)
        self.source = doc  # as last loaded or saved: the frontmatter's positions, the body's first line
        wrapped = Document(
            doc.path,
            doc.text,
            doc.syntax,
            {"frontmatter": doc.data, "body": doc.body},
            doc.tree,
            getattr(doc, "_source_map", None),
        )
        super()._reset(wrapped)

    def _render(self, text: str) -> str:
        start, end, body_start = skill_md.bounds(text)
        original = text[start:end]
        style = save.yaml_style(original)
        before = save.render_yaml_tree(save.load_yaml_tree(original), style) if original.strip() else ""
        frontmatter = self.data.get("frontmatter")
        tree = save.sync_tree(save.load_yaml_tree(original) if original.strip() else None, frontmatter)
        after = save.render_yaml_tree(tree, style) if frontmatter not in (None, {}) else ""
        rendered = save.merge(original, before, after) if before else after
        body = self.data.get("body")
        return text[:start] + rendered + text[end:body_start] + (body if isinstance(body, str) else "")

    def save(self) -> str:
        text = self.render()
        if text != self.text or not self.path.exists():
            save.atomic_write(self.path, text, through_link=True)
        parsed = parse(text, MARKDOWN, self.path)
        if isinstance(parsed, SyntaxProblem):
            raise RuntimeError(f"saved text does not parse: {parsed.message}")
        history = self.history
        self._reset(parsed)
        self.history = history
        history.mark_saved()
        return text


def open_document(path: Path, fmt: Format | None, doc: Document) -> EditableDocument:
    if doc.syntax == MARKDOWN:
        return SkillMdDocument(path, fmt, doc)
    return EditableDocument(path, fmt, doc)
