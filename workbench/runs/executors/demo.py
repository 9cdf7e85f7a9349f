"""The offline demo agent (workbench.runs.demo_agent) through the command protocol."""

from __future__ import annotations

import sys

from workbench.runs.executors.base import Executor, TurnCommand


class DemoExecutor(Executor):
    name = "demo"
    label = "demo agent (offline, deterministic; not a model)"

    def turn(self, prompt: str, session_id: str | None) -> TurnCommand:
        env = {"WORKBENCH_PROMPT": prompt}
        if session_id:
            env["WORKBENCH_SESSION"] = session_id
        return TurnCommand(argv=[sys.executable, "-m", "workbench.runs.demo_agent"], env=env, stdin=prompt)

    def identity(self) -> dict:
        from workbench import __version__

        return {"executor": self.name, "version": __version__}
