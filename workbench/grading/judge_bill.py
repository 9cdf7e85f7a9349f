"""What the judge's calls for one run cost, collected while that run is graded. Apart from
runs/cost.py: a report reads costs and never grades, and starts faster without threading."""

from __future__ import annotations

import threading
from contextlib import contextmanager

from workbench.formats.record import Record

TYPE_CHECKING = False  # not typing's, as in runs/cost.py
if TYPE_CHECKING:
    from collections.abc import Iterator


class Bill(Record):
    """What the judge's calls for one run cost: the known dollars and the calls of unknown cost."""

    def __init__(self, usd: float = 0.0, unknown: int = 0) -> None:
        self.usd = usd
        self.unknown = unknown

    @property
    def cost(self) -> float | None:
        return None if self.unknown else round(self.usd, 6)


_bills = threading.local()  # the judge is shared by the grading threads: each run's bill is its thread's


@contextmanager
def metered() -> Iterator[Bill]:
    """Collect the charges made in this thread (by a judge) while the block runs."""
    bill = Bill()
    outer = getattr(_bills, "current", None)
    _bills.current = bill
    try:
        yield bill
    finally:
        _bills.current = outer


def charge(usd: float | None) -> None:
    """A judge call's cost (None: unknown) onto the bill being collected in this thread, if any."""
    bill = getattr(_bills, "current", None)
    if bill is None:
        return
    if usd is None:
        bill.unknown += 1
    else:
        bill.usd += usd
