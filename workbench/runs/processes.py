"""A bounded subprocess for graders and judges: its own process group, killed
whole on timeout, so nothing it started outlives it."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def run_bounded(
    argv: list[str],
    stdin: str = "",
    timeout: float = 120.0,
    cwd: str | Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    """(exit code, stdout, stderr). Raises subprocess.TimeoutExpired (after killing
    the group) or OSError (could not start)."""
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(stdin.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.communicate()
        raise
    return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
