"""What a flow may spend: whether to ask first (the one rule of the config's confirm_above_usd, for
the command line and the screens alike) and its hard limits (one Budget from the Limits, for run,
evaluate and trigger alike)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.config import load_config
from workbench.runs.budget import Budget
from workbench.runs.estimate import DEFAULT_CONFIRM_ABOVE, Estimate

if TYPE_CHECKING:
    from workbench.app.choices import Limits
    from workbench.config import Config


@dataclass(frozen=True)
class CostQuestion:
    """The run may cost more than the person set as the most to spend without being asked."""

    most_usd: float  # what the run may cost at most (--runs auto: every round to --max-runs)
    limit_usd: float  # confirm_above_usd, or the default
    estimate: Estimate


def ask_first(estimate: Estimate | None, config: Config | None = None) -> CostQuestion | None:
    """A question when the most the run may cost is above confirm_above_usd (the config's, else
    DEFAULT_CONFIRM_ABOVE); None when it may start. An estimate that cannot be told asks nothing.
    Raises WorkbenchError when the config cannot be read."""
    if estimate is None or estimate.most_usd is None:
        return None
    chosen = (config or load_config()).confirm_above_usd
    limit = DEFAULT_CONFIRM_ABOVE if chosen is None else chosen
    if estimate.most_usd <= limit:
        return None
    return CostQuestion(estimate.most_usd, limit, estimate)


def budget(limits: Limits, estimate: Estimate | None) -> Budget:
    """A flow's hard limits from its Limits; a dispatch in flight is expected to cost the estimate's
    mean, or, with no estimate, what those that finished reported."""
    expected = estimate.per_dispatch_usd if estimate is not None else None
    return Budget.of(limits.max_cost, limits.max_dispatches, expected)
