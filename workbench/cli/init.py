"""`workbench init`: a new skill and its first suite."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from workbench.app.new_skill import DIALECTS
from workbench.cli.options import CONTEXT


@click.command(context_settings=CONTEXT)
@click.argument("folder", required=False, type=click.Path(path_type=Path, file_okay=False))
@click.option("--name", help="The skill's name (default: the folder's name, as the spec wants it).")
@click.option(
    "--dialect",
    type=click.Choice(DIALECTS),
    default=DIALECTS[0],
    show_default=True,
    help="The first suite's format.",
)
def init(folder: Path | None, name: str | None, dialect: str) -> None:
    """Start a skill from nothing: SKILL.md and a first valid suite in FOLDER
    (default: the current folder), one example of each assertion kind. Never
    overwrites a file that is there."""
    from workbench.app.new_skill import init as write_new_skill
    from workbench.cli.output import print_error
    from workbench.errors import WorkbenchError

    target = folder or Path(".")
    try:
        written = write_new_skill(target, name, dialect)
    except WorkbenchError as exc:
        sys.exit(print_error(exc, "init"))
    for path in written:
        click.echo(f"wrote {path}")
    skill = written[0].parent
    click.echo(f"Next: workbench validate {skill}, then workbench {skill} to write your cases.")
