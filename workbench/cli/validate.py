"""`workbench validate`: skills, suites and artifacts against their formats, like a compiler."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.cli.options import CONTEXT
from workbench.errors import EXIT_FAILED, EXIT_OK
from workbench.formats.detect import EVALS_DIALECTS

if TYPE_CHECKING:
    from workbench.validate.diagnostic import FileReport

DIALECTS = tuple(EVALS_DIALECTS)  # the formats registered in formats/detect.py


@click.command(context_settings=CONTEXT)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--dialect", type=click.Choice(DIALECTS), help="Read eval suites as this dialect instead of detecting it."
)
@click.option(
    "--format",
    "output",
    type=click.Choice(("text", "json")),
    default="text",
    show_default=True,
    help="text: one line per problem, like a compiler; json: a list of files and their diagnostics.",
)
def validate(paths: tuple[Path, ...], dialect: str | None, output: str) -> None:
    """Check skills, eval suites and run artifacts against their formats.

    PATH is a file, a skill folder or a tree (default: the current folder).
    Trees are walked for SKILL.md, eval suites and workspace artifacts."""
    from workbench.app.validate_files import validate_paths

    try:
        reports = validate_paths(list(paths) or [Path(".")], dialect)
    except OSError as exc:
        from workbench.cli.output import print_os_error

        sys.exit(print_os_error(exc, "validate"))
    if output == "json":
        click.echo(json.dumps([r.as_json() for r in reports], indent=2, ensure_ascii=False))
    else:
        _print_text(reports)
    sys.exit(EXIT_FAILED if any(r.errors for r in reports) else EXIT_OK)


def _print_text(reports: list[FileReport]) -> None:
    color = sys.stdout.isatty()
    styles = {"error": "red", "warning": "yellow"}
    for report in reports:
        for d in report.diagnostics:
            severity = click.style(d.severity, fg=styles[d.severity], bold=True) if color else d.severity
            click.echo(d.compiler_line(report.file, severity))
    for report in reports:
        if report.skipped:
            click.echo(f"{report.file}: skipped: {report.skipped}")
    checked = [r for r in reports if not r.skipped]
    errors = sum(r.errors for r in checked)
    warnings = sum(r.warnings for r in checked)
    skipped = len(reports) - len(checked)
    click.echo(
        f"{len(checked)} file{'s' if len(checked) != 1 else ''} checked: "
        f"{plural(errors, 'error')} · {plural(warnings, 'warning')}" + (f" · {skipped} skipped" if skipped else "")
    )


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
