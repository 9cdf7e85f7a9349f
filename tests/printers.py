"""Test oracles: print a document as JSON or block YAML and record, independently
of the workbench's source maps, the line each JSON Pointer starts on."""

from __future__ import annotations

import json
from typing import Any

from workbench.formats.pointer import join


def _scalar(value: Any) -> str:
    return json.dumps(value)


def to_json(data: Any) -> tuple[str, dict[str, int]]:
    lines: list[str] = []
    where: dict[str, int] = {"": 1}

    def emit(value: Any, tokens: tuple, indent: int, lead: str, tail: str) -> None:
        pad = "  " * indent
        if isinstance(value, dict) and value:
            lines.append(f"{pad}{lead}{{")
            items = list(value.items())
            for i, (key, child) in enumerate(items):
                where[join(tokens + (key,))] = len(lines) + 1
                emit(child, tokens + (key,), indent + 1, f"{json.dumps(key)}: ", "," if i < len(items) - 1 else "")
            lines.append(f"{pad}}}{tail}")
        elif isinstance(value, list) and value:
            lines.append(f"{pad}{lead}[")
            for i, child in enumerate(value):
                where[join(tokens + (str(i),))] = len(lines) + 1
                emit(child, tokens + (str(i),), indent + 1, "", "," if i < len(value) - 1 else "")
            lines.append(f"{pad}]{tail}")
        else:
            lines.append(f"{pad}{lead}{_scalar(value)}{tail}")

    emit(data, (), 0, "", "")
    return "\n".join(lines) + "\n", where


def to_yaml(data: Any) -> tuple[str, dict[str, int]]:
    lines: list[str] = ["# written by the test oracle"]
    where: dict[str, int] = {"": 2}

    def emit_mapping(value: dict, tokens: tuple, indent: int, first_prefix: str | None = None) -> None:
        for i, (key, child) in enumerate(value.items()):
            prefix = first_prefix if (i == 0 and first_prefix is not None) else "  " * indent
            where[join(tokens + (key,))] = len(lines) + 1
            emit_value(child, tokens + (key,), indent, f"{prefix}{json.dumps(key, ensure_ascii=False)}:")

    def emit_value(child: Any, tokens: tuple, indent: int, head: str) -> None:
        if isinstance(child, dict) and child:
            lines.append(head)
            emit_mapping(child, tokens, indent + 1)
        elif isinstance(child, list) and child:
            lines.append(head)
            emit_sequence(child, tokens, indent + 1)
        else:
            lines.append(f"{head} {_empty_or_scalar(child)}")

    def emit_sequence(value: list, tokens: tuple, indent: int) -> None:
        pad = "  " * indent
        for i, item in enumerate(value):
            where[join(tokens + (str(i),))] = len(lines) + 1
            if isinstance(item, dict) and item:
                emit_mapping(item, tokens + (str(i),), indent + 1, first_prefix=f"{pad}- ")
            elif isinstance(item, list) and item:
                # A nested sequence starts where its first item does, on the next line.
                where[join(tokens + (str(i),))] = len(lines) + 2
                lines.append(f"{pad}-")
                emit_sequence(item, tokens + (str(i),), indent + 1)
            else:
                lines.append(f"{pad}- {_empty_or_scalar(item)}")

    emit_mapping(data, (), 0)
    return "\n".join(lines) + "\n", where


def _empty_or_scalar(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    # Not ASCII-escaped: YAML reads a JSON surrogate pair as two lone surrogates.
    return json.dumps(value, ensure_ascii=False)
