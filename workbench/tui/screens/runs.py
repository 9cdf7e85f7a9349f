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
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Footer, Input, Label, Log, Select, Static, Switch

from workbench.grading import judges
from workbench.grading.artifact import ArtifactInvalid
from workbench.grading.benchmark import NoGradedRuns, write_benchmark
from workbench.grading.grade import GradeOptions, grade_as_it_goes
from workbench.grading.suite import load_suite
from workbench.runs import executors, trust
from workbench.improve.history import HistoryBroken, best_folder
from workbench.runs.launch import RunRefused, default_suite, prepare_launch, run_launch
from workbench.runs.runner import Dispatch, RunOptions
from workbench.session import SkillSession

COLUMNS = ("eval", "configuration", "run", "status", "detail")


class TrustDialog(ModalScreen[bool]):
    """Shows exactly what would run before a command the workbench did not write runs."""

    AUTO_FOCUS = "#no"

    def __init__(self, commands: list[str]) -> None:
        super().__init__()
        self.commands = commands

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("[b]This run would execute these commands[/b] in every dispatch's workspace:")
            with VerticalScroll(id="trust-commands"):
                for command in self.commands:
                    yield Static(f"  $ {command}", classes="const", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Trust and run", id="yes", variant="warning", tooltip="Run these commands")
                yield Button("Cancel", id="no", tooltip="Run nothing")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


def when_trusted(screen: Screen, executor, command: str | None, suite, then) -> None:
    """Call then() once every command that would run is trusted: the agent command
    (for a custom executor) and the suite's own commands; asks with the exact list."""
    asks = [] if executor.trusted_by_default or trust.is_trusted(command) else [command]
    asks += [] if suite.trusted() else suite.commands()
    if not asks:
        then()
        return

    def decided(yes: bool | None) -> None:
        if yes:
            if not executor.trusted_by_default:
                trust.trust(command, f"agent command for {screen.session.name}")
            suite.trust()
            then()

    screen.app.push_screen(TrustDialog(asks), decided)


class RunsScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", tooltip="Back to the editor", id="back"),
        Binding("ctrl+t", "results", "Results", tooltip="Review the graded runs of this iteration",
                id="run-results"),
        Binding("ctrl+c", "cancel_run", "Cancel run", tooltip="Stop every agent of this run", id="cancel-run",
                priority=True),
    ]

    def __init__(self, session: SkillSession) -> None:
        super().__init__()
        self.session = session
        self.dispatches: list[Dispatch] = []
        self.rows: dict[int, object] = {}
        self.running = False
        self.iteration: Path | None = None

    def compose(self) -> ComposeResult:
        yield Static(f"[b]Run {self.session.name}[/b]: every eval with and without the skill", id="status")
        with Horizontal(classes="run-options"):
            yield Select([(n, n) for n in executors.NAMES], value="demo", allow_blank=False, id="executor",
                         tooltip="The agent")
            yield Input(placeholder="agent command (command executor)", id="agent-command")
            yield Input(placeholder="model", id="model", tooltip="Model for the claude and codex executors")
            yield Select([(f"judge: {n}", n) for n in judges.NAMES], value="demo", allow_blank=False, id="judge",
                         tooltip="Who grades rubrics and expectations (demo: offline heuristic, not a model)")
            yield Button("Start", id="start", variant="primary", tooltip="Start the run")
            yield Button("Cancel", id="cancel", disabled=True, tooltip="Stop every agent of this run")
        with Horizontal(classes="run-options"):
            yield Input(placeholder="runs", id="runs", type="integer", tooltip="Runs per condition")
            yield Input("4", placeholder="-j", id="jobs", type="integer", tooltip="Dispatches at once")
            yield Input("600", placeholder="timeout s", id="timeout", type="number", tooltip="Seconds per turn")
            yield Select([(b, b) for b in ("without_skill", "old_skill", "none")], value="without_skill",
                         allow_blank=False, id="baseline", tooltip="What the skill is compared with")
            yield Input(placeholder="only these ids", id="only")
            yield Input(placeholder="workspace", id="workspace",
                        tooltip="Where runs are written (default: <skill>-workspace beside the skills folder)")
            yield Input(placeholder="iteration", id="iteration", type="integer",
                        tooltip="Iteration to write (default: resume the latest if its plan is the same)")
            yield Switch(False, id="failed", tooltip="Only the evals that failed in the latest iteration")
            yield Label("failed only", classes="inline-hint")
        table = DataTable(id="dispatches", cursor_type="row")
        for column in COLUMNS:
            table.add_column(column, key=column)
        yield table
        yield Log(id="tail", max_lines=200)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#tail", Log).border_title = "Transcript"

    # ------------------------------------------------------------ starting

    @on(Button.Pressed, "#start")
    def start(self) -> None:
        if self.running:
            return
        name = self.query_one("#executor", Select).value
        command = self.query_one("#agent-command", Input).value.strip() or None
        model = self.query_one("#model", Input).value.strip() or None
        try:
            executor = executors.make(name, command, model)
        except ValueError as exc:
            self.notify(str(exc), severity="error")
            return
        judge_name = str(self.query_one("#judge", Select).value)
        judge_command = command if judge_name == "command" else None
        try:
            judge = judges.make(judge_name, judge_command)
        except ValueError as exc:
            self.notify(f"{exc} (the command judge uses the agent command box)", severity="error")
            return
        try:
            suite = load_suite(default_suite(self.session.root), self.session.name, executor.label)
        except RunRefused as exc:
            self.notify(f"{exc.path.name} has {len(exc.diagnostics)} error(s): fix them first.", severity="error")
            return
        except FileNotFoundError as exc:
            self.notify(str(exc), severity="error")
            return
        when_trusted(self, executor, command, suite, lambda: self.launch(executor, judge))

    @on(Select.Changed, "#executor")
    def executor_changed(self, event: Select.Changed) -> None:
        # The demo agent pairs with the demo judge; a real agent with a real judge.
        self.query_one("#judge", Select).value = "demo" if event.value == "demo" else "claude"

    def options(self) -> RunOptions:
        def number(widget_id: str, kind=int):
            text = self.query_one(f"#{widget_id}", Input).value.strip()
            return kind(text) if text else None

        only = self.query_one("#only", Input).value
        return RunOptions(runs=number("runs"), jobs=number("jobs") or 4, timeout=number("timeout", float) or 600.0,
                          baseline=str(self.query_one("#baseline", Select).value),
                          only={i.strip() for i in only.split(",") if i.strip()} or None,
                          failed=self.query_one("#failed", Switch).value)

    def launch(self, executor, judge) -> None:
        options = self.options()
        try:
            iteration = self.query_one("#iteration", Input).value.strip()
            typed = self.query_one("#workspace", Input).value.strip()
            workspace = Path(typed).expanduser() if typed else None
            old_skill = best_folder(self.session.root, workspace) if options.baseline == "old_skill" else None
            if options.baseline == "old_skill" and old_skill is None:
                self.notify("old_skill compares with the current best version: there are no versions yet "
                            "(Ctrl+O, n).", severity="warning")
                return
            launch = prepare_launch(self.session.root, executor, options, workspace=workspace,
                                    iteration=int(iteration) if iteration else None, old_skill=old_skill)
        except RunRefused as exc:
            self.notify(f"{exc.path.name} has {len(exc.diagnostics)} error(s): fix them first.", severity="error")
            return
        except (FileNotFoundError, ValueError) as exc:
            self.notify(str(exc), severity="error")
            return
        except HistoryBroken as exc:
            self.notify(f"{exc.path} is broken (line {exc.diagnostics[0].line}: {exc.diagnostics[0].message}); "
                        "fix it by hand.", severity="error")
            return
        table = self.query_one(DataTable)
        table.clear()
        self.dispatches = launch.dispatches
        self.rows = {}
        for index, d in enumerate(self.dispatches):
            self.rows[index] = table.add_row(str(d.case.id), d.configuration, str(d.run_number), d.status, "",
                                             key=str(index))
        self.query_one("#status", Static).update(
            f"[b]{len(self.dispatches)} dispatches[/b] with the {executor.label} → {launch.folder}")
        self.set_running(True)
        self.iteration = launch.folder
        grading = load_suite(launch.suite, launch.skill_name, executor.label)
        self.execute(launch, executor, options, grade_as_it_goes(grading, GradeOptions(judge, trusted=True)))

    def set_running(self, running: bool) -> None:
        self.running = running
        self.query_one("#start", Button).disabled = running
        self.query_one("#cancel", Button).disabled = not running

    @work(exclusive=True, group="run", exit_on_error=False)
    async def execute(self, launch, executor, options, after) -> None:
        try:
            await run_launch(launch, executor, options, self.moved, after)
        finally:
            self.set_running(False)
            counts: dict[str, int] = {}
            for d in self.dispatches:
                counts[d.status] = counts.get(d.status, 0) + 1
            self.notify("Run finished: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
                        + ". Ctrl+T shows the results.")
        try:
            await asyncio.to_thread(write_benchmark, self.iteration)
        except (NoGradedRuns, ArtifactInvalid) as exc:
            self.notify(str(exc), severity="warning")

    def action_results(self) -> None:
        from workbench.tui.screens.results import ResultsScreen

        if self.running:
            self.notify("The run is still going; its results come when it ends.", severity="warning")
            return
        if self.iteration is None:
            self.notify("Start a run first (its iteration is what Results shows).", severity="warning")
            return
        self.app.push_screen(ResultsScreen(self.iteration))

    def moved(self, dispatch: Dispatch) -> None:
        index = self.dispatches.index(dispatch)
        table = self.query_one(DataTable)
        status = f"turn {dispatch.turn}" if dispatch.status == "running" and dispatch.turn else dispatch.status
        table.update_cell(str(index), "status", status)
        table.update_cell(str(index), "detail", dispatch.detail or "", update_width=True)
        if dispatch.status in ("done", "failed"):
            self.show_tail(dispatch)

    def show_tail(self, dispatch: Dispatch) -> None:
        path = dispatch.folder / "transcript.jsonl"
        log = self.query_one("#tail", Log)
        log.clear()
        log.border_title = f"Transcript: eval-{dispatch.case.id} {dispatch.configuration} run-{dispatch.run_number}"
        try:
            lines = path.read_text().splitlines()[-40:]
        except OSError:
            return
        for line in lines:
            event = json.loads(line)
            log.write_line(f"[{event['kind']}] {event.get('rendered') or event.get('text', '')}"[:400])

    @on(DataTable.RowSelected)
    def selected(self, event: DataTable.RowSelected) -> None:
        self.show_tail(self.dispatches[int(event.row_key.value)])

    # ------------------------------------------------------------ cancelling

    @on(Button.Pressed, "#cancel")
    def action_cancel_run(self) -> None:
        if self.running:
            self.workers.cancel_group(self, "run")
            self.notify("Run cancelled: the agents were stopped. Start again to resume.")
