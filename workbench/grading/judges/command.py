"""A judge command of the user's: the judge prompt on stdin, a JSON verdict
{"passed": bool, "evidence": str} on stdout. Runs only once trusted."""

from __future__ import annotations

import subprocess

from workbench.grading.judges.base import Judge, JudgeFailed
from workbench.grading.verdict import tail
from workbench.runs.processes import run_bounded


class CommandJudge(Judge):
    name = "command"
    trusted_by_default = False

    def __init__(self, command: str) -> None:
        self.command = command
        self.label = f"judge command `{command}`"

    def ask(self, prompt: str, model: str | None) -> str:
        env = {"WORKBENCH_JUDGE_MODEL": model} if model else {}
        try:
            code, out, err = run_bounded(["bash", "-c", self.command], prompt, self.timeout, env=env)
        except subprocess.TimeoutExpired:
            raise JudgeFailed(f"the judge command timed out after {self.timeout:g} s") from None
        except OSError as exc:
            raise JudgeFailed(f"could not start the judge command: {exc}") from None
        if code != 0:
            raise JudgeFailed(f"the judge command exited with status {code}: {tail(err, 300)!r}")
        return out
