"""The canary of workbench/tui/compat.py: every private part of Textual the app relies on,
exercised on the pinned Textual. A Textual upgrade that renames, removes or changes one fails
here, the test's id naming the access, before a screen misbehaves."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import BindingsMap
from textual.containers import Horizontal, VerticalScroll
from textual.geometry import Size
from textual.widgets import Button, Footer, Input, Select, Static, TextArea, Tree

from workbench.tui import compat

ROOT = Path(__file__).resolve().parents[2]


def _named(entry: tuple[type, str, tuple[str, ...] | None]) -> str:
    return f"{entry[0].__name__}.{entry[1]}"


@pytest.mark.parametrize("entry", list(compat.private_methods()), ids=_named)
def test_each_private_method_ours_overrides_is_still_textuals_with_its_parameters(entry):
    cls, name, parameters = entry
    owners = [klass for klass in cls.__mro__ if name in vars(klass) and klass.__module__.startswith("textual")]
    assert owners, f"Textual's {cls.__name__} no longer has {name}: the override of it in workbench/tui is never called"
    found = inspect.getattr_static(cls, name)
    if parameters is None:
        assert isinstance(found, property), f"Textual's {cls.__name__}.{name} is no longer a property"
    else:
        got = tuple(inspect.signature(found).parameters)
        assert got == parameters, f"Textual's {cls.__name__}.{name} now takes {got}, ours {parameters}"


def test_no_private_textual_access_outside_compat():
    """A private import from Textual's modules, or an attribute only Textual defines, is compat's."""
    offenders = []
    for path in (ROOT / "workbench" / "tui").rglob("*.py"):
        if path.name == "compat.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "from textual.widgets._" in line or "from textual._" in line:
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
            for private in ("._message_queue", "._compositor", "._line_cache", "._binding_chain", "._bindings."):
                if private in line:
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "private Textual access outside workbench/tui/compat.py:\n" + "\n".join(offenders)


class Host(App):
    BINDINGS = [("ctrl+y", "focus_next", "next")]

    def compose(self) -> ComposeResult:
        tree: Tree[str] = Tree("root", id="tree")
        tree.root.add("folder").add_leaf("leaf")
        tree.root.expand_all()
        yield tree
        yield Select([("one", 1), ("two", 2)], value=1, id="select")
        with VerticalScroll(id="scroll"):
            yield Input(id="input")
            yield Button("act", id="button", name="before")
            for number in range(80):
                yield Static(f"line {number}", id=f"line{number}")
        yield Footer()


async def test_each_private_access_works_on_the_pinned_textual():
    app = Host()
    async with app.run_test(size=(60, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        field = app.query_one(Input)
        field.focus()
        await pilot.pause()

        # out_of_sight: laid out but below the fold, or visible (before anything scrolls)
        last = app.query_one("#line79", Static)
        assert compat.out_of_sight(screen, last) is True, "out_of_sight: Compositor maps"
        assert compat.out_of_sight(screen, app.query_one("#line0", Static)) is False

        # queue_empty, animating, waiting_for_repaint
        assert compat.queue_empty(app) is True
        assert compat.animating(app) is False
        for _ in range(100):  # the focus above may still wait for a repaint on a busy machine
            if not compat.waiting_for_repaint(screen):
                break
            await pilot.pause()
        assert compat.waiting_for_repaint(screen) is False
        screen._invoke_later(lambda: None, app)  # where call_after_refresh's message lands
        assert compat.waiting_for_repaint(screen) is True, "waiting_for_repaint: Screen._callbacks"
        for _ in range(100):  # a busy machine may take a few frames to repaint
            await pilot.pause()
            if not compat.waiting_for_repaint(screen):
                break
        assert compat.waiting_for_repaint(screen) is False, "waiting_for_repaint: emptied by the repaint"
        scroll = app.query_one("#scroll", VerticalScroll)
        scroll.scroll_end(animate=True, duration=60)  # still running when looked at, however busy the machine
        await pilot.pause(0.05)
        assert compat.animating(app) is True, "animating: App.animator._complete_event"
        await app.animator.stop_animation(scroll, "scroll_y")
        await app.animator.wait_until_complete()
        assert compat.animating(app) is False

        # binding_chain, own_bindings
        chain = compat.binding_chain(screen)
        assert chain and all(isinstance(bindings, BindingsMap) for _node, bindings in chain), "binding_chain"
        assert chain[0][0] is field, "binding_chain: the focused widget first"
        app_bindings = chain[-1][1].key_to_bindings["ctrl+y"]
        assert [binding.action for binding in app_bindings] == ["focus_next"], "binding_chain: the app's last"
        own = [binding.action for binding in compat.own_bindings(field, "backspace")]
        assert own == ["delete_left"], "own_bindings"
        assert compat.own_bindings(field, "ctrl+y") == (), "own_bindings: the widget's own only"

        # pending_children
        built = Horizontal(Static("a"), Static("b"))
        assert [type(child) for child in compat.pending_children(built)] == [Static, Static], "pending_children"

        # rename
        button = app.query_one(Button)
        compat.rename(button, "after")
        assert button.name == "after", "rename: Widget._name"

        # footer_ready
        assert compat.footer_ready(app.query_one(Footer)) is True, "footer_ready: Footer._bindings_ready"

        # relabel_hint: a click on a key reads FooterKey._disabled
        hint = compat.FooterKey("a", "A", "old", "app.old")
        compat.relabel_hint(hint, "b", "B", "new", "app.new", True, "told")
        assert (hint.key, hint.key_display, hint.description, hint.action) == ("b", "B", "new", "app.new")
        assert hint._disabled is True and hint.has_class("-disabled"), "relabel_hint: FooterKey._disabled"
        assert "self._disabled" in inspect.getsource(compat.FooterKey.on_mouse_down), (
            "relabel_hint: FooterKey._disabled"
        )

        # node_label, node_expandable, relabel, restyle_lines
        tree = app.query_one(Tree)
        folder = tree.root.children[0]
        assert compat.node_label(folder).plain == "folder", "node_label: TreeNode._label"
        assert compat.node_expandable(folder) is True and compat.node_expandable(folder.children[0]) is False
        compat.relabel(tree, folder, Text("renamed"))
        await pilot.pause()
        assert folder.label.plain == "renamed", "relabel"
        assert any("renamed" in strip.text for strip in screen._compositor.render_strips()), "relabel: repainted"
        compat.restyle_lines(tree)
        await pilot.pause()
        assert any("renamed" in strip.text for strip in screen._compositor.render_strips()), "restyle_lines"


async def test_a_select_value_held_quietly_is_the_one_it_mounts_with():
    """FieldSelect holds a value this way while its parts are gone; Select reads it when it mounts."""

    class Late(App):
        def compose(self) -> ComposeResult:
            yield VerticalScroll(id="box")

    app = Late()
    async with app.run_test() as pilot:
        select: Select[int] = Select([("one", 1), ("two", 2)], value=1)
        compat.set_select_value_quietly(select, 2)
        await app.query_one("#box").mount(select)
        await pilot.pause()
        assert select.value == 2, "set_select_value_quietly: Select._value, read at its mount"


class Bounded(App):
    CSS = "#bounded { height: auto; max-height: 6; } #free { height: auto; }"

    def compose(self) -> ComposeResult:
        yield TextArea("a few words " * 20, soft_wrap=True, id="bounded")
        yield TextArea("free", soft_wrap=True, id="free")


async def test_a_text_areas_wrap_and_its_height_limit_are_read_where_textual_keeps_them():
    app = Bounded()
    async with app.run_test(size=(40, 30)) as pilot:
        await pilot.pause()
        bounded, free = app.query_one("#bounded", TextArea), app.query_one("#free", TextArea)
        # wrapped_at: WrappedDocument._width and _tab_width, as TextArea last wrapped it
        assert compat.wrapped_at(bounded) == (bounded.wrap_width, bounded.indent_width), "wrapped_at"
        bounded.wrapped_document.wrap(11, tab_width=3)
        assert compat.wrapped_at(bounded) == (11, 3), "wrapped_at: WrappedDocument._width/_tab_width"
        # most_content_lines: Widget._extrema, resolved for the box model (6 less its border of 2)
        assert compat.most_content_lines(bounded, Size(36, 28)) == 4, "most_content_lines: Widget._extrema"
        assert compat.most_content_lines(free, Size(36, 28)) is None, "most_content_lines"
