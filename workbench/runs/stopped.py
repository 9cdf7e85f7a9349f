"""Why a flow left dispatches unstarted, in words, from the record plan.json keeps ({"by": "budget",
"limit": "max_cost", "spent_usd": ..., "limit_usd": ..., "next_usd": ...}; budget.Stop makes it). Plain
functions of the record: a report says it without loading the runner (no asyncio, no dataclass)."""

from __future__ import annotations

from workbench.formats.money import money

BY_BUDGET = "budget"
MAX_COST, MAX_DISPATCHES = "max_cost", "max_dispatches"


def said(record: dict, flags: bool = False) -> str:
    """`the budget stopped the run: spent $0.30 of the cost limit, $0.35; ...`; flags: as the command line
    says it (`--max-cost $0.35`), where the person typed the flag."""
    if record.get("limit") == MAX_DISPATCHES:
        most = record.get("limit_dispatches")
        reached = f"--max-dispatches {most} reached" if flags else f"the limit of {most} dispatches reached"
        return f"the budget stopped the run: {reached}"
    limit = record.get("limit_usd")
    named = f"--max-cost {money(limit)}" if flags else f"the cost limit, {money(limit)}"
    return (
        f"the budget stopped the run: spent {money(record.get('spent_usd'))} of {named}; the next dispatch, "
        f"expected at {money(record.get('next_usd'))}, would pass it"
    )


def said_of(recorded: object) -> str | None:
    """A plan's "stopped" in words: a record's, or the words an earlier workbench wrote there; None: none."""
    if isinstance(recorded, dict) and recorded.get("by") == BY_BUDGET:
        return said(recorded)
    return str(recorded) if recorded else None
