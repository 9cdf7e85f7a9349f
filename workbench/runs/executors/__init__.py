"""Executors: how one turn of an agent is started. One module each; all speak
through a subprocess, and all produce the same transcript model. Adding one is
a module with an Executor subclass and one register() line below."""

from __future__ import annotations

from workbench.registry import Registry
from workbench.runs.executors.base import Executor, TurnCommand

EXECUTORS = Registry("executor")
EXECUTORS.register(
    "demo",
    "workbench.runs.executors.demo:DemoExecutor",
    "the offline demo agent: deterministic, not a model, for the demo skill",
)
EXECUTORS.register(
    "command",
    "workbench.runs.executors.command:CommandExecutor",
    "any program speaking the command protocol (docs/executors.md); needs trust",
    takes=("command",),
    requires="--agent-command CMD",
)
EXECUTORS.register(
    "claude",
    "workbench.runs.executors.claude:ClaudeExecutor",
    "Claude Code in print mode, stream-json",
    takes=("model",),
)
EXECUTORS.register(
    "codex", "workbench.runs.executors.codex:CodexExecutor", "Codex CLI, codex exec --json", takes=("model",)
)
NAMES = EXECUTORS.names


def make(name: str, agent_command: str | None = None, model: str | None = None) -> Executor:
    return EXECUTORS.make(name, command=agent_command, model=model)


__all__ = ["EXECUTORS", "NAMES", "Executor", "TurnCommand", "make"]
