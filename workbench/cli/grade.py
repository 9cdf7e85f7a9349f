"""`workbench grade` (`workbench report` is in workbench/report_cli.py and reporting.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.app.review import render
from workbench.cli.options import (
    CONTEXT,
    Asked,
    Gates,
    bundle,
    check_timeout_option,
    dry_run_option,
    judge_options,
    trust_option,
    wait_option,
)
from workbench.cli.output import dry_run_end, gate, print_error, refused_trust, say
from workbench.errors import EXIT_OK, EXIT_USAGE, WorkbenchError
from workbench.report_cli import gate_options
from workbench.reporting import not_an_iteration, report_command  # noqa: F401  (their old place)

if TYPE_CHECKING:
    from workbench.app.choices import Judge


def grade_command(
    iteration: Path, choice: Judge, check_timeout: float, jobs: int, asked: Asked, gates: Gates, wait: bool = False
) -> int:
    from workbench.app import pipeline  # here: `report` needs none of it, and starts faster without
    from workbench.workspace import layout

    try:
        work = pipeline.prepare_grading(iteration, choice, check_timeout, jobs)
        if asked.dry_run:
            runs = len(layout.runs(iteration))
            click.echo(f"Would grade the {runs} run folder(s) of {iteration} with the {work.judge.label}.")
            dry_run_end(work.untrusted())
            return EXIT_OK
        refused = refused_trust(work, asked.trust, "grade")
        if refused is not None:
            return refused
        say(f"Grading {iteration} with the {work.judge.label}")
        graded, review = pipeline.regrade(work, wait, say)
    except WorkbenchError as exc:
        return print_error(exc, "grade")
    for note in graded.notes:
        say(f"note: {note}")
    print(render(review, str(iteration), "text"), end="")
    code = gate(review, gates.fail_under, gates.eval_fail_under)
    if graded.complete:
        return code
    if graded.kept:
        say(f"workbench grade: {len(graded.kept)} run(s) kept their earlier grading, which the new one would lose:")
        for _folder, why in graded.kept:
            say(f"  {why}")
    if graded.undecided:
        say(f"workbench grade: {len(graded.undecided)} run(s) have expectations that could not be decided.")
    say(
        f"workbench grade: benchmark.json and benchmark.md of {iteration} are as they were: they are written only "
        "when every run graded decided all its expectations. Grade again once the judge answers."
    )
    return EXIT_USAGE


@click.command(context_settings=CONTEXT)
@click.argument("iteration", type=click.Path(path_type=Path, exists=True, file_okay=False))
@judge_options
@check_timeout_option
@click.option("-j", "jobs", type=click.IntRange(min=1), default=4, show_default=True, help="Runs graded at once.")
@trust_option
@dry_run_option
@wait_option
@gate_options
@bundle("asked", Asked)
@bundle("gates", Gates)
def grade(
    iteration: Path, judge: Judge, check_timeout: float, jobs: int, asked: Asked, wait: bool, gates: Gates
) -> None:
    """Grade (again) the runs of ITERATION (<workspace>/iteration-N) without re-running agents.

    Reads the suite the iteration was run from as it is now, so a corrected
    assertion can be re-graded. Writes grading.json per run, benchmark.json and
    benchmark.md. Exit codes as for run."""
    sys.exit(grade_command(iteration, judge, check_timeout, jobs, asked, gates, wait))
