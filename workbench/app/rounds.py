"""`--runs auto`: the dispatches of a run or an evaluation in rounds, into one
iteration, until workbench/improve/adaptive.py says each eval (and, for
evaluate, the decision) is settled, or --max-runs is reached.

Round r gives each eval still repeating its r-th run on each side that repeats.
The plan holds every dispatch up to --max-runs (their keys name the iteration,
so the same command resumes it); plan.json lists those scheduled so far, and
under "adaptive" the rounds, each settled eval and the decision, each with
after how many runs and why."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from workbench.formats.regular import read_object
from workbench.grading.benchmark import run_pass_rate
from workbench.improve import adaptive
from workbench.runs.budget import Budget
from workbench.runs.executors import Executor
from workbench.runs.launch import Launch, run_launch
from workbench.runs.responder import SimulatedUser
from workbench.runs.runner import OLD, QUEUED, WITH, Dispatch, RunOptions
from workbench.workspace import layout


@dataclass
class Rounds:
    """What the rounds did, for plan.json and the summary: said as they happen."""

    max_runs: int
    potential: str = ""
    rounds: list[dict] = field(default_factory=list)  # {"round": r, "dispatches": n}
    evals: dict[str, dict] = field(default_factory=dict)  # eval id -> {"runs", "why", "by"}
    decision: dict | None = None  # {"result", "runs", "why", "by"} (evaluate)

    def as_json(self) -> dict:
        out: dict = {"max_runs": self.max_runs, "potential": self.potential, "rounds": self.rounds}
        out["evals"] = self.evals
        if self.decision is not None:
            out["decision"] = self.decision
        return out


@dataclass
class Sides:
    """Which configurations repeat, and, for an evaluation against a recorded best, its rates."""

    repeated: tuple[str, ...]
    best: str | None = None  # the side compared with, for a decision (evaluate)
    recorded: dict[str, float] | None = None  # the best's per-eval rates, recorded earlier: it does not run


def first_round(potential: list[Dispatch]) -> list[Dispatch]:
    return [d for d in potential if d.run_number == 1]


async def in_rounds(
    first: list[Dispatch],
    run: Callable[[list[Dispatch]], Awaitable[object]],
    following: Callable[[], list[Dispatch]],
    stopped: Callable[[], bool],
) -> None:
    """The one adaptive-rounds engine (a run's evals, a trigger set's queries): run a round, stop when the
    budget stopped the run, else ask `following` for the next round's dispatches (those of what is not
    settled yet, up to --max-runs, whether or not a resumed run finished them; empty: done). What
    settles an eval or a query is the caller's rule."""
    batch = first
    while batch:
        await run(batch)
        if stopped():
            return
        batch = following()


async def run_rounds(
    launch: Launch,
    potential: list[Dispatch],
    executor: Executor,
    options: RunOptions,
    sides: Sides,
    margin: float,
    on_change: Callable[[Dispatch], None] | None,
    after: Callable[[Dispatch], str | None],
    responder: SimulatedUser | None,
    budget: Budget,
    write_plan: Callable[[], object],
) -> Rounds:
    """Run round after round; launch.dispatches grows in place (the screens hold the list)."""
    import asyncio

    done = Rounds(launch.adaptive_max or adaptive.MAX_RUNS, launch.potential_digest)
    launch.adaptive = done
    by_place = {(d.case.id, d.configuration, d.run_number): d for d in potential}
    launch.dispatches[:] = first_round(potential)

    async def run(_round: list[Dispatch]) -> None:
        fresh = [d for d in launch.dispatches if d.status == QUEUED]  # a resumed round's finished runs stay
        done.rounds.append({"round": len(done.rounds) + 1, "dispatches": len(fresh)})
        await asyncio.to_thread(write_plan)
        await run_launch(launch, executor, options, on_change, after, responder, budget, only=fresh)

    def following() -> list[Dispatch]:
        number = len(done.rounds)
        more = _next(_rates(launch.dispatches), sides, done, margin)
        if not more or number >= done.max_runs:
            return []
        added = [
            by_place[(case_id, side, number + 1)]
            for case_id in more
            for side in sides.repeated
            if (case_id, side, number + 1) in by_place
        ]
        launch.dispatches.extend(added)
        return added

    await in_rounds(list(launch.dispatches), run, following, lambda: budget.stopped is not None)
    await asyncio.to_thread(write_plan)
    return done


def _rates(dispatches: list[Dispatch]) -> dict[str, dict[str, list[float]]]:
    """eval id -> configuration -> its runs' pass rates, in run order (a run with no assertion counts none;
    one not graded, as 0: it failed, and is an error in the report)."""
    out: dict[str, dict[str, list[float]]] = {}
    for d in sorted(dispatches, key=lambda d: d.run_number):
        summary = read_object(os.path.join(d.folder, layout.GRADING)).get("summary")
        rate = run_pass_rate(summary) if isinstance(summary, dict) else 0.0
        out.setdefault(d.case.id, {}).setdefault(d.configuration, [])
        if rate is not None:
            out[d.case.id][d.configuration].append(rate)
    return out


def _next(rates: dict[str, dict[str, list[float]]], sides: Sides, done: Rounds, margin: float) -> list[str]:
    """The evals that get another run; records what settled, and the decision when it is settled."""
    if sides.best is None:  # run: each eval on its own
        more = []
        repeated = {
            case_id: {side: by_side.get(side, []) for side in sides.repeated} for case_id, by_side in rates.items()
        }
        counted = {case_id: runs for case_id, runs in repeated.items() if all(runs.values())}
        agree = adaptive.agree_needed(list(counted.values()), done.max_runs)  # the suite's noise sets the runs
        for case_id in rates:
            if case_id not in counted:  # no assertion to count: nothing for more runs to settle
                _settle(done, case_id, adaptive.Settled(0, "it has no assertion to count", "no assertions"))
                continue
            settled = adaptive.eval_settled(counted[case_id], done.max_runs, agree=agree)
            if settled is None:
                more.append(case_id)
            else:
                _settle(done, case_id, settled)
        return more
    new = {k: v[WITH] for k, v in rates.items() if v.get(WITH)}
    if sides.recorded is not None:
        best = {k: [rate] for k, rate in sides.recorded.items() if k in new}
    else:
        best = {k: v[sides.best] for k, v in rates.items() if v.get(sides.best) and k in new}
    fixed = sides.recorded is not None
    agree = adaptive.agree_needed(
        [{WITH: new[k]} if fixed else {WITH: new[k], OLD: best[k]} for k in new if k in best], done.max_runs
    )
    for case_id in new:
        if case_id in best:
            settled = adaptive.eval_settled(
                {WITH: new[case_id]} if fixed else {WITH: new[case_id], OLD: best[case_id]},
                done.max_runs,
                {"best": best[case_id][0]} if fixed else None,
                agree,
            )
            if settled is not None:
                _settle(done, case_id, settled)
    if not best:
        return []
    decided = adaptive.decision_settled(new, best, fixed, done.max_runs, margin)
    if decided is not None:
        result, settled = decided
        done.decision = {"result": result, "runs": settled.runs, "why": settled.why, "by": settled.by}
        return []
    return adaptive.next_round(new, best, fixed, done.max_runs)


def _settle(done: Rounds, case_id: str, settled: adaptive.Settled) -> None:
    if case_id not in done.evals:
        done.evals[case_id] = {"runs": settled.runs, "why": settled.why, "by": settled.by}
