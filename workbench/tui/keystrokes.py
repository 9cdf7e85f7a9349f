"""Keys one at a time, in the order they were typed, each to its end.

Textual hands a key to the focused widget's message queue and goes on to the
next key at once. What the key does happens later, in turns: the widget's own
handler, then each container it bubbles through (a queue each), then the app's
bindings (the case list's Home and End, an Input's backspace); a priority
binding runs at once, in the app's turn. So in a burst a later key overtook an
earlier one: Down (then a priority binding) moved the case list before Home,
still on its way up, so `Home Down Down Down` stayed on SKILL.md; and a key
typed after a case switch reached the old form, or the list, while the new form
was still being built.

Here every key and paste the terminal sends waits in one queue, and the next is
let through only once the one before has been handled to its end: its bindings
run, every message it set off handled (the case list's cursor moved, the case it
opened shown), every rebuild it started on screen done (`rebuild_between_keys`), what
waits for the next repaint done and the scroll to the focused field finished. A
burst then does what the same keys do typed slowly, whatever the widget."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from textual import events
from textual.dom import DOMNode
from textual.message_pump import MessagePump
from textual.widget import Widget

from workbench.tui import compat

if TYPE_CHECKING:
    from textual.app import App

# Seconds: a key whose effects take longer lets the next one go, so a bug can never
# hold the keys for good. Generous: a form build on a starved machine takes seconds.
LIMIT = 30.0


class Keystrokes:
    """The app's keys, let through one at a time (see the module's docstring)."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._waiting: deque[events.Event] = deque()
        self._let: set[events.Event] = set()  # keys let through, not yet looked at by the app
        self._rebuilds: dict[asyncio.Future[None], MessagePump] = {}  # each running rebuild: what it rebuilds
        self._last: MessagePump | None = None  # where the last key went
        self._deferred: list[Callable[[], None]] = []  # rebuilds put off while keys wait their turn
        self._running = False

    def take(self, event: events.Event) -> bool:
        """True: the key (or paste) from the terminal waits its turn here. False:
        the app handles the event as usual (any other event, a key on its way
        through the widgets, or the key whose turn it is)."""
        if not isinstance(event, (events.Key, events.Paste)) or event.is_forwarded:
            return False
        if event in self._let:
            self._let.discard(event)
            return False
        self._waiting.append(event)
        if not self._running:
            self._running = True
            # A worker: cancelled when the app closes, and an error in it is the app's (never a silent stop).
            self.app.run_worker(self._let_through(), name="keystrokes", group="keystrokes", exit_on_error=True)
        return True

    def rebuild(self, node: MessagePump, done: asyncio.Future[None], start: Callable[[], None]) -> None:
        """node is to be rebuilt: start begins it, done is set once it is on screen.
        Keys that could reach node wait until done. While keys wait their turn the
        rebuild waits for them (a burst in the case list builds only the form of
        the case it ends on), until a key needs the screen settled."""
        if not done.done():
            self._rebuilds[done] = node
            done.add_done_callback(lambda finished: self._rebuilds.pop(finished, None))
        if self._waiting:
            self._deferred.append(start)
        else:
            start()

    def _start_deferred(self) -> None:
        starts, self._deferred = self._deferred, []
        for start in starts:
            start()

    def _rebuilding(self, target: MessagePump) -> bool:
        """A rebuild is running in the target or around it."""
        around = target.ancestors_with_self if isinstance(target, DOMNode) else [target]
        return any(not done.done() and node in around for done, node in self._rebuilds.items())

    async def _let_through(self) -> None:
        try:
            while self._waiting:
                await self._handle(self._waiting.popleft())
        finally:
            self._running = False
            self._start_deferred()  # no key waits: what was put off is built now

    async def _handle(self, event: events.Event) -> None:
        """One key, to its end. A key that follows another into the same widget,
        where nothing around that widget is being rebuilt and which does not move
        the focus, waits only for its own messages and any scroll: what it acts on
        is up to date (a held arrow in the case list moves on while the form of the
        case it left is still being built, and the form builds only the latest case
        asked for, so a held key never runs seconds ahead of the screen). Any other
        key waits for the whole screen to settle."""
        app = self.app
        deadline = time.monotonic() + LIMIT
        try:
            target = app.focused or app.screen  # where the app sends it, unless a priority binding takes it
        except Exception:  # noqa: BLE001 - no screen: the app is closing
            return
        key = event.key if isinstance(event, events.Key) else None
        light = key is not None and target is self._last and not self._rebuilding(target) and not _moves_focus(app, key)
        if not light:
            await self._settle(deadline)  # what came before it (a rebuild the watcher started) is done
            try:
                target = app.focused or app.screen
            except Exception:  # noqa: BLE001 - no screen: the app is closing
                return
        self._last = target
        self._let.add(event)
        app.post_message(event)  # handled by Textual as it is: priority bindings, then the focused widget
        await _through([app], deadline)
        if light:
            await self._flush(deadline, target)
        else:
            await self._settle(deadline, target)

    async def _flush(self, deadline: float, target: Widget) -> None:
        """Until the key's widget and every container above it have handled what
        they hold; and any scroll it started has ended. Every container, even
        where the key itself stopped: what it set off (an Input's Changed, the
        edit the form makes of it) bubbles on, and a save typed next must find
        that edit made (a burst's last letters were missing from the file)."""
        for node in target.ancestors_with_self:
            for _ in range(50):
                await _through([node], deadline)
                if compat.queue_empty(node) or time.monotonic() >= deadline:
                    break
        if compat.animating(self.app):
            try:
                await asyncio.wait_for(self.app.animator.wait_until_complete(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                pass

    async def _settle(self, deadline: float, *also: Widget) -> None:
        """Until every message queued on screen (and in the app) is handled, no
        rebuild is running, no callback waits for the next repaint and no
        animation runs: the screen a person typing slowly would see."""
        app = self.app
        self._start_deferred()
        through_also = bool(also)  # the key may be in its widget's hands, its queue already empty
        for _ in range(50):  # a widget that never stops posting cannot hold the keys
            if time.monotonic() >= deadline or not app.is_running:
                return
            try:
                screen = app.screen
            except Exception:  # noqa: BLE001 - no screen: the app is closing
                return
            self._start_deferred()  # a rebuild the key itself asked for
            rebuilds = [done for done in list(self._rebuilds) if not done.done()]
            if rebuilds:
                await asyncio.wait(rebuilds, timeout=deadline - time.monotonic())
                continue
            busy = [node for node in _on_screen(app, also) if not compat.queue_empty(node)]
            if busy or through_also:
                through_also = False
                await _through(_deepest_first(busy, app, also), deadline)
                continue
            if compat.waiting_for_repaint(screen) and screen.is_running:  # e.g. a scroll once the new form is laid out
                waited: Awaitable[object] = screen.wait_for_refresh()
            elif compat.animating(app):  # a scroll to the focused field, animated
                waited = app.animator.wait_until_complete()
            else:
                return
            try:
                await asyncio.wait_for(waited, max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                return


def _moves_focus(app: App, key: str) -> bool:
    """The key is bound, on this screen, to an action that moves the focus (Tab,
    shift+Tab, F6...): where it lands depends on what is on screen."""
    if key in ("tab", "shift+tab"):
        return True
    for _node, bindings in compat.binding_chain(app.screen):
        if any("focus" in binding.action for binding in bindings.key_to_bindings.get(key, ())):
            return True
    return False


def _on_screen(app: App, also: Iterable[Widget]) -> list[MessagePump]:
    """The app, its screen and every widget on it, and the widgets a key went through."""
    nodes: list[MessagePump] = [app, *app.screen.walk_children(with_self=True)]
    for widget in also:
        nodes.extend(widget.ancestors_with_self)
    return nodes


def _deepest_first(busy: list[MessagePump], app: App, also: Iterable[Widget]) -> list[MessagePump]:
    """The busy nodes and everything above them that a message bubbling up would
    reach, the deepest first: one pass carries a message all the way up."""
    seen: dict[int, MessagePump] = {}
    starts: list[MessagePump] = [*busy, *also, app.screen]
    if app.focused is not None:
        starts.append(app.focused)
    for node in starts:
        for above in node.ancestors_with_self if isinstance(node, Widget) else [node]:
            seen.setdefault(id(above), above)
    return sorted(seen.values(), key=lambda node: -len(node.ancestors) if isinstance(node, DOMNode) else 0)


async def _through(nodes: Sequence[MessagePump], deadline: float) -> None:
    """Each node, in turn, has handled every message it held when its turn came."""
    loop = asyncio.get_running_loop()
    for node in nodes:
        done: asyncio.Future[None] = loop.create_future()
        if not node.is_running or not node.call_later(_resolve, done):
            continue
        while not done.done():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await asyncio.wait({done}, timeout=min(0.25, left))
            if not node.is_running:  # removed meanwhile: what it held went with it
                break


def _resolve(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


def rebuild_between_keys(node: MessagePump, done: asyncio.Future[None], start: Callable[[], None]) -> None:
    """node is to be rebuilt (see Keystrokes.rebuild); in an app without a key
    queue (a widget tested alone) it starts at once."""
    keystrokes = getattr(node.app, "keystrokes", None)
    if isinstance(keystrokes, Keystrokes):
        keystrokes.rebuild(node, done, start)
    else:
        start()
