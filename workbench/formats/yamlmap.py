"""YAML loading that keeps comments and key order (ruamel round-trip), positions
of every key and item, and a plain JSON-like copy for schema validation."""

from __future__ import annotations

import datetime
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarbool import ScalarBoolean


def new_yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    return yaml


class TooManyValues(ValueError):
    """The plain copy would hold more values than allowed (aliases repeating)."""


def to_plain(node: Any, limit: int | None = None) -> Any:
    """A JSON-compatible copy: YAML timestamps become ISO strings (JSON has no
    date type) and keys become strings, as a JSON validator would see them.
    With a limit, raises TooManyValues once the copy would hold more values."""
    if limit is None:
        return _plain(node)
    budget = [limit]

    def counted(value: Any) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise TooManyValues(limit)
        if isinstance(value, dict):
            return {_key(k): counted(v) for k, v in value.items()}
        if isinstance(value, list):
            return [counted(v) for v in value]
        return _plain(value)

    return counted(node)


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {_key(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, ScalarBoolean):
        return bool(node)
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    if isinstance(node, (datetime.datetime, datetime.date)):
        return _iso(node)
    return str(getattr(node, "value", node))


def _key(key: Any) -> str:
    if isinstance(key, ScalarBoolean) or isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, (datetime.datetime, datetime.date)):
        return _iso(key)
    return str(key)


def _iso(value: datetime.date) -> str:
    text = value.isoformat()
    if isinstance(value, datetime.datetime) and text.endswith("+00:00"):
        text = text[:-6] + "Z"
    return text


class YamlSourceMap:
    """Positions of pointers in a round-trip tree; line_offset shifts them when the
    YAML sits inside another file (SKILL.md frontmatter)."""

    def __init__(self, tree: Any, line_offset: int = 0) -> None:
        self.tree = tree
        self.line_offset = line_offset

    def position(self, tokens: tuple[str, ...]) -> tuple[int, int]:
        node = self.tree
        line, col = _own_position(node)
        for token in tokens:
            if isinstance(node, CommentedMap):
                key = next((k for k in node if _key(k) == token), _MISSING)
                if key is _MISSING:
                    break
                line, col = node.lc.key(key)
                node = node[key]
            elif isinstance(node, CommentedSeq):
                try:
                    index = int(token)
                    line, col = node.lc.item(index)
                    node = node[index]
                except (ValueError, IndexError, KeyError, TypeError):
                    break
            else:
                break
        return line + 1 + self.line_offset, col + 1


_MISSING = object()


def _own_position(node: Any) -> tuple[int, int]:
    lc = getattr(node, "lc", None)
    if lc is not None and lc.line is not None:
        return lc.line, lc.col or 0
    return 0, 0
