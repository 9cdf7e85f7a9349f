"""What every grader returns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Verdict:
    passed: bool
    evidence: str  # what a person can check: the matching event, the counts, the output
