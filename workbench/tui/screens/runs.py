"""The Runs screen: launch a run with the options of `workbench run`, watch each
dispatch move (queued, running, turn k, done, failed, reused), read the running
transcript's tail, cancel."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.markup import escape
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Checkbox, DataTable, Input, Label, Log, Select, Static

from workbench.app import pipeline
from workbench.app.choices import Limits
from workbench.app.progress import QUEUED, RUNNING, Dispatch
from workbench.errors import WorkbenchError
from workbench.formats import trigger_set
from workbench.formats.money import money
from workbench.formats.regular import read_object, read_regular_text
from workbench.session import SkillSession
from workbench.tui.screens.dialogs import cost_agreed, flow, prepared_and_trusted, problem
from workbench.tui.widgets.agent_options import AgentOptions, Labelled, OptionGrid
from workbench.tui.widgets.footer import FittingFooter
from workbench.tui.widgets.limits_form import compose_limits, read_limits
from workbench.tui.widgets.marks import MarkedCheckbox
from workbench.workspace import layout

COLUMNS = ("eval", "configuration", "run", "status", "cost", "detail")


class RunsScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", tooltip="Back to the editor", id="back"),
        Binding("ctrl+t", "results", "Results", tooltip="Review the graded runs of this iteration", id="run-results"),
        Binding(
            "ctrl+c", "cancel_run", "Cancel run", tooltip="Stop every agent of this run", id="cancel-run", priority=True
        ),
    ]
    KEY_HINTS = ("back", "run-results", "cancel-run", "quit")  # the footer's first hints, as width allows
    AUTO_FOCUS = "#start"  # Enter starts the run; Tab reaches the options

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-normal"), (140, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]  # short: the table and the tail give up rows first

    def __init__(self, session: SkillSession, suite: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.suite = suite  # the suite chosen first (the editor's open file); else the skill's first
        self.dispatches: list[Dispatch] = []
        self.rows: dict[int, object] = {}
        self.running = False
        self.iteration: Path | None = None
        self._estimate_timer: Timer | None = None
        self.spent = 0.0  # what the dispatches of the run going on have cost, as they finished
        self.heading = ""

    def suites(self) -> list[str]:
        """The skill's eval suites as the session found them: not SKILL.md, not a trigger eval set (its
        queries are measured on the Triggers screen)."""
        return [
            f.rel
            for f in self.session.files
            if f.rel != "SKILL.md" and not (f.format is not None and f.format.family == trigger_set.TRIGGERS)
        ]

    def compose(self) -> ComposeResult:
        suites = self.suites()
        yield Static(f"[b]Run {self.session.name}[/b]: every eval with and without the skill", id="run-status")
        with VerticalScroll(id="run-form"):
            with OptionGrid(id="run-what"):
                if suites:
                    chosen = self.suite if self.suite in suites else suites[0]
                    suite: Widget = Select(
                        [(rel, rel) for rel in suites],
                        value=chosen,
                        allow_blank=False,
                        id="suite",
                        tooltip="The eval suite to run (the one open in the editor, else the skill's first)",
                        compact=True,
                    )
                else:
                    suite = Label("none yet: ctrl+n in the editor makes one", id="suite")
                yield Labelled("Suite", suite, wide=True)
                yield Labelled(
                    "Compare with",
                    Select(
                        [(b, b) for b in pipeline.BASELINES],
                        value="without_skill",
                        allow_blank=False,
                        id="baseline",
                        tooltip="What the skill is compared with",
                        compact=True,
                    ),
                )
                yield from compose_limits(Limits(), "run")
                yield Labelled(
                    "Only these evals",
                    Input(placeholder="ids, comma-separated", id="only", tooltip="Run only these ids", compact=True),
                )
                yield Labelled(
                    "Failed last time",
                    MarkedCheckbox(
                        "only those",
                        id="failed",
                        tooltip="Only the evals that failed in the latest iteration",
                        compact=True,
                    ),
                )
                yield Labelled(
                    "Iteration",
                    Input(
                        placeholder="latest if same plan",
                        id="iteration",
                        type="integer",
                        tooltip="Iteration to write (default: resume the latest if its plan is the same)",
                        compact=True,
                    ),
                )
                yield Labelled(
                    "Cluster",
                    Input(
                        placeholder="local (tcp://host:8786)",
                        id="cluster",
                        tooltip="A Dask scheduler to run the dispatches on (default: the config's cluster, else "
                        "here); grading stays here (docs/cluster.md)",
                        compact=True,
                    ),
                )
                yield Labelled(
                    "Workspace",
                    Input(
                        placeholder="<skill>-workspace",
                        id="workspace",
                        tooltip="Where runs are written (default: <skill>-workspace beside the skills folder)",
                        compact=True,
                    ),
                    wide=True,
                )
            yield AgentOptions()
        with Horizontal(id="run-buttons"):
            yield Button(
                "Start", id="start", variant="primary", tooltip="Start the run", compact=True, disabled=not suites
            )
            yield Button("Cancel", id="cancel", disabled=True, tooltip="Stop every agent of this run", compact=True)
            yield Static("", id="estimate", markup=False)
        table: DataTable[str] = DataTable(id="dispatches", cursor_type="row")
        for column in COLUMNS:
            table.add_column(column, key=column)
        yield table
        yield Log(id="tail", max_lines=200)
        yield FittingFooter()

    def on_mount(self) -> None:
        self.query_one("#tail", Log).border_title = "Transcript"
        self.query_one("#dispatches", DataTable).border_title = "Dispatches"
        self.estimate_soon()

    # ------------------------------------------------------------ the estimate, before Start

    @on(Input.Changed)
    @on(Select.Changed)
    @on(Checkbox.Changed)
    def estimate_soon(self) -> None:
        """What Start would dispatch, cost and take, shown beside it: again shortly after any option changes."""
        if self.running:
            return
        if self._estimate_timer is not None:
            self._estimate_timer.stop()
        self._estimate_timer = self.set_timer(0.4, self.show_estimate)

    def show_estimate(self) -> None:
        try:
            request = self.request()  # read from the widgets here, in the app's thread
        except ValueError as exc:
            self._said_estimate(f"cannot start yet: {exc}", str(exc))
            return
        self.estimate_in_thread(request)

    @work(exclusive=True, group="estimate", thread=True, exit_on_error=False)
    def estimate_in_thread(self, request: pipeline.RunRequest) -> None:
        try:
            guess = pipeline.prepare(request).estimate
            text, basis = (guess.line(), guess.basis) if guess is not None else ("", "")
        except (WorkbenchError, OSError) as exc:
            text = f"cannot start yet: {problem(exc) if isinstance(exc, WorkbenchError) else exc}"
            basis = text
        self.app.call_from_thread(self._said_estimate, text, basis)

    def _said_estimate(self, text: str, basis: str) -> None:
        if not self.running:
            shown = self.query_one("#estimate", Static)
            shown.update(text)
            shown.tooltip = basis  # where the figures come from, on hover

    # ------------------------------------------------------------ starting

    @on(Button.Pressed, "#start")
    def start(self) -> None:
        if not self.running:
            self.start_flow()

    @flow("start")
    async def start_flow(self) -> None:
        """Prepared, its commands trusted, its cost agreed above the config's confirm_above_usd: launched."""
        prepared = await prepared_and_trusted(self, self.request)
        if prepared is not None and await cost_agreed(self, prepared.estimate):
            self.launch(prepared)

    def request(self) -> pipeline.RunRequest:
        def text(widget_id: str) -> str:
            return self.query_one(f"#{widget_id}", Input).value.strip()

        iteration, workspace = text("iteration"), text("workspace")
        suite = self.query_one("#suite")
        return pipeline.RunRequest(
            self.session.root,
            suite=self.session.root / str(suite.value) if isinstance(suite, Select) else None,
            **self.query_one(AgentOptions).fields(),
            limits=read_limits(self, Limits(), "run"),
            placement=self.query_one(AgentOptions).placement(
                Path(workspace).expanduser() if workspace else None, text("cluster") or None
            ),
            baseline=str(self.query_one("#baseline", Select).value),
            only=pipeline.id_set(text("only")),
            failed=self.query_one("#failed", Checkbox).value,
            iteration=int(iteration) if iteration else None,
        )

    def launch(self, prepared: pipeline.Prepared) -> None:
        table = self.query_one(DataTable)
        table.clear()
        self.dispatches = prepared.dispatches
        self.rows = {}
        for index, d in enumerate(self.dispatches):
            self.rows[index] = table.add_row(
                str(d.case.id), d.configuration, str(d.run_number), d.status, "", "", key=str(index)
            )
        where = f" on the cluster at {escape(prepared.options.cluster)}" if prepared.options.cluster else ""
        self.heading = (
            f"[b]{len(self.dispatches)} dispatches[/b] with the {escape(prepared.executor.label)}{where}, graded by "
            f"the {escape(prepared.judge.label)} → {escape(prepared.iteration.parent.name)}/"
            f"{escape(prepared.iteration.name)}"
        )
        status = self.query_one("#run-status", Static)
        status.update(self.heading)
        status.tooltip = str(prepared.iteration)  # the whole path on hover: the heading stays short
        self.spent = 0.0
        self.set_running(True)
        self.iteration = prepared.iteration
        self.execute(prepared)

    def set_running(self, running: bool) -> None:
        self.running = running
        self.query_one("#start", Button).disabled = running
        self.query_one("#cancel", Button).disabled = not running

    @work(exclusive=True, group="run", exit_on_error=False)
    async def execute(self, prepared: pipeline.Prepared) -> None:
        cancelled = False
        try:
            result = await pipeline.execute(prepared, self.moved)
        except asyncio.CancelledError:
            cancelled = True
            raise
        except WorkbenchError as exc:
            self.notify(problem(exc), severity="warning")
        else:
            if result.kept:
                self.notify(
                    f"{len(result.kept)} run(s) kept their earlier grading, which the judge could not redo "
                    f"({result.kept[0][1]}); benchmark.json is as it was: grade the iteration again once the "
                    "judge answers.",
                    severity="error",
                    timeout=10,
                )
        finally:
            self.set_running(False)
            tables = self.query(DataTable)  # none once the screen is gone (its run is cancelled as it goes)
            counts: dict[str, int] = {}
            for index, d in enumerate(self.dispatches):
                status = _left(d.status, cancelled)
                if status != d.status and tables:
                    tables.first().update_cell(str(index), "status", status, update_width=True)
                counts[status] = counts.get(status, 0) + 1
            said = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            if cancelled:
                self.notify(f"Run cancelled, its agents stopped: {said}. Start again to resume.")
            else:
                self.notify(f"Run finished: {said}. Ctrl+T shows the results.")

    async def action_results(self) -> None:
        from workbench.tui.screens.results import ResultsScreen

        if self.running:
            self.notify("The run is still going; its results come when it ends.", severity="warning")
            return
        if self.iteration is None:  # none started here: the latest, as from any screen
            await self.app.run_action("latest_results")
            return
        self.app.push_screen(ResultsScreen(self.iteration, self.session))

    def moved(self, dispatch: Dispatch) -> None:
        index = self.dispatches.index(dispatch)
        table = self.query_one(DataTable)
        if index not in self.rows:  # a later round of --runs auto: its dispatches join the table as they come
            d = dispatch
            self.rows[index] = table.add_row(
                str(d.case.id), d.configuration, str(d.run_number), d.status, "", "", key=str(index)
            )
        status = f"turn {dispatch.turn}" if dispatch.status == "running" and dispatch.turn else dispatch.status
        # Each column as wide as its widest cell: a column keeps the width of its first cells ("" for the
        # cost) unless told, and cut "$0.00" to "$0.0", "turn 2" to "turn".
        table.update_cell(str(index), "status", status, update_width=True)
        table.update_cell(str(index), "detail", dispatch.detail or "", update_width=True)
        if dispatch.status in ("done", "failed"):
            record = read_object(dispatch.folder / layout.RUN_RECORD)
            spent = record.get("cost_usd")
            table.update_cell(str(index), "cost", money(spent) if "cost_usd" in record else "", update_width=True)
            if isinstance(spent, (int, float)):
                self.spent += spent
            self.query_one("#run-status", Static).update(f"{self.heading} · spent {money(self.spent)}")
            self.show_tail(dispatch)

    def show_tail(self, dispatch: Dispatch) -> None:
        path = dispatch.folder / layout.TRANSCRIPT
        log = self.query_one("#tail", Log)
        log.clear()
        log.border_title = f"Transcript: eval-{dispatch.case.id} {dispatch.configuration} run-{dispatch.run_number}"
        try:
            lines = read_regular_text(path, errors="replace").splitlines()[-40:]
        except OSError:
            return
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # the line being written: shown at the next refresh
            if not isinstance(event, dict) or "kind" not in event:
                continue
            log.write_line(f"[{event['kind']}] {event.get('rendered') or event.get('text', '')}"[:400])

    @on(DataTable.RowSelected)
    def selected(self, event: DataTable.RowSelected) -> None:
        assert event.row_key.value is not None  # launch keys every row with its dispatch's index
        self.show_tail(self.dispatches[int(event.row_key.value)])

    # ------------------------------------------------------------ cancelling

    @on(Button.Pressed, "#cancel")
    def action_cancel_run(self) -> None:
        if self.running:
            self.workers.cancel_group(self, "run")  # the run says what it left, once its agents are stopped


def _left(status: str, cancelled: bool) -> str:
    """A dispatch's status as its run left it: one under way when the run was cancelled was stopped with its
    agent, and one queued never started (they read "running" and "queued" in a run "finished")."""
    if cancelled and status == RUNNING:
        return "cancelled"
    if cancelled and status == QUEUED:
        return "not started"
    return status
