"""The Claude Code CLI in print mode, stream-json out, resuming for follow-up turns.

Tools must run unattended: bypassPermissions, which as root also needs
IS_SANDBOX=1. The rest of the environment passes through (ANTHROPIC_BASE_URL,
keys), so a local scripted server can stand in for the API."""

from __future__ import annotations

import os

from workbench.runs.executors.base import Executor, TurnCommand


class ClaudeExecutor(Executor):
    name = "claude"

    def __init__(self, model: str | None = None, binary: str | None = None) -> None:
        self.model = model
        self.binary = binary or os.environ.get("WORKBENCH_CLAUDE", "claude")
        self.label = "Claude Code" + (f" ({model})" if model else "")

    def turn(self, prompt: str, session_id: str | None) -> TurnCommand:
        argv = [
            self.binary,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
        ]
        if self.model:
            argv += ["--model", self.model]
        if session_id:
            argv += ["--resume", session_id]
        env = {"IS_SANDBOX": "1"} if hasattr(os, "geteuid") and os.geteuid() == 0 else {}
        return TurnCommand(argv=argv, env=env, stdin=prompt)

    def identity(self) -> dict:
        return {"executor": self.name, "model": self.model, "base_url": os.environ.get("ANTHROPIC_BASE_URL")}
