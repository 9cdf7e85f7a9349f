"""The Results screen of one iteration: evals x configurations with pass rates,
k/N per assertion, time, tokens, deltas and flaky marks; the failed expectations
first, each with its evidence; the selected run's conversation, output files and
diff.patch; a feedback box per run saved to feedback.json in skill-creator's
viewer format. Keyboard-first: n / p move between failures, m marks one reviewed."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.coordinate import Coordinate
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import DataTable, Log, RichLog, Static, TabbedContent, TabPane, TextArea

from workbench.app import review as app_review
from workbench.app.review import Cell, Failure, Feedback, Review, Row, cell_text, load_review, run_id
from workbench.errors import WorkbenchError
from workbench.formats.money import money
from workbench.session import SkillSession
from workbench.tui.widgets.footer import FittingFooter
from workbench.tui.widgets.keys import OrderedTextArea
from workbench.workspace import layout

PAGE = 200  # rows in a table at once: n / p page on through all failures, [ / ] through evals


class ResultsScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="Back (the feedback is saved)", id="results-back"),
        Binding("n", "next_failure", "Next failure", tooltip="Select the next failed expectation", id="next-failure"),
        Binding(
            "p",
            "previous_failure",
            "Prev failure",
            tooltip="Select the previous failed expectation",
            id="previous-failure",
        ),
        Binding(
            "m",
            "mark_reviewed",
            "Mark reviewed",
            tooltip="Mark the selected failure reviewed (again: unmark)",
            id="mark-reviewed",
        ),
        Binding("]", "eval_page(1)", "More evals", tooltip="The next page of evals", id="next-evals", show=False),
        Binding(
            "[", "eval_page(-1)", "Earlier evals", tooltip="The previous page of evals", id="previous-evals", show=False
        ),
        Binding(
            "c",
            "tab('conversation')",
            "Conversation",
            tooltip="The run's messages and tool calls",
            id="show-conversation",
        ),
        Binding("o", "tab('outputs')", "Outputs", tooltip="The files the run produced", id="show-outputs"),
        Binding("d", "tab('diff')", "Diff", tooltip="The run's diff.patch", id="show-diff"),
        Binding("f", "feedback", "Feedback", tooltip="Write feedback on the selected run", id="write-feedback"),
        Binding(
            "i",
            "improve",
            "Improve",
            tooltip="Improve the skill from these failures: an agent proposes the next version (History screen)",
            id="improve-from-failures",
        ),
        Binding(
            "y",
            "copy_command",
            "Copy command",
            tooltip="Copy the selected command_check's command line, with its environment, to the clipboard",
            id="copy-command",
        ),
    ]
    KEY_HINTS = (
        "results-back",
        "quit",
        "next-failure",
        "previous-failure",
        "write-feedback",
        "improve-from-failures",
    )  # the footer's first hints; the rest fit after, or are in the palette
    # Below 120 columns the failures sit over the detail, full width, so their names are read whole.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]  # short: fewer evals rows, more for the failures

    def __init__(self, iteration: Path, session: SkillSession | None = None) -> None:
        super().__init__()
        self.iteration = iteration
        self.session = session  # the skill these runs are of: improving from them needs it
        self.review: Review | None = None
        self.feedback = Feedback(iteration)
        self.run_folder: str | None = None  # the run shown in the detail panes
        self.shown_tabs: dict[str, str | None] = {}  # tab -> the run it was last filled for (lazy loading)
        self.page_start = 0  # index of the failure in the table's first row
        self.evals_start = 0  # index of the eval in the evals table's first row

    def compose(self) -> ComposeResult:
        yield Static(f"[b]Results[/b] of {self.iteration} — loading…", id="results-summary")
        yield DataTable(id="evals", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="results-body"):
            yield DataTable(id="failures", cursor_type="row")
            with TabbedContent(id="detail", initial="evidence"):
                with TabPane("Evidence", id="evidence"):
                    with VerticalScroll():
                        yield Static("", id="evidence-text")
                with TabPane("Conversation", id="conversation"):
                    # Wrapped: a tool call or a message is read whole, not scrolled sideways.
                    yield RichLog(
                        id="conversation-log", max_lines=5000, wrap=True, min_width=20, markup=False, highlight=False
                    )
                with TabPane("Outputs", id="outputs"):
                    yield Log(id="outputs-log", max_lines=5000)
                with TabPane("Diff", id="diff"):
                    yield Log(id="diff-log", max_lines=5000)
                with TabPane("Feedback", id="feedback"):
                    yield Static("", id="feedback-run")
                    yield OrderedTextArea(id="feedback-text", soft_wrap=True, show_line_numbers=False)
        yield FittingFooter()

    def on_mount(self) -> None:
        self.query_one("#evals", DataTable).border_title = "Evals"
        self.query_one("#failures", DataTable).border_title = "Failed expectations"
        self.load()

    @work(thread=True, exclusive=True, group="results")
    def load(self) -> None:
        review = load_review(self.iteration)
        self.app.call_from_thread(self.show, review)

    # ------------------------------------------------------------ filling

    def show(self, review: Review) -> None:
        self.review = review
        summary = self.query_one("#results-summary", Static)
        if not review.results:
            summary.update(
                f"[b]Results[/b] of {self.iteration}: no graded runs yet "
                "(run the evals, or `workbench grade` this iteration)."
            )
            return
        rates = " · ".join(
            f"{c} [b]{rate:.0%}[/b]" for c in review.configurations if (rate := review.rate(c)) is not None
        )
        delta, diff = review.delta(), review.difference()
        judges = sorted({r.grading.get("judge", "") for r in review.results} - {""})
        summary.update(
            f"[b]{self.iteration.name}[/b] · pass rate {rates}"
            + (f" · Δ [b]{delta:+.2f}[/b]" if delta is not None else "")
            + (f" (95% over {diff.evals} evals [{diff.low:+.2f}, {diff.high:+.2f}])" if diff else "")
            + f" · {len(review.failures)} failed · judged by {', '.join(judges) or '?'}"
            + f" · {escape(spent(review.cost()))}"
        )
        evals = self.query_one("#evals", DataTable)
        evals.clear(columns=True)
        # Fixed widths, measured from the texts: DataTable measuring every cell of thousands
        # of rows is what makes big tables slow; len() of each is not.
        width = _widest((r.label for r in review.rows), "eval", 48)
        evals.add_column("eval", width=width)
        # Measured from the very texts the cells show (their ✓ / ✗ too): a pass rate is never cut.
        for configuration in review.configurations:
            texts = (_rate_cell(r.cells[configuration]).plain for r in review.rows if configuration in r.cells)
            evals.add_column(configuration, width=_widest(texts, configuration, 60))
        for label, size in (("Δ", 6), ("time s", 7), ("tokens", 7)):
            evals.add_column(label, width=size)
        evals.add_column("skill used", width=_widest((_skill_used(r) for r in review.rows), "skill used", 40))
        self.fill_evals(0)
        failures = self.query_one("#failures", DataTable)
        failures.clear(columns=True)
        # Names first and whole; the evidence last, where a cut is shown in full beside (or below).
        for label, size in (
            ("✓", 1),
            ("eval", _widest((str(f.eval_id) for f in review.failures), "eval", 48)),
            ("assertion", _widest((f.id + " ⚠" * f.error for f in review.failures), "assertion", 48)),
            ("configuration", _widest(review.configurations, "configuration", 24)),
            ("run", 3),
            ("evidence", 120),
        ):
            failures.add_column(label, width=size)
        self.fill_failures(0)
        if review.failures:
            failures.focus()
            self.select_failure(0)
        else:
            evals.focus()

    def fill_evals(self, start: int) -> None:
        assert self.review is not None
        review = self.review
        evals = self.query_one("#evals", DataTable)
        evals.clear()
        self.evals_start = start
        page = review.rows[start : start + PAGE]
        for row in page:
            cells = [_rate_cell(cell) if (cell := row.cells.get(c)) else "—" for c in review.configurations]
            pair = review.pair
            delta_text = ""
            if pair and pair[0] in row.cells and pair[1] in row.cells:
                delta_text = f"{row.cells[pair[0]].pass_rate - row.cells[pair[1]].pass_rate:+.2f}"
            new = row.cells.get(review.configurations[0])
            evals.add_row(
                Text(row.label),
                *cells,
                delta_text,
                f"{new.seconds / new.runs:.1f}" if new and new.runs else "",
                f"{new.tokens / new.runs:.0f}" if new and new.runs else "",
                _skill_used(row),
                key=str(row.eval_id),
            )
        total = len(review.rows)
        evals.border_title = f"Evals ({total:,})" + (
            f" · {start + 1:,}–{start + len(page):,} shown, [ / ] page on" if total > PAGE else ""
        )

    def action_eval_page(self, step: int) -> None:
        if self.review and self.review.rows:
            start = self.evals_start + step * PAGE
            if 0 <= start < len(self.review.rows):
                self.fill_evals(start)

    def fill_failures(self, start: int) -> None:
        assert self.review is not None
        table = self.query_one("#failures", DataTable)
        table.clear()
        self.page_start = start
        page = self.review.failures[start : start + PAGE]
        table.add_rows([self._failure_row(f) for f in page])
        total = len(self.review.failures)
        table.border_title = f"Failed expectations ({total:,})" + (
            f" · {start + 1:,}–{start + len(page):,} shown, n / p page on" if total > PAGE else ""
        )

    def _failure_row(self, f: Failure) -> tuple:
        mark = "✓" if self._key(f) in self.feedback.reviewed else ""
        evidence = " ".join(f.evidence.split())[:120]
        # Text, not str: a DataTable reads a str as markup, and "[demo judge …]" would vanish.
        return (
            mark,
            Text(str(f.eval_id)),
            Text(f.id + (" ⚠" if f.error else "")),
            f.configuration,
            str(f.run_number),
            Text(evidence),
        )

    @staticmethod
    def _key(f: Failure) -> str:
        return f"{run_id(f.folder)}/{f.id}"

    # ------------------------------------------------------------ selection

    @on(DataTable.RowHighlighted, "#failures")
    def failure_highlighted(self, event: DataTable.RowHighlighted) -> None:
        index = self.page_start + event.cursor_row
        if self.review and 0 <= index < len(self.review.failures):
            self.show_failure(self.review.failures[index])

    @on(DataTable.RowHighlighted, "#evals")
    def eval_highlighted(self, event: DataTable.RowHighlighted) -> None:
        index = self.evals_start + event.cursor_row
        if not self.review or not 0 <= index < len(self.review.rows):
            return
        if self.review.failures and not event.data_table.has_focus:
            return  # the table being filled, not a person moving in it: the failure shown stays
        row = self.review.rows[index]
        name = f" {row.name}" if row.name and row.name != str(row.eval_id) else ""
        shown = Text.assemble((f"eval {row.eval_id}", "bold"), f"{name}\n")
        for configuration, cell in row.cells.items():
            shown.append(f"\n{configuration}", "bold")
            shown.append(f": {cell.passed}/{cell.total} over {cell.runs} run(s)")
            if cell.flaky:
                shown.append(" — flaky: its repeats disagree", "yellow")
            if cell.mistrigger:
                shown.append(f"\n  {cell.mistrigger}", "red")
            for key, (k, n, text) in cell.assertions.items():
                shown.append("\n  ")
                shown.append(f"{k}/{n}", "green" if k == n else "red")
                shown.append(f" {key}: {text[:100]}")
        self.query_one("#evidence-text", Static).update(shown)
        first = next((r for r in self.review.results if str(r.eval_id) == str(row.eval_id)), None)
        if first is not None:
            self.set_run(first.folder)

    def show_failure(self, failure: Failure) -> None:
        """The expectation and its evidence exactly as grading.json has them: a Text,
        never markup, so backslashes, [brackets] and quotes are shown as written."""
        reviewed = self._key(failure) in self.feedback.reviewed
        shown = Text.assemble(
            (failure.id, "bold"),
            f" ({failure.kind}) · eval {failure.eval_id} · {failure.configuration} · run {failure.run_number}",
        )
        if reviewed:
            shown.append(" · reviewed", "green")
        if failure.error:
            shown.append("\nNot graded: see why below.", "yellow")
        shown.append("\n\nExpected\n", "bold")
        shown.append(failure.text)
        shown.append("\n\nEvidence\n", "bold")
        shown.append(failure.evidence)
        if failure.kind == "command_check":
            shown.append("\n\ny copies the command with its environment", "dim")
        self.query_one("#evidence-text", Static).update(shown)
        self.set_run(failure.folder)

    def set_run(self, folder: str) -> None:
        if folder == self.run_folder:
            return
        self.save_feedback()
        self.run_folder = folder
        self.query_one("#feedback-run", Static).update(
            f"Feedback on [b]{run_id(folder)}[/b] (saved to feedback.json as you leave the box)"
        )
        self.query_one("#feedback-text", TextArea).load_text(self.feedback.text(run_id(folder)))
        self.fill_tab(self.query_one(TabbedContent).active)

    @on(TabbedContent.TabActivated)
    def tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.fill_tab(event.pane.id or "")

    def fill_tab(self, tab: str) -> None:
        """Conversation, outputs and diff are read only when their tab is shown."""
        if self.run_folder is None or self.shown_tabs.get(tab) == self.run_folder:
            return
        run = self.iteration / self.run_folder
        if tab == "conversation":
            log = self.query_one("#conversation-log", RichLog)
            log.clear()
            for line in _conversation(run / layout.TRANSCRIPT):
                log.write(line, scroll_end=False)
            log.scroll_home(animate=False)
        elif tab == "outputs":
            self._fill(self.query_one("#outputs-log", Log), _outputs(run / layout.OUTPUTS))
        elif tab == "diff":
            text, note = app_review.diff(run / layout.DIFF)
            self._fill(self.query_one("#diff-log", Log), text.splitlines() + ([f"({note})"] if note else []))
        else:
            return
        self.shown_tabs[tab] = self.run_folder

    @staticmethod
    def _fill(log: Log, lines: list[str]) -> None:
        log.clear()
        log.write_lines(lines)
        log.scroll_home(animate=False)

    # ------------------------------------------------------------ actions

    def select_failure(self, index: int) -> None:
        table = self.query_one("#failures", DataTable)
        if not self.review or not self.review.failures:
            self.notify("No failed expectations in this iteration.")
            return
        index %= len(self.review.failures)
        if not self.page_start <= index < self.page_start + PAGE:
            self.fill_failures(index - index % PAGE)
        table.move_cursor(row=index - self.page_start)
        self.show_failure(self.review.failures[index])

    @property
    def failure_index(self) -> int:
        return self.page_start + self.query_one("#failures", DataTable).cursor_row

    def action_next_failure(self) -> None:
        self.select_failure(self.failure_index + 1)

    def action_previous_failure(self) -> None:
        self.select_failure(self.failure_index - 1)

    def action_mark_reviewed(self) -> None:
        table = self.query_one("#failures", DataTable)
        if not self.review or not self.review.failures:
            return
        failure = self.review.failures[self.failure_index]
        marked = self.feedback.toggle_reviewed(self._key(failure))
        table.update_cell_at(Coordinate(table.cursor_row, 0), "✓" if marked else "")
        left = sum(self._key(f) not in self.feedback.reviewed for f in self.review.failures)
        self.notify(f"{'Reviewed' if marked else 'Unmarked'}: {failure.id}. {left} failure(s) left to review.")
        if marked and left:
            self.action_next_failure()

    def action_copy_command(self) -> None:
        if not self.review or not self.review.failures:
            return
        failure = self.review.failures[self.failure_index]
        if failure.kind != "command_check":
            self.notify("y copies a command_check's command; this expectation ran none.", severity="warning")
            return
        try:
            assertion = app_review.command_of(self.iteration, failure)
        except (OSError, ValueError, WorkbenchError) as exc:
            self.notify(f"Cannot read the suite this iteration ran: {exc}", severity="error")
            return
        if assertion is None:
            self.notify(f"{failure.id} is no longer in the suite this iteration ran.", severity="warning")
            return
        lines = app_review.command_lines(assertion)
        self.app.copy_to_clipboard("\n".join(lines))
        self.notify(
            f"Copied {len(lines)} command line(s) of {failure.id}, with its environment "
            f"(it ran in a copy of {self.iteration / failure.folder / layout.REPO}):\n" + "\n".join(lines),
            timeout=10,
            markup=False,
        )

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self.fill_tab(tab)

    def action_feedback(self) -> None:
        self.action_tab("feedback")
        self.query_one("#feedback-text", TextArea).focus()

    @on(TextArea.Changed, "#feedback-text")
    def feedback_typed(self) -> None:
        self.query_one("#feedback-run", Static).update(
            f"Feedback on [b]{run_id(self.run_folder or '')}[/b] — [yellow]unsaved[/] (Esc or Tab saves)"
        )

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if getattr(event, "widget", None) is self.query_one("#feedback-text", TextArea):
            self.save_feedback()

    def save_feedback(self) -> None:
        if self.run_folder is None:
            return
        text = self.query_one("#feedback-text", TextArea).text
        if self.feedback.set_text(run_id(self.run_folder), text):
            self.query_one("#feedback-run", Static).update(
                f"Feedback on [b]{run_id(self.run_folder)}[/b] — saved to feedback.json"
            )

    def action_improve(self) -> None:
        """Improve from these failures: the History screen, proposing from the best with a brief of them."""
        configuration = self.review.new_configuration if self.review else None
        if self.session is None:
            self.notify("Open the skill in the workbench to improve it from here.", severity="warning")
            return
        if self.review is None or not any(f.configuration == configuration for f in self.review.failures):
            self.notify("Nothing failed with the skill here: nothing to improve from.", severity="warning")
            return
        assert configuration is not None
        improve_from = getattr(self.app, "improve_from", None)  # the workbench app's (this screen does not import
        if improve_from is not None:  # the History screen: it imports this one)
            improve_from(self.session, self.iteration, configuration)

    def action_back(self) -> None:
        focused = self.focused
        if isinstance(focused, TextArea):
            self.save_feedback()
            self.query_one("#failures", DataTable).focus()
            return
        self.save_feedback()
        self.app.pop_screen()


def spent(cost: dict) -> str:
    """cost: agents $X + judge $Y, and '(at least)' when some runs did not say theirs."""
    unsure = " (at least)" if cost["agents_unknown"] or cost["judge_unknown"] else ""
    return f"cost {money(cost['total'])}{unsure}: agents {money(cost['agents'])} + judge {money(cost['judge'])}"


def _rate_cell(cell: Cell) -> Text:
    """An evals cell: ✓ or ✗ as well as the colour, then the pass rate and its counts."""
    passed = cell.ok
    return Text(f"{'✓' if passed else '✗'} {cell_text(cell)}", style="green" if passed else "red")


def _skill_used(row: Row) -> str:
    """In how many of the runs that had the skill staged the agent invoked it."""
    staged = next((cell for cell in row.cells.values() if cell.staged), None)
    if staged is None:
        return ""
    return f"{'! ' if staged.mistrigger else ''}{staged.invoked}/{staged.staged}"


def _widest(texts: Iterable[str], label: str, most: int) -> int:
    """A column as wide as its widest text (or its label), at most `most`."""
    return min(max([len(label), *(len(t) for t in texts)]), most)


def _conversation(path: Path) -> list[str]:
    events, note = app_review.conversation(path)
    lines = []
    for event in events:
        label = {"user": "▶ ", "assistant": "◀ ", "tool_use": "  ⚙ ", "tool_result": "  ↳ "}.get(event.kind, "")
        if event.kind == app_review.MARKDOWN:
            lines += [f"(skill-creator's {app_review.MARKDOWN}, as written)", *event.text.splitlines()]
        elif event.kind == "turn":
            lines.append(f"── {event.text} ──")
        else:
            lines.append(f"[turn {event.turn}] {label}{event.label}: {event.text}")
    return lines or [f"({note})"]


def _outputs(folder: Path) -> list[str]:
    files, note = app_review.outputs(folder)
    lines = []
    for file in files:
        lines.append(f"═══ {file.name} ═══")
        lines += file.text.splitlines()
        lines += [f"({file.note})"] if file.note else []
        lines.append("")
    return lines + ([f"({note})"] if note else [])
