"""Whole `workbench` processes for the attack tests: a command agent on the demo skill's export-json-flag
eval, and the records its run left (shared by test_sandbox_attacks.py and test_verdict_attacks.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from conftest import DEMO
from support.process import command as workbench_command

ROOT = Path(__file__).resolve().parent.parent


def workbench(
    cwd: Path, *args: str, env: dict | None = None, timeout: float = 300, preexec=None
) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        workbench_command(*args),
        capture_output=True, text=True, timeout=timeout, env=full, cwd=cwd, preexec_fn=preexec,
    )  # fmt: skip


def run_agent(tmp_path: Path, body: str, mode: str, *extra: str, env: dict | None = None, preexec=None):
    """`workbench run` of the demo skill's export-json-flag eval with a command agent whose script is body."""
    skill = tmp_path / "skills" / "changelog-entry"
    if not skill.exists():
        shutil.copytree(DEMO, skill)
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/bash\ncat > /dev/null\n{body}\n")
    args = ["run", str(skill), "--executor", "command", "--agent-command", f"bash {agent}", "--only"]
    args += ["export-json-flag", "--judge", "demo", "--sandbox", mode, "--trust", "--timeout", "120", *extra]
    if "--baseline" not in extra:
        args += ["--baseline", "none"]
    return workbench(tmp_path, *args, env=env, preexec=preexec)


def records(tmp_path: Path, name: str) -> dict[str, dict]:
    """condition -> the run's `name` file (run.json, grading.json)."""
    found = (tmp_path / "changelog-entry-workspace").glob(f"iteration-1/*/*/run-1/{name}")
    return {path.parent.parent.name: json.loads(path.read_text()) for path in found}
