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


def written(text: object) -> str:
    """Text quoted as it is written, for evidence: in single quotes, with its
    backslashes and quotes as they are (repr() doubles the backslashes of every
    regex); only line breaks are shown as ↵, so a quote stays on its line."""
    return "'" + str(text).replace("\r\n", "↵").replace("\n", "↵").replace("\r", "↵") + "'"
