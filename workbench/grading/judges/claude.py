"""Claude Code as the judge: print mode, no tools, one JSON result. The
environment passes through (ANTHROPIC_BASE_URL, keys)."""

from __future__ import annotations

import json
import os
import tempfile

from workbench.grading import judge_bill
from workbench.grading.judges.base import Judge, JudgeFailed
from workbench.grading.verdict import tail
from workbench.runs import cost
from workbench.runs.processes import run_bounded

STARTS_WITHIN = 60.0  # seconds for `claude --version`: a start, not a question


class ClaudeJudge(Judge):
    name = "claude"

    def __init__(self, model: str | None = None, binary: str | None = None) -> None:
        self.model = model
        self.binary = binary or os.environ.get("WORKBENCH_CLAUDE", "claude")
        self.label = "Claude Code judge" + (f" ({model})" if model else "")

    def unready(self) -> str | None:
        """Claude Code is there and starts: `claude --version` answers (no model is asked)."""
        try:
            finished = run_bounded([self.binary, "--version"], "", STARTS_WITHIN)
        except OSError as exc:
            return f"Claude Code ({self.binary}) cannot start: {exc.strerror or exc}"
        if finished.code is None:
            return f"Claude Code ({self.binary}) did not answer `--version` within {STARTS_WITHIN:g} s"
        if finished.code != 0:
            said = tail(finished.stderr or finished.stdout, 300)
            return (
                f"Claude Code ({self.binary}) did not start: `--version` exited with status {finished.code}: {said!r}"
            )
        return None

    def ask(self, prompt: str, model: str | None, token: str) -> str:
        argv = [self.binary, "-p", "--output-format", "json", "--tools", "", "--no-session-persistence"]
        model = model or self.model
        if model:
            argv += ["--model", model]
        with tempfile.TemporaryDirectory(prefix="workbench-judge-") as cwd:
            out = self.run(argv, prompt, f"Claude Code ({self.binary})", cwd=cwd)
        try:
            result = json.loads(out)
        except ValueError:
            raise JudgeFailed(f"Claude Code printed no JSON result: {tail(out, 200)!r}") from None
        judge_bill.charge(cost.dollars(result.get("total_cost_usd")) if isinstance(result, dict) else None)
        if not isinstance(result, dict) or result.get("is_error") or not isinstance(result.get("result"), str):
            raise JudgeFailed(f"Claude Code reported an error: {tail(out, 300)!r}")
        return result["result"]
