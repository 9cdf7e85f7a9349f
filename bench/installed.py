"""Whole processes measured as an installed workbench runs: with its modules compiled.

pip compiles an installed package's modules; this project's machines set PYTHONDONTWRITEBYTECODE, so
a bench's `workbench` processes would compile the workbench's own modules from source at every start
(~0.8 s of CPU for `run`, most of a cold start's gap to a minimal Textual app), a cost no user meets.
Each bench drops the variable, keeps the compiled modules in a private cache under its sitting's
folder (nothing is written into a checkout) and compiles them once before the first timed process.
"""

from __future__ import annotations

import compileall
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def environment(folder: Path | None = None, *sources: Path) -> dict[str, str]:
    """The environment of a measured process, its bytecode cache filled for `sources` (default: this
    checkout's workbench/). Also set in os.environ, so processes started through tmux inherit it."""
    cache = (folder or Path(tempfile.mkdtemp(prefix="bench-bytecode-"))) / "bytecode"
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(cache)
    sys.pycache_prefix = str(cache)  # compileall below writes where the measured processes will read
    for source in sources or (ROOT / "workbench",):
        compileall.compile_dir(str(source), quiet=1)
    return dict(os.environ)
