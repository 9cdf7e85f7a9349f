"""Did the agent use a skill, and when is that decided? From the event stream
only, never from what the agent says: the Skill tool naming the skill (plugin
skills as `plugin:name`), or a tool reading the staged skill's SKILL.md (an
agent without a Skill tool, Codex, reads it with a shell command).

A trigger evaluation stops the agent as soon as this is decided: the skill's
invocation, or the first action without it; an answer without it ends the turn
anyway. A few bookkeeping tools do not decide: a plan or a tool search may come
before the skill."""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.runs.transcript import TOOL_USE, Event

SKILL_TOOLS = {"Skill"}
UNDECIDING = {"TodoWrite", "ToolSearch"}  # may precede a skill's invocation: not an action on the task


@dataclass(frozen=True)
class Use:
    invoked: bool
    evidence: str


READ_TOOLS = {"Read", "Bash", "exec_command", "shell", "local_shell", "view"}  # tools that can read a file


def _named(value: object) -> list[str]:
    """The skill a Skill call names: its `skill` (or `name`) argument only, never its other arguments."""
    if not isinstance(value, dict):
        return []
    return [v for k in ("skill", "name") if isinstance(v := value.get(k), str)]


def _reads(value: object, skill_name: str) -> bool:
    """A read tool's input names the staged SKILL.md as a whole path (`…skills/<name>/SKILL.md`), not as a
    part of a longer name (SKILL.md.bak, another-skills/...)."""
    if not isinstance(value, dict):
        return False
    staged = re.compile(
        r"(?:^|[\s'\"=/])(?:\.claude|\.agents)/skills/" + re.escape(skill_name) + r"/SKILL\.md(?=$|[\s'\";|&)])"
    )
    return any(isinstance(v, str) and staged.search(v) for v in value.values())


def invokes(event: Event, skill_name: str) -> bool:
    """This event is the agent using the skill: its Skill call naming it, or a read tool reading its staged
    SKILL.md."""
    if event.kind != TOOL_USE:
        return False
    if event.name in SKILL_TOOLS:
        return any(n == skill_name or n.endswith(":" + skill_name) for n in _named(event.input))
    return event.name in READ_TOOLS and _reads(event.input, skill_name)


def decide(events: list[Event], skill_name: str, turn_over: bool = False) -> Use | None:
    """Triggered or not once the stream says so, else None (not yet). turn_over: the agent's turn ended,
    so an answer without the skill decides it too."""
    for index, event in enumerate(events):
        if event.kind != TOOL_USE:
            continue
        if invokes(event, skill_name):
            return Use(True, f"event {index + 1}: {event.rendered[:200]}")
        if event.name in SKILL_TOOLS:
            others = f"another skill first: {event.rendered[:120]}"
            return Use(False, others)
        if event.name not in UNDECIDING:
            return Use(False, f"its first action was without the skill: {event.rendered[:120]}")
    if turn_over:
        return Use(False, f"it answered without the skill (no Skill call named {skill_name!r})")
    return None


def use_in(events: list[Event], skill_name: str) -> Use:
    """Whether a whole run used the skill, at any point (an eval's triggering check)."""
    for index, event in enumerate(events):
        if invokes(event, skill_name):
            return Use(True, f"event {index + 1}: {event.rendered[:200]}")
    others = [e.rendered[:80] for e in events if e.kind == TOOL_USE and e.name in SKILL_TOOLS]
    return Use(
        False, f"no Skill call named {skill_name!r}" + (f" (other skills: {'; '.join(others)})" if others else "")
    )
