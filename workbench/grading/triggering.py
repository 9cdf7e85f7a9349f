"""Skill triggering in an eval's run: did the agent invoke the staged skill
(workbench/runs/skill_use.py says how that is seen)?"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.runs import skill_use
from workbench.runs.transcript import Event


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


def check(events: list[Event], skill_name: str, should_trigger: bool | None) -> Triggering:
    used = skill_use.use_in(events, skill_name)
    return Triggering(used.invoked, should_trigger, used.evidence)
