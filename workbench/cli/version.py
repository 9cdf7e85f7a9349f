"""`workbench version new`: a snapshot of the skill as the next version."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from workbench.cli.options import CONTEXT, wait_option, workspace_option


@click.group(context_settings=CONTEXT)
def version() -> None:
    """Versions of a skill (Improve mode): immutable snapshots in the workspace."""


@version.command("new")
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--from", "parent", help="The parent version (default: the current best).")
@workspace_option()
@wait_option
def version_new(skill_dir: Path, parent: str | None, workspace: Path | None, wait: bool) -> None:
    """Snapshot SKILL_DIR's current files (all but evals/) as the next version.

    The first snapshot is v0, the baseline; later ones record their parent. A
    snapshot identical to its parent is refused."""
    from workbench.cli.improve import version_new_command

    sys.exit(version_new_command(skill_dir, parent, workspace, wait))
