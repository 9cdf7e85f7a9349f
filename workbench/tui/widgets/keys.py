"""A field's own keys, acted on where the field gets them.

Textual inserts a printable key in an Input or TextArea as soon as the widget
gets it, but runs the widget's own bindings (backspace, delete, arrows, home,
end, ...) only once the key has bubbled up to the app, one container's message
queue at a time. A field of ours runs its own bindings where it gets the key:
the key is done in one hop instead of six. (The order of keys no longer depends
on it: the app lets a key through only once the one before is done,
workbench/tui/keystrokes.py; before that, `End ⌫⌫⌫ abc` on "flag" gave
"flagabc" with the deletions after.) The focused widget's bindings are the first
the app would try anyway; nothing else changes.
"""

from __future__ import annotations

from textual import events
from textual.widgets import TextArea

from workbench.tui import compat
from workbench.tui.widgets.steady import SteadyInput
from workbench.tui.widgets.wrapped import RepaintedWhenResized


class KeysInOrder:
    """Mixin for an Input or TextArea: its own non-priority bindings run on arrival."""

    async def _on_key(self, event: events.Key) -> None:
        for binding in compat.own_bindings(self, event.key):  # type: ignore[arg-type]
            if not binding.priority and await self.app.run_action(binding.action, self):  # type: ignore[attr-defined]
                event.stop()
                event.prevent_default()
                return
        await super()._on_key(event)  # type: ignore[misc]


class OrderedInput(KeysInOrder, SteadyInput):
    pass


class OrderedTextArea(KeysInOrder, RepaintedWhenResized, TextArea):
    pass
