"""Every private part of Textual the app relies on, in one place.

Each has its reason where it is used (a cost Textual's public API would pay on every
key, or a bug in its seams); together they are what a Textual upgrade must check.
tests/tui/test_compat.py is their canary: it exercises each access below on the pinned
Textual, and checks that each private method a widget of ours overrides (OVERRIDES)
still exists with the parameters ours expects. A change in Textual fails it, naming
the access. Add a new private access here, never inline, and give it a canary.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from textual.widget import Widget
from textual.widgets import Checkbox, Input, Select, TextArea, Tree
from textual.widgets._footer import FooterKey
from textual.widgets._select import SelectCurrent, SelectOverlay

if TYPE_CHECKING:
    from rich.text import Text
    from textual.app import App
    from textual.binding import Binding, BindingsMap
    from textual.geometry import Size
    from textual.message_pump import MessagePump
    from textual.screen import Screen
    from textual.widgets import Footer
    from textual.widgets.tree import TreeNode

__all__ = ["FooterKey", "SelectCurrent", "SelectOverlay"]  # Textual's own parts, not exported by it

# (Textual's class, its private method, the parameters our override takes): overridden by
# widgets of ours, so a rename or a new parameter in Textual would leave ours uncalled.
OVERRIDES: tuple[tuple[type, str, tuple[str, ...] | None], ...] = (
    (Input, "_on_key", ("self", "event")),  # keys.KeysInOrder: a field's own keys where it gets them
    (TextArea, "_on_key", ("self", "event")),
    (Input, "_watch_value", ("self", "value")),  # steady.SteadyInput: typing lays nothing out
    (Select, "_watch_value", ("self", "value")),  # field_kinds.FieldSelect: a Select being removed
    (Select, "_on_mount", ("self", "_event")),  # field_kinds.FieldSelect: a Select being removed
    (TextArea, "_on_resize", ("self",)),  # wrapped.RepaintedWhenResized: the wrap of the new width
    (Tree, "_invalidate", ("self",)),  # navigator.Navigator: nodes added in a row, laid out once
    (Checkbox, "_button", None),  # marks.MarkedCheckbox: a ✓ in the box (a property)
)
# Screen._on_update (screens/editor.py) and App._handle_exception (app.py) are checked too:
# they are named in the canary beside the classes that define them.


def queue_empty(node: MessagePump) -> bool:
    """Nothing waits in the node's message queue (keystrokes.py: a key let through once
    the one before is done)."""
    return node._message_queue.empty()


def animating(app: App) -> bool:
    """An animation (a scroll to the focused field) is running."""
    return not app.animator._complete_event.is_set()


def waiting_for_repaint(screen: Screen) -> bool:
    """A callback waits for the screen's next repaint (call_after_refresh)."""
    return bool(screen._callbacks)


def binding_chain(screen: Screen) -> list[tuple[Any, BindingsMap]]:
    """The screen's bindings, from the focused widget outwards, as Textual looks them up."""
    return screen._binding_chain


def own_bindings(widget: Widget, key: str) -> tuple[Binding, ...]:
    """The widget's own bindings of a key (not its ancestors')."""
    return tuple(widget._bindings.key_to_bindings.get(key, ()))


def out_of_sight(screen: Screen, widget: Widget) -> bool:
    """The widget is laid out on the screen, the layout is current, and it is not visible."""
    compositor = screen._compositor
    return (
        not compositor._full_map_invalidated
        and widget in compositor._full_map
        and widget not in compositor.visible_widgets
    )


def pending_children(widget: Widget) -> list[Widget]:
    """The children a widget not yet mounted was built with."""
    return list(widget._pending_children)


def wrapped_at(area: TextArea) -> tuple[int, int]:
    """(width, tab width) a TextArea's wrapped document was last wrapped at (kept up to date by its edits)."""
    return area.wrapped_document._width, area.wrapped_document._tab_width


def most_content_lines(widget: Widget, container: Size) -> Fraction | None:
    """The most lines of content Textual gives a widget of auto height in the layout being made (its
    max-height resolved, box sizing and all), read in its get_content_height: Textual resolves it for
    the box model just before asking (Widget._get_box_model), and leaves it out, as there, for a
    relative max-height in a container of no height yet whose parent has an auto height. None: no limit."""
    limit = widget._extrema.max_height
    scalar = widget.styles.max_height
    if limit is None or scalar is None:
        return None
    parent = widget._parent
    if container.height == 0 and not scalar.is_cells and isinstance(parent, Widget) and parent.styles.is_auto_height:
        return None
    return limit


def rename(widget: Widget, name: str) -> None:
    """Set a widget's name (`name` has no setter)."""
    widget._name = name


def set_select_value_quietly(select: Select[Any], value: Any) -> None:
    """A Select's value held without its watcher (its parts are gone: it is being removed)."""
    select._value = value


def footer_ready(footer: Footer) -> bool:
    """The footer has its bindings (it composes nothing before)."""
    return bool(footer._bindings_ready)


def relabel_hint(
    key: FooterKey, key_name: str, display: str, description: str, action: str, disabled: bool, tooltip: str
) -> None:
    """A footer key shows another hint, in place (FooterKey keeps whether it is disabled in `_disabled`,
    which a click reads; its look is the -disabled class). Drawn again, laid out again if its size changed."""
    old = (key.key_display, key.description)
    key.key, key.key_display, key.description, key.action = key_name, display, description, action
    key._disabled = disabled
    key.set_class(disabled, "-disabled")
    key.tooltip = tooltip or None
    key.refresh(layout=(display, description) != old)


def node_label(node: TreeNode[Any]) -> Text:
    """A tree node's label as drawn."""
    return node._label


def node_expandable(node: TreeNode[Any]) -> bool:
    return node._allow_expand


def relabel(tree: Tree[Any], node: TreeNode[Any], label: str | Text) -> None:
    """A node's label set and only its own line repainted (Tree.set_label repaints
    every line below it too)."""
    node._label = tree.process_label(label)
    node._updates += 1  # the line cache's key: the line is rendered again
    if node.line >= 0:
        tree._refresh_line(node.line)


def restyle_lines(tree: Tree[Any]) -> None:
    """New styles on a tree: its lines drawn again, not laid out again (Tree's own
    notify_style_update lays every line out anew, measuring each label)."""
    Widget.notify_style_update(tree)
    tree._line_cache.clear()
    tree._updates += 1
    tree.refresh()


def private_methods() -> Iterator[tuple[type, str, tuple[str, ...] | None]]:
    """OVERRIDES and the two handlers overridden on App and Screen."""
    from textual.app import App
    from textual.screen import Screen

    yield from OVERRIDES
    yield Screen, "_on_update", ("self", "message")
    yield App, "_handle_exception", ("self", "error")
