"""A document as read from disk: its text, its data, and where each part of it is.

Loading never raises for bad content: a file that cannot be read, decoded or
parsed yields a SyntaxProblem with the line and column of the fault. Reading is
bounded (file size, nesting depth, number size, YAML alias expansion): an
evals file is untrusted input, and a small hostile file must not cost gigabytes,
a stack overflow or a hang (a FIFO) in the CLI or the editor.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.formats.gc_pause import gc_paused  # noqa: F401  (its old place)
from workbench.formats.jsonmap import JsonSourceMap, line_col
from workbench.formats.regular import MAX_BYTES, NotAFile, TooBig, read_regular
from workbench.formats.skill_md import FrontmatterMissing, split_frontmatter
from workbench.formats.yamlmap import TooManyValues, YamlSourceMap, new_yaml, to_plain

# The bounds of what is read. Real suites are a few MB, nest under ten levels and
# hold no number longer than a timestamp; each bound is far above that.
MAX_DEPTH = 64
MAX_DIGITS = 1000

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
            data = json.loads(
                body,
                parse_constant=_reject_constant,
                parse_int=_bounded_int,
                parse_float=_finite_float,
                object_pairs_hook=_unique_keys,
            )
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
    except _OutOfRange as exc:
        line, column = line_col(text, _literal_offset(body, exc.args[0]) + offset)
        return SyntaxProblem(f"invalid JSON: number out of range: {exc.args[1]}", line, column)
    except _DuplicateKey as exc:
        at = _duplicate_offset(body)
        line, column = line_col(text, (at if at is not None else 0) + offset)
        return SyntaxProblem(
            f"invalid JSON: duplicate key {json.dumps(exc.args[0])}; expected each key once in an object "
            "(readers keep one of the two and drop the other)",
            line,
            column,
        )
    except RecursionError:
        return SyntaxProblem(f"invalid JSON: nested too deeply to read; at most {MAX_DEPTH} levels are read", 1, 1)
    if "\\ud" in body or "\\uD" in body:
        lone = _lone_surrogate(body)
        if lone is not None:
            line, column = line_col(text, lone + offset)
            return SyntaxProblem(
                f"invalid JSON: {body[lone : lone + 6]} is half of a character (a lone surrogate); "
                "expected a whole character",
                line,
                column,
            )
    doc = Document(path, text, JSON, data)
    return _bounded(doc, "JSON")


class _NonStandardJson(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NonStandardJson(name)


class _OutOfRange(ValueError):
    """args: the literal as written, and what is wrong with it."""


class _DuplicateKey(ValueError):
    pass


def _bounded_int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_DIGITS:
        raise _OutOfRange(
            literal,
            f"an integer of {len(literal.lstrip('-'))} digits; expected at most {MAX_DIGITS} digits",
        )
    return int(literal)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _OutOfRange(literal, f"{literal} is beyond the largest number; expected a finite number")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return data


def _literal_offset(text: str, literal: str) -> int:
    """Where a number literal stands in the text (the first such literal)."""
    match = re.search(r"(?<![\w.+-])" + re.escape(literal) + r"(?![\w.])", text)
    return match.start() if match else 0


def _duplicate_offset(text: str) -> int | None:
    """Offset of the first key that repeats one of its object's earlier keys.
    Runs only once a duplicate is known to exist, so plain Python is fine."""
    from json.decoder import scanstring  # type: ignore[attr-defined]  # exists at runtime; typeshed omits it

    objects: list[set[str] | None] = []  # per open container: its keys so far (None: an array)
    expect_key = False
    i, end = 0, len(text)
    while i < end:
        char = text[i]
        if char == '"':
            value, after = scanstring(text, i + 1)
            if expect_key and objects and objects[-1] is not None:
                keys = objects[-1]
                if value in keys:
                    return i
                keys.add(value)
            expect_key = False
            i = after
            continue
        if char == "{":
            objects.append(set())
            expect_key = True
        elif char == "[":
            objects.append(None)
        elif char in "}]":
            if objects:
                objects.pop()
        elif char == ",":
            expect_key = bool(objects) and objects[-1] is not None
        i += 1
    return None


def _bounded(doc: Document, language: str) -> Document | SyntaxProblem:
    """The parsed data within MAX_DEPTH levels and with finite numbers only."""
    tokens = _beyond_bounds(doc.data)
    if tokens is None:
        return doc
    node = doc.data
    for token in tokens:
        node = node[int(token)] if isinstance(node, list) else node[token]
    line, column = doc.position(tokens)
    if isinstance(node, float):
        return SyntaxProblem(
            f"invalid {language}: number out of range: {node} is not a finite number; expected a finite number",
            line,
            column,
        )
    return SyntaxProblem(
        f"invalid {language}: nested more than {MAX_DEPTH} levels deep; at most {MAX_DEPTH} levels are read",
        line,
        column,
    )


def _beyond_bounds(data: Any) -> tuple[str, ...] | None:
    """The pointer tokens of the first value nested too deep or not finite, if any.
    One pass over the containers; tokens are rebuilt only for an offender."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    found = False
    while stack and not found:
        node, depth = stack.pop()
        values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for value in values:
            kind = type(value)
            if kind is dict or kind is list:
                if depth >= MAX_DEPTH:
                    found = True
                    break
                stack.append((value, depth + 1))
            elif kind is float and not math.isfinite(value):
                found = True
                break
    if not found:
        return None
    return _offender(data, ())


def _offender(node: Any, tokens: tuple[str, ...]) -> tuple[str, ...] | None:
    if len(tokens) >= MAX_DEPTH and isinstance(node, (dict, list)):
        return tokens
    if isinstance(node, float) and not math.isfinite(node):
        return tokens
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        found = _offender(value, (*tokens, str(key)))
        if found is not None:
            return found
    return None


_SURROGATE = re.compile(r"(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2}|[dD][c-fC-F][0-9a-fA-F]{2})")


def _lone_surrogate(text: str) -> int | None:
    """Offset of an escaped half of a UTF-16 pair without its other half: Python
    reads it into a string no file or terminal can write (a traceback later)."""
    expect_low_at = -1
    for match in _SURROGATE.finditer(text):
        if len(match.group(1)) % 2 == 0:
            continue  # an escaped backslash before a plain "u"
        start = match.end(1) - 1
        high = match.group(2)[1].lower() in "89ab"
        if expect_low_at >= 0:
            if high or start != expect_low_at:
                return expect_low_at - 6
            expect_low_at = -1
            continue
        if not high:
            return start
        expect_low_at = match.end(0)
    return expect_low_at - 6 if expect_low_at >= 0 else None


def _found(text: str, pos: int) -> str:
    if pos >= len(text):
        return "end of file"
    char = text[pos]
    return "a line break" if char in "\r\n" else repr(char)


def parse_yaml(text: str, path: Path | None = None, line_offset: int = 0) -> Document | SyntaxProblem:
    try:
        tree = new_yaml().load(text)
        # Aliases may repeat a node many times over (a "billion laughs" file is a
        # few hundred bytes); more values than the text has characters means that.
        data = to_plain(tree, limit=len(text) + 10_000)
    except TooManyValues:
        match = re.search(r"(?<![\w])\*[^\s,\]}]+", text)
        line, column = line_col(text, match.start()) if match else (1, 1)
        return SyntaxProblem(
            f"invalid YAML: aliases expand to more than {len(text) + 10_000:,} values; "
            "expected aliases that repeat a little, not a file that expands without bound",
            line + line_offset,
            column,
        )
    except Exception as exc:  # ruamel raises many kinds; every one is a problem of the text
        return _yaml_problem(exc, text, line_offset)
    if isinstance(data, float) and not math.isfinite(data):
        data = str(data)
    return _bounded(Document(path, text, YAML, data, tree, YamlSourceMap(tree, line_offset)), "YAML")


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
        return SyntaxProblem(
            f"invalid YAML: nested too deeply to read (or an alias inside itself); at most {MAX_DEPTH} levels are read",
            1 + line_offset,
            1,
        )
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        match = re.search(rf"\d{{{MAX_DIGITS + 1},}}", text)
        line, column = line_col(text, match.start()) if match else (1, 1)
        return SyntaxProblem(
            f"invalid YAML: number out of range: an integer of more than {MAX_DIGITS} digits; "
            f"expected at most {MAX_DIGITS} digits",
            line + line_offset,
            column,
        )
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


def read_text(path: Path) -> str | SyntaxProblem:
    """A file's text, or why it cannot be read: not a regular file (a FIFO would
    block forever, a device never ends), too big, unreadable, not UTF-8.
    FileNotFoundError propagates: a missing file is a state, not a content problem."""
    raw = read_bytes(path)
    return raw if isinstance(raw, SyntaxProblem) else decode(raw)


def read_bytes(path: Path) -> bytes | SyntaxProblem:
    """A file's bytes within the bounds, or why it cannot be read (as read_text)."""
    try:
        return read_regular(path, MAX_BYTES)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        return SyntaxProblem("cannot be read: a folder, not a file; expected a file", 1, 1)
    except NotAFile as exc:
        return SyntaxProblem(f"cannot be read: {exc.strerror}; expected a file", 1, 1)
    except TooBig:
        return SyntaxProblem(
            f"too big to read: over {MAX_BYTES // (1024 * 1024)} MB; expected a suite or artifact under that", 1, 1
        )
    except OSError as exc:
        return SyntaxProblem(f"cannot be read: {exc.strerror or exc}; expected a readable file", 1, 1)


def load(path: Path, syntax: str | None = None) -> Document | SyntaxProblem:
    """Read and parse a file, within the bounds above. A file that is missing
    raises FileNotFoundError; any other reason it cannot be read is a problem."""
    text = read_text(path)
    if isinstance(text, SyntaxProblem):
        return text
    return parse(text, syntax or syntax_for(path), path)
