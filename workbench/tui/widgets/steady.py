"""Widgets that update in place: a change that keeps their size lays nothing out.

Textual lays out the whole screen (every widget of the form, the case list, the
problems list) whenever one widget asks for it, and several of its widgets ask
on every change: an Input on each key (its virtual size follows its text), an
OptionList whenever its lines are counted again, a Static on each update. On a
case form of hundreds of widgets that layout, and the repaint of everything it
moves, was most of a keystroke's time (issue 26). These ask only when their size
can change."""

from __future__ import annotations

from rich.cells import cell_len
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Input, Static

from workbench.tui.widgets.mounted import StyledWhenMounted


class SteadyInput(StyledWhenMounted, Input):
    """An Input whose typing lays nothing out: its width comes from its container, and
    its virtual size (how far it scrolls sideways) needs no layout to be right."""

    def _watch_value(self, value: str) -> None:
        # Input sets virtual_size (a reactive that asks for a layout) to the text's width;
        # set beforehand, quietly, Input's own assignment finds nothing changed.
        self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
        super()._watch_value(value)


def fits(text: str, width: int, height: int, wraps: bool = True) -> bool:
    """text takes exactly `height` lines at `width`: one line each, none wider where
    lines wrap (a wider one wraps, at word breaks, to a number of lines only a layout
    knows)."""
    lines = text.split("\n")
    return len(lines) == height and (not wraps or all(cell_len(line) <= width for line in lines))


def update_in_place(static: Static, text: str) -> None:
    """New text for a Static of `height: auto`: laid out again only when it may need
    another number of lines than it has (or is not laid out yet)."""
    region = static.content_region
    wraps = static.styles.text_wrap != "nowrap"
    static.update(text, layout=not region.width or not fits(text, region.width, region.height, wraps))
