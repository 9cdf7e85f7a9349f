"""`workbench demo`: a fresh copy of the bundled demo skill, opened."""

from __future__ import annotations

import sys

import click

from workbench.cli.open import run_app
from workbench.cli.options import CONTEXT
from workbench.errors import EXIT_USAGE


@click.command(context_settings=CONTEXT)
@click.option("--no-watch", is_flag=True, help="Do not watch the skill folder for changes on disk.")
@click.option(
    "--draft",
    is_flag=True,
    help="With a first-draft SKILL.md that Improve mode can improve (demo/draft/README.md walks through it).",
)
def demo(no_watch: bool, draft: bool) -> None:
    """Open a fresh copy of the bundled demo skill (the shipped files stay as they are)."""
    from workbench.app.skills import copy_demo

    try:
        skill = copy_demo(draft)
    except FileNotFoundError as exc:
        click.echo(f"workbench demo: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(f"Demo copied to {skill}", err=True)
    run_app([skill], watch=not no_watch)
