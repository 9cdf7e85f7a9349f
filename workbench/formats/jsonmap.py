"""Line and column of a JSON Pointer in JSON text, found without a second full parse.

Only documents with diagnostics need positions, so nothing is mapped up front: a
lookup walks from the nearest container already scanned, skipping unrelated
values with the C decoder (json's raw_decode), and remembers every member it
passes so later lookups in the same container are O(1).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from itertools import accumulate
from json.decoder import scanstring  # type: ignore[attr-defined]  # exists at runtime; typeshed omits it

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip_ws(text: str, i: int) -> int:
    """Offset of the first non-whitespace character at or after i."""
    match = _WS.match(text, i)
    assert match is not None  # the pattern matches the empty string, so at any offset
    return match.end()


class JsonSourceMap:
    def __init__(self, text: str) -> None:
        self.text = text
        root = _skip_ws(text, 1 if text.startswith("\ufeff") else 0)
        # tokens -> (offset of the member's key or item, offset of its value)
        self._where: dict[tuple[str, ...], tuple[int, int]] = {(): (root, root)}
        self._scanned: set[tuple[str, ...]] = set()
        self._lines: LineIndex | None = None

    def offset(self, tokens: tuple[str, ...]) -> int:
        """Offset of the deepest existing prefix of tokens (the key, for a member)."""
        depth = len(tokens)
        while tokens[:depth] not in self._where:
            depth -= 1
        while depth < len(tokens):
            prefix = tokens[:depth]
            if prefix in self._scanned:
                break
            self._scan(prefix)
            if tokens[: depth + 1] not in self._where:
                break
            depth += 1
        return self._where[tokens[:depth]][0]

    def position(self, tokens: tuple[str, ...]) -> tuple[int, int]:
        """1-based (line, column) of the place tokens point at."""
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines.line_col(self.offset(tokens))

    def _scan(self, prefix: tuple[str, ...]) -> None:
        self._scanned.add(prefix)
        text = self.text
        i = self._where[prefix][1]
        try:
            opener = text[i]
            if opener == "{":
                self._scan_object(prefix, i)
            elif opener == "[":
                self._scan_array(prefix, i)
        except (IndexError, ValueError):
            pass  # malformed text: keep what was found so far

    def _scan_object(self, prefix: tuple[str, ...], i: int) -> None:
        text = self.text
        j = _skip_ws(text, i + 1)
        if text[j] == "}":
            return
        while True:
            key_at = j
            key, j = scanstring(text, j + 1)
            j = _skip_ws(text, j)
            j = _skip_ws(text, j + 1)  # past ':'
            self._where[prefix + (key,)] = (key_at, j)
            _, j = _DECODER.raw_decode(text, j)
            j = _skip_ws(text, j)
            if text[j] != ",":
                return
            j = _skip_ws(text, j + 1)

    def _scan_array(self, prefix: tuple[str, ...], i: int) -> None:
        text = self.text
        j = _skip_ws(text, i + 1)
        if text[j] == "]":
            return
        index = 0
        while True:
            self._where[prefix + (str(index),)] = (j, j)
            _, j = _DECODER.raw_decode(text, j)
            j = _skip_ws(text, j)
            if text[j] != ",":
                return
            j = _skip_ws(text, j + 1)
            index += 1


class LineIndex:
    """Offsets where lines start, for O(log n) offset -> (line, column) in big files."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *accumulate(len(line) + 1 for line in text.split("\n"))]

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


def line_col(text: str, offset: int) -> tuple[int, int]:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    return line, column
