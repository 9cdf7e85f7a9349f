"""`workbench draft-cases`: new cases drafted beside the suite, never into it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.cli.options import (
    CONTEXT,
    Asked,
    bundle,
    dry_run_option,
    proposer_options,
    sandbox_option,
    trust_option,
)

if TYPE_CHECKING:
    from workbench.app.choices import Proposer


@click.command("draft-cases", context_settings=CONTEXT)
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--count", type=click.IntRange(1, 20), default=5, show_default=True, help="Cases to draft.")
@click.option(
    "--evals",
    "suite",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The suite to draft for (default: evals/evals.json).",
)
@click.option("--example", "examples", multiple=True, help="An example prompt a user might type (repeatable).")
@proposer_options("The agent that drafts the cases.")
@sandbox_option("As for run.")
@trust_option
@dry_run_option
@bundle("asked", Asked)
def draft_cases(
    skill_dir: Path,
    count: int,
    suite: Path | None,
    examples: tuple[str, ...],
    proposer: Proposer,
    sandbox: str,
    asked: Asked,
) -> None:
    """Draft new eval cases from SKILL.md (and --example prompts) into <suite>.drafts.json
    beside the suite, never into it: each joins the suite only when you accept it in the
    editor (Accept draft). Exits 0 with the drafts written, 2 on errors."""
    from workbench.app.draft_cases import DraftRequest
    from workbench.cli.improve import draft_cases_command

    sys.exit(draft_cases_command(DraftRequest(skill_dir, suite, count, examples, proposer, sandbox), asked))
