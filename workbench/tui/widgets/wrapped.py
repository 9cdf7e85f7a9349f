"""A soft-wrapped TextArea painted with the wrap of the width it is shown at.

Textual paints a widget at its new size before the widget's Resize arrives, so those
lines of a TextArea use its old wrap. TextArea's own Resize handler rewraps and empties
its line cache, but repaints only if the wrapped height changed: a width change that
keeps the number of lines (a scrollbar coming beside the form, a column less of
terminal) left the old wrap on screen until something else repainted the field."""

from __future__ import annotations


class RepaintedWhenResized:
    """Mixin for a TextArea: a resize repaints it. Textual calls every class's own
    Resize handler in turn, so TextArea's rewrap still runs (after this; the paint
    waits for the next frame, which sees the new wrap)."""

    def _on_resize(self) -> None:
        if self.soft_wrap:  # type: ignore[attr-defined]
            self.refresh()  # type: ignore[attr-defined]
