"""A cost as the person reads it, wherever it is shown (the command line, the screens, the reports)."""

from __future__ import annotations


def money(usd: float | None) -> str:
    """$1.23, or $0.0042 below a cent; 'unknown' when no cost is known."""
    if usd is None:
        return "unknown"
    if abs(usd) >= 0.01 or usd == 0:
        return f"${usd:,.2f}"
    return f"${usd:.4f}"
