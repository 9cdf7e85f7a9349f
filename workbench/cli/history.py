"""`workbench history`: the version tree."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from workbench.cli.options import CONTEXT, workspace_option


@click.command(context_settings=CONTEXT)
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@workspace_option()
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
def history(skill_dir: Path, workspace: Path | None, fmt: str) -> None:
    """The version tree with pass rates, results and the best marker."""
    from workbench.cli.improve import history_command

    sys.exit(history_command(skill_dir, workspace, fmt))
