"""Judges grade what only a reader can: llm_judge rubrics, skill-creator
expectations and chock `expect` texts. One interface, one module each; the
judge sees the one rubric or expectation, the transcript, the changes and the
outputs of the run, never the other assertions.

An unparsable or missing verdict is asked again once, then recorded as a judge
error on that expectation: not a pass, and not a crash."""

from __future__ import annotations

from workbench.grading.judges.base import Judge, JudgeCase, JudgeFailed, parse_verdict, prompt_for
from workbench.grading.judges.claude import ClaudeJudge
from workbench.grading.judges.command import CommandJudge
from workbench.grading.judges.demo import DemoJudge
from workbench.grading.judges.http import AnthropicJudge

NAMES = ("demo", "claude", "anthropic", "command")


def make(name: str, command: str | None = None, model: str | None = None, base_url: str | None = None) -> Judge:
    if name == "demo":
        return DemoJudge()
    if name == "claude":
        return ClaudeJudge(model)
    if name == "anthropic":
        return AnthropicJudge(model, base_url)
    if name == "command":
        if not command:
            raise ValueError("the command judge needs --judge-command CMD")
        return CommandJudge(command)
    raise ValueError(f"unknown judge {name!r}; expected one of {', '.join(NAMES)}")


__all__ = ["NAMES", "Judge", "JudgeCase", "JudgeFailed", "make", "parse_verdict", "prompt_for"]
