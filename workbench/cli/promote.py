"""`workbench promote`: a version made the current best."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from workbench.cli.options import CONTEXT, wait_option, workspace_option


@click.command(context_settings=CONTEXT)
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.argument("version_name", metavar="VERSION")
@workspace_option()
@click.option(
    "--write",
    is_flag=True,
    help="Also write VERSION's files into SKILL_DIR, after showing the diff; "
    "refused when that would overwrite uncommitted work.",
)
@click.option(
    "--yes",
    is_flag=True,
    help="Do not ask: before promoting a version below the best or that did not win, nor with --write before "
    "writing (the diff is still shown).",
)
@wait_option
def promote(skill_dir: Path, version_name: str, workspace: Path | None, write: bool, yes: bool, wait: bool) -> None:
    """Make VERSION the current best in history.json."""
    from workbench.cli.improve import promote_command

    sys.exit(promote_command(skill_dir, version_name, workspace, write, yes, wait))
