"""An iteration's results as the command line and the Results screen read them: the review (its rows and
cells, the failed expectations with their evidence) and its cost, as text (render, cost_line); the person's
feedback on each run; what a run's folder holds to show (its conversation, outputs and diff, read through
grading/run_files.py: bounded, never following a link); and the command a failed command_check ran, as a line
to copy."""

from __future__ import annotations

import shlex
from pathlib import Path

from workbench.grading import command_check, run_files
from workbench.grading.benchmark import cost_line
from workbench.grading.feedback import Feedback, run_id
from workbench.grading.report import render
from workbench.grading.review import Cell, Failure, Review, Row, cell_text, load_review
from workbench.grading.suite import suite_of_iteration

MARKDOWN = run_files.MARKDOWN  # the kind of a conversation event that is skill-creator's transcript.md as written
conversation, outputs, diff = run_files.conversation, run_files.outputs, run_files.diff

__all__ = [
    "MARKDOWN",
    "Cell",
    "Failure",
    "Feedback",
    "Review",
    "Row",
    "cell_text",
    "command_of",
    "command_lines",
    "cost_line",
    "conversation",
    "diff",
    "load_review",
    "outputs",
    "render",
    "run_id",
]


def command_of(iteration: Path, failure: Failure) -> dict | None:
    """The command_check assertion a failure is the verdict of, from the suite the iteration ran. Raises
    OSError, ValueError or WorkbenchError when that suite cannot be read."""
    suite = suite_of_iteration(iteration)
    case = next((c for c in suite.cases.values() if str(c.eval_id) == str(failure.eval_id)), None)
    if case is None:
        return None
    return next(
        (a for a in case.assertions if isinstance(a, dict) and a.get("id") == failure.id),
        None,
    )


def command_lines(assertion: dict) -> list[str]:
    """One shell line per matrix cell: `env K=V ... bash -c 'command'`, shell-quoted,
    as the check ran it (bash -c, with the assertion's env and the cell's values)."""
    lines = []
    for cell in command_check.cells(assertion):
        env = {**(assertion.get("env") or {}), **cell}
        words = ["env", *(f"{k}={v}" for k, v in env.items()), "bash", "-c", str(assertion.get("command") or "")]
        lines.append(shlex.join(words))
    return lines
