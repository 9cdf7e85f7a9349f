"""`workbench evaluate`: a version run through the evals and decided against the best."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.cli.options import (
    CONTEXT,
    RUN,
    Asked,
    agent_options,
    bundle,
    check_timeout_option,
    dry_run_option,
    judge_options,
    limits_options,
    margin_option,
    only_option,
    placement_options,
    trust_option,
    yes_option,
)

if TYPE_CHECKING:
    from workbench.app.choices import Agent, Judge, Limits, Placement


@dataclass(frozen=True)
class Evaluated:
    """evaluate's own options."""

    check_timeout: float
    only: str | None
    margin: float
    auto_promote: bool
    decide_by: str
    require_win: bool


@click.command(context_settings=CONTEXT)
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.argument("version_name", metavar="VERSION")
@agent_options("The agent that runs each eval")
@judge_options
@check_timeout_option
@limits_options(RUN)
@yes_option
@placement_options()
@only_option
@trust_option
@margin_option
@click.option("--auto-promote", is_flag=True, help="Make VERSION the current best when it wins.")
@click.option(
    "--decide",
    "decide_by",
    type=click.Choice(("rule", "comparator")),
    default="rule",
    show_default=True,
    help="rule: pass-rate delta, margin and interval; comparator: the judge compares the two versions' "
    "runs blind, majority of three per eval (comparison-N.json).",
)
@click.option("--require-win", is_flag=True, help="Exit 1 on a tie too: only a win passes.")
@dry_run_option
@bundle("wanted", Evaluated)
@bundle("asked", Asked)
def evaluate(
    skill_dir: Path,
    version_name: str,
    agent: Agent,
    judge: Judge,
    limits: Limits,
    placement: Placement,
    wanted: Evaluated,
    asked: Asked,
) -> None:
    """Run VERSION's snapshot through the evals, grade it, and decide won/lost/tie
    against the current best, paired by eval (docs/improve.md says how).

    Exits 0 when VERSION won or tied (1 on a tie with --require-win), 1 when it
    lost, 2 on errors."""
    from workbench.app.pipeline import id_set
    from workbench.cli.run import evaluate_command, run_request

    request = replace(
        run_request(skill_dir, agent, judge, limits, placement),
        check_timeout=wanted.check_timeout,
        only=id_set(wanted.only),
        version=version_name,
        margin=wanted.margin,
        decide_by=wanted.decide_by,
        auto_promote=wanted.auto_promote,
    )
    sys.exit(evaluate_command(request, asked.trust, wanted.require_win, asked.yes, asked.dry_run))
