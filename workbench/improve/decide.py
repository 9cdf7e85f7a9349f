"""won / lost / tie, from evidence.

The rule, deterministic and documented (docs/improve.md):
- p_new = k_new / N_new and p_best = k_best / N_best are with-skill pass rates
  over every assertion of every run, on the same evals and executor;
- delta = p_new - p_best, with a 95% interval for it (Newcombe's hybrid score
  interval, built from the Wilson interval of each rate: sound for small N and
  for rates of 0 or 1, where the plain normal interval is not);
- won  when delta >= margin and the interval lies above 0;
- lost when delta <= -margin and the interval lies below 0;
- tie  otherwise: the difference is inside the margin, or the evidence is too
  thin to tell it from noise (more repeats, --runs, narrow the interval).
The margin (default 0.05) keeps a version from winning by a hair."""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959964
DEFAULT_MARGIN = 0.05


@dataclass
class Decision:
    result: str  # won | lost | tie
    delta: float
    low: float
    high: float
    new: tuple[int, int]  # (passed, total)
    best: tuple[int, int]
    margin: float

    @property
    def evidence(self) -> str:
        (kn, nn), (kb, nb) = self.new, self.best
        return (f"{kn}/{nn} ({kn / nn:.0%}) against the best's {kb}/{nb} ({kb / nb:.0%}): delta {self.delta:+.2f}, "
                f"95% interval [{self.low:+.2f}, {self.high:+.2f}], tie margin ±{self.margin:.2f} -> {self.result}")

    def as_json(self) -> dict:
        return {"result": self.result, "delta": round(self.delta, 4), "interval": [round(self.low, 4),
                round(self.high, 4)], "new": list(self.new), "best": list(self.best), "margin": self.margin,
                "evidence": self.evidence}


def wilson(passed: int, total: int, z: float = Z95) -> tuple[float, float]:
    if total == 0:
        return 0.0, 1.0
    p = passed / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return max(0.0, centre - half), min(1.0, centre + half)


def decide(new: tuple[int, int], best: tuple[int, int], margin: float = DEFAULT_MARGIN) -> Decision:
    (k1, n1), (k2, n2) = new, best
    if n1 == 0 or n2 == 0:
        raise ValueError("both versions need graded assertions to be compared")
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1)
    l2, u2 = wilson(k2, n2)
    delta = p1 - p2
    low = delta - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = delta + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    if delta >= margin - 1e-12 and low > 0:
        result = "won"
    elif delta <= -margin + 1e-12 and high < 0:
        result = "lost"
    else:
        result = "tie"
    return Decision(result, delta, low, high, (k1, n1), (k2, n2), margin)
