"""Adaptive repeats (`--runs auto`, workbench/improve/adaptive.py): when an
eval stops repeating, when won / lost / tie is settled, and that every
settlement says after how many runs and why."""

from __future__ import annotations

import random

import pytest

from workbench.grading.difference import _T95, t95
from workbench.improve import adaptive
from workbench.improve.adaptive import (
    AGREE_RUNS,
    EARLY_SPEND,
    MAX_RUNS,
    decision_settled,
    eval_settled,
    next_round,
    t_quantile,
)
from workbench.improve.decide import decide

IDS = [f"eval-{i}" for i in range(12)]


def test_t_quantile_matches_the_table_of_difference():
    for df, tabled in enumerate(_T95, start=1):
        assert t_quantile(0.975, df) == pytest.approx(tabled, abs=6e-4), df
    for df in (31, 40, 100, 1000):  # past the table, difference.py's Cornish-Fisher expansion
        assert t_quantile(0.975, df) == pytest.approx(t95(df), abs=1e-3)
    assert t_quantile(0.5, 7) == pytest.approx(0.0, abs=1e-9)
    assert t_quantile(0.025, 5) == pytest.approx(-2.571, abs=6e-4)
    assert t_quantile(0.995, 1) == pytest.approx(63.657, abs=1e-2)  # 99% two-sided, one degree of freedom
    assert t_quantile(0.9995, 10) == pytest.approx(4.587, abs=1e-3)


def test_a_clear_difference_is_won_at_the_first_look_and_says_after_how_many_runs_and_why():
    new = {key: [1.0] for key in IDS}
    best = {key: [0.0] for key in IDS}
    result, settled = decision_settled(new, best)
    assert result == "won"
    assert settled.runs == 1 and settled.by == "early look"
    assert settled.why.startswith("won after 1 run of at most 8, an early look")
    assert "lies above 0" in settled.why
    # the same, reversed, is lost; and with the best recorded earlier (only the new version runs)
    assert decision_settled(best, new)[0] == "lost"  # type: ignore[index]
    assert decision_settled(new, best, best_fixed=True)[0] == "won"  # type: ignore[index]


def test_early_looks_are_stricter_than_the_last():
    # 8 of 12 evals flipped from fail to pass: the fixed rule wins, an early look does not
    new = {key: [1.0] * 2 for key in IDS}
    best = {key: [1.0 if i >= 8 else 0.0] * 2 for i, key in enumerate(IDS)}
    new[IDS[8]] = [1.0, 0.0]  # one eval still repeating
    assert decide({k: sum(v) / 2 for k, v in new.items()}, {k: sum(v) / 2 for k, v in best.items()}).result == "won"
    assert decision_settled(new, best) is None


def _noisy_tie_runs(rng: random.Random, evals: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    rates = [rng.uniform(0.2, 0.8) for _ in range(evals)]
    new = {f"e{i}": [float(rng.random() < p) for _ in range(MAX_RUNS)] for i, p in enumerate(rates)}
    best = {f"e{i}": [float(rng.random() < p) for _ in range(MAX_RUNS)] for i, p in enumerate(rates)}
    return new, best


def _play(new_runs, best_runs, best_fixed=False):
    """Round by round, as `evaluate --runs auto` does: (result, Settled, dispatches)."""
    new = {key: [] for key in new_runs}
    best = {key: ([sum(runs) / MAX_RUNS] if best_fixed else []) for key, runs in best_runs.items()}
    dispatches = 0
    for _ in range(MAX_RUNS):
        for key in next_round(new, best, best_fixed):
            new[key].append(new_runs[key][len(new[key])])
            dispatches += 1
            if not best_fixed:
                best[key].append(best_runs[key][len(best[key])])
                dispatches += 1
        settled = decision_settled(new, best, best_fixed)
        if settled:
            return (*settled, dispatches)
    raise AssertionError("the maximum always settles the decision")


def test_an_exact_noisy_tie_runs_to_the_maximum_unless_the_remaining_runs_cannot_change_it(monkeypatch):
    monkeypatch.setattr(adaptive, "UNLIKELY", 0.0)  # only the early looks, curtailment and the maximum
    rng = random.Random(7)
    for _ in range(30):
        result, settled, _ = _play(*_noisy_tie_runs(rng, 12))
        if settled.runs < MAX_RUNS:  # (at the maximum, the fixed rule: a false win or loss 5% of the time)
            assert result == "tie" and settled.by == "cannot change" and settled.runs == MAX_RUNS - 1, settled


def test_an_exact_noisy_tie_may_end_early_as_a_tie_and_says_why():
    rng = random.Random(11)
    seen = set()
    for _ in range(30):
        result, settled, _ = _play(*_noisy_tie_runs(rng, 12))
        seen.add(settled.by)
        assert result == "tie" or settled.by == "maximum", settled
        if settled.by == "unlikely to change":
            assert settled.runs < MAX_RUNS
            assert f"tie after {settled.runs} runs of at most {MAX_RUNS}" in settled.why
            assert "the last look would give won with chance" in settled.why
    assert "unlikely to change" in seen


def test_an_eval_whose_runs_agree_stops_repeating_and_one_whose_runs_disagree_continues():
    agreed = {"with_skill": [1.0] * AGREE_RUNS, "without_skill": [0.0] * AGREE_RUNS}
    assert eval_settled({side: runs[:-1] for side, runs in agreed.items()}) is None
    settled = eval_settled(agreed)
    assert settled is not None and settled.runs == AGREE_RUNS and settled.by == "agreed"
    assert settled.why == (
        f"every run of both sides agreed after {AGREE_RUNS} runs (with_skill 100%, without_skill 0% each time)"
    )
    fractions = {"new": [0.75] * AGREE_RUNS}  # multi-assertion pass fractions agree too
    assert eval_settled(fractions) is not None

    disagreed = {"with_skill": [1.0, 0.0] + [1.0] * (MAX_RUNS - 2), "without_skill": [0.0] * MAX_RUNS}
    for runs in range(1, MAX_RUNS):
        assert eval_settled({side: r[:runs] for side, r in disagreed.items()}) is None, runs
    settled = eval_settled(disagreed)
    assert settled == adaptive.Settled(MAX_RUNS, f"reached the maximum of {MAX_RUNS} runs", "maximum")
    first3 = {side: r[:3] for side, r in disagreed.items()}
    assert eval_settled(first3, max_runs=3) == adaptive.Settled(3, "reached the maximum of 3 runs", "maximum")

    # a recorded rate that is not 0% or 100% was noisy: the new side keeps repeating
    assert eval_settled({"new": [1.0] * AGREE_RUNS}, recorded={"best": 0.75}) is None
    assert eval_settled({"new": [1.0] * AGREE_RUNS}, recorded={"best": 1.0}) is not None

    new = {"a": [1.0] * AGREE_RUNS, "b": [1.0, 0.0] + [1.0] * (AGREE_RUNS - 2)}
    best = {"a": [1.0] * AGREE_RUNS, "b": [1.0] * AGREE_RUNS}
    assert next_round(new, best) == ["b"]


def test_curtailment_settles_when_the_remaining_runs_cannot_change_the_result():
    # 6 evals fixed for good, 6 unchanged, all settled; one noisy eval has its last run to go
    new = {f"fixed-{i}": [1.0] * AGREE_RUNS for i in range(6)} | {f"same-{i}": [1.0] * AGREE_RUNS for i in range(6)}
    best = {f"fixed-{i}": [0.0] * AGREE_RUNS for i in range(6)} | {f"same-{i}": [1.0] * AGREE_RUNS for i in range(6)}
    new["noisy"] = [1.0, 0.0] * 3 + [1.0]
    best["noisy"] = [0.0, 1.0] * 3 + [0.0]
    assert next_round(new, best) == ["noisy"]
    result, settled = decision_settled(new, best)  # type: ignore[misc]
    assert result == "won" and settled.by == "cannot change" and settled.runs == MAX_RUNS - 1
    assert "cannot change it (whatever their remaining runs pass, the last look gives won" in settled.why
    # whatever the last run of each side is, the last look agrees
    for new_last in (0.0, 0.5, 1.0):
        for best_last in (0.0, 0.5, 1.0):
            final_new = {k: v + [new_last] if k == "noisy" else v for k, v in new.items()}
            final_best = {k: v + [best_last] if k == "noisy" else v for k, v in best.items()}
            assert decision_settled(final_new, final_best)[0] == "won"  # type: ignore[index]

    # one eval: the fixed rule's interval is [-1, 1], a tie from the first run
    assert decision_settled({"only": [1.0]}, {"only": [0.0]})[0] == "tie"  # type: ignore[index]


def test_the_last_look_is_the_fixed_rule():
    rng = random.Random(3)
    for _ in range(20):
        new, best = _noisy_tie_runs(rng, rng.randint(4, 16))
        for key in new:  # a real difference on some evals
            if rng.random() < 0.5:
                new[key] = [1.0] * MAX_RUNS
        result, settled = decision_settled(new, best)  # type: ignore[misc]
        fixed = decide({k: sum(v) / MAX_RUNS for k, v in new.items()}, {k: sum(v) / MAX_RUNS for k, v in best.items()})
        assert settled.runs == MAX_RUNS and result == fixed.result
        assert settled.why.startswith(f"reached the maximum of {MAX_RUNS} runs: the rule as with fixed runs: ")


def test_the_early_looks_false_win_rate_on_ties_stays_below_its_bound():
    """Simulated exact ties (both sides the same pass rates, 6 to 20 evals,
    Bernoulli runs): won or lost at an early look at most EARLY_SPEND of the
    time in each direction."""
    rng = random.Random(2026)
    trials, early = 400, {"won": 0, "lost": 0}
    for _ in range(trials):
        new_runs, best_runs = _noisy_tie_runs(rng, rng.randint(6, 20))
        new: dict[str, list[float]] = {key: [] for key in new_runs}
        best: dict[str, list[float]] = {key: [] for key in new_runs}
        for round_ in range(MAX_RUNS - 1):
            for key in new_runs:  # every eval, every round: the most early looks could see
                new[key].append(new_runs[key][round_])
                best[key].append(best_runs[key][round_])
            settled = decision_settled(new, best)
            if settled and settled[1].by == "early look":
                early[settled[0]] += 1
                break
    assert early["won"] / trials <= EARLY_SPEND and early["lost"] / trials <= EARLY_SPEND, early


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        decision_settled({"a": [1.0]}, {"b": [1.0]})
    with pytest.raises(ValueError):
        eval_settled({})
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)


# 10 evals after 3 runs each: the new version passes 24 of 30, the best 12 of 30; the early look's
# stricter interval does not yet clear 0, and the bounds of the remaining runs still allow a tie.
LEADING_NEW = {
    "e0": [1.0, 1.0, 0.0], "e1": [1.0, 1.0, 1.0], "e2": [1.0, 1.0, 1.0], "e3": [1.0, 1.0, 1.0],
    "e4": [1.0, 1.0, 1.0], "e5": [1.0, 1.0, 1.0], "e6": [1.0, 1.0, 1.0], "e7": [0.0, 0.0, 1.0],
    "e8": [1.0, 1.0, 1.0], "e9": [0.0, 1.0, 1.0],
}  # fmt: skip
LEADING_BEST = {
    "e0": [1.0, 0.0, 0.0], "e1": [0.0, 0.0, 1.0], "e2": [0.0, 0.0, 0.0], "e3": [0.0, 1.0, 1.0],
    "e4": [0.0, 0.0, 1.0], "e5": [1.0, 1.0, 1.0], "e6": [0.0, 0.0, 0.0], "e7": [1.0, 1.0, 0.0],
    "e8": [1.0, 0.0, 0.0], "e9": [0.0, 1.0, 0.0],
}  # fmt: skip


def test_a_win_the_remaining_runs_are_unlikely_to_change_is_settled_before_the_maximum_and_says_why():
    result, settled = decision_settled(LEADING_NEW, LEADING_BEST)  # type: ignore[misc]
    assert result == "won" and settled.by == "likely to hold" and settled.runs == 3
    assert settled.why.startswith("won after 3 runs of at most 8: the remaining runs are unlikely to change it")
    assert "the last look would give won with chance 99." in settled.why
    # the same reversed is lost; and the rule as with fixed runs gives the same on the rates so far
    assert decision_settled(LEADING_BEST, LEADING_NEW)[0] == "lost"  # type: ignore[index]
    rates = {k: sum(v) / 3 for k, v in LEADING_NEW.items()}, {k: sum(v) / 3 for k, v in LEADING_BEST.items()}
    assert decide(*rates).result == "won"


def test_a_likely_win_is_not_settled_before_hold_after_runs():
    two = {k: v[:2] for k, v in LEADING_NEW.items()}, {k: v[:2] for k, v in LEADING_BEST.items()}
    settled = decision_settled(*two)
    assert settled is None or settled[1].by != "likely to hold"


def test_moderate_noisy_differences_use_fewer_dispatches_with_the_same_decisions():
    """10 noisy evals (rates 0.2 to 0.6), each 0.2 to 0.4 better, both sides repeated: at most 78% of
    the fixed design's dispatches (86% before "likely to hold": such suites ran to the maximum unless
    an early look settled them; 75.2% since agreeing runs in a mostly noisy suite no longer stop an eval,
    73% before), and its decision on at least 90% of the suites, as before."""
    rng = random.Random(26)
    used = same = 0
    suites = 60
    for _ in range(suites):
        rates = [(p, p + rng.uniform(0.2, 0.4)) for p in (rng.uniform(0.2, 0.6) for _ in range(10))]
        new_runs = {f"e{i}": [float(rng.random() < p) for _ in range(MAX_RUNS)] for i, (_, p) in enumerate(rates)}
        best_runs = {f"e{i}": [float(rng.random() < p) for _ in range(MAX_RUNS)] for i, (p, _) in enumerate(rates)}
        result, _, dispatches = _play(new_runs, best_runs)
        fixed = decide(
            {k: sum(v) / MAX_RUNS for k, v in new_runs.items()}, {k: sum(v) / MAX_RUNS for k, v in best_runs.items()}
        ).result
        used += dispatches
        same += result == fixed
    assert used <= 0.78 * suites * 10 * 2 * MAX_RUNS, used / (suites * 10 * 2 * MAX_RUNS)
    assert same >= 0.9 * suites


def test_how_many_agreeing_runs_settle_an_eval_follows_the_suites_noise():
    """A suite whose evals all agreed so far settles them after 2 runs; one where some eval disagreed needs 3;
    one where most evals are noisy stops none by agreement (an eval that passed 3 times among noisy ones is as
    likely lucky as deterministic, and stopped there it would read 100%)."""
    steady = {f"s{i}": [1.0, 1.0] for i in range(6)}
    quiet_new, quiet_best = dict(steady), {k: [0.0, 0.0] for k in steady}
    assert next_round(quiet_new, quiet_best) == []
    settled = eval_settled(
        {"new": [1.0, 1.0], "best": [0.0, 0.0]},
        agree=adaptive.agree_needed([{"new": quiet_new[k], "best": quiet_best[k]} for k in steady]),
    )
    assert settled is not None and settled.runs == 2 and settled.by == "agreed"

    # one noisy eval of seven: 3 agreeing runs are needed, not 2
    some_new = dict(quiet_new) | {"noisy": [1.0, 0.0]}
    some_best = dict(quiet_best) | {"noisy": [0.0, 0.0]}
    assert sorted(next_round(some_new, some_best)) == sorted([*steady, "noisy"])
    some_new = {k: v + [v[0]] for k, v in some_new.items()}
    some_best = {k: v + [v[0]] for k, v in some_best.items()}
    assert next_round(some_new, some_best) == ["noisy"]

    # most evals noisy: the evals whose runs happened to agree keep repeating, to the decision or the maximum
    noisy_new = {f"n{i}": [1.0, 0.0, 1.0] for i in range(4)} | {"lucky": [1.0] * 3}
    noisy_best = {f"n{i}": [0.0, 1.0, 1.0] for i in range(4)} | {"lucky": [1.0] * 3}
    assert "lucky" in next_round(noisy_new, noisy_best)
    noisy_new["lucky"] = noisy_best["lucky"] = [1.0] * 7
    assert "lucky" in next_round(noisy_new, noisy_best)


def test_an_eval_settled_by_agreement_stays_settled_when_another_eval_disagrees_later():
    # round 2: every eval agreed, so all are settled; round 3: one eval, still repeating for the decision's sake
    # in the caller's eyes, shows a disagreement. The settled evals are not reopened: what settled them is
    # judged on the runs up to the round they stopped in.
    new = {f"s{i}": [1.0, 1.0] for i in range(5)} | {"late": [1.0, 1.0, 0.0]}
    best = {f"s{i}": [0.0, 0.0] for i in range(5)} | {"late": [0.0, 0.0, 0.0]}
    assert next_round(new, best) == []
    settled = eval_settled(
        {"new": new["s0"], "best": best["s0"]},
        agree=adaptive.agree_needed([{"new": new[k], "best": best[k]} for k in new]),
    )
    assert settled is not None and settled.runs == 2


def test_a_tie_between_pass_fractions_that_vary_little_settles_sooner_than_pass_or_fail_runs():
    """Multi-assertion evals whose runs pass 50% or 75% of their assertions vary far less than pass-or-fail
    runs with the same mean: the remaining runs can move delta less, so a tie is settled at round 2, where
    the same means from runs that pass or fail whole are not (the most a run in [0, 1] can vary)."""
    fractions_new = {key: [0.5, 0.75] if i % 2 else [0.75, 0.5] for i, key in enumerate(IDS)}
    fractions_best = {key: [0.75, 0.5] if i % 3 else [0.5, 0.75] for i, key in enumerate(IDS)}
    settled = decision_settled(fractions_new, fractions_best)
    assert settled is not None
    result, why = settled
    assert result == "tie" and why.by == "unlikely to change" and why.runs == 2, why

    whole_new = {key: [1.0, 0.0] if i % 2 else [0.0, 1.0] for i, key in enumerate(IDS)}
    whole_best = {key: [0.0, 1.0] if i % 3 else [1.0, 0.0] for i, key in enumerate(IDS)}
    assert decision_settled(whole_new, whole_best) is None
