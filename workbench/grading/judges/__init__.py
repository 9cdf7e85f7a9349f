"""Judges grade what only a reader can: llm_judge rubrics, skill-creator
expectations and chock `expect` texts. One interface, one module each; the
judge sees the one rubric or expectation, the transcript, the changes and the
outputs of the run, never the other assertions. Adding one is a module with a
Judge subclass and one register() line below.

An unparsable or missing verdict is asked again once, then recorded as a judge
error on that expectation: not a pass, and not a crash."""

from __future__ import annotations

from workbench.grading.judges.base import Judge, JudgeCase, JudgeFailed, parse_verdict, prompt_for
from workbench.registry import Registry

JUDGES = Registry("judge")
JUDGES.register(
    "demo", "workbench.grading.judges.demo:DemoJudge", "offline heuristic for the demo's own rubrics, not a model"
)
JUDGES.register(
    "claude", "workbench.grading.judges.claude:ClaudeJudge", "Claude Code in print mode, no tools", takes=("model",)
)
JUDGES.register(
    "anthropic", "workbench.grading.judges.http:AnthropicJudge", "the Messages API", takes=("model", "base_url")
)
JUDGES.register(
    "command",
    "workbench.grading.judges.command:CommandJudge",
    'any program: the prompt on stdin, {"passed", "evidence"} on stdout; needs trust',
    takes=("command",),
    requires="--judge-command CMD",
)
NAMES = JUDGES.names


def make(name: str, command: str | None = None, model: str | None = None, base_url: str | None = None) -> Judge:
    return JUDGES.make(name, command=command, model=model, base_url=base_url)


__all__ = ["JUDGES", "NAMES", "Judge", "JudgeCase", "JudgeFailed", "make", "parse_verdict", "prompt_for"]
