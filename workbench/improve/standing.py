"""Where a version stands against the current best, said before anything is done
with it: the brief and the Improve dialog name the version improved from and
the best ("v1, 18%, not the best (v0, 23%)"), and promoting a version below the
best, or one whose last decision was not a win, is asked about first, with by
how much."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workbench.improve.decide import verdict
from workbench.improve.history import History, read_evaluations


@dataclass(frozen=True)
class Standing:
    version: str
    rate: float | None  # its pass rate in history.json (None: not evaluated)
    best: str
    best_rate: float | None
    result: str | None  # its last decision: won, lost, tie, baseline (None: not evaluated)
    said: str | None  # that decision as a person reads it ("tie (lower by 18 points, ...)")

    @property
    def is_best(self) -> bool:
        return self.version == self.best

    def line(self) -> str:
        """`v1, 18%, not the best (v0, 23%)` or `v0, 23%, the current best`."""
        rate = f", {self.rate:.0%}" if self.rate is not None else ", not evaluated"
        if self.is_best:
            return f"{self.version}{rate}, the current best"
        best = f", {self.best_rate:.0%}" if self.best_rate is not None else ""
        return f"{self.version}{rate}, not the best ({self.best}{best})"

    def doubt(self) -> str | None:
        """Why promoting it deserves a question (its rate below the best's, a last decision that was not a
        win), or None when it is the best or won."""
        if self.is_best:
            return None
        reasons = []
        if self.rate is not None and self.best_rate is not None and self.rate < self.best_rate - 1e-9:
            points = round((self.best_rate - self.rate) * 100)
            reasons.append(
                f"{self.version}'s pass rate, {self.rate:.0%}, is {points} points below the best's "
                f"({self.best}, {self.best_rate:.0%})"
            )
        if self.result != "won":
            last = self.said or self.result or "none: it was never evaluated"
            reasons.append(f"its last decision was {last}" if reasons else f"{self.version}'s last decision was {last}")
        return "; ".join(reasons) or None


def standing(workspace: Path, history: History, version: str) -> Standing:
    entry = history.entry(version) or {}
    best = history.current_best
    best_entry = history.entry(best) or {}
    result = entry.get("grading_result")
    decision = (read_evaluations(workspace).get(version) or {}).get("decision")
    said = result
    if isinstance(decision, dict) and decision.get("result") == result and result is not None:
        try:
            said = verdict(result, float(decision["delta"]), float(decision["margin"]), int(decision["evals"]))
        except (KeyError, TypeError, ValueError):
            said = result
    return Standing(version, _rate(entry), best, _rate(best_entry), result, said)


def _rate(entry: dict) -> float | None:
    rate = entry.get("expectation_pass_rate")
    return float(rate) if isinstance(rate, (int, float)) and not isinstance(rate, bool) else None
