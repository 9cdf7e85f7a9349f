"""Wrapped text is painted at the width it is shown at, after any change of width.

Textual paints a widget at its new size before the widget's Resize arrives, so a
TextArea's first lines at a new width use its old wrap; the Resize rewraps the text
and empties TextArea's line cache, but repaints only if the wrapped height changed.
A width change that keeps the number of lines (a scrollbar coming or going beside
the form, a terminal a column narrower) left the old wrap on screen: words past the
right edge, others missing (a flaky snapshot under load showed it). Each test
compares what is painted with what a full repaint gives."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import TextArea

from workbench.tui.widgets.form import FieldTextArea
from workbench.tui.widgets.keys import OrderedTextArea

TEXT = (
    "The agent reads CHANGELOG.md, then adds one user-facing line under ## [Unreleased] / "
    "### Added (creating ### Added above ### Fixed), describing that export can write JSON. "
    "No other file changes; released sections untouched."
)


def painted(app: App, area: TextArea) -> list[str]:
    """The area's lines as the screen has them now (the widgets' caches, as drawn)."""
    region = area.region
    strips = app.screen._compositor.render_strips()
    return [strip.crop(region.x, region.right).text for strip in strips[region.y : region.bottom]]


async def repainted(pilot, area: TextArea) -> list[str]:
    area.refresh()
    await pilot.pause()
    return painted(pilot.app, area)


class Host(App):
    CSS = "TextArea { width: 64; height: 6; }"

    def __init__(self, kind: type[TextArea]) -> None:
        super().__init__()
        self.kind = kind

    def compose(self) -> ComposeResult:
        yield self.kind(TEXT, soft_wrap=True)


@pytest.mark.parametrize("kind", [FieldTextArea, OrderedTextArea])
async def test_a_narrower_field_with_as_many_lines_is_painted_at_its_new_wrap(kind):
    app = Host(kind)
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        area = app.query_one(TextArea)
        lines, wrap = area.wrapped_document.height, area.wrap_width
        area.styles.width = 62
        await pilot.pause()
        await pilot.pause()
        # the case: another wrap, as many lines (a change of height was always repainted)
        assert area.wrap_width == wrap - 2 and area.wrapped_document.height == lines
        shown = painted(app, area)
        assert shown == await repainted(pilot, area)
        assert shown[2].rstrip(" ▎").endswith("(creating ###")  # at 57 columns "Added" goes down a line
