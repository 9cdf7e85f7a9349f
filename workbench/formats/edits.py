"""Edits are operations on a document's data at JSON Pointers. Each returns its
inverse when applied, so undo, redo, validation of the touched case and saving
all work from the same operations."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

from workbench.formats import pointer as ptr

_ABSENT = object()


class EditError(ValueError):
    """An operation that does not fit the document (e.g. a pointer to nothing)."""


def _parent(data: Any, tokens: tuple[str, ...]) -> tuple[Any, str]:
    if not tokens:
        raise EditError("the document itself cannot be the target of this edit")
    try:
        return ptr.resolve(data, tokens[:-1]), tokens[-1]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise EditError(f"no such place: {ptr.join(tokens[:-1])}") from exc


def _index(container: list, token: str, allow_end: bool = False) -> int:
    if token == "-" and allow_end:
        return len(container)
    try:
        index = int(token)
    except ValueError as exc:
        raise EditError(f"{token!r} is not an array index") from exc
    limit = len(container) + (1 if allow_end else 0)
    if not 0 <= index < limit:
        raise EditError(f"index {index} is out of range")
    return index


def _insert_key(mapping: dict, key: str, value: Any, position: int) -> None:
    """Insert key at a position, keeping the order of the others (dicts only append)."""
    items = list(mapping.items())
    items.insert(position, (key, value))
    mapping.clear()
    mapping.update(items)


@dataclass
class Set:
    """Set the value at pointer: replaces a member or item, or adds a member at the end."""

    pointer: str
    value: Any

    def apply(self, data: Any) -> Operation:
        container, token = _parent(data, ptr.split(self.pointer))
        value = copy.deepcopy(self.value)
        if isinstance(container, dict):
            if token in container:
                old = container[token]
                container[token] = value
                return Set(self.pointer, old)
            container[token] = value
            return Remove(self.pointer)
        if isinstance(container, list):
            index = _index(container, token)
            old, container[index] = container[index], value
            return Set(self.pointer, old)
        raise EditError(f"{ptr.join(ptr.split(self.pointer)[:-1])} holds no members")


@dataclass
class Insert:
    """Insert into an array at an index ("-" appends), or a member at a position."""

    pointer: str
    value: Any
    position: int | None = None  # for object members: where among the keys

    def apply(self, data: Any) -> Operation:
        container, token = _parent(data, ptr.split(self.pointer))
        value = copy.deepcopy(self.value)
        if isinstance(container, list):
            index = _index(container, token, allow_end=True)
            container.insert(index, value)
            return Remove(ptr.join(ptr.split(self.pointer)[:-1] + (str(index),)))
        if isinstance(container, dict):
            if token in container:
                raise EditError(f'"{token}" is already there')
            _insert_key(container, token, value, len(container) if self.position is None else self.position)
            return Remove(self.pointer)
        raise EditError("only arrays and objects take insertions")


@dataclass
class Remove:
    pointer: str

    def apply(self, data: Any) -> Operation:
        container, token = _parent(data, ptr.split(self.pointer))
        if isinstance(container, list):
            index = _index(container, token)
            return Insert(self.pointer, container.pop(index))
        if isinstance(container, dict):
            if token not in container:
                raise EditError(f'"{token}" is not there')
            position = list(container).index(token)
            return Insert(self.pointer, container.pop(token), position)
        raise EditError("only arrays and objects have parts to remove")


@dataclass
class Move:
    """Move an array item to another index of the same array (reordering)."""

    pointer: str
    to: int

    def apply(self, data: Any) -> Operation:
        tokens = ptr.split(self.pointer)
        container, token = _parent(data, tokens)
        if not isinstance(container, list):
            raise EditError("only array items can be moved")
        index = _index(container, token)
        if not 0 <= self.to < len(container):
            raise EditError(f"index {self.to} is out of range")
        container.insert(self.to, container.pop(index))
        return Move(ptr.join(tokens[:-1] + (str(self.to),)), index)


@dataclass
class Batch:
    """Several operations that undo as one step (e.g. switching an assertion's kind)."""

    operations: list
    label: str = ""

    def apply(self, data: Any) -> Operation:
        inverses = []
        try:
            for operation in self.operations:
                inverses.append(operation.apply(data))
        except EditError:
            for inverse in reversed(inverses):  # all or nothing
                inverse.apply(data)
            raise
        return Batch(list(reversed(inverses)), self.label)

    @property
    def pointer(self) -> str:
        return common_prefix([op.pointer for op in self.operations])


Operation = Set | Insert | Remove | Move | Batch


def common_prefix(pointers: list[str]) -> str:
    if not pointers:
        return ""
    split = [ptr.split(p) for p in pointers]
    prefix: list[str] = []
    for parts in zip(*split, strict=False):  # stops at the shortest pointer
        if len(set(parts)) != 1:
            break
        prefix.append(parts[0])
    return ptr.join(prefix)


@dataclass
class _Step:
    operation: Operation
    inverse: Operation
    at: float
    coalesce_key: str | None


@dataclass
class History:
    """Undo and redo over a document's data. Typing into one field coalesces into
    one step, so undo takes back a word, not a keystroke."""

    data: Any
    coalesce_seconds: float = 1.5
    _undo: list[_Step] = field(default_factory=list)
    _redo: list[_Step] = field(default_factory=list)
    version: int = 0  # changes with every edit, undo and redo
    _saved: object = None  # the undo step the saved state ends with (None: no steps)

    def apply(self, operation: Operation, coalesce: bool = False) -> Operation:
        inverse = operation.apply(self.data)
        now = time.monotonic()
        key = operation.pointer if coalesce and isinstance(operation, Set) else None
        last = self._undo[-1] if self._undo else None
        if key and last and last.coalesce_key == key and now - last.at < self.coalesce_seconds:
            last.operation, last.at = operation, now  # keep the first inverse: undo restores the start
        else:
            self._undo.append(_Step(operation, inverse, now, key))
        self._redo.clear()
        self.version += 1
        return inverse

    def undo(self) -> Operation | None:
        """Undo the last step; returns the operation applied (for revalidation)."""
        if not self._undo:
            return None
        step = self._undo.pop()
        redo = step.inverse.apply(self.data)
        self._redo.append(_Step(redo, step.operation, time.monotonic(), None))
        self.version += 1
        return step.inverse

    def redo(self) -> Operation | None:
        if not self._redo:
            return None
        step = self._redo.pop()
        inverse = step.operation.apply(self.data)
        self._undo.append(_Step(step.operation, inverse, time.monotonic(), None))
        self.version += 1
        return step.operation

    def mark_saved(self) -> None:
        """The current state is what is on disk; typing on starts a new undo step."""
        top = self._undo[-1] if self._undo else None
        if top is not None:
            top.coalesce_key = None
        self._saved = top

    @property
    def at_saved(self) -> bool:
        """True when undo/redo have brought the data back to the saved state."""
        return (self._undo[-1] if self._undo else None) is self._saved

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)
