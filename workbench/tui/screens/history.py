"""The History screen (Improve mode): the versions as a tree (parent links) with
pass rates, results and the best; the diff of the selected version against its
parent or the best; and the actions: new version (of the saved skill folder),
evaluate, compare, promote, promote and write. Escape goes back to editing."""

from __future__ import annotations

import threading
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import Log, Static, Tree
from textual.widgets.tree import TreeNode

from workbench.app import improve_loop, offered, pipeline
from workbench.app.choices import Proposer
from workbench.app.placement import hold
from workbench.app.progress import DONE, FAILED, REUSED, SKIPPED, Dispatch
from workbench.app.versions import History, Versions, WritePlan
from workbench.errors import WorkbenchError
from workbench.session import SkillSession
from workbench.tui.screens.dialogs import (
    BriefDialog,
    ConfirmDialog,
    TrustDialog,
    WriteVersionDialog,
    flow,
    prepared_and_trusted,
    problem,
)
from workbench.tui.widgets.agent_options import AgentOptions
from workbench.tui.widgets.footer import FittingFooter
from workbench.validate.diagnostic import FileProblems
from workbench.workspace import layout


class HistoryScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Edit", tooltip="Back to editing the skill", id="history-back"),
        Binding(
            "n",
            "new_version",
            "New version",
            tooltip="Snapshot the saved skill folder as the next version",
            id="new-version",
        ),
        Binding(
            "e",
            "evaluate",
            "Evaluate",
            tooltip="Run the selected version through the evals and decide won/lost/tie against the best",
            id="evaluate-version",
        ),
        Binding(
            "r",
            "results",
            "Results",
            tooltip="The graded runs of the selected version's evaluation",
            id="version-results",
        ),
        Binding(
            "c",
            "compare",
            "Compare with best",
            tooltip="Diff the selected version against the current best",
            id="compare-version",
        ),
        Binding(
            "i",
            "improve",
            "Improve",
            tooltip="Propose the next version from the selected one with an agent (the brief is shown first)",
            id="improve-version",
        ),
        Binding(
            "x", "stop_proposer", "Stop proposer", tooltip="Stop the proposer; nothing is made", id="stop-proposer"
        ),
        Binding("p", "promote", "Promote", tooltip="Make the selected version the current best", id="promote-version"),
        Binding(
            "w",
            "promote_write",
            "Promote + write",
            tooltip="Make it the best and write its files into the skill folder (shows the diff first)",
            id="write-version",
        ),
    ]
    KEY_HINTS = (
        "history-back",
        "quit",
        "evaluate-version",
        "version-results",
        "new-version",
        "improve-version",
        "promote-version",
        "write-version",
    )  # the footer's first hints; the rest fit after, or are in the palette

    def __init__(self, session: SkillSession, improve_from: tuple[Path, str] | None = None) -> None:
        super().__init__()
        self.session = session
        self.improve_from = improve_from  # (iteration, configuration): open proposing from these failures
        self.versions = Versions.of(session.root)
        self.workspace, self.store = self.versions.workspace, self.versions.store
        self.rows: dict[str, dict] = {}
        self.history: History | None = None
        self.busy = False
        self.stopping: threading.Event | None = None  # set to stop the proposer that runs

    def compose(self) -> ComposeResult:
        yield Static("", id="history-status")
        yield AgentOptions()
        with Horizontal(id="history-body"):
            yield Tree("versions", id="versions")
            with Vertical(id="version-detail"):
                yield Static("", id="version-facts")
                yield Log(id="version-diff", max_lines=20000)
        yield FittingFooter()

    def on_mount(self) -> None:
        self.query_one("#versions", Tree).border_title = "Versions"
        self.query_one("#version-diff", Log).border_title = "Diff"
        self.refresh_tree()
        if self.improve_from is not None:
            self.call_after_refresh(self.action_improve, self.improve_from)

    # ------------------------------------------------------------ showing

    def refresh_tree(self, select: str | None = None) -> None:
        status = self.query_one("#history-status", Static)
        try:
            done = self.versions.recover()  # a change a killed workbench left: finished first
            if done:
                self.notify(done, timeout=10)
            self.history = self.versions.history()
        except FileProblems as exc:  # history.json, evaluations.json, journal.json or versions.git
            problems = "; ".join(f"line {d.line}: {d.message}" for d in exc.diagnostics[:3])
            status.update(f"[red]{exc.path} is broken[/]: {problems}. Fix it by hand; nothing is repaired.")
            return
        tree = self.query_one("#versions", Tree)
        tree.clear()
        if self.history is None:
            status.update(
                f"[b]{self.session.name}[/b] has no versions yet in {self.workspace}. "
                "Press [b]n[/b] to snapshot the skill as v0, the baseline."
            )
            return
        rows = self.versions.rows(self.history)
        self.rows = {row["version"]: row for row in rows}
        status.update(
            f"[b]{self.session.name}[/b] · {len(rows)} version(s) · current best "
            f"[b]{self.history.current_best}[/b] · {self.workspace}"
        )
        tree.root.expand()
        nodes: dict[str | None, TreeNode] = {None: tree.root}
        for row in rows:  # parents come before children (v numbers grow)
            parent = nodes.get(row["parent"], tree.root)
            node = parent.add(self._label(row), data=row["version"], expand=True)
            nodes[row["version"]] = node
        target = nodes.get(select or self.history.current_best)
        if target is not None and target.data is not None:  # a version's node, not the root
            self.show_version(target.data)
            # A node has its line only once the tree has been laid out.
            self.call_after_refresh(tree.move_cursor, target)
        tree.focus()

    @staticmethod
    def _label(row: dict) -> str:
        rate = row["expectation_pass_rate"]
        shown = f"{rate:.0%}" if rate is not None else ("—" if row["evaluated"] else "not evaluated")
        result = row["grading_result"] or ""
        return f"{row['version']}  {result} {shown}" + ("  ★ best" if row["is_current_best"] else "")

    @property
    def selected(self) -> str | None:
        node = self.query_one("#versions", Tree).cursor_node
        return node.data if node is not None else None

    @on(Tree.NodeHighlighted, "#versions")
    def highlighted(self, event: Tree.NodeHighlighted) -> None:
        if event.node.data:
            self.show_version(event.node.data)

    def show_version(self, version: str, against: str | None = None) -> None:
        row = self.rows.get(version, {})
        against = against or row.get("parent")
        facts = [f"[b]{version}[/b]" + (f" from {row['parent']}" if row.get("parent") else " (the baseline)")]
        if row.get("evaluated") and row.get("total"):
            facts.append(f"{row['passed']}/{row['total']} with-skill assertions passed in iteration-{row['iteration']}")
        elif row.get("evaluated") and row.get("expectation_pass_rate") is not None:
            facts.append("measured before the workbench (skill-creator's history.json): no runs of it here")
        elif not row.get("evaluated"):
            facts.append("not evaluated yet: press e")
        if row.get("decision"):
            facts.append(row["decision"])
        facts += self._analysis(row)
        self.query_one("#version-facts", Static).update("\n".join(facts))
        log = self.query_one("#version-diff", Log)
        log.clear()
        if against is None:
            log.border_title = f"{version}: the baseline (no parent to compare with)"
            return
        log.border_title = f"Diff {against} → {version}"
        diff = self.store.diff(against, version)
        log.write_lines(diff.splitlines() or ["(no difference)"])
        log.scroll_home(animate=False)

    def _analysis(self, row: dict) -> list[str]:
        """Why it won or lost, from the analysis.json of its evaluation: the assertions that flipped first."""
        if not row.get("iteration"):
            return []
        data = self.versions.analysis(row["iteration"])
        insights = data.get("transcript_insights")
        if not isinstance(insights, dict):
            return []
        lines = [
            f"Why (analysis.json): {insights.get('fixed', 0)} assertion(s) fixed, {insights.get('broken', 0)} broken"
        ]
        for flip in (insights.get("flipped") or [])[:6]:
            if isinstance(flip, dict):
                way = "✓" if flip.get("direction") == "fail_to_pass" else "✗"
                lines.append(f"  {way} {escape(str(flip.get('eval_id')))} · {escape(str(flip.get('assertion')))}")
        reading = insights.get("judge_reading")
        if isinstance(reading, dict) and reading.get("reasoning"):
            lines.append(f"  the judge: {escape(str(reading['reasoning'])[:200])}")
        return lines

    # ------------------------------------------------------------ improving

    def action_improve(self, measured: tuple[Path, str] | None = None) -> None:
        """The brief (editable) and the proposer first; then the proposer's progress, then its diff."""
        version = self.selected or (self.history.current_best if self.history else None)
        if self.history is None or version is None:
            self.notify("Snapshot the skill first (n): the proposer works from a version.", severity="warning")
            return
        if self.busy:
            return
        try:
            text = improve_loop.brief_for(self.workspace, self.store, version, self.session.name, measured)
        except (WorkbenchError, OSError) as exc:
            self.notify(f"Cannot write the brief: {exc}", severity="error")
            return

        said = self.versions.standing(self.history, version).line()  # "v1, 80%, not the best (v0, 98%)"
        self.improve_flow(version, said, text)

    @flow("improve")
    async def improve_flow(self, version: str, said: str, text: str) -> None:
        """The brief and the proposer asked, the proposer trusted: then it proposes, in a thread."""
        answer = await self.app.push_screen_wait(BriefDialog(said, text, offered.PROPOSERS))
        if answer is None:
            return
        text, name, command = answer
        chosen = Proposer(name, command or None)  # its command placed where it runs (Proposer.absolute)
        try:
            proposer = chosen.executor()
        except WorkbenchError as exc:
            self.notify(str(exc), severity="error")
            return
        wanted = improve_loop.ImproveRequest(pipeline.RunRequest(self.session.root), chosen)
        asks = improve_loop.untrusted(wanted)
        if asks and not await self.app.push_screen_wait(TrustDialog(asks)):
            self.notify("Nothing proposed.")
            return
        improve_loop.trust_proposer(wanted)
        try:  # read here, in the app's thread
            placement = self.query_one(AgentOptions).placement()
            mode = hold(placement.sandbox, placement.network, proposer)
        except WorkbenchError as exc:
            self.notify(f"Cannot propose: {exc}", severity="error")
            return
        self.stopping = threading.Event()
        self.propose(version, proposer, text, mode)

    @work(exclusive=True, group="propose", thread=True, exit_on_error=False)
    def propose(self, version: str, proposer: improve_loop.Executor, text: str, mode: improve_loop.Holding) -> None:
        self.busy = True
        self.app.call_from_thread(self.refresh_bindings)
        self.app.call_from_thread(
            self.query_one("#history-status", Static).update,
            f"The {escape(proposer.label)} is proposing the next version from [b]{version}[/b]…",
        )
        try:
            proposal, made = improve_loop.propose_version(
                self.workspace, self.store, version, self.session.name, proposer, text, mode, cancel=self.stopping
            )
        except Exception as exc:  # noqa: BLE001 - in a worker thread: said, never lost silently
            self.app.call_from_thread(self.notify, f"The proposal failed: {exc}", severity="error", timeout=10)
            self.app.call_from_thread(  # the status line, too, says it ended and how (not "is proposing")
                self.query_one("#history-status", Static).update,
                f"[red]The proposal from [b]{version}[/b] failed[/]: {escape(str(exc))}",
            )
            return
        finally:
            self.busy = False
            self.app.call_from_thread(self.refresh_bindings)
        self.app.call_from_thread(self.proposed, version, proposal, made)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop_proposer":  # shown only while a proposer runs
            return self.stopping is not None and not self.stopping.is_set() and self.busy
        return True

    def action_stop_proposer(self) -> None:
        if self.stopping is not None:
            self.stopping.set()
            self.notify("Stopping the proposer…")

    def proposed(self, version: str, proposal: improve_loop.Proposal, made: str | None) -> None:
        status = self.query_one("#history-status", Static)
        if made is None:
            self.notify(f"Refused, no version made: {proposal.refused}", severity="warning", timeout=10)
            self.refresh_tree()
            status.update(f"[yellow]Refused, no version made from [b]{version}[/b][/]: {escape(str(proposal.refused))}")
            return
        said = f" It says: {proposal.said[:200]}" if proposal.said else ""
        self.notify(f"{made}: {proposal.summary}.{said} Its diff is shown; press e to evaluate it.", timeout=15)
        self.refresh_tree(made)
        status.update(
            f"[b]{made}[/b] proposed from [b]{version}[/b]: {escape(str(proposal.summary))}. "
            "Its diff is shown; press [b]e[/b] to evaluate it."
        )

    # ------------------------------------------------------------ actions

    def action_results(self) -> None:
        from workbench.tui.screens.results import ResultsScreen

        row = self.rows.get(self.selected or "", {})
        if not row.get("iteration"):
            self.notify("This version has not been evaluated yet: press e.", severity="warning")
            return
        self.app.push_screen(ResultsScreen(layout.iteration_dir(self.workspace, row["iteration"]), self.session))

    def action_compare(self) -> None:
        if self.selected and self.history:
            self.show_version(self.selected, self.history.current_best)

    def action_new_version(self) -> None:
        if self.session.dirty_files():
            self.notify("Save your edits first: a version is a snapshot of the files on disk.", severity="warning")
            return
        try:
            version, _parent = self.versions.new(self.session.name)
        except WorkbenchError as exc:
            self.notify(problem(exc), severity="warning")
            return
        self.notify(f"{version} snapshotted. Press e to evaluate it.")
        self.refresh_tree(version)

    def action_evaluate(self) -> None:
        version = self.selected
        if version is None or self.busy:
            return
        self.evaluate_flow(version)

    @flow("evaluate")
    async def evaluate_flow(self, version: str) -> None:
        prepared = await prepared_and_trusted(
            self,
            lambda: pipeline.RunRequest(
                self.session.root,
                **self.query_one(AgentOptions).fields(),
                placement=self.query_one(AgentOptions).placement(self.workspace),
                version=version,
            ),
        )
        if prepared is not None:
            self.run_evaluation(prepared)

    @work(exclusive=True, group="evaluate", exit_on_error=False)
    async def run_evaluation(self, prepared: pipeline.Prepared) -> None:
        self.busy = True
        version = prepared.request.version
        status = self.query_one("#history-status", Static)
        finished: set[int] = set()

        def moved(dispatch: Dispatch) -> None:
            if dispatch.status in (DONE, FAILED, REUSED, SKIPPED):
                finished.add(id(dispatch))
            status.update(
                f"Evaluating [b]{version}[/b] with the {prepared.executor.label}: "
                f"{len(finished)} of {len(prepared.dispatches)} dispatch(es) finished…"
            )

        try:
            result = await pipeline.execute(prepared, moved)
        except (WorkbenchError, OSError) as exc:
            self.notify(
                f"Evaluation failed: {problem(exc) if isinstance(exc, WorkbenchError) else exc}", severity="error"
            )
            return
        finally:
            self.busy = False
        assert result.evaluation is not None
        if result.kept:
            self.notify(
                f"{version}: {len(result.kept)} run(s) kept their earlier grading, which the judge could not redo "
                f"({result.kept[0][1]}); the evaluation is not recorded (its runs: {result.iteration}).",
                severity="error",
                timeout=10,
            )
        elif result.review.errors:
            self.notify(
                f"{version}: {result.review.errors} run(s) or expectation(s) could not be graded; the evaluation is "
                f"not recorded (its runs: {result.iteration}).",
                severity="error",
                timeout=10,
            )
        else:
            self.notify(f"{version}: {result.evaluation.evidence}", timeout=10)
        self.refresh_tree(version)

    def action_promote(self) -> None:
        version = self.selected
        if version is None or self.history is None or self.unevaluated(version):
            return
        self.promote_flow(version)

    def unevaluated(self, version: str) -> bool:
        """Said, for p and w alike, before anything is asked: the core refuses to promote such a version."""
        if self.history is not None and self.history.entry(version) is None:
            self.notify(f"{version} has not been evaluated; evaluate it (e) before promoting it.", severity="warning")
            return True
        return False

    def doubt(self, version: str) -> str | None:
        """Why promoting `version` deserves a question (below the best, or its last decision not a win)."""
        return self.versions.standing(self.history, version).doubt() if self.history is not None else None

    @flow("promote")
    async def promote_flow(self, version: str) -> None:
        """Promoted at once when the evidence backs it, else once the person said yes."""
        doubt = self.doubt(version)
        if doubt is not None and not await self.app.push_screen_wait(
            ConfirmDialog(f"{escape(doubt)}. Promote {version} all the same?", f"Promote {version}")
        ):
            self.notify("Nothing promoted.")
            return
        self.promote(version)

    def promote(self, version: str, shown: WritePlan | None = None) -> None:
        """Through the core (its lock, its all-or-nothing write); with `shown`, write the files too."""
        try:
            changed = self.versions.promote(version, shown)
        except WorkbenchError as exc:
            self.notify(problem(exc), severity="warning", timeout=10)
            return
        self.notify(
            f"{version} is the current best."
            + (
                f" Updated {len(changed)} file(s) (written or removed): {', '.join(changed)}. The editor reloads them."
                if changed
                else ""
            )
        )
        self.refresh_tree(version)

    def action_promote_write(self) -> None:
        version = self.selected
        if version is None or self.history is None or self.unevaluated(version):
            return
        if self.session.dirty_files():
            self.notify(
                "You have unsaved edits in the skill: save or undo them first; writing a version would overwrite them.",
                severity="warning",
            )
            return
        shown = self.versions.plan_write(version)
        if not shown.diff.strip():
            self.promote_flow(version)
            return
        if shown.refused:
            self.notify(f"Refused, nothing changed: {shown.refused}.", severity="error", timeout=10)
            return
        self.write_flow(version, shown)

    @flow("promote")
    async def write_flow(self, version: str, shown: WritePlan) -> None:
        """The files written as the diff shows, once the person has seen it and said yes."""
        if await self.app.push_screen_wait(WriteVersionDialog(version, shown.diff, self.doubt(version))):
            self.promote(version, shown)
