"""A trigger evaluation's results: per query how often the agent used the skill
(k of N runs), and recall, precision and accuracy over every run, each with a
95 % Wilson score interval.

Each run is one trial: recall is the share of should-trigger runs that
triggered, precision the share of triggering runs that should have, accuracy
the share of runs that did as the query says. Runs of one query are not
independent (the same words decide them), so the intervals are narrower than
the truth when queries are few: more queries tighten them, more runs of the
same ones less so. A query passes as skill-creator's run_eval.py counts it:
should trigger and triggered in at least half its runs, or should not and
triggered in less than half. A run that failed (the agent errored, the budget
stopped it) is an error, never a "did not trigger"."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """Text from a trigger set or an agent as a terminal may show it: control characters (escape sequences
    that retitle or clear a terminal, NUL, newlines) written out as \\xNN, never sent raw."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


THRESHOLD = 0.5  # run_eval.py's --trigger-threshold default
Z95 = 1.959963984540054


@dataclass
class QueryResult:
    query: str
    should_trigger: bool
    triggered: int = 0  # runs in which the skill was used
    runs: int = 0  # runs that decided (errors not counted)
    errors: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)  # one line per run: what decided it

    @property
    def rate(self) -> float | None:
        return self.triggered / self.runs if self.runs else None

    @property
    def passed(self) -> bool | None:
        if self.rate is None:
            return None
        return self.rate >= THRESHOLD if self.should_trigger else self.rate < THRESHOLD

    @property
    def kind(self) -> str:
        """miss | false trigger | ok | error, as the results list it."""
        if self.passed is None:
            return "error"
        if self.passed:
            return "ok"
        return "miss" if self.should_trigger else "false trigger"

    def as_json(self) -> dict:
        return {
            "query": self.query,
            "should_trigger": self.should_trigger,
            "triggered": self.triggered,
            "runs": self.runs,
            "rate": None if self.rate is None else round(self.rate, 4),
            "passed": self.passed,
            "errors": len(self.errors),
        }


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (None without trials): sound at 0 and at n, unlike p ± z·se."""
    if trials <= 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Scores:
    true_positive: int = 0
    false_negative: int = 0
    false_positive: int = 0
    true_negative: int = 0

    @classmethod
    def of(cls, queries: list[QueryResult]) -> Scores:
        out = cls()
        for q in queries:
            if q.should_trigger:
                out.true_positive += q.triggered
                out.false_negative += q.runs - q.triggered
            else:
                out.false_positive += q.triggered
                out.true_negative += q.runs - q.triggered
        return out

    def _parts(self) -> dict[str, tuple[int, int]]:
        right = self.true_positive + self.true_negative
        every = right + self.false_positive + self.false_negative
        return {
            "recall": (self.true_positive, self.true_positive + self.false_negative),
            "precision": (self.true_positive, self.true_positive + self.false_positive),
            "accuracy": (right, every),
        }

    def value(self, name: str) -> float | None:
        k, n = self._parts()[name]
        return k / n if n else None

    def as_json(self) -> dict:
        parts = self._parts()
        out: dict = {name: (round(k / n, 4) if n else None) for name, (k, n) in parts.items()}
        out["intervals"] = {
            name: ([round(v, 4) for v in interval] if (interval := wilson(k, n)) else None)
            for name, (k, n) in parts.items()
        }
        out["counts"] = {
            "true_positive": self.true_positive,
            "false_negative": self.false_negative,
            "false_positive": self.false_positive,
            "true_negative": self.true_negative,
        }
        return out

    def line(self, name: str) -> str:
        """recall 0.67 [0.35, 0.88] (4/6 runs)"""
        k, n = self._parts()[name]
        if not n:
            return f"{name} -: no runs it applies to"
        low, high = wilson(k, n) or (0.0, 0.0)
        return f"{name} {k / n:.2f} [{low:.2f}, {high:.2f}] ({k}/{n} runs)"


def listed(queries: list[QueryResult]) -> list[QueryResult]:
    """Errors, misses and false triggers first (worst rate first), then the queries that did as expected."""
    order = {"error": 0, "false trigger": 1, "miss": 1, "ok": 2}

    def wrongness(q: QueryResult) -> float:
        if q.rate is None:
            return 0.0
        return -(q.rate if not q.should_trigger else 1 - q.rate)

    return sorted(queries, key=lambda q: (order[q.kind], wrongness(q)))


def settled(result: QueryResult, runs_each: int, max_runs: int, agree: int = 4) -> str | None:
    """--runs auto: why this query needs no more runs, or None. Unanimous after `agree` runs; or its pass
    or fail cannot change whatever the runs left up to max_runs give (curtailment); or at max_runs; or
    a run failed (more runs would not make it a result)."""
    if result.errors:
        return f"a run could not be decided ({result.errors[0]})"
    k, n = result.triggered, result.runs
    if runs_each >= max_runs:
        return f"{k}/{n} at --max-runs {max_runs}"
    if n >= agree and k in (0, n):
        return f"all {n} runs agreed ({k}/{n})"
    needed = math.ceil(THRESHOLD * max_runs)  # triggering runs that put the rate at or above the threshold
    if k >= needed:
        return f"{k}/{n}: at least {THRESHOLD:.0%} of {max_runs} runs whatever the rest do"
    if n - k > max_runs - needed:
        return f"{k}/{n}: below {THRESHOLD:.0%} of {max_runs} runs whatever the rest do"
    return None
