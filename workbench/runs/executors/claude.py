"""The Claude Code CLI in print mode, stream-json out, resuming for follow-up turns.

Tools must run unattended: bypassPermissions, which as root also needs
IS_SANDBOX=1. The rest of the environment passes through (ANTHROPIC_BASE_URL,
keys), so a local scripted server can stand in for the API."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.runs import cost
from workbench.runs.executors.base import Executor, TurnCommand, copy_private

DEFAULT_API = "https://api.anthropic.com"


def user_config() -> Path:
    """The user's Claude Code config folder."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


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

    @property
    def priced_model(self) -> str:  # type: ignore[override]  # a property where the base has a plain value
        """The model an estimate prices a dispatch as: the one asked for, else Claude Code's default."""
        return self.model or cost.default_claude_model()

    def private_config(self, home: Path) -> dict[str, str]:
        """CLAUDE_CONFIG_DIR: an empty config with only a login's .credentials.json copied in
        (keys in the environment, ANTHROPIC_API_KEY and the like, pass through anyway)."""
        folder = home / ".claude"
        copy_private([".credentials.json"], user_config(), folder)
        return {"CLAUDE_CONFIG_DIR": str(folder)}

    def user_skill_places(self) -> list[tuple[Path, bool]]:
        places = dict.fromkeys([user_config() / "skills", Path.home() / ".claude" / "skills"])
        return [(place, True) for place in places]

    def identity(self) -> dict:
        return {"executor": self.name, "model": self.model, "base_url": os.environ.get("ANTHROPIC_BASE_URL")}

    def model_endpoints(self) -> list[str]:
        return [os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_API]
