"""Plain records for the modules a report imports: equal when their fields are, shown with
them, and nothing built at import. `@dataclass` writes and compiles each class's methods
when its module is imported (about a millisecond a class); a report imported ten such
classes, more than reading 100 runs costs. A record's class writes its own __init__."""

from __future__ import annotations


class Record:
    """Fields are the instance's attributes in the order __init__ sets them (its __slots__
    when it has them). Not hashable, as a dataclass that is not frozen; a frozen one's class
    sets `__hash__ = Record.frozen_hash`."""

    __slots__ = ()

    def fields(self) -> tuple:
        names = getattr(type(self), "__slots__", ())
        return tuple(getattr(self, name) for name in names) if names else tuple(vars(self).values())

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Record)
        return self.fields() == other.fields()

    __hash__ = None  # type: ignore[assignment]

    def frozen_hash(self) -> int:
        return hash(self.fields())

    def __repr__(self) -> str:
        names = getattr(type(self), "__slots__", ()) or tuple(vars(self))
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(names, self.fields(), strict=True))
        return f"{type(self).__name__}({shown})"
