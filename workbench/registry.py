"""Named extension points (executors, judges, assertion kinds): one registration
each, looked up by name, and the source of every list of choices the user
sees (the CLI's flags, the TUI's selects, the docs). An entry names the class
that implements it as "module:Class" and is imported only when first used, so
listing the choices costs no import of the implementations."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Entry:
    name: str
    target: str  # "package.module:Class"
    help: str  # one line for people: the CLI's help, the docs' table
    takes: tuple[str, ...] = ()  # the options its constructor takes, by keyword
    requires: str = ""  # an option it cannot do without, named as the user gives it (e.g. "--agent-command CMD")

    def load(self) -> Any:
        module, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module), attribute)


class Registry:
    def __init__(self, what: str) -> None:
        self.what = what  # "executor", "judge": for messages
        self.entries: dict[str, Entry] = {}

    def register(self, name: str, target: str, help: str, takes: tuple[str, ...] = (), requires: str = "") -> None:
        if name in self.entries:
            raise ValueError(f"a {self.what} named {name!r} is already registered")
        self.entries[name] = Entry(name, target, help, takes, requires)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def entry(self, name: str) -> Entry:
        try:
            return self.entries[name]
        except KeyError:
            raise ValueError(f"unknown {self.what} {name!r}; expected one of {', '.join(self.entries)}") from None

    def make(self, name: str, **options: Any) -> Any:
        """An instance built with the options this entry takes; the others are ignored."""
        entry = self.entry(name)
        given = {key: options.get(key) for key in entry.takes}
        if entry.requires and not given.get(entry.takes[0]):
            raise ValueError(f"the {name} {self.what} needs {entry.requires}")
        return entry.load()(**given)
