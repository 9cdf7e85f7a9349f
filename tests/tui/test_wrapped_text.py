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
from textual.containers import Vertical
from textual.document._wrapped_document import WrappedDocument
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


class AutoHost(App):
    """A long text of the form: its height its wrapped lines, between the bounds (workbench.tcss's .long-text)."""

    def __init__(self, width: int, max_height: int) -> None:
        super().__init__()
        self.css = f"FieldTextArea {{ width: {width}; height: auto; min-height: 3; max-height: {max_height}; }}"

    def compose(self) -> ComposeResult:
        yield FieldTextArea(TEXT, soft_wrap=True)

    def on_mount(self) -> None:
        self.stylesheet.add_source(self.css)
        self.stylesheet.reparse()
        self.stylesheet.update(self)


@pytest.mark.parametrize(("width", "max_height"), [(64, 12), (40, 12), (40, 5)], ids=["fits", "narrow", "scrolls"])
async def test_a_long_text_is_laid_out_at_its_wrapped_height_the_first_time(width, max_height):
    """Its first layout has its height: the text wrapped at the width it is laid out at (its scrollbar's
    column left out when it has more lines than it shows), so its Resize changes nothing and lays nothing
    out again. Textual's height is the wrap of the width before, none for a new field: each long text of
    a new form was a line high at first, and its Resize laid the screen out again."""
    app = AutoHost(width, max_height)
    changed: list[tuple] = []
    real = TextArea._rewrap_and_refresh_virtual_size

    def rewrap(area: TextArea) -> None:
        before = area.virtual_size
        real(area)
        if area.virtual_size != before and area.size.width:
            changed.append((before, area.virtual_size))

    TextArea._rewrap_and_refresh_virtual_size = rewrap
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await pilot.pause()
            area = app.query_one(FieldTextArea)
            assert area.outer_size.width == width
            lines = area.wrapped_document.height
            area.wrapped_document.wrap(area.wrap_width, tab_width=area.indent_width)  # TextArea's own wrap
            assert area.wrapped_document.height == lines
            frame = area.styles.gutter.height  # its border and padding
            assert area.outer_size.height == min(max(lines + frame, 3), max_height)
            scrolls = lines + frame > max_height
            assert scrolls == (max_height == 5)
            assert area.wrap_width == area.size.width - 1 - (area.styles.scrollbar_size_vertical if scrolls else 0)
            assert changed == []
            assert painted(app, area) == await repainted(pilot, area)
    finally:
        TextArea._rewrap_and_refresh_virtual_size = real


class BoxedHost(App):
    """A long text in a box of 40 by 20, its height bounded by the rule given."""

    def __init__(self, rule: str) -> None:
        super().__init__()
        self.rule = rule

    def compose(self) -> ComposeResult:
        yield Vertical(FieldTextArea("", soft_wrap=True), id="box")

    def on_mount(self) -> None:
        self.stylesheet.add_source(f"#box {{ width: 40; height: 20; }} FieldTextArea {{ height: auto; {self.rule} }}")
        self.stylesheet.reparse()
        self.stylesheet.update(self)


@pytest.mark.parametrize(
    "rule",
    ["max-height: 50%;", "max-height: 12; box-sizing: content-box;", "max-height: 9;"],
    ids=["percent", "content-box", "cells"],
)
async def test_the_wrap_is_textareas_own_as_a_text_grows_past_its_height_limit(rule):
    """Word by word, the text is wrapped where TextArea itself wraps it, and scrolls exactly when it has
    more lines than it shows, whatever unit or box sizing bounds its height: the limit is the one Textual
    resolved for the layout. Read from the rule by hand, a limit in % or in a content box came out
    otherwise, and the text was wrapped two columns short near it."""
    app = BoxedHost(rule)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    async with app.run_test(size=(50, 30)) as pilot:
        await pilot.pause()
        area = app.query_one(FieldTextArea)
        text = ""
        for count in range(80):
            text += words[count % len(words)] + " "
            area.load_text(text)
            await pilot.pause()
            await pilot.pause()
            own = WrappedDocument(area.document, width=area.wrap_width, tab_width=area.indent_width)
            assert area.wrapped_document._wrap_offsets == own._wrap_offsets, (len(text), area.wrap_width)
            assert area.show_vertical_scrollbar == (own.height > area.content_size.height), len(text)
        assert area.show_vertical_scrollbar  # it grew past its limit


async def test_a_layout_of_a_long_text_at_the_same_width_does_not_wrap_it_again():
    """A long text is wrapped again only at another width (TextArea keeps the wrap up to date as it is
    edited): every layout of its box wrapped the whole text again, ~0.1 s for a megabyte."""
    app = AutoHost(64, 12)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        area = app.query_one(FieldTextArea)
        wraps: list[int] = []
        real = area.wrapped_document.wrap
        area.wrapped_document.wrap = lambda width, tab_width=None: (wraps.append(width), real(width, tab_width))
        for _ in range(3):  # its box laid out again, as a line more or less, a rebuild, a theme do
            area.refresh(layout=True)
            await pilot.pause()
        assert wraps == []
        area.styles.width = 50  # another width: wrapped there
        await pilot.pause()
        await pilot.pause()
        assert wraps and area.wrapped_document.height > 0
        assert painted(app, area) == await repainted(pilot, area)
