"""The questions the workbench asks, in one place: before anything the user wrote could be lost, before
anything they did not write runs (trust), and before a run spends above their limit (cost)."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Input, Select, Static, TextArea

from workbench.errors import WorkbenchError
from workbench.formats.money import money
from workbench.tui.widgets.keys import OrderedTextArea

if TYPE_CHECKING:  # the editor opens with these dialogs: the pipeline loads when a run is asked for
    from workbench.app import pipeline
    from workbench.app.cost import Estimate

KEEP_MINE, TAKE_THEIRS, MERGE_BOTH = "mine", "theirs", "merge"
SAVE_ALL, DISCARD, CANCEL = "save", "discard", "cancel"


class ConflictDialog(ModalScreen[str | None]):
    """A file changed on disk while it has unsaved edits. Nothing is dropped
    until the person picks a side, or both: "Merge both" is offered when the two
    edits touch different lines and the merge parses. Escape decides nothing."""

    # Four choices fit an 80-column terminal when each button is as wide as its label.
    DEFAULT_CSS = "ConflictDialog #dialog .buttons Button { min-width: 10; width: auto; }"
    BINDINGS = [("escape", "dismiss_none", "Decide later")]
    AUTO_FOCUS = "#mine"

    def __init__(self, rel: str, mine: str, theirs: str, merged: str | None = None, why_not: str | None = None) -> None:
        super().__init__()
        self.rel, self.mine, self.theirs = rel, mine, theirs
        self.merged, self.why_not = merged, why_not

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(f"[b]{escape(self.rel)}[/b] changed on disk while you have unsaved edits.", id="question")
            yield Static(
                "Keep mine: your edits stay, and saving writes them over the file. "
                "Take theirs: the file as it is on disk replaces your edits. "
                "Merge both: their change and your edits together, unsaved, for you to review and save.",
                classes="help",
            )
            if self.merged is None:
                yield Static(
                    f"Merge both is not available: {self.why_not or 'the edits overlap'}.",
                    id="no-merge",
                    classes="help",
                )
            diff = OrderedTextArea("", read_only=True, id="diff", language=None)
            diff.display = False
            yield diff
            with Horizontal(classes="buttons"):
                yield Button("Keep mine", id="mine", variant="primary", tooltip="Keep your unsaved edits")
                yield Button("Take theirs", id="theirs", variant="warning", tooltip="Reload the file from disk")
                yield Button(
                    "Merge both",
                    id="merge",
                    disabled=self.merged is None,
                    tooltip=self.why_not or "Both changes, three-way from the text you loaded; unsaved until you save",
                )
                yield Button("Show diff", id="show-diff", tooltip="Compare your version with the file on disk")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "show-diff":
            diff = self.query_one("#diff", TextArea)
            lines = difflib.unified_diff(
                self.theirs.splitlines(True), self.mine.splitlines(True), f"{self.rel} (on disk)", f"{self.rel} (yours)"
            )
            diff.text = "".join(lines) or "(no difference)"
            diff.display = True
            return
        self.dismiss({"mine": KEEP_MINE, "theirs": TAKE_THEIRS, "merge": MERGE_BOTH}[event.button.id or "mine"])

    def action_dismiss_none(self) -> None:
        # Escape means "not now": both stay as they are; the next save asks again.
        self.dismiss(None)


class ConfirmDialog(ModalScreen[bool]):
    """A yes or no before doing something the person may not expect."""

    DEFAULT_CSS = "ConfirmDialog { align: center middle; }"
    BINDINGS = [("escape", "cancel", "Cancel")]
    AUTO_FOCUS = "#no"

    def __init__(self, question: str, yes: str, no: str = "Cancel") -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question, id="question")
            with Horizontal(classes="buttons"):
                yield Button(self.yes, id="yes", variant="warning")
                yield Button(self.no, id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_cancel(self) -> None:
        self.dismiss(False)


class QuitDialog(ModalScreen[str]):
    BINDINGS = [("escape", "cancel", "Cancel")]
    AUTO_FOCUS = "#cancel"

    def __init__(self, files: list[str]) -> None:
        super().__init__()
        self.files = files

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("[b]Unsaved edits[/b] in " + ", ".join(escape(f) for f in self.files) + ".", id="question")
            with Horizontal(classes="buttons"):
                yield Button("Save and quit", id=SAVE_ALL, variant="primary", tooltip="Save every file, then quit")
                yield Button("Quit without saving", id=DISCARD, variant="error", tooltip="Lose the unsaved edits")
                yield Button("Cancel", id=CANCEL, tooltip="Go back to editing")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id)

    def action_cancel(self) -> None:
        self.dismiss(CANCEL)


class WriteVersionDialog(ModalScreen[bool]):
    """Writing a version into the skill folder: the diff first, then a yes."""

    BINDINGS = [("escape", "cancel", "Cancel")]
    AUTO_FOCUS = "#no"

    def __init__(self, version: str, diff: str, doubt: str | None = None) -> None:
        super().__init__()
        self.version, self.diff, self.doubt = version, diff, doubt

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            # A doubt about promoting it at all (below the best, no win) comes first, in words.
            doubt = f"{escape(self.doubt)}. " if self.doubt else ""
            yield Static(
                f"{doubt}[b]Write {self.version} into the skill folder?[/b] These changes would be made:",
                id="question",
            )
            yield OrderedTextArea(self.diff, read_only=True, id="diff", language=None)
            with Horizontal(classes="buttons"):
                yield Button(
                    f"Write {self.version}",
                    id="yes",
                    variant="warning",
                    tooltip="Make it the current best and write its files",
                )
                yield Button("Cancel", id="no", tooltip="Write nothing, promote nothing")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_cancel(self) -> None:
        self.dismiss(False)


class BriefDialog(ModalScreen[tuple[str, str, str] | None]):
    """What the proposer will be told, editable, and which proposer: (brief, proposer, its command)."""

    BINDINGS = [("escape", "cancel", "Cancel")]
    AUTO_FOCUS = "#brief"

    def __init__(self, version: str, brief: str, proposers: tuple[str, ...], chosen: str = "claude") -> None:
        super().__init__()
        self.version, self.brief, self.proposers, self.chosen = version, brief, proposers, chosen

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(  # a Static wraps: the whole sentence shows at any width
                f"[b]Propose the next version from {self.version}[/b]: the proposer rewrites a copy of its files "
                "from this brief (edit it as you like; evals/ stay out of its reach).",
                id="question",
            )
            yield OrderedTextArea(self.brief, id="brief", language="markdown")
            with Horizontal(classes="buttons"):
                yield Select(
                    [(p, p) for p in self.proposers],
                    value=self.chosen,
                    allow_blank=False,
                    id="proposer",
                    compact=True,
                    tooltip="The agent that rewrites the skill",
                )
                yield Input(placeholder="command (for command)", id="proposer-command", compact=True)
                yield Button("Propose", id="yes", variant="primary", tooltip="Run the proposer on a copy")
                yield Button("Cancel", id="no", tooltip="Propose nothing")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id != "yes":
            self.dismiss(None)
            return
        proposer = str(self.query_one("#proposer", Select).value)
        command = self.query_one("#proposer-command", Input).value.strip()
        if proposer == "command" and not command:
            self.notify("The command proposer needs its command.", severity="warning")
            return
        self.dismiss((self.query_one("#brief", TextArea).text, proposer, command))

    def action_cancel(self) -> None:
        self.dismiss(None)


class TrustDialog(ModalScreen[bool]):
    """Shows exactly what would run before a command the workbench did not write runs."""

    AUTO_FOCUS = "#no"
    BINDINGS = [Binding("escape", "dismiss(False)", "Cancel", tooltip="Run nothing", id="trust-cancel")]

    def __init__(self, commands: list[str]) -> None:
        super().__init__()
        self.commands = commands

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(  # first, and wrapped: the question shows at any size
                "[b]These commands would run[/b], and the workbench did not write them "
                "(each says what it is for). Trust exactly these?",
                id="question",
            )
            with VerticalScroll(id="trust-commands"):
                for command in self.commands:
                    yield Static(f"  $ {command}", classes="const", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Trust and run", id="yes", variant="warning", tooltip="Run these commands")
                yield Button("Cancel", id="no", tooltip="Run nothing")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class CostDialog(ModalScreen[bool]):
    """The estimate is above the config's confirm_above_usd: said before anything starts."""

    AUTO_FOCUS = "#no"
    BINDINGS = [Binding("escape", "dismiss(False)", "Cancel", tooltip="Run nothing", id="cost-cancel")]

    def __init__(self, line: str, basis: str, limit: float) -> None:
        super().__init__()
        self.line, self.basis, self.limit = line, basis, limit

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(f"[b]{escape(self.line)}[/b]", id="question")
            yield Static(
                f"That is above confirm_above_usd, {money(self.limit)} (the config file). Estimated {self.basis}.",
                markup=False,
            )
            with Horizontal(classes="buttons"):
                yield Button("Run it", id="yes", variant="warning", tooltip="Start the run")
                yield Button("Cancel", id="no", tooltip="Run nothing")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


# The flows that ask: coroutines of a screen's @work worker, each question awaited (push_screen_wait).

ASKING = "asks:"  # the group of every flow's worker: what waits on a person, not on work (tests/tui/helpers.py)


def flow(name: str, exclusive: bool = True) -> Any:
    """A screen's flow: a @work coroutine that awaits the person's answers, one of `name` at a time (not
    exclusive: each its own, as each file's conflict is asked about in turn). A failure it did not expect
    is said on screen, never dropped (exit_on_error=False keeps the app and the person's edits)."""

    def decorate(method: Callable[..., Awaitable[None]]) -> Any:
        @functools.wraps(method)
        async def said(node: Screen | App, *args: Any, **kwargs: Any) -> None:
            try:
                await method(node, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - said, with its kind, where the person looks
                node.notify(f"{name} failed: {type(exc).__name__}: {escape(str(exc))}", severity="error", timeout=20)

        return work(exclusive=exclusive, group=ASKING + name, exit_on_error=False)(said)

    return decorate


class Trusting(Protocol):
    """What asks trust before it runs: a prepared run or trigger evaluation, a regrade."""

    def untrusted(self) -> list[Any]: ...

    def trust(self) -> None: ...


async def trusted(screen: Screen, asker: Trusting) -> bool:
    """True once every command `asker` would run is trusted (the app's one trust rule): asks with the
    exact list first; False on Cancel, and then nothing runs."""
    asks = asker.untrusted()
    if not asks:
        return True
    if not await screen.app.push_screen_wait(TrustDialog(asks)):
        return False
    asker.trust()
    return True


async def cost_agreed(screen: Screen, estimate: Estimate | None) -> bool:
    """True when the run may spend what it is estimated to: above the config's confirm_above_usd, once the
    person said yes (app/cost.py's one rule; the CLI's --yes has no twin here: a person is here)."""
    from workbench.app.cost import ask_first

    try:
        asked = ask_first(estimate)
    except WorkbenchError as exc:
        screen.notify(str(exc), severity="error")
        return False
    if asked is None:
        return True
    agreed: bool = await screen.app.push_screen_wait(
        CostDialog(asked.estimate.line(), asked.estimate.basis, asked.limit_usd)
    )
    return agreed


async def prepared_and_trusted(screen: Screen, request: Callable[[], pipeline.RunRequest]) -> pipeline.Prepared | None:
    """The pipeline from a screen: the request prepared (its problems and warnings as notices) and every
    command it would run trusted; None when it cannot start or the person said no."""
    from workbench.app import pipeline

    try:
        prepared = pipeline.prepare(request())
    except WorkbenchError as exc:
        screen.notify(problem(exc), severity="error", timeout=10)
        return None
    except ValueError as exc:  # a number field that does not parse
        screen.notify(str(exc), severity="error")
        return None
    for warning in prepared.warnings:  # no sandbox here, a same-named skill in the user's scope
        screen.notify(warning, severity="warning", timeout=15)
    return prepared if await trusted(screen, prepared) else None


def problem(exc: WorkbenchError) -> str:
    """A WorkbenchError as one notice: the message, and the first diagnostics of a file."""
    diagnostics = getattr(exc, "diagnostics", None)
    if diagnostics:
        path = getattr(exc, "path", "")
        shown = "; ".join(f"line {d.line}: {d.message}" for d in diagnostics[:3])
        return f"{getattr(path, 'name', path)} has {len(diagnostics)} error(s), fix them first: {shown}"
    return str(exc)
