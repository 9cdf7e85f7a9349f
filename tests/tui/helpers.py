"""What the TUI tests share: waiting for the app to be still, finding a field."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from textual.screen import ModalScreen, Screen

from workbench.tui.screens.dialogs import ASKING

SIZE = (140, 44)
S = TypeVar("S", bound=Screen)


async def settle(pilot) -> None:
    """Until queued messages, form rebuilds and loading workers are done."""
    await pilot.pause()
    await workers_done(pilot.app)
    await pilot.pause()


async def workers_done(app, seconds: float = 300) -> None:
    """Until every worker has finished, but a flow awaiting the person's answer in the dialog on screen
    (tui/screens/dialogs.py: flow): that one waits for the test's click."""
    deadline = time.monotonic() + seconds
    while True:
        busy = [w for w in app.workers if not w.is_finished]
        if not busy:
            return
        if isinstance(app.screen, ModalScreen) and all(w.group.startswith(ASKING) for w in busy):
            return
        assert time.monotonic() < deadline, f"workers still busy after {seconds} s: {[w.name for w in busy]}"
        await asyncio.sleep(0.01)


async def opened(pilot, key: str, kind: type[S]) -> S:
    """The app still, `key` pressed (ctrl+o, ctrl+l ...), and the screen it opened, checked to be a `kind`."""
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, kind)
    return screen


def field_at(app, kind, pointer: str):
    """The editing widget of a kind (Input, Select, ...) for a JSON Pointer."""
    return next(w for w in app.screen.query(kind) if getattr(w, "pointer", None) == pointer)


async def focused(pilot, widget):
    """The widget, focused as a person's change would find it: the form takes a change
    for the person's only in the focused field (any other is the form showing a value)."""
    widget.focus()
    await pilot.pause()
    return widget


@contextmanager
def restyled(app) -> Iterator[list]:
    """The nodes Textual restyles meanwhile (every call of the stylesheet's update_nodes), in a list."""
    nodes_restyled: list = []
    real = app.stylesheet.update_nodes

    def counted(nodes, animate=False):
        nodes = list(nodes)
        nodes_restyled.extend(nodes)
        return real(nodes, animate=animate)

    app.stylesheet.update_nodes = counted
    try:
        yield nodes_restyled
    finally:
        app.stylesheet.update_nodes = real
