"""The difference between two configurations' pass rates, paired by eval, with
a 95% interval taken over evals (docs/grading.md): the assertions of one run are
not independent, so counting them as trials would be optimistic.

Each eval gives one paired difference d_i = rate_new_i - rate_base_i (each
rate the mean of that eval's runs' pass rates). delta is the configurations'
pass rates subtracted when the caller has them (the one delta shown
everywhere), else mean(d_i); the two agree when every eval has as many runs.
The interval is Student's t over the n evals: delta ± t(0.975, n-1) * s / sqrt(n),
with s the spread of the d_i.
The sample variance s² is never taken below (1/n)(1 - 1/n), what it would be
if one eval in n had differed by a whole pass rate from the others: a few evals
that happen to agree are not read as certainty. So two or three evals can never
show a difference sure enough to win, four that all move fully can, and eight
that all improve by half do."""

from __future__ import annotations

import math

from workbench.formats.record import Record

# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom.
_T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
Z95 = 1.959964


def t95(df: int) -> float:
    if df <= len(_T95):
        return _T95[df - 1]
    z = Z95  # Cornish-Fisher expansion: within 0.001 of the exact quantile past 30 degrees of freedom
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)


class Difference(Record):
    """new minus baseline, paired by eval, with its 95% interval over evals."""

    def __init__(self, delta: float, low: float, high: float, evals: int, better: int, worse: int) -> None:
        self.delta = delta
        self.low = low
        self.high = high
        self.evals = evals  # paired evals
        self.better = better  # evals where new passed more
        self.worse = worse

    def as_json(self) -> dict:
        return {
            "delta": round(self.delta, 4),
            "interval": [round(self.low, 4), round(self.high, 4)],
            "evals": self.evals,
            "better": self.better,
            "worse": self.worse,
        }

    def shown(self) -> str:
        return f"delta {self.delta:+.2f}, 95% interval over {self.evals} eval(s) [{self.low:+.2f}, {self.high:+.2f}]"


def difference(new: dict[str, float], base: dict[str, float], delta: float | None = None) -> Difference | None:
    """new minus base over the evals both have, with the interval over evals; None
    when none are shared. delta: the two configurations' pass rates subtracted
    (the means of their runs), when the caller has them: then the one delta a
    person sees everywhere is the centre, and the evals give the interval's width.
    Without it, the mean of the paired differences (the same when every eval
    has the same number of runs)."""
    shared = [key for key in new if key in base]
    if not shared:
        return None
    diffs = [new[key] - base[key] for key in shared]
    n = len(diffs)
    mean = sum(diffs) / n
    delta = mean if delta is None else delta
    if n == 1:
        low, high = -1.0, 1.0  # one eval says nothing about the next
    else:
        variance = max(sum((d - mean) ** 2 for d in diffs) / (n - 1), (1 / n) * (1 - 1 / n))
        half = t95(n - 1) * math.sqrt(variance / n)
        low, high = max(-1.0, delta - half), min(1.0, delta + half)
    return Difference(delta, low, high, n, sum(d > 1e-12 for d in diffs), sum(d < -1e-12 for d in diffs))
