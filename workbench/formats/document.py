"""A document as read from disk: its text, its data, and where each part of it is.

Loading never raises for bad content: a file that cannot be decoded or parsed
yields a SyntaxProblem with the line and column of the fault.
"""

from __future__ import annotations

import gc
import json
import math
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.formats.jsonmap import JsonSourceMap, line_col
from workbench.formats.skill_md import FrontmatterMissing, split_frontmatter
from workbench.formats.yamlmap import YamlSourceMap, new_yaml, to_plain

JSON = "json"
YAML = "yaml"
MARKDOWN = "markdown"

YAML_SUFFIXES = {".yaml", ".yml"}


@dataclass(slots=True)
class SyntaxProblem:
    message: str
    line: int
    column: int


class Document:
    """Parsed content plus a source map. `data` is plain JSON-like data (what the
    schema sees); `tree` is the round-trip tree for YAML (comments, order)."""

    def __init__(
        self, path: Path | None, text: str, syntax: str, data: Any, tree: Any = None, source_map: Any = None
    ) -> None:
        self.path = path
        self.text = text
        self.syntax = syntax
        self.data = data
        self.tree = tree
        self._source_map = source_map

    def position(self, tokens: tuple[str, ...]) -> tuple[int, int]:
        if self._source_map is None:
            self._source_map = JsonSourceMap(self.text)
        return self._source_map.position(tokens)


class MarkdownDocument(Document):
    """SKILL.md as read: `data` is the frontmatter mapping (positions are those of
    the frontmatter), `body` the Markdown after it, which starts on `body_line`."""

    def __init__(self, frontmatter: Document, text: str, body: str, body_line: int) -> None:
        super().__init__(frontmatter.path, text, MARKDOWN, frontmatter.data, frontmatter.tree, frontmatter._source_map)
        self.body = body
        self.body_line = body_line


def syntax_for(path: Path) -> str:
    if path.name == "SKILL.md" or path.suffix.lower() == ".md":
        return MARKDOWN
    return YAML if path.suffix.lower() in YAML_SUFFIXES else JSON


def decode(raw: bytes) -> str | SyntaxProblem:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = raw[: exc.start].decode("utf-8", errors="replace")
        line, column = line_col(good, len(good))
        return SyntaxProblem(
            f"invalid UTF-8: byte 0x{raw[exc.start]:02x} cannot start or continue "
            "a character; expected a UTF-8 text file",
            line,
            column,
        )


def parse_json(text: str, path: Path | None = None) -> Document | SyntaxProblem:
    body = text[1:] if text.startswith("\ufeff") else text
    offset = len(text) - len(body)
    try:
        # Parsing only allocates; a cyclic-GC pass mid-parse finds nothing to free
        # and costs a third of the time on big suites.
        with gc_paused():
            data = json.loads(body, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        line, column = line_col(text, exc.pos + offset)
        found = _found(body, exc.pos)
        return SyntaxProblem(f"invalid JSON: {exc.msg.lower()}, found {found}", line, column)
    except _NonStandardJson as exc:
        index = body.find(exc.args[0])
        line, column = line_col(text, max(index, 0) + offset)
        return SyntaxProblem(
            f"invalid JSON: {exc.args[0]} is not a JSON value; expected a number, string, true, false or null",
            line,
            column,
        )
    except RecursionError:
        return SyntaxProblem("invalid JSON: nested too deeply to read", 1, 1)
    return Document(path, text, JSON, data)


@contextmanager
def gc_paused():
    """No cyclic garbage collection while many small, acyclic objects are built
    (parsed JSON): the collector would walk them again and again for nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _NonStandardJson(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NonStandardJson(name)


def _found(text: str, pos: int) -> str:
    if pos >= len(text):
        return "end of file"
    char = text[pos]
    return "a line break" if char in "\r\n" else repr(char)


def parse_yaml(text: str, path: Path | None = None, line_offset: int = 0) -> Document | SyntaxProblem:
    try:
        tree = new_yaml().load(text)
        data = to_plain(tree)
    except Exception as exc:  # ruamel raises many kinds; every one is a problem of the text
        return _yaml_problem(exc, text, line_offset)
    if isinstance(data, float) and not math.isfinite(data):
        data = str(data)
    return Document(path, text, YAML, data, tree, YamlSourceMap(tree, line_offset))


def _yaml_problem(exc: Exception, text: str, line_offset: int) -> SyntaxProblem:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is not None and problem:
        context = getattr(exc, "context", None)
        detail = f"{problem} {context}" if context else problem
        return SyntaxProblem(f"invalid YAML: {detail}", mark.line + 1 + line_offset, mark.column + 1)
    position = getattr(exc, "position", None)
    if isinstance(position, int):
        line, column = line_col(text, position)
        reason = getattr(exc, "reason", None) or str(exc)
        return SyntaxProblem(f"invalid YAML: {reason}", line + line_offset, column)
    if isinstance(exc, RecursionError):
        return SyntaxProblem("invalid YAML: nested too deeply to read", 1 + line_offset, 1)
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return SyntaxProblem(f"invalid YAML: {message}", 1 + line_offset, 1)


def parse_skill_md(text: str, path: Path | None = None) -> MarkdownDocument | SyntaxProblem:
    """A document whose data is the frontmatter mapping, with its `body` and
    `body_line` for the lint rules."""
    try:
        frontmatter, body, body_line = split_frontmatter(text)
    except FrontmatterMissing as exc:
        return SyntaxProblem(str(exc), exc.line, 1)
    doc = parse_yaml(frontmatter, path, line_offset=1)
    if isinstance(doc, SyntaxProblem):
        return doc
    return MarkdownDocument(doc, text, body, body_line)


def parse(text: str, syntax: str, path: Path | None = None) -> Document | SyntaxProblem:
    if syntax == YAML:
        return parse_yaml(text, path)
    if syntax == MARKDOWN:
        return parse_skill_md(text, path)
    return parse_json(text, path)


def load(path: Path, syntax: str | None = None) -> Document | SyntaxProblem:
    """Read and parse a file. OSError propagates: an unreadable file is an I/O
    problem for the caller, not a diagnostic about its content."""
    text = decode(path.read_bytes())
    if isinstance(text, SyntaxProblem):
        return text
    return parse(text, syntax or syntax_for(path), path)
