"""A judge command of the user's: the judge prompt on stdin, a JSON verdict
{"passed": bool, "evidence": str} on stdout. Runs only once trusted."""

from __future__ import annotations

from workbench.grading.judges.base import Judge


class CommandJudge(Judge):
    name = "command"
    trusted_by_default = False

    def __init__(self, command: str) -> None:
        self.command = command
        self.label = f"judge command `{command}`"

    def ask(self, prompt: str, model: str | None) -> str:
        env = {"WORKBENCH_JUDGE_MODEL": model} if model else {}
        return self.run(["bash", "-c", self.command], prompt, "the judge command", env=env)
