"""What every grader returns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Verdict:
    passed: bool
    evidence: str  # what a person can check: the matching event, the counts, the output
    error: bool = False  # the grader could not decide (a judge error): recorded as not passed


def tail(text: str, limit: int = 600) -> str:
    """The end of a long output, marked as cut when it was."""
    text = text.rstrip()
    return text if len(text) <= limit else "…" + text[-limit:]
