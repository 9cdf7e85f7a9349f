"""Adaptive repeats (`--runs auto`, at most `--max-runs`): repeats in rounds,
stopped once more of them would not change the result (docs/improve.md,
"Adaptive repeats").

Round r gives every eval that is still repeating its r-th run on each side that
is repeated. After each round the caller asks:

- next_round() (or eval_settled() per eval, for `run`): which evals get a run
  in the next round. An eval stops repeating once it is settled: every run of
  every repeated side agreed (the same pass rate each time) for as many runs
  as the suite's noise asks (agree_needed(): 2 while no eval of the suite has
  disagreed, 3 while at most half have, else no stop by agreement), or it
  reached the maximum.
- decision_settled() (evaluate only): whether won / lost / tie is settled,
  checking in this order:
  1. no eval repeats any more: the last look, the fixed rule itself
     (decide.py) on the evals' rates;
  2. an early look (before the maximum): won / lost when the fixed rule holds
     with a stricter interval, Student's t with EARLY_SPEND / (max_runs - 1)
     in each tail: a Bonferroni split of EARLY_SPEND over the at most
     max_runs - 1 early looks, so all early looks together add at most
     EARLY_SPEND to the fixed rule's false-win rate (and to its false-loss
     rate), however the looks depend on each other. Never a tie;
  3. curtailment: whatever the remaining runs pass (each anywhere in [0, 1]),
     the last look gives the same result: settled now, adding no error;
  4. a tie, once the chance that the remaining runs turn it into won or lost,
     predicted from the runs so far, is below UNLIKELY each (overstated: it
     assumes the narrowest interval the last look could have; a run varies
     as m (1 - m) says, less when the suite's runs give pass fractions). This never adds
     a false win or loss; it may miss one the last look would have found, and
     bench/adaptive_bench.py measures how often;
  5. from HOLD_AFTER runs on, a won / lost the rule gives on the rates so far,
     once the predicted chance that the last look says otherwise is below HOLD
     (stochastic curtailment: its interval's width predicted from today's
     spread less the noise the remaining runs take out). Checked before 4;
     the two never both apply.

With adaptive repeats evals have unequal numbers of runs: each eval counts
once (delta is the mean over evals of the paired differences of their rates),
as decide() does without `rates`. Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

from workbench.grading.difference import t95
from workbench.improve.decide import DEFAULT_MARGIN, decide

MAX_RUNS = 8  # --max-runs' default
AGREE_RUNS = 4  # without the suite (eval_settled alone; triggers' rounds): runs that must all agree
QUIET_AGREE = 2  # runs that must all agree while no eval of the suite has disagreed (chosen with the bench)
SOME_AGREE = 3  # ... while at most NOISY_SHARE of its evals have
NOISY_SHARE = 0.5  # beyond it, agreeing runs are as likely luck as a deterministic eval: no stop by agreement
EARLY_SPEND = 0.005  # what all early looks together add to the false-win (and to the false-loss) rate
HOLD = 0.02  # won / lost now is settled once the predicted chance that the last look says otherwise is below this
HOLD_AFTER = 3  # ... from this many runs on (fewer predict the last look too roughly: bench/adaptive_bench.py)
UNLIKELY = 0.05  # a tie is settled once the predicted chance that the last look gives won (or lost) is below this
_SAME = 1e-9  # two pass rates this close are the same


@dataclass(frozen=True)
class Settled:
    """After how many runs (of each eval, or rounds for a decision), and why, in a sentence."""

    runs: int
    why: str
    by: str  # which rule settled it: agreed, maximum, early look, cannot change, every eval settled


def agree_needed(suite: Sequence[Mapping[str, Sequence[float]]], max_runs: int = MAX_RUNS) -> list[int | None]:
    """suite: every eval's repeated sides (side -> its run pass rates so far).
    For each round r (index r; index 0 unused): how many runs, all agreeing,
    settle an eval at round r, judged from every eval's first r runs:
    QUIET_AGREE while no eval has disagreed, SOME_AGREE while at most
    NOISY_SHARE of them have, else None (no stop by agreement: in a suite of
    mostly noisy evals, an eval that agreed a few times is as likely lucky as
    deterministic, and stopped there it reads 0% or 100%)."""
    needs: list[int | None] = [None]
    evals = max(len(suite), 1)
    for r in range(1, max_runs + 1):
        noisy = sum(1 for sides in suite if any(_disagree(rates[:r]) for rates in sides.values()))
        needs.append(QUIET_AGREE if noisy == 0 else SOME_AGREE if noisy <= NOISY_SHARE * evals else None)
    return needs


def eval_settled(
    sides: Mapping[str, Sequence[float]],
    max_runs: int = MAX_RUNS,
    recorded: Mapping[str, float] | None = None,
    agree: Sequence[int | None] | None = None,
) -> Settled | None:
    """sides: configuration name -> this eval's run pass rates so far, only the
    sides that are still repeated (with_skill and without_skill for `run`; the
    new version, and the best unless its rates were recorded earlier, for
    `evaluate`). recorded: side -> this eval's rate recorded earlier, for a side
    that is not repeated (the best's, when only the new version runs).
    agree: agree_needed() of the eval's suite; without it AGREE_RUNS at every round.
    Settled at the first round r where every run so far agreed (each repeated
    side gave the same pass rate in each of its r runs) and r reaches what the
    suite needed at round r, with each recorded rate 0% or 100% (so its runs
    agreed too: a recorded 75% may have been noisy, and a new side that passed
    every time is not yet known to beat it); or at max_runs runs. Once settled
    it stays settled: later rounds of the other evals do not reopen it. Else
    None: the eval gets another run."""
    if not sides:
        raise ValueError("an eval needs at least one side that is repeated")
    runs = min(len(rates) for rates in sides.values())
    recorded = recorded or {}
    if all(min(rate, 1 - rate) <= _SAME for rate in recorded.values()):
        for r in range(1, min(runs, max_runs) + 1):
            need = AGREE_RUNS if agree is None else agree[r] if r < len(agree) else None
            if need is None or r < need:
                continue
            if any(_disagree(rates[:r]) for rates in sides.values()):
                break  # a disagreement never goes away
            names = " and ".join(sides)
            whose = "both sides" if len(sides) == 2 else names if len(sides) == 1 else f"every side ({names})"
            each = ", ".join(f"{name} {rates[0]:.0%}" for name, rates in sides.items())
            before = "".join(f"; {name}'s recorded rate {rate:.0%}" for name, rate in recorded.items())
            return Settled(r, f"every run of {whose} agreed after {r} runs ({each} each time{before})", "agreed")
    if runs >= max_runs:
        return Settled(runs, f"reached the maximum of {max_runs} run{'s' * (max_runs != 1)}", "maximum")
    return None


def _disagree(rates: Sequence[float]) -> bool:
    return len(rates) > 1 and max(rates) - min(rates) > _SAME


def next_round(
    new: Mapping[str, Sequence[float]],
    best: Mapping[str, Sequence[float]],
    best_fixed: bool = False,
    max_runs: int = MAX_RUNS,
) -> list[str]:
    """The evals of an evaluation (those both sides have) that get one more run
    in the next round (on the new side, and on the best's unless best_fixed),
    in the order given: those not yet settled by eval_settled(). Empty: repeating is over. (`run
    --runs auto` asks eval_settled() with its own sides, with_skill and
    without_skill, and agree_needed() of them.)"""
    agree = _suite_agree(new, best, best_fixed, max_runs)
    return [key for key in new if key in best and _settled_in(new, best, key, best_fixed, max_runs, agree) is None]


def _suite_agree(
    new: Mapping[str, Sequence[float]], best: Mapping[str, Sequence[float]], best_fixed: bool, max_runs: int
) -> list[int | None]:
    """agree_needed() of an evaluation's repeated sides (a recorded best does not repeat)."""
    shared = [key for key in new if key in best]
    return agree_needed([{"new": new[k]} if best_fixed else {"new": new[k], "best": best[k]} for k in shared], max_runs)


def _settled_in(
    new: Mapping[str, Sequence[float]],
    best: Mapping[str, Sequence[float]],
    key: str,
    best_fixed: bool,
    max_runs: int,
    agree: Sequence[int | None] | None = None,
) -> Settled | None:
    if best_fixed:
        return eval_settled({"new": new[key]}, max_runs, {"best": _mean(best[key])}, agree)
    return eval_settled({"new": new[key], "best": best[key]}, max_runs, None, agree)


def decision_settled(
    new: Mapping[str, Sequence[float]],
    best: Mapping[str, Sequence[float]],
    best_fixed: bool = False,
    max_runs: int = MAX_RUNS,
    margin: float = DEFAULT_MARGIN,
) -> tuple[str, Settled] | None:
    """new, best: eval id -> that eval's run pass rates so far on each side.
    best_fixed: the best's rates were recorded earlier and get no more runs
    (pass each as a one-element list). Call once after each round: the early
    looks' correction assumes at most max_runs - 1 of them. Returns the result
    (won / lost / tie) and after how many rounds and why, once settled; else
    None (run the next round)."""
    shared = [key for key in new if key in best and new[key] and best[key]]
    if not shared:
        raise ValueError("both versions need graded runs of the same evals to be compared")
    n = len(shared)
    rounds = max(len(new[key]) for key in shared)
    rate_new = {key: _mean(new[key]) for key in shared}
    rate_best = {key: _mean(best[key]) for key in shared}
    agree = _suite_agree(new, best, best_fixed, max_runs)
    repeating = {key for key in shared if _settled_in(new, best, key, best_fixed, max_runs, agree) is None}
    plural = "s" * (rounds != 1)

    if not repeating:
        decision = decide(rate_new, rate_best, margin)
        if rounds >= max_runs:
            by, reason = "maximum", f"reached the maximum of {max_runs} runs"
        else:
            by, reason = (
                "every eval settled",
                f"every eval settled (its runs agreed every time) by {rounds} run{plural}",
            )
        return decision.result, Settled(rounds, f"{reason}: the rule as with fixed runs: {decision.evidence}", by)

    diffs = [rate_new[key] - rate_best[key] for key in shared]
    delta = sum(diffs) / n
    if n > 1 and max_runs > 1:
        tail = EARLY_SPEND / (max_runs - 1)
        half = t_quantile(1 - tail, n - 1) * math.sqrt(_variance(diffs) / n)
        low, high = max(-1.0, delta - half), min(1.0, delta + half)
        early = (
            "won" if delta >= margin - 1e-12 and low > 0 else "lost" if delta <= -margin + 1e-12 and high < 0 else ""
        )
        if early:
            side = "above" if early == "won" else "below"
            return early, Settled(
                rounds,
                f"{early} after {rounds} run{plural} of at most {max_runs}, an early look: delta {delta:+.2f}, "
                f"its {1 - 2 * tail:.2%} interval over {n} evals [{low:+.2f}, {high:+.2f}] lies {side} 0 "
                f"(stricter than 95%: {EARLY_SPEND:.1%} split over the {max_runs - 1} early looks), "
                f"tie margin ±{margin:.2f}",
                "early look",
            )

    boxes = []
    for key in shared:
        new_low, new_high = _range(new[key], key in repeating, max_runs)
        best_low, best_high = _range(best[key], key in repeating and not best_fixed, max_runs)
        boxes.append((new_low - best_high, new_high - best_low))
    final, need = _certain(boxes, margin)
    if final:
        return final, Settled(
            rounds,
            f"{final} after {rounds} run{plural} of at most {max_runs}: the {len(repeating)} eval(s) still "
            f"repeating cannot change it (whatever their remaining runs pass, the last look gives {final}; "
            f"delta now {delta:+.2f} over {n} evals)",
            "cannot change",
        )
    now = decide(rate_new, rate_best, margin).result
    if now != "tie" and rounds >= HOLD_AFTER:
        won, lost = _predicted(new, best, repeating, best_fixed, diffs, max_runs, margin)
        holds = won if now == "won" else lost
        if 1 - holds < HOLD:
            return now, Settled(
                rounds,
                f"{now} after {rounds} run{plural} of at most {max_runs}: the remaining runs are unlikely to change "
                f"it (from the runs so far, the last look would give {now} with chance {holds:.1%}, above "
                f"{1 - HOLD:.0%}; the rule as with fixed runs gives {now} now: delta {delta:+.2f} over {n} evals)",
                "likely to hold",
            )
    chances = _chances(new, best, repeating, best_fixed, n, delta, need, max_runs)
    if max(chances) < UNLIKELY:
        return "tie", Settled(
            rounds,
            f"tie after {rounds} run{plural} of at most {max_runs}: the remaining runs are unlikely to change it "
            f"(from the runs so far, the last look would give won with chance {chances[0]:.1%} and lost with "
            f"{chances[1]:.1%}, both below {UNLIKELY:.0%}; delta now {delta:+.2f}, won or lost needs beyond "
            f"±{need:.2f} over {n} evals)",
            "unlikely to change",
        )
    return None


def _predicted(
    new: Mapping[str, Sequence[float]],
    best: Mapping[str, Sequence[float]],
    repeating: set[str],
    best_fixed: bool,
    diffs: Sequence[float],
    max_runs: int,
    margin: float,
) -> tuple[float, float]:
    """The chances, predicted from the runs so far, that the last look gives won and lost: its delta
    normal around today's (as _chances()), its interval's width from today's spread of the paired
    differences less the noise the remaining runs take out of the evals still repeating."""
    n = len(diffs)
    variance, noise = _movement(new, best, repeating, best_fixed, max_runs)
    delta = sum(diffs) / n
    floor = (1 / n) * (1 - 1 / n)
    if n == 1:
        need = 2.0  # one eval: the fixed rule's interval is [-1, 1], never won or lost
    else:
        spread_now = sum((d - delta) ** 2 for d in diffs) / (n - 1)
        need = max(margin, t95(n - 1) * math.sqrt(max(spread_now - noise / n, floor) / n))
    return _beyond(delta, math.sqrt(variance) / n, need)


def _chances(
    new: Mapping[str, Sequence[float]],
    best: Mapping[str, Sequence[float]],
    repeating: set[str],
    best_fixed: bool,
    n: int,
    delta: float,
    need: float,
    max_runs: int,
) -> tuple[float, float]:
    """The chances, predicted from the runs so far, that the last look gives
    won and lost. The last look's delta: normal around today's, with the
    variance the remaining runs of the evals still repeating add (_movement()).
    Won needs that delta at `need` or beyond, the least any last look can
    need (_certain()): a real last look needs as much or more, so on that
    count the chances are overstated, never understated."""
    variance, _ = _movement(new, best, repeating, best_fixed, max_runs)
    return _beyond(delta, math.sqrt(variance) / n, need)


def _beyond(delta: float, sd: float, need: float) -> tuple[float, float]:
    """The chances that a normal delta (mean delta, sd) ends at +need or above, and at -need or below."""
    if sd <= 0:
        return float(delta >= need), float(delta <= -need)
    normal = NormalDist(delta, sd)
    return 1 - normal.cdf(need), normal.cdf(-need)


def _movement(
    new: Mapping[str, Sequence[float]],
    best: Mapping[str, Sequence[float]],
    repeating: set[str],
    best_fixed: bool,
    max_runs: int,
) -> tuple[float, float]:
    """How far the remaining runs may move the sum of the paired differences (its variance), and the noise
    they take out of the evals' own spread (the sum of v (1/r - 1/max_runs)). An eval with r runs moves
    by (max_runs - r)/max_runs times the difference between its remaining runs' mean and its first r
    runs' mean: variance v (max_runs - r) / (max_runs r), with v the variance of one run on its
    repeated sides (_run_variance())."""
    scale = _fraction_scale(new, best, repeating, best_fixed)
    variance, noise = 0.0, 0.0
    for key in repeating:
        runs = len(new[key])
        sides = _sides(new, best, key, best_fixed)
        v = _run_variance(sides, scale)
        variance += v * (max_runs - runs) / (max_runs * runs)
        noise += v * (1 / runs - 1 / max_runs)
    return variance, noise


def _sides(
    new: Mapping[str, Sequence[float]], best: Mapping[str, Sequence[float]], key: str, best_fixed: bool
) -> list[Sequence[float]]:
    return [new[key]] if best_fixed else [new[key], best[key]]


def _pulled(side: Sequence[float]) -> float:
    """The side's mean pulled towards 1/2 by one pass and one fail: never 0 or 1 after a few agreeing runs."""
    return (sum(side) + 1) / (len(side) + 2)


def _fractional(side: Sequence[float]) -> bool:
    """A run passed some of its assertions and failed others: the eval's runs are pass fractions."""
    return any(_SAME < rate < 1 - _SAME for rate in side)


def _run_variance(sides: Sequence[Sequence[float]], scale: float) -> float:
    """The variance of one run of the eval, summed over its repeated sides: m (1 - m) for each side, m
    its pulled mean. That is the most a run in [0, 1] with mean m can vary, and what a pass-or-fail run
    does; an eval whose runs gave pass fractions varies less (a run of 4 assertions that each pass 40%
    of the time varies a quarter as much), and its m (1 - m) is scaled by what the suite's fraction
    runs showed (_fraction_scale())."""
    bound = sum(_pulled(side) * (1 - _pulled(side)) for side in sides)
    return bound * scale if any(_fractional(side) for side in sides) else bound


def _fraction_scale(
    new: Mapping[str, Sequence[float]],
    best: Mapping[str, Sequence[float]],
    repeating: set[str],
    best_fixed: bool,
) -> float:
    """How much the runs of the suite's fraction evals (those still repeating whose runs gave a pass
    fraction) varied, against the bound m (1 - m): their sides' squared deviations from their means
    over the sum of (r - 1) m (1 - m), pooled over the suite (a side's 2 or 3 runs alone say little),
    at most 1 (the bound). One more degree of freedom at the bound keeps a few runs that happened to
    give the same fraction from reading as no noise at all. Pass-or-fail evals keep the bound: their
    runs vary as m (1 - m) says."""
    squares, bound, freedom = 0.0, 0.0, 0
    for key in repeating:
        sides = _sides(new, best, key, best_fixed)
        if not any(_fractional(side) for side in sides):
            continue
        for side in sides:
            if len(side) > 1:
                mean = _mean(side)
                squares += sum((rate - mean) ** 2 for rate in side)
                bound += (len(side) - 1) * _pulled(side) * (1 - _pulled(side))
                freedom += len(side) - 1
    if bound <= 0:
        return 1.0
    return min(1.0, (squares / bound * freedom + 1) / (freedom + 1))


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile: the x with P(T <= x) = p for df degrees of freedom
    (bisection on the distribution function, through the regularized
    incomplete beta function)."""
    return _t_quantile(round(p, 15), df)


@lru_cache(maxsize=512)
def _t_quantile(p: float, df: int) -> float:
    if not 0 < p < 1 or df < 1:
        raise ValueError("t_quantile needs 0 < p < 1 and df >= 1")
    if p < 0.5:
        return -_t_quantile(1 - p, df)
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < p:
        low, high = high, high * 2
    for _ in range(200):
        mid = (low + high) / 2
        if _t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * max(1.0, high):
            break
    return (low + high) / 2


def _t_cdf(x: float, df: int) -> float:
    tail = 0.5 * _incomplete_beta(df / (df + x * x), df / 2, 0.5)
    return 1 - tail if x >= 0 else tail


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued
    fraction (modified Lentz), on the side where it converges fast."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(x, a, b) / a
    return 1 - front * _beta_fraction(1 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return result


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _variance(diffs: Sequence[float]) -> float:
    """The sample variance with difference.py's floor: never below (1/n)(1 - 1/n)."""
    n = len(diffs)
    mean = sum(diffs) / n
    return max(sum((d - mean) ** 2 for d in diffs) / (n - 1), (1 / n) * (1 - 1 / n))


def _range(runs: Sequence[float], repeating: bool, max_runs: int) -> tuple[float, float]:
    """Where this side's rate of the eval can end: its runs' mean if it repeats
    no more; else, whenever it stops (at most max_runs runs) and whatever the
    remaining runs pass, between sum/max_runs and (sum + max_runs - runs)/max_runs."""
    total = sum(runs)
    if not repeating:
        return total / len(runs), total / len(runs)
    return total / max_runs, (total + max_runs - len(runs)) / max_runs


def _certain(boxes: Sequence[tuple[float, float]], margin: float) -> tuple[str, float]:
    """The result the fixed rule (decide.py) gives for every set of paired
    differences with each d_i in its box [low_i, high_i], else ''; and the
    least |delta| with which any of them gives won or lost. Bounds the
    interval conservatively: the mean exactly, the variance from above by
    sum((d_i - c)^2) for the box centres' mean c, from below exactly."""
    n = len(boxes)
    if n == 1:
        return "tie", 1.0  # one eval says nothing about the next: the fixed rule's interval is [-1, 1]
    mean_low = sum(low for low, _ in boxes) / n
    mean_high = sum(high for _, high in boxes) / n
    floor = (1 / n) * (1 - 1 / n)
    t = t95(n - 1)
    centre = sum(low + high for low, high in boxes) / (2 * n)
    most = sum(max((low - centre) ** 2, (high - centre) ** 2) for low, high in boxes) / (n - 1)
    least = _least_spread(boxes) / (n - 1)
    widest = t * math.sqrt(max(most, floor) / n)
    narrowest = t * math.sqrt(max(least, floor) / n)
    need = max(margin, narrowest)
    if mean_low >= margin - 1e-12 and mean_low - widest > 0:
        return "won", need
    if mean_high <= -margin + 1e-12 and mean_high + widest < 0:
        return "lost", need
    can_win = mean_high >= margin - 1e-12 and mean_high - narrowest > 0
    can_lose = mean_low <= -margin + 1e-12 and mean_low + narrowest < 0
    return ("" if can_win or can_lose else "tie"), need


def _least_spread(boxes: Sequence[tuple[float, float]]) -> float:
    """min over d_i in [low_i, high_i] of sum((d_i - mean d)^2) = min over m of
    sum(distance(m, box_i)^2): convex and piecewise quadratic in m, so its
    minimum is at a breakpoint or at a piece's stationary point."""
    if max(low for low, _ in boxes) <= min(high for _, high in boxes):
        return 0.0  # the boxes share a point

    def spread(m: float) -> float:
        return sum((low - m) ** 2 if m < low else (m - high) ** 2 if m > high else 0.0 for low, high in boxes)

    points = sorted({p for box in boxes for p in box})
    candidates = list(points)
    for left, right in zip(points, points[1:], strict=False):
        m = (left + right) / 2
        outside = [low if m < low else high for low, high in boxes if m < low or m > high]
        stationary = sum(outside) / len(outside)
        candidates.append(min(max(stationary, left), right))
    return min(spread(m) for m in candidates)
