"""Claude Code as the judge: print mode, no tools, one JSON result. The
environment passes through (ANTHROPIC_BASE_URL, keys)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

from workbench.grading.judges.base import Judge, JudgeFailed
from workbench.grading.verdict import tail
from workbench.runs.processes import run_bounded


class ClaudeJudge(Judge):
    name = "claude"

    def __init__(self, model: str | None = None, binary: str | None = None) -> None:
        self.model = model
        self.binary = binary or os.environ.get("WORKBENCH_CLAUDE", "claude")
        self.label = "Claude Code judge" + (f" ({model})" if model else "")

    def ask(self, prompt: str, model: str | None) -> str:
        argv = [self.binary, "-p", "--output-format", "json", "--tools", "", "--no-session-persistence"]
        if model or self.model:
            argv += ["--model", model or self.model]
        with tempfile.TemporaryDirectory(prefix="workbench-judge-") as cwd:
            try:
                code, out, err = run_bounded(argv, prompt, self.timeout, cwd=cwd)
            except subprocess.TimeoutExpired:
                raise JudgeFailed(f"Claude Code timed out after {self.timeout:g} s") from None
            except OSError as exc:
                raise JudgeFailed(f"could not start Claude Code ({self.binary}): {exc.strerror or exc}") from None
        if code != 0:
            raise JudgeFailed(f"Claude Code exited with status {code}: {tail(err or out, 300)!r}")
        try:
            result = json.loads(out)
        except ValueError:
            raise JudgeFailed(f"Claude Code printed no JSON result: {tail(out, 200)!r}") from None
        if not isinstance(result, dict) or result.get("is_error") or not isinstance(result.get("result"), str):
            raise JudgeFailed(f"Claude Code reported an error: {tail(out, 300)!r}")
        return result["result"]
