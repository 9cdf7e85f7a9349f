"""What runs cost, in US dollars.

An agent that reports its own cost is believed (Claude Code's result event
`total_cost_usd`; the command protocol's optional `cost_usd`). Token usage
without a cost (Codex, the Messages API) is priced by the dated table shipped
beside this module (prices.json), each model overridable under "prices" in the
config file (docs/config.md). A model the table does not know has no price:
its cost is unknown, never $0."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

TYPE_CHECKING = False  # not typing's: a report starts faster without importing it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

TABLE = Path(__file__).with_name("prices.json")
PER = 1_000_000  # prices are per million tokens
MOST = 1_000_000.0  # dollars: a figure above this for one run or call is not a cost, whoever says it
# Usage keys as the agents name them -> the table's price kinds.
KINDS = {
    "input_tokens": "input",
    "cached_input_tokens": "cached_input",
    "cache_read_input_tokens": "cached_input",
    "cache_creation_input_tokens": "cache_write",
    "output_tokens": "output",
}


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    return json.loads(TABLE.read_text("utf-8"))


def table_date() -> str:
    return str(_shipped()["as_of"])


def default_codex_model() -> str:
    return str(_shipped()["default_codex_model"])


def default_claude_model() -> str:
    return str(_shipped()["default_claude_model"])


def prices() -> dict[str, dict[str, float]]:
    """Model -> price kind -> dollars per million tokens: the shipped table, then the config's."""
    from workbench.config import load_config  # here: a report reads costs without the config's writer

    merged = dict(_shipped()["models"])
    merged.update(load_config().prices or {})
    return merged


def entry(model: str | None) -> tuple[str, dict[str, float]] | None:
    """The table's entry for a model id: exactly, else the longest name it extends by a
    dash (claude-sonnet-4-5-20250929 is claude-sonnet-4-5; gpt-5.6-sol is not gpt-5)."""
    if not model:
        return None
    table = prices()
    model = model if model in table else _shipped()["aliases"].get(model, model)  # Claude Code's --model sonnet
    if model in table:
        return model, table[model]
    known = [name for name in table if model.startswith(name + "-")]
    if not known:
        return None
    name = max(known, key=len)
    return name, table[name]


def price(model: str | None, usage: Mapping[str, Any]) -> float | None:
    """Dollars for a usage record ({input_tokens: n, cached_input_tokens: n, output_tokens: n, ...}),
    None when the model has no price. OpenAI counts cached tokens inside input_tokens; Anthropic
    apart from it: `cached_inside_input` says which."""
    found = entry(model)
    if found is None:
        return None
    _name, rates = found
    counts = {kind: 0 for kind in ("input", "cached_input", "cache_write", "output")}
    for key, value in usage.items():
        if key in KINDS and isinstance(value, int) and not isinstance(value, bool) and value > 0:
            counts[KINDS[key]] += value
    if usage.get("cached_inside_input"):
        counts["input"] = max(0, counts["input"] - counts["cached_input"])
    total = 0.0
    try:
        for kind, count in counts.items():
            rate = rates.get(kind, rates.get("input", 0.0) if kind != "output" else 0.0)
            total += count * float(rate) / PER
    except OverflowError:  # a token count no model call has: not a cost
        return None
    return dollars(total)


def dollars(value: object) -> float | None:
    """A cost as an agent, a judge or a file states it: a finite number of dollars, 0 or more; else None
    (unknown). Negative, NaN, infinite, booleans and strings are never a cost: a forged -1000 would switch
    --max-cost off, an Infinity would poison every sum and estimate after it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) and 0 <= number <= MOST else None


def total(costs: list[float | None]) -> tuple[float, int]:
    """The sum of the known costs, and how many were unknown."""
    return sum(c for c in costs if c is not None), sum(c is None for c in costs)


def add(a: float | None, b: float | None) -> float | None:
    """Costs of the turns of one run: unknown as soon as one is (or the sum is not a cost)."""
    return None if a is None or b is None else dollars(a + b)
