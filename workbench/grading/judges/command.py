"""A judge command of the user's: the judge prompt on stdin, a JSON verdict
{"passed": bool, "evidence": str} on stdout. Runs only once trusted."""

from __future__ import annotations

from workbench.formats.json_text import last_object
from workbench.grading.judges.base import Judge
from workbench.runs import cost


class CommandJudge(Judge):
    name = "command"
    trusted_by_default = False

    def __init__(self, command: str) -> None:
        self.command = command
        self.label = f"judge command `{command}`"

    def ask(self, prompt: str, model: str | None) -> str:
        env = {"WORKBENCH_JUDGE_MODEL": model} if model else {}
        out = self.run(["bash", "-c", self.command], prompt, "the judge command", env=env)
        # A judge command may say what the call cost, as "cost_usd" in its JSON (docs/cost.md); else unknown.
        said = last_object(out, lambda v: cost.dollars(v.get("cost_usd")) is not None)
        cost.charge(cost.dollars(said["cost_usd"]) if said is not None else None)
        return out
