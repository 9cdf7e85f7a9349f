"""A judge command of the user's: the judge prompt on stdin, a JSON verdict
{"token": ..., "passed": bool, "evidence": str} on stdout. Runs only once trusted.
The question's token is also in WORKBENCH_JUDGE_TOKEN, so a script need not
read it out of the prompt."""

from __future__ import annotations

from workbench.formats.json_text import answer
from workbench.grading.judges.base import Judge
from workbench.runs import cost

TOKEN_VARIABLE = "WORKBENCH_JUDGE_TOKEN"


class CommandJudge(Judge):
    name = "command"
    trusted_by_default = False

    def __init__(self, command: str) -> None:
        self.command = command
        self.label = f"judge command `{command}`"

    def ask(self, prompt: str, model: str | None, token: str) -> str:
        env = {TOKEN_VARIABLE: token, **({"WORKBENCH_JUDGE_MODEL": model} if model else {})}
        out = self.run(["bash", "-c", self.command], prompt, "the judge command", env=env)
        # A judge command may say what the call cost, as "cost_usd" in its answer (docs/cost.md); else unknown.
        # In its answer only: a cost it quotes from the run is the agent's word, not the judge's.
        said = answer(out, token, lambda v: cost.dollars(v.get("cost_usd")) is not None)
        cost.charge(cost.dollars(said["cost_usd"]) if said is not None else None)
        return out
