"""The judge interface, the prompt every model judge gets, and verdict parsing."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from workbench.formats.json_text import last_object
from workbench.grading.verdict import Verdict, tail
from workbench.runs.processes import run_bounded
from workbench.runs.transcript import ASSISTANT, TOOL_RESULT, TOOL_USE, USER, Event

TRANSCRIPT_LIMIT = 40_000
OUTPUT_LIMIT = 20_000


class JudgeFailed(Exception):
    """The judge gave no usable answer (it crashed, timed out, or said something else)."""


@dataclass
class JudgeCase:
    """What the judge may see: one expectation and the run, nothing else."""

    expectation: str
    events: list[Event] = field(default_factory=list)
    diff: str = ""  # the workspace's changes against the baseline commit
    outputs: dict[str, str] = field(default_factory=dict)  # output file -> text
    model: str | None = None  # an llm_judge assertion's own model

    @property
    def final_message(self) -> str:
        texts = [e.text for e in self.events if e.kind == ASSISTANT and e.text]
        return texts[-1] if texts else ""


def describe_run(case: JudgeCase) -> str:
    """A run as a judge reads it: the transcript, the workspace's changes, the output files."""
    lines = []
    for event in case.events:
        if event.kind == USER:
            lines.append(f"[user, turn {event.turn}] {event.text}")
        elif event.kind == ASSISTANT:
            lines.append(f"[assistant] {event.text}")
        elif event.kind == TOOL_USE:
            lines.append(f"[tool call] {event.rendered}")
        elif event.kind == TOOL_RESULT:
            lines.append(f"[tool result{' (error)' if event.is_error else ''}] {event.text[:2000]}")
    transcript = "\n".join(lines)
    if len(transcript) > TRANSCRIPT_LIMIT:
        transcript = transcript[: TRANSCRIPT_LIMIT // 2] + "\n… (cut) …\n" + transcript[-TRANSCRIPT_LIMIT // 2 :]
    outputs = "\n\n".join(f"--- {name} ---\n{text[:OUTPUT_LIMIT]}" for name, text in case.outputs.items()) or "(none)"
    return (
        f"TRANSCRIPT:\n{transcript or '(empty)'}\n\n"
        f"CHANGES TO THE WORKSPACE (git diff against the starting files):\n{case.diff[:OUTPUT_LIMIT] or '(none)'}"
        f"\n\nOUTPUT FILES:\n{outputs}"
    )


def prompt_for(case: JudgeCase) -> str:
    return (
        "You are grading one expectation of an AI agent's run. Decide from the evidence below only.\n\n"
        f"EXPECTATION:\n{case.expectation}\n\n{describe_run(case)}\n\n"
        'Reply with one JSON object and nothing else: {"passed": true or false, "evidence": "<quote or fact '
        'from the run that decides it>"}'
    )


def comparison_prompt(task: str, a: JudgeCase, b: JudgeCase) -> str:
    """Blind: two runs of one task as A and B, nothing about which version made which."""
    return (
        "You are comparing two AI agents' runs of the same task, blind. Say which did the task better.\n\n"
        f"TASK:\n{task}\n\n=== RUN A ===\n{describe_run(a)}\n\n=== RUN B ===\n{describe_run(b)}\n\n"
        'Reply with one JSON object and nothing else: {"winner": "A" or "B" or "TIE", "reasoning": "<why>"}'
    )


def parse_comparison(text: str) -> dict:
    """The last top-level JSON object with a winner of A, B or TIE. Raises JudgeFailed."""
    value = last_object(text, lambda v: v.get("winner") in ("A", "B", "TIE"))
    if value is None:
        raise JudgeFailed(f'no {{"winner": "A"|"B"|"TIE"}} in the comparator\'s answer: {text.strip()[:200]!r}')
    value["reasoning"] = str(value.get("reasoning", ""))
    return value


def parse_verdict(text: str) -> Verdict:
    """The judge's final JSON object with a boolean `passed` (last_object says why the last). Raises JudgeFailed."""
    value = last_object(text, lambda v: isinstance(v.get("passed"), bool))
    if value is None:
        shown = text.strip()[:200] or "(nothing)"
        raise JudgeFailed(f'no {{"passed": bool, "evidence": str}} verdict in the judge\'s answer: {shown!r}')
    evidence = value.get("evidence")
    return Verdict(value["passed"], evidence if isinstance(evidence, str) else json.dumps(evidence))


class Judge:
    name = "judge"
    label = "judge"  # what reports call it
    trusted_by_default = True  # False: a user command that must be trusted first
    timeout = 300.0

    def ask(self, prompt: str, model: str | None) -> str:
        """The judge's raw answer to one prompt. Raises JudgeFailed."""
        raise NotImplementedError

    def simulate_user(self, prompt: str, opening: str, replies: list[str], last_agent: str) -> str:
        """Its raw answer as the simulated user of a `responder` eval (workbench/runs/responder.py
        builds the prompt from the rest, which a scripted judge reads instead). Raises JudgeFailed."""
        return self.ask(prompt, None)

    def run(
        self, argv: list[str], prompt: str, what: str, cwd: str | None = None, env: dict[str, str] | None = None
    ) -> str:
        """stdout of a judge process; its failures (cannot start, timeout, non-zero exit) as JudgeFailed."""
        try:
            finished = run_bounded(argv, prompt, self.timeout, cwd=cwd, env=env)
        except OSError as exc:
            raise JudgeFailed(f"could not start {what}: {exc.strerror or exc}") from None
        if finished.code is None:
            raise JudgeFailed(f"{what} {finished.evidence}")
        if finished.code != 0:
            raise JudgeFailed(
                f"{what} exited with status {finished.code}: {tail(finished.stderr or finished.stdout, 300)!r}"
            )
        return finished.stdout

    def decide(self, case: JudgeCase) -> Verdict:
        prompt = prompt_for(case)
        problems = []
        for _attempt in range(2):  # one retry, then a recorded judge error
            try:
                return parse_verdict(self.ask(prompt, case.model))
            except JudgeFailed as exc:
                problems.append(str(exc))
        return Verdict(False, f"judge error ({self.label}), after one retry: " + " / ".join(problems), error=True)

    def compare(self, task: str, a: JudgeCase, b: JudgeCase) -> dict:
        """A blind comparison of two runs: {"winner": "A"|"B"|"TIE", "reasoning": ...}; a judge
        that answers nothing usable twice gives a TIE that says so."""
        prompt = comparison_prompt(task, a, b)
        problems = []
        for _attempt in range(2):
            try:
                return parse_comparison(self.ask(prompt, None))
            except JudgeFailed as exc:
                problems.append(str(exc))
        return {
            "winner": "TIE",
            "reasoning": f"judge error ({self.label}), after one retry: " + " / ".join(problems),
            "error": True,
        }
