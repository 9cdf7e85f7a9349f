"""What a run will cost and how long it will take, before it starts.

From earlier iterations of the same suite with the same executor and model
(their plan.json says which), when there are runs to learn from: the mean and
spread of what one dispatch cost and took. Otherwise from the prompts' token
counts and a stated assumption about what an agent does with them (ASSUMED),
priced by the dated table (workbench/runs/cost.py). Dispatches that will be
resumed or reused cost nothing and are not counted."""

from __future__ import annotations

import math
import os
import statistics
from dataclasses import dataclass
from pathlib import Path

from workbench.formats.money import money
from workbench.formats.regular import read_json
from workbench.runs import cost
from workbench.runs.cost import dollars
from workbench.runs.executors import Executor
from workbench.runs.runner import Dispatch, finished_record
from workbench.workspace import layout

# The assumption when there is no earlier run: each turn is CALLS model calls that each read the agent's
# own context (system prompt, tools: CONTEXT tokens, CACHED of it from the prompt cache) plus the
# prompt and SKILL.md, and write OUTPUT tokens; a turn takes SECONDS.
ASSUMED = {"calls": 10, "context": 20_000, "cached": 0.9, "output": 400, "seconds": 60.0}
# A trigger evaluation's dispatch: one call, stopped once the skill's use is decided (workbench/app/triggers.py).
TRIGGER_ASSUMED = {"calls": 1, "context": 20_000, "cached": 0.9, "output": 100, "seconds": 15.0}
CHARS_PER_TOKEN = 4
LOOK_BACK = 5  # earlier iterations of the same suite and executor read, newest first
DEMO_SECONDS = 1.0
DEFAULT_CONFIRM_ABOVE = 5.0  # dollars: above this estimate, run, evaluate and the Runs screen ask first (config)


@dataclass
class Estimate:
    dispatches: int  # that will run: not resumed, not reused from the cache
    planned: int
    cost_usd: float | None  # None: cannot be told (a command agent that never ran)
    per_dispatch_usd: float | None
    seconds: float  # wall-clock, at the run's concurrency
    basis: str  # where the figures come from, as a person reads it

    up_to: Estimate | None = None  # --runs auto: this is the first round; up_to, every round to --max-runs
    max_dispatches: int | None = None  # the flow's hard limits (workbench/runs/budget.py): the most it starts
    max_usd: float | None = None  # and the most it spends

    def within(self, first: Estimate) -> Estimate:
        """This estimate as the most (--runs auto), with the first round's as the least."""
        first.up_to = self
        return first

    def limited(self, max_dispatches: int | None, max_usd: float | None) -> Estimate:
        """This estimate under the flow's hard limits: the most it may start and spend say so."""
        self.max_dispatches, self.max_usd = max_dispatches, max_usd
        return self

    def _most(self) -> Estimate:
        return self.up_to if self.up_to is not None else self

    def _stops_at(self) -> int | None:
        """The dispatches the max dispatches lets start, when fewer than would run."""
        most = self._most().dispatches
        return self.max_dispatches if self.max_dispatches is not None and self.max_dispatches < most else None

    @property
    def most_usd(self) -> float | None:
        """What the run may cost at most, within its limits: the confirmation asks about this."""
        most = self._within_dispatches()
        return most if most is None or self.max_usd is None else min(most, self.max_usd)

    def _within_dispatches(self) -> float | None:
        """The most it may cost, the max dispatches kept (None: cannot be told)."""
        most, stops = self._most().cost_usd, self._stops_at()
        if most is not None and stops is not None and self.per_dispatch_usd is not None:
            return min(most, stops * self.per_dispatch_usd)
        return most

    def limits(self) -> str:
        """'; its max dispatches stops it after 20, its max cost at $5.00': the limits that cut it short. A max
        cost is said where the cost is known to pass it (an unknown one is kept only as far as the dispatches
        report what they cost)."""
        said = []
        stops = self._stops_at()
        if stops is not None:
            said.append(f"its max dispatches stops it after {stops}")
        most = self._within_dispatches()
        if self.max_usd is not None and most is not None and most > self.max_usd:
            said.append(f"its max cost {'stops it ' if not said else ''}at {money(self.max_usd)}")
        return "; " + ", ".join(said) if said else ""

    def line(self) -> str:
        """`12 dispatches, about $1.20, about 3 min` (the CLI's and the Runs screen's). The counts are the
        planned ones, as the run's heading says them; those that cost nothing are said beside them."""
        spend = f"about {money(self.cost_usd)}" if self.cost_usd is not None else "cost unknown"
        if self.up_to is not None:
            most = self.up_to
            if most.cost_usd is not None:
                spend += f" (at most {money(most.cost_usd)})"
            return (
                f"{self.planned} dispatches in the first round{self.free()}, at most {most.planned} in all rounds"
                f"{most.free()}, {spend}, about {_took(self.seconds)} (at most {_took(most.seconds)}){self.limits()}"
            )
        return f"{self.planned} dispatches{self.free()}, {spend}, about {_took(self.seconds)}{self.limits()}"

    def free(self) -> str:
        """' (3 of them resumed or reused, free)': the planned dispatches that will not run again."""
        skipped = self.planned - self.dispatches
        if not skipped:
            return ""
        return f" ({'all' if skipped == self.planned else f'{skipped} of them'} resumed or reused, free)"


def _took(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{max(1, round(seconds))} s"


def to_run(dispatches: list[Dispatch], workspace: Path) -> list[Dispatch]:
    """The dispatches that will really run: not finished in their folder, not in the cache."""
    cache = workspace / ".cache" / "dispatches"
    out = []
    for d in dispatches:
        if finished_record(d.folder / layout.RUN_RECORD, d.key):
            continue
        try:
            folder = workspace / read_json(cache / f"{d.key}.json")["folder"]
            if finished_record(folder / layout.RUN_RECORD, d.key):
                continue
        except (OSError, ValueError, KeyError, TypeError):
            pass
        out.append(d)
    return out


def earlier_runs(workspace: Path, suite: Path, executor_label: str) -> list[tuple[float | None, float]]:
    """(cost, seconds) of the runs earlier iterations made of this suite with this executor, newest
    first; reused and failed runs are left out (they say nothing of what a dispatch costs)."""
    out: list[tuple[float | None, float]] = []
    matched = 0
    for number in sorted(layout.iteration_numbers(workspace), reverse=True):
        if matched >= LOOK_BACK:
            break
        iteration = layout.iteration_dir(workspace, number)
        try:
            plan = read_json(iteration / layout.PLAN)
        except (OSError, ValueError):
            continue
        if not isinstance(plan, dict) or plan.get("suite_file") != str(suite):
            continue
        if plan.get("executor") != executor_label:
            continue
        matched += 1
        for run in layout.runs(iteration):
            try:
                record = read_json(os.path.join(run.path, layout.RUN_RECORD))
                timing = read_json(os.path.join(run.path, layout.TIMING))
            except (OSError, ValueError):
                continue
            if not isinstance(record, dict) or record.get("reused") or record.get("status") != "done":
                continue
            seconds = timing.get("executor_duration_seconds") if isinstance(timing, dict) else None
            took = dollars(seconds)  # a duration: finite and 0 or more, like a cost
            out.append((cost.dollars(record.get("cost_usd")), took if took is not None else 0.0))
    return out


def estimate(
    dispatches: list[Dispatch],
    workspace: Path,
    suite: Path,
    executor: Executor,
    jobs: int,
    skill_dir: Path,
    assumed: dict = ASSUMED,
) -> Estimate:
    running = to_run(dispatches, workspace)
    n, lanes = len(running), max(1, min(jobs, len(running) or 1))
    seen = earlier_runs(workspace, suite, executor.label)
    costs = [c for c, _ in seen if c is not None]
    if seen:
        seconds = statistics.fmean(s for _, s in seen)
        mean = statistics.fmean(costs) if costs else None
        spread = statistics.stdev(costs) if len(costs) > 1 else (0.0 if costs else None)
        basis = (
            f"from {len(seen)} earlier run(s) of this suite with the {executor.label}: "
            + (f"{money(mean)} ± {money(spread)} and " if mean is not None else "cost not reported; ")
            + f"{seconds:.0f} s each"
        )
        return Estimate(n, len(dispatches), _times(mean, n), mean, _wall(seconds, n, lanes), basis)
    if executor.name == "demo":
        return Estimate(
            n, len(dispatches), 0.0, 0.0, _wall(DEMO_SECONDS, n, lanes), "the demo agent: not a model, free"
        )
    model = executor.priced_model
    per, turns = _assumed(running, model, skill_dir, assumed)
    seconds = assumed["seconds"] * (turns / n if n else 1)
    if per is None:
        basis = (
            f"no earlier run of this suite with the {executor.label} to learn from, and its model's price is "
            "unknown: the cost is known once it has run"
        )
        return Estimate(n, len(dispatches), None, None, _wall(seconds, n, lanes), basis)
    basis = (
        f"no earlier run to learn from: assumed {assumed['calls']} call(s) a turn, each reading "
        f"{assumed['context']:,} tokens of the agent's own context ({assumed['cached']:.0%} cached) plus the "
        f"prompt and SKILL.md, writing {assumed['output']} tokens, priced as {model} "
        f"(prices of {cost.table_date()}), {assumed['seconds']:.0f} s a turn (docs/cost.md)"
    )
    return Estimate(n, len(dispatches), per * n if n else 0.0, per, _wall(seconds, n, lanes), basis)


def _times(mean: float | None, n: int) -> float | None:
    return None if mean is None else mean * n


def _wall(seconds: float, n: int, lanes: int) -> float:
    return seconds * math.ceil(n / lanes) if n else 0.0


def _assumed(
    running: list[Dispatch], model: str | None, skill_dir: Path, assumed: dict = ASSUMED
) -> tuple[float | None, int]:
    """The mean assumed cost of one dispatch, and the turns of all of them (prompt and scripted turns)."""
    try:
        skill_tokens = len((skill_dir / "SKILL.md").read_text("utf-8", errors="replace")) // CHARS_PER_TOKEN
    except OSError:
        skill_tokens = 0
    total, turns = 0.0, 0
    for d in running:
        prompts = [d.case.prompt] + [str(t.get("prompt", "")) for t in d.case.turns]
        turns += len(prompts)
        for prompt in prompts:
            own = len(prompt) // CHARS_PER_TOKEN + (skill_tokens if d.skill_dir is not None else 0)
            context = assumed["context"]
            usage = {
                "input_tokens": int(assumed["calls"] * (context * (1 - assumed["cached"]) + own)),
                "cache_read_input_tokens": int(assumed["calls"] * context * assumed["cached"]),
                "output_tokens": int(assumed["calls"] * assumed["output"]),
            }
            priced = cost.price(model, usage)
            if priced is None:
                return None, turns
            total += priced
    return (total / len(running) if running else 0.0), turns
