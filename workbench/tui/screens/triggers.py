"""The Triggers screen: does the skill trigger? The skill's trigger eval set with
the latest results (errors, misses and false triggers first), a trigger
evaluation (t) and description optimization (o) with the split, the rounds and
the best held-out score as they come. The same core as `workbench trigger` and
`workbench optimize-description` (docs/triggers.md)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Input, Log, Select, Static

from workbench.app import offered, optimize_description, triggers
from workbench.app.choices import Agent, Limits, Proposer
from workbench.app.progress import Dispatch
from workbench.errors import WorkbenchError
from workbench.formats.money import money
from workbench.session import SkillSession
from workbench.tui.screens.dialogs import ConfirmDialog, cost_agreed, flow, problem, trusted
from workbench.tui.widgets.agent_options import Labelled, OptionGrid, chosen_by_default
from workbench.tui.widgets.footer import FittingFooter
from workbench.tui.widgets.limits_form import compose_limits, limit_ids, read_limits
from workbench.workspace import layout

MARKS = {"ok": "ok", "miss": "[red]MISS[/]", "false trigger": "[red]FALSE TRIGGER[/]", "error": "[yellow]ERROR[/]"}


class TriggersScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Edit", tooltip="Back to editing the skill", id="triggers-back"),
        Binding("t", "trigger", "Evaluate", tooltip="Run every query through the agent and measure", id="trigger"),
        Binding(
            "o",
            "optimize",
            "Optimize",
            tooltip="Propose descriptions from the train queries; keep one only if it wins on held-out ones",
            id="optimize",
        ),
        Binding("x", "stop", "Stop", tooltip="Stop the evaluation or the optimization", id="trigger-stop"),
    ]
    KEY_HINTS = (
        "triggers-back",
        "trigger",
        "trigger-stop",
        "quit",
    )  # the footer's first hints

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-normal"), (140, "-wide")]  # the option grid's columns
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]  # short: the options scroll, the queries keep rows

    def __init__(self, session: SkillSession) -> None:
        super().__init__()
        self.session = session
        self.workspace = layout.default_workspace(session.root)
        self.busy = False
        self.stopping: threading.Event | None = None
        self.prepared: triggers.PreparedTriggers | None = None
        self.row_of: dict[str, str] = {}  # query -> its row's key
        self.recalled = False  # the options kept from the last visit are back in their fields (recall_options)

    def compose(self) -> ComposeResult:
        yield Static("", id="triggers-status")
        with VerticalScroll(id="trigger-form"), OptionGrid(id="trigger-options"):
            yield Labelled(
                "Agent",
                Select(
                    [(n, n) for n in offered.executor_names()],
                    value=chosen_by_default()[0],  # the config's executor, as the Runs screen starts
                    allow_blank=False,
                    id="trigger-executor",
                    compact=True,
                ),
            )
            yield Labelled("Agent command", Input(placeholder="with command", id="trigger-command", compact=True))
            yield Labelled("Model", Input(placeholder="agent's default", id="trigger-model", compact=True))
            yield from compose_limits(Limits.for_triggers(), "trigger", "trigger-")
            yield Labelled("Held out", Input("0.4", id="holdout", type="number", compact=True))
            yield Labelled("Rounds", Input("3", id="rounds", type="integer", compact=True))
            yield Labelled(
                "Proposer",
                Select(
                    [(n, n) for n in offered.PROPOSERS], value="claude", allow_blank=False, id="proposer", compact=True
                ),
            )
            yield Labelled("Proposer command", Input(placeholder="with command", id="proposer-command", compact=True))
        with Vertical(id="triggers-body"):
            table: DataTable[str] = DataTable(id="queries", cursor_type="row")
            for column in ("result", "runs", "expected", "query"):
                table.add_column(column, key=column)
            yield table
            yield Log(id="trigger-log", max_lines=5000)
        yield FittingFooter()

    FIELDS = ("trigger-command", "trigger-model", "holdout", "rounds", "proposer-command")
    SELECTS = ("trigger-executor", "proposer")

    def remember(self) -> None:
        """The options as typed, kept by the app for the next visit (not written anywhere)."""
        kept: dict[str, object] = {}
        for name in (*self.FIELDS, *self.SELECTS, *limit_ids("trigger", "trigger-")):
            widget = self.query_one(f"#{name}")
            if isinstance(widget, (Input, Select, Checkbox)):
                kept[name] = widget.value
        self.app.trigger_options = kept  # type: ignore[attr-defined]

    def recall_options(self) -> None:
        kept = getattr(self.app, "trigger_options", None) or {}
        for key, value in kept.items():
            widget = self.query_one(f"#{key}")
            if isinstance(widget, (Input, Select, Checkbox)):
                widget.value = value
        self.recalled = True

    @on(Input.Changed)
    @on(Select.Changed)
    @on(Checkbox.Changed)
    def option_changed(self) -> None:
        """Kept as typed, whichever way the person leaves (Escape too), once the kept ones are back: a
        change the fields report before that is their first value, not the person's."""
        if self.recalled:
            self.remember()

    def on_unmount(self) -> None:
        # Leaving (or quitting) stops what runs: nothing goes on where no one sees it.
        if self.stopping is not None:
            self.stopping.set()

    def on_mount(self) -> None:
        self.recall_options()
        self.query_one("#queries", DataTable).border_title = "Queries"
        self.query_one("#trigger-log", Log).border_title = "Optimization"
        self.show_latest()
        self.show_optimization()
        self.query_one("#queries", DataTable).focus()  # t, o and x act from here (a field would take the letter)

    # ------------------------------------------------------------ showing

    def queries_file(self) -> Path:
        return triggers.default_queries(self.session.root)

    def show_latest(self) -> None:
        status = self.query_one("#triggers-status", Static)
        table = self.query_one("#queries", DataTable)
        table.clear()
        try:
            queries = triggers.read_queries(self.queries_file())
        except WorkbenchError as exc:
            status.update(f"[b]{escape(self.session.name)}[/b]: {escape(problem(exc))}")
            return
        found = triggers.latest_results(self.workspace, self.queries_file())
        if isinstance(found, str):
            status.update(f"[b]{escape(self.session.name)}[/b]: [red]{escape(found)}[/]")
            rows = [(q.query, q.should_trigger, "", "") for q in queries]
        elif found is None:
            status.update(
                f"[b]{escape(self.session.name)}[/b]: {len(queries)} queries in {self.queries_file().name}, not"
                " measured yet. Press [b]t[/b] to measure, [b]o[/b] to optimize the description."
            )
            rows = [(q.query, q.should_trigger, "", "") for q in queries]
        else:
            path, results = found
            scores = triggers.Scores.of(results)
            status.update(
                f"[b]{escape(self.session.name)}[/b], {self.queries_file().name}, latest measurement "
                f"({escape(str(path.parent.name))}): "
                + " · ".join(escape(scores.line(name)) for name in ("recall", "precision", "accuracy"))
            )
            rows = [
                (r.query, r.should_trigger, r.kind, f"{r.triggered}/{r.runs}" if r.runs else "-")
                for r in triggers.listed(results)
            ]
        self.row_of = {}
        for number, (query, should, kind, runs) in enumerate(rows):
            key = f"row-{number}"  # a broken results.json may repeat a query: keys never come from the data
            self.row_of.setdefault(query, key)
            table.add_row(
                MARKS.get(kind, "-"), runs, "trigger" if should else "not", escape(triggers.visible(query)), key=key
            )

    def show_optimization(self) -> None:
        log = self.query_one("#trigger-log", Log)
        facts = optimize_description.progress(self.workspace, self.queries_file())
        if facts:
            log.write_line(facts)

    # ------------------------------------------------------------ options

    def text(self, widget_id: str) -> str:
        return self.query_one(f"#{widget_id}", Input).value.strip()

    def request(self) -> triggers.TriggerRequest:
        executor = str(self.query_one("#trigger-executor", Select).value)
        return triggers.TriggerRequest(
            self.session.root,
            agent=Agent(executor, self.text("trigger-command") or None, self.text("trigger-model") or None),
            limits=read_limits(self, Limits.for_triggers(), "trigger", "trigger-"),
        )

    # ------------------------------------------------------------ evaluating

    def action_trigger(self) -> None:
        self.remember()
        if self.busy:
            self.notify("Already at work: x stops it.", severity="warning")
            return
        try:
            prepared = triggers.prepare(self.request())
        except WorkbenchError as exc:
            self.notify(problem(exc), severity="error", timeout=10)
            return
        except ValueError as exc:
            self.notify(str(exc), severity="error")
            return
        for warning in prepared.warnings:
            self.notify(warning, severity="warning", timeout=15)
        self.trigger_flow(prepared)

    @flow("trigger")
    async def trigger_flow(self, prepared: triggers.PreparedTriggers) -> None:
        """Above the config's confirm_above_usd, asked first (as the Runs screen asks); then trust; then measured."""
        if not await cost_agreed(self, prepared.estimate) or not await trusted(self, prepared):
            return
        if self.busy:  # another began while this one asked
            return
        self.prepared = prepared
        self.busy = True
        self.stopping = None
        guess = prepared.estimate
        if guess is not None:
            self.notify(f"{guess.line()} ({guess.basis})", timeout=10)
        self.evaluate(prepared)

    @work(exclusive=True, group="trigger", exit_on_error=False)
    async def evaluate(self, prepared: triggers.PreparedTriggers) -> None:
        try:
            results = await triggers.execute(prepared, self.moved)
        except WorkbenchError as exc:
            self.notify(problem(exc), severity="error", timeout=10)
        else:
            said = f"{results.dispatches} dispatch(es), {money(results.cost_usd)}"
            if results.stopped or results.errors:
                why = results.stopped.said() if results.stopped else f"{results.errors} run(s) not decided"
                self.notify(f"Incomplete: {why}; {said}.")
            else:
                self.notify(f"Measured: {said}.")
        finally:
            self.busy = False
            self.show_latest()

    def moved(self, dispatch: Dispatch) -> None:
        table = self.query_one("#queries", DataTable)
        if dispatch.status in ("running",):
            try:
                table.update_cell(self.row_of[dispatch.case.prompt], "result", f"run {dispatch.run_number}…")
            except Exception:  # noqa: BLE001 - a row that is not shown (the set changed): nothing to update
                pass

    # ------------------------------------------------------------ optimizing

    def action_optimize(self) -> None:
        self.remember()
        if self.busy:
            self.notify("Already at work: x stops it.", severity="warning")
            return
        try:
            holdout = float(self.text("holdout") or "0.4")
            rounds = int(self.text("rounds") or "3")
            if not 0.05 <= holdout <= 0.95 or rounds < 1:
                raise ValueError("Held out is a share between 0.05 and 0.95, Rounds at least 1")
            proposer = str(self.query_one("#proposer", Select).value)
            request = optimize_description.OptimizeRequest(
                self.request(),
                rounds,
                holdout,
                None,
                Proposer(proposer, self.text("proposer-command") or None),
            )
        except ValueError as exc:
            self.notify(str(exc), severity="error")
            return

        self.optimize_flow(request)

    @flow("optimize")
    async def optimize_flow(self, request: optimize_description.OptimizeRequest) -> None:
        """What it will run said and agreed, the proposer and the agent trusted: then optimized, in a thread.
        Whether the proposer starts and the measurements can be prepared is found first, off the app's
        thread: one that cannot is said before any question (it was said after the person agreed)."""
        try:
            await asyncio.to_thread(_startable, request)
        except WorkbenchError as exc:
            self.notify(problem(exc), severity="error", timeout=10)
            return
        measured = request.trigger
        runs = "auto" if measured.limits.adaptive else str(measured.limits.runs)
        agreed = await self.app.push_screen_wait(
            ConfirmDialog(
                f"Optimize the description: up to {request.rounds} proposal(s) by the {request.proposer.name} "
                f"proposer, each measured with the {measured.agent.executor} agent on train and held-out queries "
                f"({request.holdout:.0%} held out), {runs} run(s) a query. Real agents cost money.",
                "Optimize",
            )
        )
        if not agreed:
            return
        try:
            asks = optimize_description.Asks(request)
            if not await trusted(self, asks):
                return
        except WorkbenchError as exc:
            self.notify(problem(exc), severity="error", timeout=10)
            return
        if self.busy:  # another began while this one asked
            return
        self.busy = True
        self.stopping = threading.Event()
        self.query_one("#trigger-log", Log).clear()
        self.optimize(request, self.stopping)

    @work(thread=True, exclusive=True, group="optimize", exit_on_error=False)
    def optimize(self, request: optimize_description.OptimizeRequest, stopping: threading.Event) -> None:
        log = self.query_one("#trigger-log", Log)

        def say(text: str) -> None:
            self.app.call_from_thread(log.write_line, text)

        try:
            done = optimize_description.optimize(replace(request), say, stopping)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.notify, problem(exc), severity="error", timeout=15)
        else:
            if done.best is not None:
                held_out = done.best.held_out.line(optimize_description.SCORE)
                say(f"best: {done.best_version}, held-out {held_out}; {done.stopped}")
                if done.best is not done.start:
                    say("it is a version now: compare and promote it in History (ctrl+o from the editor)")
        finally:
            self.busy = False
            self.app.call_from_thread(self.show_latest)

    def action_stop(self) -> None:
        if not self.busy:
            return
        self.workers.cancel_group(self, "trigger")
        if self.stopping is not None:
            self.stopping.set()
        self.notify("Stopping: the agents are stopped; the same action resumes.")


def _startable(request: optimize_description.OptimizeRequest) -> None:
    """Raises WorkbenchError when the optimization cannot start: its proposer does not start as it will
    run, or its measurements cannot be prepared (the same checks the optimization makes as it begins)."""
    optimize_description.ready(request)
    triggers.prepare(request.trigger)
