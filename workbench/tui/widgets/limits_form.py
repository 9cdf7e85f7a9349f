"""The limits of a run or a trigger evaluation as form fields, built from the Limits type itself
(workbench/app/choices.py: every field given by shown()): the Runs and Triggers screens both compose
them and read them back, so a limit added there is on both screens with no screen edited."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import Checkbox, Input

from workbench.app.choices import Limits, Shown, limit_offered
from workbench.tui.widgets.agent_options import Labelled
from workbench.tui.widgets.marks import MarkedCheckbox


@dataclass(frozen=True)
class LimitField:
    """One field of Limits on a form: its name, how it is shown, its widget's kind and id."""

    name: str
    shown: Shown
    kind: str  # "bool", "int", "float"
    widget_id: str


def _kind(annotation: str) -> str:
    # The annotations are strings (from __future__ import annotations): "int | None", "float", "bool | None".
    for kind in ("bool", "int", "float"):
        if kind in annotation:
            return kind
    raise TypeError(f"Limits' form shows bool, int and float fields, not {annotation!r}")


def limit_fields(flow: str, prefix: str = "") -> list[LimitField]:
    """The fields of Limits that `flow`'s screen ("run", "trigger") shows, in Limits' order; each widget's
    id is `prefix` and the field's name with dashes (max_cost: max-cost)."""
    return [
        LimitField(f.name, f.metadata["shown"], _kind(str(f.type)), prefix + f.name.replace("_", "-"))
        for f in dataclasses.fields(Limits)
        if "shown" in f.metadata and limit_offered(f.name, flow)
    ]


def _text(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


def compose_limits(defaults: Limits, flow: str, prefix: str = "") -> Iterator[Labelled]:
    """A Labelled field for each of `flow`'s limits, holding `defaults`' values (blank: its `blank` text)."""
    for each in limit_fields(flow, prefix):
        shown, value = each.shown, getattr(defaults, each.name)
        widget: Widget
        if each.kind == "bool":
            widget = MarkedCheckbox(shown.blank, bool(value), id=each.widget_id, tooltip=shown.tooltip, compact=True)
        else:
            # No restrict: a character a person types is kept, and what does not parse is named by
            # read_limits ("At once: '1.5' is not a whole number"), never silently dropped ("1.5" as 15).
            # Emptied, a field shows what it then means: its default, else what a blank means.
            widget = Input(
                _text(value),
                placeholder=_text(value) or shown.blank,
                id=each.widget_id,
                tooltip=shown.tooltip,
                compact=True,
            )
        yield Labelled(shown.label, widget)


def read_limits(screen: DOMNode, defaults: Limits, flow: str, prefix: str = "") -> Limits:
    """The limits the form says; a blank field keeps `defaults`' value, an unchecked box too. Raises
    ValueError naming the field when one does not parse."""
    given: dict[str, Any] = {}
    for each in limit_fields(flow, prefix):
        label = each.shown.label
        if each.kind == "bool":
            checked = screen.query_one(f"#{each.widget_id}", Checkbox).value
            given[each.name] = True if checked else getattr(defaults, each.name)
            continue
        text = screen.query_one(f"#{each.widget_id}", Input).value.strip()
        if not text:
            continue
        if each.shown.auto and "auto".startswith(text):
            given[each.shown.auto] = True  # the runs themselves are the rounds' to decide
            continue
        try:
            number: int | float = int(text) if each.kind == "int" else float(text)
        except ValueError:
            whole = "a whole number" if each.kind == "int" else "a number"
            raise ValueError(f"{label}: {text!r} is not {whole}{' nor auto' if each.shown.auto else ''}") from None
        if number < each.shown.least:
            raise ValueError(f"{label}: {text} is below {each.shown.least:g}")
        given[each.name] = number
        if each.shown.auto:
            given[each.shown.auto] = False
    return dataclasses.replace(defaults, **given)


def limit_ids(flow: str, prefix: str = "") -> tuple[str, ...]:
    """The widget ids of `flow`'s limit fields (to keep and restore what was typed)."""
    return tuple(each.widget_id for each in limit_fields(flow, prefix))
