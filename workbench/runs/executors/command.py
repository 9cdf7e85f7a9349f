"""Any agent wrapper: CMD runs through the shell in the workspace with the prompt
on stdin (and in WORKBENCH_PROMPT) and prints Claude Code stream-json on stdout.
A follow-up turn runs CMD again with WORKBENCH_SESSION set to the session_id of
the previous turn's events. (docs/executors.md has the protocol.)"""

from __future__ import annotations

import os

from workbench.runs.executors.base import Executor, TurnCommand, protocol_env


class CommandExecutor(Executor):
    name = "command"
    trusted_by_default = False

    def __init__(self, command: str) -> None:
        self.command = command
        self.label = f"command: {command}"

    def turn(self, prompt: str, session_id: str | None) -> TurnCommand:
        return TurnCommand(shell=self.command, env=protocol_env(prompt, session_id), stdin=prompt)

    def identity(self) -> dict:
        return {"executor": self.name, "command": self.command}

    def model_endpoints(self) -> list[str]:
        """Any program: the model APIs its environment names, if any (more in the config's network_allow)."""
        return [os.environ[name] for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL") if os.environ.get(name)]
