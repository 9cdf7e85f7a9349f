"""Executors: how one turn of an agent is started. One module each; all speak
through a subprocess, and all produce the same transcript model."""

from __future__ import annotations

from workbench.runs.executors.base import Executor, TurnCommand
from workbench.runs.executors.claude import ClaudeExecutor
from workbench.runs.executors.codex import CodexExecutor
from workbench.runs.executors.command import CommandExecutor
from workbench.runs.executors.demo import DemoExecutor

NAMES = ("demo", "command", "claude", "codex")


def make(name: str, agent_command: str | None = None, model: str | None = None) -> Executor:
    if name == "demo":
        return DemoExecutor()
    if name == "command":
        if not agent_command:
            raise ValueError("the command executor needs --agent-command CMD")
        return CommandExecutor(agent_command)
    if name == "claude":
        return ClaudeExecutor(model)
    if name == "codex":
        return CodexExecutor(model)
    raise ValueError(f"unknown executor {name!r}; expected one of {', '.join(NAMES)}")


__all__ = ["NAMES", "Executor", "TurnCommand", "make"]
