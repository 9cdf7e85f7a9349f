"""A real `python -m workbench` process: for what only a process shows (a kill, a signal, a lock held by
another pid, the terminal, its children among the machine's processes, its exit status to a shell)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENTRY = ("-m", "workbench")  # the interpreter's arguments that start the workbench
WORKBENCH = (sys.executable, *ENTRY)


def command(*args: str | Path) -> list[str]:
    """The command line that starts `workbench args` (for Popen, tmux and the like)."""
    return [*WORKBENCH, *map(str, args)]


def run(
    *args: str | Path,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = 300,
    **popen: Any,
) -> subprocess.CompletedProcess[str]:
    """`workbench args` to its end, its output captured as text (subprocess.run's arguments)."""
    return subprocess.run(command(*args), cwd=cwd, env=env, timeout=timeout, capture_output=True, text=True, **popen)


def start(*args: str | Path, **popen: Any) -> subprocess.Popen[str]:
    """`workbench args` started (subprocess.Popen's arguments), its streams as text."""
    return subprocess.Popen(command(*args), text=True, **popen)
