"""`workbench optimize-description`: a description that triggers better, judged on held-out queries."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.cli.options import (
    CONTEXT,
    TRIGGER,
    Asked,
    agent_options,
    bundle,
    dry_run_option,
    limits_options,
    placement_options,
    proposer_options,
    trust_option,
)
from workbench.cli.trigger import queries_option

if TYPE_CHECKING:
    from workbench.app.choices import Agent, Limits, Placement, Proposer


@dataclass(frozen=True)
class Optimized:
    """optimize-description's own options."""

    rounds: int
    holdout: float
    seed: int | None


@click.command("optimize-description", context_settings=CONTEXT)
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True, help="Proposals at most.")
@click.option(
    "--holdout",
    type=click.FloatRange(0.05, 0.95),
    default=0.4,
    show_default=True,
    help="The share of each class of queries held out: the proposer never sees them, and they alone select.",
)
@click.option("--seed", type=int, help="The split's seed (default: the saved split's, else a new one, saved).")
@proposer_options("The agent that rewrites the description (docs/improve.md, the proposer protocol).")
@queries_option
@agent_options("The agent each query runs through")
@limits_options(TRIGGER)
@placement_options()
@trust_option
@dry_run_option
@bundle("wanted", Optimized)
@bundle("asked", Asked)
def optimize_description(
    skill_dir: Path,
    wanted: Optimized,
    proposer: Proposer,
    queries: Path | None,
    agent: Agent,
    limits: Limits,
    placement: Placement,
    asked: Asked,
) -> None:
    """Find a description that triggers better, judged on held-out queries only: split the trigger set
    (stratified, seeded, saved), propose descriptions from the train queries it gets wrong, measure each,
    keep one as a new version only when it beats the best on the held-out queries. Exit 0 when a
    description was kept, 1 when none beat the start, 2 on errors."""
    from workbench.app.optimize_description import OptimizeRequest
    from workbench.cli.trigger import optimize_command, trigger_request

    request = OptimizeRequest(
        trigger_request(skill_dir, queries, agent, limits, placement),
        wanted.rounds,
        wanted.holdout,
        wanted.seed,
        proposer,
    )
    sys.exit(optimize_command(request, asked.trust, asked.dry_run))
