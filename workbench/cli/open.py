"""`workbench open` (and a bare path): the app on a skill folder."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from workbench.cli.options import CONTEXT
from workbench.errors import EXIT_USAGE


@click.command("open", context_settings=CONTEXT)
@click.argument("skill_dir", required=False, type=click.Path(path_type=Path))
@click.option("--no-watch", is_flag=True, help="Do not watch the skill folder for changes on disk.")
def open_command(skill_dir: Path | None, no_watch: bool) -> None:
    """Open the workbench on a skill folder."""
    from workbench.app.skills import SkillsNotFound, find_skills

    try:
        skills = find_skills(skill_dir or Path("."))
    except SkillsNotFound as exc:
        click.echo(f"workbench: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    run_app(skills, watch=not no_watch)


def run_app(skills: list[Path], watch: bool) -> None:
    from workbench.tui import start

    start.run_app(skills, watch)
