"""The offline demo agent (workbench.runs.demo_agent) through the command protocol."""

from __future__ import annotations

import sys

from workbench.runs.executors.base import Executor, TurnCommand, protocol_env
from workbench.runs.transcript import TurnOutcome


class DemoExecutor(Executor):
    name = "demo"
    label = "demo agent (offline, deterministic; not a model)"

    def turn(self, prompt: str, session_id: str | None) -> TurnCommand:
        return TurnCommand(
            argv=[sys.executable, "-m", "workbench.runs.demo_agent"], env=protocol_env(prompt, session_id), stdin=prompt
        )

    def parse(self, stdout: str, turn: int) -> TurnOutcome:
        outcome = super().parse(stdout, turn)
        if outcome.cost_usd is None and not outcome.garbage:
            outcome.cost_usd = 0.0  # not a model: free, even when stopped before its result event
        return outcome

    def identity(self) -> dict:
        from workbench import __version__

        return {"executor": self.name, "version": __version__}
