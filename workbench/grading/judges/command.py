"""A judge command of the user's: the judge prompt on stdin, a JSON verdict
{"token": ..., "passed": bool, "evidence": str} on stdout. Runs only once trusted.
The question's token is also in WORKBENCH_JUDGE_TOKEN, so a script need not
read it out of the prompt."""

from __future__ import annotations

import itertools
import re
import shlex

from workbench.formats.json_text import answer
from workbench.grading import judge_bill
from workbench.grading.judges.base import Judge
from workbench.grading.verdict import tail
from workbench.runs import cost
from workbench.runs.processes import run_bounded

TOKEN_VARIABLE = "WORKBENCH_JUDGE_TOKEN"
CHECK_WITHIN = 10.0  # seconds for bash to check the command's syntax and find its program
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
UNKNOWABLE = set("$`*?[]{}()<>|;&~\\")  # a first word bash would expand: which program it is shows only when run


def _first_program(command: str) -> str | None:
    """The program the command starts with, past any VAR=value; None when only running it would tell."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    words = list(itertools.dropwhile(ASSIGNMENT.match, words))
    if not words or UNKNOWABLE & set(words[0]):
        return None
    return words[0]


class CommandJudge(Judge):
    name = "command"
    trusted_by_default = False

    def __init__(self, command: str) -> None:
        self.command = command
        self.label = f"judge command `{command}`"

    def unready(self) -> str | None:
        """The command parses as bash, and its first program is a bash builtin or a program bash finds.
        What it starts after that (a script it names, a later command) is known only by running it."""
        try:
            checked = run_bounded(["bash", "-n", "-c", self.command], "", CHECK_WITHIN)
        except OSError as exc:
            return f"bash, which runs the judge command, cannot start: {exc.strerror or exc}"
        if checked.code != 0:
            return f"the judge command is not valid bash: {tail(checked.stderr, 300)!r}"
        program = _first_program(self.command)
        if program is None:
            return None
        found = run_bounded(["bash", "-c", 'type -t -- "$1"', "bash", program], "", CHECK_WITHIN)
        if found.code != 0:
            return f"the judge command's program {program!r} is not found (no such file, builtin or program on PATH)"
        return None

    def ask(self, prompt: str, model: str | None, token: str) -> str:
        env = {TOKEN_VARIABLE: token, **({"WORKBENCH_JUDGE_MODEL": model} if model else {})}
        out = self.run(["bash", "-c", self.command], prompt, "the judge command", env=env)
        # A judge command may say what the call cost, as "cost_usd" in its answer (docs/cost.md); else unknown.
        # In its answer only: a cost it quotes from the run is the agent's word, not the judge's.
        said = answer(out, token, lambda v: cost.dollars(v.get("cost_usd")) is not None)
        judge_bill.charge(cost.dollars(said["cost_usd"]) if said is not None else None)
        return out
