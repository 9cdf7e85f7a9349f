"""`workbench report` as a click command of its own, apart from workbench/cli: importing
that package builds every command, with the executor and judge registries their options
list, which costs a report on a small iteration more than its own work. The `workbench`
group adds this same command (workbench/cli/__init__.py); workbench/launch.py starts it
alone, and skips click too for a plain command line (workbench/reporting.py)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from workbench.reporting import FORMATS, print_os_error, report_command

_Command = TypeVar("_Command", bound=Callable[..., Any])


def gate_options(command: _Command) -> _Command:
    """--fail-under and --eval-fail-under, as run, grade and report take them."""
    command = click.option(
        "--eval-fail-under",
        type=click.FloatRange(0, 1),
        help="Fail when any single eval's with-skill pass rate is below RATE.",
    )(command)
    return click.option(
        "--fail-under",
        type=click.FloatRange(0, 1),
        help="Pass when the with-skill pass rate (the mean of its runs' pass rates) is at least RATE.",
    )(command)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("iteration", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for people, json for scripts, junit (JUnit XML) for CI, html: one self-contained page to share.",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the report to FILE (atomically) instead of standard output.",
)
@gate_options
def report(
    iteration: Path, fmt: str, output: Path | None, fail_under: float | None, eval_fail_under: float | None
) -> None:
    """Show the graded results of ITERATION. Exit codes as for run."""
    # No cyclic collection: a short process building a million acyclic objects (10,000 runs)
    # would have the collector walk them again and again, a third of its time.
    gc.disable()
    try:
        code = report_command(iteration, fmt, fail_under, eval_fail_under, output)
    except OSError as exc:  # a folder where a file was, no permission: a message, never a traceback
        code = print_os_error(exc, "report")
    sys.exit(code)
