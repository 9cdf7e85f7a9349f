"""won / lost / tie, from evidence paired by eval.

The rule, deterministic and documented (docs/improve.md):
- an eval's pass rate is the mean of its runs' pass rates (a run's is passed /
  total of its assertions), on the same evals and executor for both sides;
- delta is the two versions' pass rates subtracted (the means of their runs),
  and its 95% interval is taken over the evals both ran, paired (grading/difference.py says how): the
  assertions of one run are not independent, so they are not the unit;
- won  when delta >= margin and the interval lies above 0;
- lost when delta <= -margin and the interval lies below 0;
- tie  otherwise: the difference is inside the margin, or the evidence is too
  thin to tell it from noise (more evals narrow the interval; more repeats make
  each eval's rate surer).
The margin (default 0.05) keeps a version from winning by a hair."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.grading.difference import Difference, difference

DEFAULT_MARGIN = 0.05


@dataclass
class Decision:
    result: str  # won | lost | tie
    difference: Difference
    new_rate: float  # each version's pass rate (else the paired evals' mean, when decide() was not given them)
    best_rate: float
    margin: float

    @property
    def delta(self) -> float:
        return self.difference.delta

    @property
    def verdict(self) -> str:
        """The result as a person reads it: a tie says which way the rates went, and why it is a tie."""
        return verdict(self.result, self.delta, self.margin, self.difference.evals)

    @property
    def evidence(self) -> str:
        d = self.difference
        return (
            f"{self.new_rate:.0%} against the best's {self.best_rate:.0%} on {d.evals} paired eval(s) "
            f"({d.better} better, {d.worse} worse): {d.shown()}, tie margin ±{self.margin:.2f} -> {self.verdict}"
        )

    def as_json(self) -> dict:
        return {
            "result": self.result,
            **self.difference.as_json(),
            "new_pass_rate": round(self.new_rate, 4),
            "best_pass_rate": round(self.best_rate, 4),
            "margin": self.margin,
            "evidence": self.evidence,
        }


def verdict(result: str, delta: float, margin: float, evals: int) -> str:
    """won, lost, or a tie said with its direction: "tie (lower by 18 points, not significant on 10 evals)"
    for a drop the evidence cannot tell from noise, "tie (2 points apart, inside the 5-point margin)"."""
    if result != "tie":
        return result
    points = round(abs(delta) * 100)
    if abs(delta) < margin - 1e-12:
        return f"tie ({points} points apart, inside the {round(margin * 100)}-point margin)"
    way = "lower" if delta < 0 else "higher"
    return f"tie ({way} by {points} points, not significant on {evals} eval{'s' if evals != 1 else ''})"


def decide(
    new: dict[str, float],
    best: dict[str, float],
    margin: float = DEFAULT_MARGIN,
    rates: tuple[float, float] | None = None,
) -> Decision:
    """new and best: eval id -> that eval's pass rate. rates: the two versions'
    pass rates (the means of their runs), when known: delta is their difference,
    the one a person sees in history.json; else the paired evals' means."""
    diff = difference(new, best, rates[0] - rates[1] if rates else None)
    if diff is None:
        raise ValueError("both versions need graded runs of the same evals to be compared")
    if diff.delta >= margin - 1e-12 and diff.low > 0:
        result = "won"
    elif diff.delta <= -margin + 1e-12 and diff.high < 0:
        result = "lost"
    else:
        result = "tie"
    shared = [key for key in new if key in best]
    new_rate, best_rate = rates or (
        sum(new[k] for k in shared) / len(shared),
        sum(best[k] for k in shared) / len(shared),
    )
    return Decision(result, diff, new_rate, best_rate, margin)
