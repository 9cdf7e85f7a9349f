"""Skill triggering: did the agent invoke the staged skill? Claude Code does so
through its Skill tool, naming the skill (plugin skills as `plugin:name`)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.runs.transcript import TOOL_USE, Event

SKILL_TOOLS = {"Skill"}


@dataclass
class Triggering:
    invoked: bool
    should_trigger: bool | None  # None: the suite does not say (skill-creator's has no such field)
    evidence: str

    @property
    def as_expected(self) -> bool | None:
        return None if self.should_trigger is None else self.invoked == self.should_trigger

    def as_json(self) -> dict:
        out: dict = {"invoked": self.invoked}
        if self.should_trigger is not None:  # no expectation is claimed where the suite states none
            out.update(should_trigger=self.should_trigger, as_expected=self.as_expected)
        out["evidence"] = self.evidence
        return out


def _names(value) -> list[str]:
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, str)]
    return [value] if isinstance(value, str) else []


def check(events: list[Event], skill_name: str, should_trigger: bool | None) -> Triggering:
    for index, event in enumerate(events):
        if event.kind == TOOL_USE and event.name in SKILL_TOOLS:
            named = _names(event.input)
            if any(n == skill_name or n.endswith(":" + skill_name) for n in named):
                return Triggering(True, should_trigger, f"event {index + 1}: {event.rendered[:200]}")
    others = [e.rendered[:80] for e in events if e.kind == TOOL_USE and e.name in SKILL_TOOLS]
    why = f"no Skill call named {skill_name!r}" + (f" (other skills: {'; '.join(others)})" if others else "")
    return Triggering(False, should_trigger, why)
