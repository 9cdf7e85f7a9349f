"""eval-magic's `responder`: a simulated user who answers the agent after every
round, instead of scripted turns. The run's judge plays it (a model judge
answers as the person who asked; the demo judge from a scripted list, and says
so). As in eval-magic (docs/guides/conversations.md):
- it is shown only what the agent knows: the opening prompt, its own earlier
  replies and the agent's last message; never expected_output or assertions;
- it answers with a verdict: answer (the next user turn), done (the agent is
  finished) or cannot_answer (it would have to invent something);
- a reply that is blank, longer than 2000 bytes, holds a fenced code block or
  repeats the previous reply is never delivered: the conversation stops;
- max_turns (default 8) bounds the follow-ups; the opening prompt is not one."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from workbench.formats.json_text import TOKEN, answer, new_token

DEFAULT_MAX_TURNS = 8
MAX_REPLY_BYTES = 2000
ANSWER, DONE, CANNOT = "answer", "done", "cannot_answer"
# conversation.json's words (eval-magic schema/conversation.schema.json).
MAX_TURNS_REACHED, CANNOT_ANSWER = "max_turns_reached", "responder_cannot_answer"


@dataclass
class Seen:
    """What the responder may see of a conversation."""

    opening: str
    replies: list[str] = field(default_factory=list)  # its own earlier answers, in order
    last_agent: str = ""


@dataclass
class Consultation:
    verdict: str  # answer | done | cannot_answer
    reply: str = ""
    rationale: str = ""
    cause: str | None = None  # why nothing usable came back (eval-magic's causes)
    prompt: str = ""
    raw: str = ""

    def record(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reply": self.reply,
            "rationale": self.rationale,
            "cause": self.cause,
            "raw": self.raw,
        }


def max_turns(responder: Any) -> int:
    value = responder.get("max_turns") if isinstance(responder, dict) else None
    return value if isinstance(value, int) and value >= 1 else DEFAULT_MAX_TURNS


def prompt_for(seen: Seen, token: str) -> str:
    earlier = "\n".join(f"- {reply}" for reply in seen.replies) or "(none yet)"
    return (
        "You are the person who asked an AI agent for the work below. Answer its last message as "
        "that person would: take what the agent marked as recommended, else the simplest option and "
        "the least work; add no requirements; invent no facts; write no code; keep it short.\n\n"
        f"Your request:\n{seen.opening}\n\nWhat you have already answered:\n{earlier}\n\n"
        f"The agent's last message:\n{seen.last_agent or '(it said nothing)'}\n\n"
        f'Reply with one JSON object: {{"{TOKEN}": "{token}", "verdict": "answer" | "done" | "cannot_answer", '
        '"reply": "what you say next (only with answer)", "rationale": "one line: why"}. '
        "done: the agent reports the task finished and waits on nothing. cannot_answer: you could "
        f'not answer without inventing something. Put "{TOKEN}": "{token}" in that object exactly as written '
        "here: it is this question's own, and an object without it (or with another) is read as a quote, "
        "not as your answer."
    )


class SimulatedUser(Protocol):
    """Who plays the person: the run's judge (grading/judges), seen from here only as this."""

    label: str  # what reports call it

    def simulate_user(self, prompt: str, opening: str, replies: list[str], last_agent: str, token: str) -> str: ...


def consult(judge: SimulatedUser, seen: Seen) -> Consultation:
    # A fresh token for each consultation: the agent's last message is quoted in the prompt, and only the
    # object that carries the token is the simulated user's own answer (formats/json_text.py).
    token = new_token()
    prompt = prompt_for(seen, token)
    try:
        raw = judge.simulate_user(prompt, seen.opening, list(seen.replies), seen.last_agent, token)
    except Exception as exc:  # a judge that fails in any way gave no answer; the run goes on
        return Consultation(CANNOT, cause="dispatch_failed", rationale=str(exc), prompt=prompt)
    value = answer(raw, token, lambda v: "verdict" in v)
    if value is None:
        return Consultation(CANNOT, cause="missing_verdict", prompt=prompt, raw=raw)
    verdict, reply, rationale = value.get("verdict"), value.get("reply", ""), value.get("rationale", "")
    if verdict not in (ANSWER, DONE, CANNOT) or not isinstance(reply, str) or not isinstance(rationale, str):
        return Consultation(CANNOT, cause="malformed_verdict", prompt=prompt, raw=raw)
    found = Consultation(verdict, reply, rationale, prompt=prompt, raw=raw)
    if verdict == CANNOT:
        found.cause = "declined"
    elif verdict == ANSWER:
        found.cause = undeliverable(reply, seen.replies)
        if found.cause:
            found.verdict = CANNOT
    return found


def undeliverable(reply: str, earlier: list[str]) -> str | None:
    """Why a reply is never sent: a simulated user answers in sentences, and a
    repeat means the exchange is circling."""
    if not reply.strip():
        return "empty_reply"
    if len(reply.encode("utf-8")) > MAX_REPLY_BYTES:
        return "reply_too_long"
    if "```" in reply or "~~~" in reply:
        return "reply_contains_code"
    if earlier and reply == earlier[-1]:
        return "reply_repeated"
    return None


def scripted_answer(answers: tuple[str, ...], replies: list[str], last_agent: str, label: str, token: str) -> str:
    """The demo judge's part: the next answer from its list while the agent asks
    (a question mark), done when it does not; every rationale names the demo."""
    if "?" not in last_agent:
        said = {"verdict": DONE, "rationale": f"[{label}] the agent asked nothing: taken as finished"}
    elif len(replies) >= len(answers):
        said = {"verdict": CANNOT, "rationale": f"[{label}] the scripted answers are used up"}
    else:
        said = {
            "verdict": ANSWER,
            "reply": answers[len(replies)],
            "rationale": f"[{label}] scripted answer {len(replies) + 1}",
        }
    return json.dumps({TOKEN: token, **said})
