"""The one trust rule: a program the person wrote (an agent, judge or proposer command) or a suite's
commands run only once trusted. Every flow lists what it would run here and asks, or trusts, here."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.runs import trust as store

if TYPE_CHECKING:
    from workbench.grading.judges import Judge
    from workbench.grading.suite import GradingSuite
    from workbench.runs.executors.base import Executor

AGENT_WHERE = "in every dispatch's workspace"


@dataclass(frozen=True)
class Program:
    """A command a flow would start: `role` (agent, judge, proposer) and where it runs, as a person reads
    it. A built-in (Claude Code, Codex, the demo) is trusted by default; a command is the person's."""

    role: str
    command: str | None
    where: str
    built_in: bool = False

    def untrusted(self) -> bool:
        return not self.built_in and bool(self.command) and not store.is_trusted(self.command or "")

    def asked(self) -> str:
        return f"{self.command}  (the {self.role}, {self.where})"


def agent(executor: Executor, command: str | None) -> Program:
    return Program("agent", command, AGENT_WHERE, executor.trusted_by_default)


def judge(chosen: Judge, command: str | None) -> Program:
    return Program("judge", command, "for every graded expectation", chosen.trusted_by_default)


def proposer(name: str, command: str | None, where: str) -> Program:
    """A command proposer is the person's program (`where`: the copy it works in); the others are built in."""
    return Program("proposer", command, f"in {where}", name != "command")


def asks(programs: Iterable[Program], suite: GradingSuite | None = None) -> list[str]:
    """Every program and suite command that would run and is not trusted yet, as a person reads it."""
    found = [program.asked() for program in programs if program.untrusted()]
    if suite is not None and not suite.trusted():
        found += suite.commands()
    return found


def trust(programs: Iterable[Program], suite: GradingSuite | None = None) -> None:
    """The person said yes: each program, and the suite's commands, trusted from now on."""
    for program in programs:
        if not program.built_in and program.command:
            store.trust(program.command, f"{program.role} command")
    if suite is not None and not suite.trusted():
        suite.trust()
