"""An in-process fake agent for the tests of pipeline logic (plans, caching, budgets, rounds, grading,
history), where the agent's process is not what is tested: the demo agent's behaviour, called in the
test's own process (TurnCommand.call) instead of a `python -m workbench.runs.demo_agent` per turn. It is
registered as the executor "fake" only while `registered()` is entered (the fixture `fake_agent` in
conftest), so no other test in the same worker sees a sixth executor; it cannot be sandboxed, so a run with it says
--sandbox none (Placement("none")). Labelled as a fake wherever it shows."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from workbench.runs.demo_agent import Agent
from workbench.runs.executors import EXECUTORS
from workbench.runs.executors.base import TurnCommand
from workbench.runs.executors.demo import DemoExecutor

NAME = "fake"


def _turn(prompt: str, session_id: str | None, cwd: Path) -> str:
    out = io.StringIO()
    Agent(cwd, prompt, session_id, out).run()
    return out.getvalue()


class FakeExecutor(DemoExecutor):
    """The demo agent in this process: the same transcripts and edits, no process started."""

    name = NAME
    label = "fake agent (the demo agent in the test's process; not a model)"

    def turn(self, prompt: str, session_id: str | None) -> TurnCommand:
        return TurnCommand(call=partial(_turn, prompt, session_id))


@contextmanager
def registered() -> Iterator[str]:
    """The fake registered as an executor while entered; its name. Removed on leaving: the registry is
    the source of every list of choices, which other tests compare with the docs."""
    EXECUTORS.register(NAME, f"{__name__}:FakeExecutor", "a fake agent in the test's process (tests only)")
    try:
        yield NAME
    finally:
        del EXECUTORS.entries[NAME]
