"""Hard limits on a run: --max-cost USD and --max-dispatches N.

A dispatch starts only if what this command has spent, plus what the
dispatches in flight are expected to cost, plus its own expected cost, stays
within --max-cost. When only the in-flight ones stand in the way, it waits for
them to finish (they may cost less than expected) and looks again. Once a
dispatch is refused, no other starts: the run stops, says why, and the same
command with a higher limit resumes it. A dispatch that reports no cost counts
as expected. Without an estimate, a dispatch is expected to cost the mean of
what those that finished reported (nothing before the first reports). So the
limit is passed only by what the in-flight dispatches cost beyond their
expectation: at most -j dispatches' excess (docs/cost.md)."""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field

from workbench.runs import stopped as stop_words


@dataclass(frozen=True)
class Stop:
    """Why no more dispatches start, as plan.json records it (as_json); in words (runs/stopped.py) where it
    is said: the command line with its flag names, the screens and the report without."""

    by: str  # budget
    limit: str  # max_cost | max_dispatches
    spent_usd: float | None = None
    limit_usd: float | None = None
    next_usd: float | None = None  # what the next dispatch was expected to cost
    limit_dispatches: int | None = None

    def as_json(self) -> dict:
        """Dollars to the micro-dollar: a sum of costs is kept as the person would add it ($0.30, not
        0.30000000000000004)."""
        return {
            key: round(value, 6) if isinstance(value, float) else value
            for key, value in asdict(self).items()
            if value is not None
        }

    def said(self, flags: bool = False) -> str:
        return stop_words.said(self.as_json(), flags)


@dataclass
class Budget:
    max_cost: float | None = None
    max_dispatches: int | None = None
    expected: float = 0.0  # what one dispatch is expected to cost (the estimate's mean; 0 when unknown)
    learn: bool = False  # no estimate: expect what the dispatches that finished reported, on average
    spent: float = 0.0
    started: int = 0
    in_flight: int = 0
    stopped: Stop | None = None  # why no more dispatches start
    _turns: asyncio.Condition | None = field(default=None, repr=False)
    _reported: list[float] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, max_cost: float | None, max_dispatches: int | None, expected_usd: float | None) -> Budget:
        """A flow's hard limits (run, evaluate, trigger alike); a dispatch in flight is expected to cost the
        estimate's mean, or, with no estimate, what those that finished reported."""
        return cls(max_cost, max_dispatches, expected_usd or 0.0, learn=expected_usd is None)

    def _condition(self) -> asyncio.Condition:
        if self._turns is None:  # made in the event loop that uses it
            self._turns = asyncio.Condition()
        return self._turns

    async def admit(self) -> bool:
        """True when one more dispatch may start (it is then counted in flight); False once the budget stops."""
        turns = self._condition()
        async with turns:
            while True:
                if self.stopped:
                    return False
                if self.max_dispatches is not None and self.started >= self.max_dispatches:
                    self.stopped = Stop(
                        stop_words.BY_BUDGET, stop_words.MAX_DISPATCHES, limit_dispatches=self.max_dispatches
                    )
                    turns.notify_all()
                    return False
                if self.max_cost is not None and self._would_pass():
                    if self.in_flight:
                        await turns.wait()  # those running may cost less than expected: look again after
                        continue
                    self.stopped = Stop(
                        stop_words.BY_BUDGET, stop_words.MAX_COST, self.spent, self.max_cost, self.expected
                    )
                    turns.notify_all()
                    return False
                self.started += 1
                self.in_flight += 1
                return True

    def _would_pass(self) -> bool:
        assert self.max_cost is not None
        return self.spent + (self.in_flight + 1) * self.expected > self.max_cost + 1e-9

    async def finished(self, spent: float | None) -> None:
        """A dispatch admitted earlier is over: what it cost (None: it did not say, so as expected)."""
        turns = self._condition()
        async with turns:
            self.in_flight -= 1
            self.spent += self.expected if spent is None else spent
            if self.learn and spent is not None and spent >= 0:
                self._reported.append(spent)
                self.expected = sum(self._reported) / len(self._reported)
            turns.notify_all()
