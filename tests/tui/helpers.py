"""What the TUI tests share: waiting for the app to be still, finding a field."""

from __future__ import annotations

SIZE = (140, 44)


async def settle(pilot) -> None:
    """Until queued messages, form rebuilds and loading workers are done."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def field_at(app, kind, pointer: str):
    """The editing widget of a kind (Input, Select, ...) for a JSON Pointer."""
    return next(w for w in app.screen.query(kind) if getattr(w, "pointer", None) == pointer)


async def focused(pilot, widget):
    """The widget, focused as a person's change would find it: the form takes a change
    for the person's only in the focused field (any other is the form showing a value)."""
    widget.focus()
    await pilot.pause()
    return widget
