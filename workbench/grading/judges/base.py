"""The judge interface, the prompt every model judge gets, and verdict parsing.

Every question to a judge carries a fresh token (formats/json_text.py), made
when it is asked, after the run: its answer counts only in an object that
repeats it, so nothing the agent printed, quoted by the judge before or after
its own answer, is ever read as the verdict."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from workbench.formats.json_text import TOKEN, answer, new_token, untokened
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


def token_rule(token: str) -> str:
    """The sentence every prompt ends with: where the token goes, and why."""
    return (
        f'Put "{TOKEN}": "{token}" in that object, exactly as written here: it is this question\'s own, and an '
        "object without it (or with another) is read as a quote, not as your answer."
    )


def prompt_for(case: JudgeCase, token: str) -> str:
    return (
        "You are grading one expectation of an AI agent's run. Decide from the evidence below only.\n\n"
        f"EXPECTATION:\n{case.expectation}\n\n{describe_run(case)}\n\n"
        f'Reply with one JSON object and nothing else: {{"{TOKEN}": "{token}", "passed": true or false, '
        '"evidence": "<quote or fact from the run that decides it>"}. ' + token_rule(token)
    )


def comparison_prompt(task: str, a: JudgeCase, b: JudgeCase, token: str) -> str:
    """Blind: two runs of one task as A and B, nothing about which version made which."""
    return (
        "You are comparing two AI agents' runs of the same task, blind. Say which did the task better.\n\n"
        f"TASK:\n{task}\n\n=== RUN A ===\n{describe_run(a)}\n\n=== RUN B ===\n{describe_run(b)}\n\n"
        f'Reply with one JSON object and nothing else: {{"{TOKEN}": "{token}", "winner": "A" or "B" or "TIE", '
        '"reasoning": "<why>"}. ' + token_rule(token)
    )


def _winner(value: dict) -> bool:
    return value.get("winner") in ("A", "B", "TIE")


def _passed(value: dict) -> bool:
    return isinstance(value.get("passed"), bool)


def parse_comparison(text: str, token: str) -> dict:
    """The comparator's answer: the last top-level object with this question's token and a winner of
    A, B or TIE, without its token. Raises JudgeFailed."""
    value = answer(text, token, _winner)
    if value is None:
        raise JudgeFailed(
            f'no {{"{TOKEN}": <this question\'s>, "winner": "A"|"B"|"TIE"}} in the comparator\'s answer'
            f"{untokened(text, token, _winner)}: {text.strip()[:200]!r}"
        )
    value["reasoning"] = str(value.get("reasoning", ""))
    return value


def parse_verdict(text: str, token: str) -> Verdict:
    """The judge's verdict: the last top-level object with this question's token and a boolean `passed`.
    Raises JudgeFailed."""
    value = answer(text, token, _passed)
    if value is None:
        shown = text.strip()[:200] or "(nothing)"
        raise JudgeFailed(
            f'no {{"{TOKEN}": <this question\'s>, "passed": bool, "evidence": str}} verdict in the judge\'s '
            f"answer{untokened(text, token, _passed)}: {shown!r}"
        )
    evidence = value.get("evidence")
    return Verdict(value["passed"], evidence if isinstance(evidence, str) else json.dumps(evidence))


class Judge:
    name = "judge"
    label = "judge"  # what reports call it
    trusted_by_default = True  # False: a user command that must be trusted first
    timeout = 300.0

    def unready(self) -> str | None:
        """Why this judge cannot run at all (its program missing or not starting, its key unset), found
        without asking it anything; None when it can. `grade` checks it before it touches any grading."""
        return None

    def ask(self, prompt: str, model: str | None, token: str) -> str:
        """The judge's raw answer to one prompt, which asks for token in the answer (a backend that
        can pass it otherwise, as the command judge does, may). Raises JudgeFailed."""
        raise NotImplementedError

    def simulate_user(self, prompt: str, opening: str, replies: list[str], last_agent: str, token: str) -> str:
        """Its raw answer as the simulated user of a `responder` eval (workbench/runs/responder.py
        builds the prompt from the rest, which a scripted judge reads instead). Raises JudgeFailed."""
        return self.ask(prompt, None, token)

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
        problems = []
        for _attempt in range(2):  # one retry, then a recorded judge error
            token = new_token()  # a fresh one for each question
            try:
                return parse_verdict(self.ask(prompt_for(case, token), case.model, token), token)
            except JudgeFailed as exc:
                problems.append(str(exc))
        return Verdict(False, f"judge error ({self.label}), after one retry: " + " / ".join(problems), error=True)

    def compare(self, task: str, a: JudgeCase, b: JudgeCase) -> dict:
        """A blind comparison of two runs: {"winner": "A"|"B"|"TIE", "reasoning": ...}; a judge
        that answers nothing usable twice gives a TIE that says so."""
        problems = []
        for _attempt in range(2):
            token = new_token()
            try:
                return parse_comparison(self.ask(comparison_prompt(task, a, b, token), None, token), token)
            except JudgeFailed as exc:
                problems.append(str(exc))
        return {
            "winner": "TIE",
            "reasoning": f"judge error ({self.label}), after one retry: " + " / ".join(problems),
            "error": True,
        }
