"""`workbench report --format html`: one self-contained page to share an
iteration's results: the summary, evals by configuration, the failed
expectations first, each run's conversation, outputs and diff, and the feedback.

Everything on the page came from an iteration someone else may have written, so
Jinja2 escapes every string (autoescape), the page loads nothing (inline CSS,
no script, no URL) and a Content-Security-Policy forbids scripts and fetches in
case a string ever slipped through. Each run's files are cut to a budget, with a
note, so a 10,000-run iteration still makes a page a browser opens."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from workbench.formats.money import money
from workbench.formats.regular import read_object
from workbench.grading import run_files
from workbench.grading.feedback import Feedback, run_id
from workbench.grading.review import Failure, Review, cell_text
from workbench.workspace import layout

EVIDENCE_LIMIT = 20_000  # characters of one failure's evidence
TEXT_LIMIT = 4_000  # characters of one message of a conversation
EVENTS_LIMIT = 400  # events of one conversation
FILE_LIMIT = 50_000  # bytes of one output file or diff on the page
OUTPUT_FILES = 20  # output files of one run
FAILURES_LIMIT = 1_000  # failed expectations listed
PAGE_BUDGET = 8_000_000  # characters of run contents (conversations, outputs, diffs) in all
# Runs whose contents are on the page, those with failures first: reading and showing every
# run's files made a 50,000-run page take most of a minute; the others name their folder.
RUNS_SHOWN = 500


@dataclass
class RunView:
    anchor: str  # an id made here, never from the iteration's names
    folder: str
    eval_id: str
    configuration: str
    run_number: int
    pass_rate: str
    failed: int
    marks: list[tuple[bool, str, str]]  # each expectation: passed, its id (or number), its text cut
    feedback: str
    events: list[run_files.Event] = field(default_factory=list)
    conversation_note: str = ""
    outputs: list[run_files.OutputFile] = field(default_factory=list)
    outputs_note: str = ""
    diff: str = ""
    diff_note: str = ""
    left_out: bool = False  # the page's budget was spent before this run's contents


def render_html(review: Review, iteration: Path) -> str:
    return "".join(page_parts(review, iteration))


def page_parts(review: Review, iteration: Path) -> Iterator[str]:
    """The page in pieces as the template makes them, to be written as they come."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("workbench.grading", "templates"),
        autoescape=True,  # every string from the iteration is escaped, in text and in attributes
        undefined=jinja2.StrictUndefined,  # a misspelt name in the template is an error, not a blank
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["pct"] = lambda value: "—" if value is None else f"{value:.0%}"
    environment.filters["signed"] = lambda value: f"{value:+.2f}"
    environment.filters["cut"] = _cut
    environment.filters["money"] = money
    # The review read from benchmark.json has its metadata: that file (tens of MB) is not read again.
    benchmark = read_object(iteration / layout.BENCHMARK) if review.metadata is None else {"metadata": review.metadata}
    metadata: dict = benchmark["metadata"] if isinstance(benchmark.get("metadata"), dict) else {}
    executor = str(metadata.get("executor_model") or "unknown executor")
    judges = sorted({str(r.grading.get("judge")) for r in review.results if r.grading.get("judge")})
    feedback = Feedback(iteration)
    runs = _runs(review, iteration, feedback)
    anchors = {run.folder: run.anchor for run in runs}
    return environment.get_template("report.html.j2").generate(
        iteration=iteration.name,
        path=str(iteration),
        skill=str(metadata.get("skill_name") or ""),
        timestamp=str(metadata.get("timestamp") or ""),
        executor=executor,
        judges=judges or ["unknown judge"],
        demo=any("demo" in label for label in (executor, *judges)),
        review=review,
        rates=[(c, review.rate(c)) for c in review.configurations],
        delta=review.delta(),
        difference=review.difference(),
        spent=review.cost(),
        rows=_rows(review),
        failures=_failure_groups(review),
        own_failed=sum(f.configuration == review.new_configuration for f in review.failures),
        failures_cut=max(0, len(review.failures) - FAILURES_LIMIT),
        anchors=anchors,
        runs=runs,
        runs_shown=sum(not run.left_out for run in runs),
        runs_left_out=sum(run.left_out for run in runs),
        feedback=[(run, str(r.get("feedback", ""))) for run, r in feedback.reviews.items() if r.get("feedback")],
        feedback_status=str(feedback.status),
        evidence_limit=EVIDENCE_LIMIT,
    )


def _cut(text: object, limit: int) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f" … ({len(text) - limit:,} more characters not shown)"


def _failure_groups(review: Review) -> list[tuple[str, bool, list[Failure]]]:
    """(configuration, is it the baseline, its failures) in the review's order: the skill's own first."""
    groups: dict[str, list[Failure]] = {}
    for failure in review.failures[:FAILURES_LIMIT]:
        groups.setdefault(failure.configuration, []).append(failure)
    baseline = review.pair[1] if review.pair else None
    return [(configuration, configuration == baseline, failures) for configuration, failures in groups.items()]


def _rows(review: Review) -> list[dict]:
    """Each eval: its cell text per configuration, whether all passed, and new minus baseline."""
    rows = []
    for row in review.rows:
        cells = {}
        for c in review.configurations:
            cell = row.cells.get(c)
            cells[c] = None if cell is None else {"text": cell_text(cell), "ok": cell.ok}
        delta = None
        if review.pair and all(side in row.cells for side in review.pair):
            new, base = (row.cells[side] for side in review.pair)
            delta = new.pass_rate - base.pass_rate
        # per configuration: (all passed, "k/N", id, text cut), made here: the template's own calls cost more
        assertions = {
            c: [(k == n, f"{k}/{n}", key, _cut(text, 300)) for key, (k, n, text) in cell.assertions.items()]
            for c, cell in row.cells.items()
        }
        rows.append(
            {"id": str(row.eval_id), "name": row.name, "cells": cells, "delta": delta, "assertions": assertions}
        )
    return rows


def _runs(review: Review, iteration: Path, feedback: Feedback) -> list[RunView]:
    runs = []
    for index, r in enumerate(review.results):
        summary: dict = r.grading["summary"] if isinstance(r.grading.get("summary"), dict) else {}
        expectations = [e for e in r.expectations if isinstance(e, dict)]
        runs.append(
            RunView(
                anchor=f"run-{index + 1}",
                folder=r.folder,
                eval_id=str(r.eval_id),
                configuration=r.configuration,
                run_number=r.run_number,
                pass_rate=f"{summary.get('passed', 0)}/{summary.get('total', 0)}",
                failed=sum(not e.get("passed") for e in expectations) + bool(r.grading.get("unusable")),
                marks=[
                    (bool(e.get("passed")), str(e.get("id") or number), _cut(e.get("text", ""), 300))
                    for number, e in enumerate(expectations, 1)
                ],
                feedback=feedback.text(run_id(r.folder)),
            )
        )
    # The budget goes to the runs with failures first: they are what a reader opens.
    budget, shown = PAGE_BUDGET, 0
    for run in sorted(runs, key=lambda run: not run.failed):
        shown += 1
        if budget <= 0 or shown > RUNS_SHOWN:
            run.left_out = True
            continue
        budget -= _fill(run, iteration / run.folder)
    return runs


def _fill(run: RunView, folder: Path) -> int:
    """Read the run's conversation, outputs and diff into it; returns their size."""
    events, run.conversation_note = run_files.conversation(folder / layout.TRANSCRIPT)
    if len(events) > EVENTS_LIMIT:
        run.conversation_note = f"the first {EVENTS_LIMIT} of {len(events):,} events are shown"
    run.events = events[:EVENTS_LIMIT]
    for event in run.events:
        event.text = _cut(event.text, TEXT_LIMIT)
    run.outputs, run.outputs_note = run_files.outputs(folder / layout.OUTPUTS, FILE_LIMIT, OUTPUT_FILES)
    run.diff, run.diff_note = run_files.diff(folder / layout.DIFF, FILE_LIMIT)
    return sum(len(e.text) for e in run.events) + sum(len(f.text) for f in run.outputs) + len(run.diff)
