"""Adaptive repeats (`--runs auto`) against fixed repeats, simulated, beside
the anchor in the same run.

    .venv/bin/python bench/adaptive_bench.py [--trials N] [--seed S]

Each trial draws a suite (6 to 20 evals) with known true per-eval pass rates
for both versions from one scenario: clear wins and losses, exact ties, small
differences near the rule's threshold, deterministic evals (p in {0, 1}) and
noisy ones; runs are Bernoulli (a run passes or fails) or multi-assertion
pass fractions (a run goes right, all assertions pass, or goes wrong and
each of its 3 to 6 assertions passes on its own chance). Eight runs of each
eval on each side are drawn once; the anchor, the fixed design with
`--runs 8`, decides on all of them; `--runs auto --max-runs 8`
(workbench/improve/adaptive.py) reads them round by round and stops early.
Both see the same runs.

A decision is correct when it is the rule's decision (decide.py) on the TRUE
per-eval pass rates, what infinitely many repeats would give. Near the
threshold neither design is always correct: the goal is the same share of
correct decisions (within the simulation's error: the 95% interval of the
paired difference, adaptive minus fixed, reaches 0) with at most half of the
fixed design's dispatches.

Every scenario is run twice: both sides repeated, and "best recorded" (the
best's per-eval rates come from an earlier measurement of 8 runs and only the
new version runs; dispatches count the new version's runs).

Beside the figures, how each decision was settled (docs/improve.md, "Adaptive
repeats": the early look, the remaining runs cannot change it, unlikely to
change, every eval settled, the maximum), how often each was wrong and how
often it differs from the anchor.

--agree K, --noisy-share F, --spend S, --unlikely U, --hold H and
--hold-after R override adaptive.SOME_AGREE, NOISY_SHARE, EARLY_SPEND,
UNLIKELY, HOLD and HOLD_AFTER (they were chosen with them, on seeds 1 and 2;
the default seed, 2026, was not used to choose them). `--set independent`
runs a second scenario set written apart from the published mix (10 evals,
8 scenarios) to check the rule was not fitted to the mix.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.improve import adaptive  # noqa: E402
from workbench.improve.decide import decide  # noqa: E402

MAX = adaptive.MAX_RUNS


@dataclass
class Eval:
    """One eval's true behaviour on one side: a run goes right with chance
    `right` (pass rate 1); else each of `assertions` assertions passes with
    chance `partial` (assertions == 1: a Bernoulli run with p = right)."""

    right: float
    assertions: int = 1
    partial: float = 0.0

    @property
    def rate(self) -> float:
        return self.right + (1 - self.right) * self.partial

    def run(self, rng: random.Random) -> float:
        if rng.random() < self.right:
            return 1.0
        if self.assertions == 1:
            return 0.0
        return sum(rng.random() < self.partial for _ in range(self.assertions)) / self.assertions


Suite = list[tuple[Eval, Eval]]  # (new, best) per eval


def _size(rng: random.Random) -> int:
    return rng.randint(6, 20)


def _fractions(rng: random.Random, new_right: float, best_right: float) -> tuple[Eval, Eval]:
    assertions, partial = rng.randint(3, 6), rng.uniform(0.2, 0.6)
    return Eval(new_right, assertions, partial), Eval(best_right, assertions, partial)


def clear_win_deterministic(rng: random.Random) -> Suite:
    suite = []
    for _ in range(_size(rng)):
        best = float(rng.random() < 0.5)
        new = 1.0 if best or rng.random() < 0.7 else 0.0
        suite.append((Eval(new), Eval(best)))
    return suite


def clear_win_noisy(rng: random.Random) -> Suite:
    suite = []
    for _ in range(_size(rng)):
        best = rng.uniform(0.1, 0.5)
        suite.append((Eval(min(1.0, best + rng.uniform(0.3, 0.6))), Eval(best)))
    return suite


def clear_loss_fractions(rng: random.Random) -> Suite:
    suite = []
    for _ in range(_size(rng)):
        best = rng.uniform(0.5, 1.0)
        suite.append(_fractions(rng, max(0.0, best - rng.uniform(0.4, 0.8)), best))
    return suite


def clear_loss_mixed(rng: random.Random) -> Suite:
    """Half the evals deterministic (most of those that passed now fail), half noisy (a drop of 0.3 to 0.6)."""
    suite = []
    for i in range(_size(rng)):
        if i % 2:
            best = float(rng.random() < 0.7)
            new = 0.0 if rng.random() < 0.6 else best
        else:
            best = rng.uniform(0.5, 0.9)
            new = max(0.0, best - rng.uniform(0.3, 0.6))
        suite.append((Eval(new), Eval(best)))
    return suite


def tie_deterministic(rng: random.Random) -> Suite:
    return [(Eval(p), Eval(p)) for p in (float(rng.random() < 0.6) for _ in range(_size(rng)))]


def tie_noisy(rng: random.Random) -> Suite:
    return [(Eval(p), Eval(p)) for p in (rng.uniform(0.1, 0.9) for _ in range(_size(rng)))]


def tie_mixed_fractions(rng: random.Random) -> Suite:
    suite = []
    for i in range(_size(rng)):
        right = float(rng.random() < 0.6) if i % 2 else rng.uniform(0.2, 0.9)
        suite.append(_fractions(rng, right, right))
    return suite


def near_threshold_win(rng: random.Random) -> Suite:
    """Every eval a little better (0 to 0.3): the mean gain, 0.15, is about
    where the rule's interval starts to clear 0 (won for 20 evals, tie for 6)."""
    suite = []
    for _ in range(_size(rng)):
        best = rng.uniform(0.2, 0.7)
        suite.append((Eval(best + rng.uniform(0.0, 0.3)), Eval(best)))
    return suite


def near_threshold_few_fixed(rng: random.Random) -> Suite:
    """Mostly deterministic evals, a few of them fixed (0 -> 1) or helped (+0.5)."""
    suite = []
    for _ in range(_size(rng)):
        best = rng.choice((0.0, 0.0, 1.0, 1.0, 0.3, 0.7))
        gain = rng.choice((0.0, 0.0, 0.0, 1.0)) if best == 0 else 0.3 if best == 0.3 and rng.random() < 0.5 else 0.0
        suite.append((Eval(min(1.0, best + gain)), Eval(best)))
    return suite


def near_threshold_loss_fractions(rng: random.Random) -> Suite:
    suite = []
    for _ in range(_size(rng)):
        best = rng.uniform(0.3, 0.95)
        suite.append(_fractions(rng, max(0.0, best - rng.uniform(0.0, 0.3)), best))
    return suite


def moderate_gain_noisy(rng: random.Random) -> Suite:
    """Noisy evals (0.2 to 0.7), each 0.1 to 0.3 better: a mean gain of 0.2, won for most suites."""
    suite = []
    for _ in range(_size(rng)):
        best = rng.uniform(0.2, 0.7)
        suite.append((Eval(best + rng.uniform(0.1, 0.3)), Eval(best)))
    return suite


def moderate_loss_noisy(rng: random.Random) -> Suite:
    """Noisy evals (0.3 to 0.8), each 0.1 to 0.3 worse: a mean loss of 0.2, lost for most suites."""
    suite = []
    for _ in range(_size(rng)):
        best = rng.uniform(0.3, 0.8)
        suite.append((Eval(best - rng.uniform(0.1, 0.3)), Eval(best)))
    return suite


def inside_margin(rng: random.Random) -> Suite:
    """Differences of 0 to 0.08 per eval: a mean gain of 0.04, inside the 0.05 margin."""
    suite = []
    for _ in range(_size(rng)):
        best = rng.uniform(0.2, 0.8)
        suite.append((Eval(best + rng.uniform(0.0, 0.08)), Eval(best)))
    return suite


SCENARIOS: list[tuple[str, Callable[[random.Random], Suite]]] = [
    ("clear win, deterministic", clear_win_deterministic),
    ("clear win, noisy", clear_win_noisy),
    ("clear loss, fractions", clear_loss_fractions),
    ("clear loss, mixed", clear_loss_mixed),
    ("exact tie, deterministic", tie_deterministic),
    ("exact tie, noisy", tie_noisy),
    ("exact tie, mixed fractions", tie_mixed_fractions),
    ("near threshold, small gains", near_threshold_win),
    ("near threshold, a few fixed", near_threshold_few_fixed),
    ("near threshold, losses, fractions", near_threshold_loss_fractions),
    ("moderate gain, noisy", moderate_gain_noisy),
    ("moderate loss, noisy", moderate_loss_noisy),
    ("inside the margin", inside_margin),
]


# A second scenario set, written apart from the mix above to check the rule was not fitted to it: 10 evals a
# suite, Bernoulli runs, both sides repeated, 8 scenarios (issue 26: an independent simulation of this shape found
# 59.8% of the fixed design's dispatches). `--set independent` runs it; it is not the published figure.
TEN = 10


def _ind_same(rng: random.Random) -> Suite:
    return [(Eval(p), Eval(p)) for p in (rng.random() for _ in range(TEN))]


def _ind_shift(rng: random.Random, share: float, low: float, high: float) -> Suite:
    suite = []
    for _ in range(TEN):
        best = rng.random()
        gain = rng.uniform(low, high) if rng.random() < share else 0.0
        suite.append((Eval(min(1.0, max(0.0, best + gain))), Eval(best)))
    return suite


def _ind_regressions(rng: random.Random) -> Suite:
    """Seven deterministic evals unchanged, three that passed every time now fail every time."""
    return [
        (Eval(0.0), Eval(1.0)) if i < 3 else (Eval(p), Eval(p))
        for i, p in enumerate(float(rng.random() < 0.5) for _ in range(TEN))
    ]


def _ind_swapped(rng: random.Random) -> Suite:
    """Three evals up 0.3, three down 0.3, four unchanged: no net change."""
    suite = []
    for i in range(TEN):
        best = rng.uniform(0.3, 0.7)
        suite.append((Eval(best + (0.3 if i < 3 else -0.3 if i < 6 else 0.0)), Eval(best)))
    return suite


INDEPENDENT: list[tuple[str, Callable[[random.Random], Suite]]] = [
    ("no change, any rates", _ind_same),
    ("half the evals +0.3 to +0.6", lambda rng: _ind_shift(rng, 0.5, 0.3, 0.6)),
    ("half the evals -0.3 to -0.6", lambda rng: _ind_shift(rng, 0.5, -0.6, -0.3)),
    ("every eval +0.1 to +0.2", lambda rng: _ind_shift(rng, 1.0, 0.1, 0.2)),
    ("every eval -0.1 to -0.2", lambda rng: _ind_shift(rng, 1.0, -0.2, -0.1)),
    ("three up, three down", _ind_swapped),
    ("three deterministic regressions", _ind_regressions),
    ("every eval 0 to +0.1", lambda rng: _ind_shift(rng, 1.0, 0.0, 0.1)),
]
SETS = {"published": SCENARIOS, "independent": INDEPENDENT}


@dataclass
class Tally:
    trials: int = 0
    fixed_dispatches: int = 0
    adaptive_dispatches: int = 0
    fixed_correct: int = 0
    adaptive_correct: int = 0
    paired: list[int] = field(default_factory=list)  # adaptive correct - fixed correct, per trial
    stopped_early: int = 0
    early_wrong: int = 0  # stopped before the maximum with a decision that is not the true one
    truly_tie: int = 0
    fixed_false: int = 0  # won or lost when the true decision is a tie
    adaptive_false: int = 0
    as_anchor: int = 0  # the same decision as the fixed design's
    wrong_way: int = 0  # won when the truth is lost, or the reverse (adaptive)
    by: dict[str, list[int]] = field(default_factory=dict)  # rule -> [stops, wrong, not the anchor's result]

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            if name == "by":
                for rule, counts in other.by.items():
                    mine = self.by.setdefault(rule, [0, 0, 0])
                    for i, count in enumerate(counts):
                        mine[i] += count
            else:
                setattr(self, name, getattr(self, name) + getattr(other, name))


def trial(suite: Suite, rng: random.Random, best_fixed: bool, tally: Tally) -> None:
    ids = [f"e{i}" for i in range(len(suite))]
    new_runs = {k: [new.run(rng) for _ in range(MAX)] for k, (new, _) in zip(ids, suite, strict=True)}
    best_runs = {k: [best.run(rng) for _ in range(MAX)] for k, (_, best) in zip(ids, suite, strict=True)}
    truth = decide(
        {k: s[0].rate for k, s in zip(ids, suite, strict=True)}, {k: s[1].rate for k, s in zip(ids, suite, strict=True)}
    ).result

    fixed = decide(
        {k: sum(v) / MAX for k, v in new_runs.items()}, {k: sum(v) / MAX for k, v in best_runs.items()}
    ).result
    sides = 1 if best_fixed else 2
    fixed_dispatches = MAX * len(ids) * sides

    new: dict[str, list[float]] = {k: [] for k in ids}
    best: dict[str, list[float]] = {k: ([sum(best_runs[k]) / MAX] if best_fixed else []) for k in ids}
    dispatches = 0
    settled = None
    for _ in range(MAX):
        for k in adaptive.next_round(new, best, best_fixed, MAX):
            new[k].append(new_runs[k][len(new[k])])
            if not best_fixed:
                best[k].append(best_runs[k][len(best[k])])
            dispatches += sides
        settled = adaptive.decision_settled(new, best, best_fixed, MAX)
        if settled:
            break
    assert settled is not None, "the maximum always settles the decision"
    result, why = settled

    tally.trials += 1
    tally.fixed_dispatches += fixed_dispatches
    tally.adaptive_dispatches += dispatches
    tally.fixed_correct += fixed == truth
    tally.adaptive_correct += result == truth
    tally.paired.append(int(result == truth) - int(fixed == truth))
    early = why.runs < MAX
    tally.stopped_early += early
    tally.early_wrong += early and result != truth
    if truth == "tie":
        tally.truly_tie += 1
        tally.fixed_false += fixed != "tie"
        tally.adaptive_false += result != "tie"
    tally.as_anchor += result == fixed
    tally.wrong_way += {result, truth} == {"won", "lost"}
    counts = tally.by.setdefault(why.by, [0, 0, 0])
    counts[0] += 1
    counts[1] += result != truth
    counts[2] += result != fixed


def wilson(hits: int, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    z = 1.959964
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_interval(values: list[int]) -> tuple[float, float, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    half = 1.959964 * math.sqrt(var / n)
    return mean, mean - half, mean + half


def pct(hits: int, n: int) -> str:
    low, high = wilson(hits, n)
    return f"{hits / n:6.1%} [{low:.1%}, {high:.1%}]" if n else "     -"


def row(name: str, t: Tally) -> str:
    mean, low, high = paired_interval(t.paired)
    return (
        f"{name:<36} {t.adaptive_dispatches / t.fixed_dispatches:6.1%}  "
        f"{pct(t.adaptive_correct, t.trials)}  {pct(t.fixed_correct, t.trials)}  "
        f"{mean * 100:+5.1f} [{low * 100:+.1f}, {high * 100:+.1f}]  "
        f"{t.stopped_early / t.trials:6.1%}  {t.early_wrong / t.trials:10.2%}  {t.as_anchor / t.trials:8.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000, help="trials per scenario and design (default 1000)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--seed", type=int, default=2026, help="(the constants were chosen with seeds 1 and 2)")
    parser.add_argument(
        "--set", choices=sorted(SETS), default="published", help="the scenario set (default: the published mix)"
    )
    parser.add_argument("--agree", type=int, default=adaptive.SOME_AGREE, help="override SOME_AGREE")
    parser.add_argument("--noisy-share", type=float, default=adaptive.NOISY_SHARE, help="override NOISY_SHARE")
    parser.add_argument("--spend", type=float, default=adaptive.EARLY_SPEND, help="override EARLY_SPEND")
    parser.add_argument("--unlikely", type=float, default=adaptive.UNLIKELY, help="override UNLIKELY")
    parser.add_argument("--hold", type=float, default=adaptive.HOLD, help="override HOLD")
    parser.add_argument("--hold-after", type=int, default=adaptive.HOLD_AFTER, help="override HOLD_AFTER")
    args = parser.parse_args()
    adaptive.SOME_AGREE, adaptive.EARLY_SPEND, adaptive.UNLIKELY = args.agree, args.spend, args.unlikely
    adaptive.NOISY_SHARE = args.noisy_share
    adaptive.HOLD, adaptive.HOLD_AFTER = args.hold, args.hold_after

    scenarios = SETS[args.set]
    started = time.perf_counter()
    say = (lambda *_: None) if args.json else print
    say(
        f"--runs auto --max-runs {MAX} against the anchor, fixed --runs {MAX}, on the same runs: {args.trials} "
        f"seeded trials (seed {args.seed}) per scenario and design; agreeing runs {adaptive.QUIET_AGREE} / "
        f"{adaptive.SOME_AGREE} / none above {adaptive.NOISY_SHARE:.0%} noisy evals, "
        f"EARLY_SPEND {adaptive.EARLY_SPEND:.1%}, UNLIKELY {adaptive.UNLIKELY:.0%}, HOLD {adaptive.HOLD:.0%} "
        f"from {adaptive.HOLD_AFTER} runs"
    )
    say("correct = the rule's decision on the TRUE per-eval pass rates (infinitely many repeats); 95% intervals\n")
    header = (
        f"{'scenario':<36} {'disp.':>6}  {'correct, auto':<22}  {'correct, fixed (anchor)':<22}  "
        f"{'auto-fixed pp':<18}  {'early':>6}  {'early&wrong':>6}  {'as anchor':>9}"
    )
    by_design: dict[bool, Tally] = {}
    shares: dict[str, float] = {}
    for best_fixed in (False, True):
        say(("best recorded earlier: only the new version runs" if best_fixed else "both sides repeated") + ":")
        say(header)
        design = Tally()
        for index, (name, make) in enumerate(scenarios):
            tally = Tally()
            for i in range(args.trials):
                suite = make(random.Random(f"{args.seed}/{index}/{i}/suite"))
                trial(suite, random.Random(f"{args.seed}/{index}/{i}/runs/{best_fixed}"), best_fixed, tally)
            say(row(name, tally))
            design.add(tally)
            if not best_fixed:
                shares[name] = tally.adaptive_dispatches / tally.fixed_dispatches
        say(row("all scenarios", design) + "\n")
        by_design[best_fixed] = design

    both = by_design[False]  # the published figure: both sides repeated, the scenarios weighted equally
    mean, low, high = paired_interval(both.paired)
    share = both.adaptive_dispatches / both.fixed_dispatches
    say(f"the {args.set} set, both sides repeated: {both.trials} trials ({len(scenarios)} scenarios, equal weight):")
    say(f"  dispatches: {share:.1%} of fixed (anchor: fixed design 100%, goal <= 50%)")
    say(
        f"  correct decisions: {pct(both.adaptive_correct, both.trials).strip()} "
        f"(anchor: fixed design {pct(both.fixed_correct, both.trials).strip()}); "
        f"difference {mean * 100:+.1f} pp [{low * 100:+.1f}, {high * 100:+.1f}] (goal: 0 inside the interval)"
    )
    say(f"  the anchor's decision: {pct(both.as_anchor, both.trials).strip()} of trials")
    say(
        f"  won/lost when the truth is tie ({both.truly_tie} trials): "
        f"{pct(both.adaptive_false, both.truly_tie).strip()} "
        f"(anchor: fixed design {pct(both.fixed_false, both.truly_tie).strip()})"
    )
    say(
        f"  stopped before {MAX} runs: {both.stopped_early / both.trials:.1%} of trials; stopped early and "
        f"wrong: {pct(both.early_wrong, both.trials).strip()}; won against a true loss or the reverse: "
        f"{both.wrong_way}"
    )
    say("  how the decisions were settled (share of trials; of those: wrong, and not the anchor's result):")
    for rule, (stops, wrong, other) in sorted(both.by.items(), key=lambda item: -item[1][0]):
        say(
            f"    {rule:<20} {stops / both.trials:6.1%}   wrong {pct(wrong, stops).strip():<22} "
            f"not the anchor's {pct(other, stops).strip()}"
        )
    recorded = by_design[True]
    m, lo, hi = paired_interval(recorded.paired)
    recorded_share = recorded.adaptive_dispatches / recorded.fixed_dispatches
    say(
        f"  beside it, best recorded (only the new version runs): dispatches {recorded_share:.1%} of fixed, "
        f"correct {recorded.adaptive_correct / recorded.trials:.1%} vs anchor "
        f"{recorded.fixed_correct / recorded.trials:.1%} ({m * 100:+.1f} pp [{lo * 100:+.1f}, {hi * 100:+.1f}])"
    )
    fewer, same = share <= 0.5, high >= 0  # same: the paired interval does not show the adaptive design worse
    seconds = time.perf_counter() - started
    if args.json:
        print(
            json.dumps(
                {
                    "dispatches_share": round(share, 4),
                    "anchor_share": 1.0,
                    "correct": round(both.adaptive_correct / both.trials, 4),
                    "anchor_correct": round(both.fixed_correct / both.trials, 4),
                    "difference_pp": [round(v * 100, 2) for v in (mean, low, high)],
                    "as_anchor": round(both.as_anchor / both.trials, 4),
                    "scenarios": {name: round(v, 4) for name, v in shares.items()},
                    "best_recorded_share": round(recorded_share, 4),
                    "trials": args.trials,
                    "seed": args.seed,
                    "goal_met": fewer and same,
                }
            )
        )
        return
    # The last line: one stable summary (bench/run_all.py reads it).
    which = "" if args.set == "published" else f" ({args.set} set)"
    print(
        f"adaptive repeats: {share:.1%} of the fixed design's dispatches (anchor 100%, goal <= 50%), correct "
        f"{both.adaptive_correct / both.trials:.1%} vs anchor {both.fixed_correct / both.trials:.1%} "
        f"({mean * 100:+.1f} pp [{low * 100:+.1f}, {high * 100:+.1f}]); both sides repeated, {len(scenarios)} "
        f"scenarios{which}; goal {'met' if fewer and same else 'NOT met'} ({seconds:.0f} s)"
    )


if __name__ == "__main__":
    main()
