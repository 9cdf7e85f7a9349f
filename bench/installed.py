"""Whole processes measured as an installed workbench runs: with its modules compiled.

pip compiles an installed package's modules; this project's machines set PYTHONDONTWRITEBYTECODE, so
a bench's `workbench` processes would compile the workbench's own modules from source at every start
(~0.8 s of CPU for `run`, most of a cold start's gap to a minimal Textual app), a cost no user meets.
Each bench drops the variable, starts its measured processes (and their anchors, alike) with a private
cache under its sitting's folder (nothing is written into a checkout) and compiles the workbench into
it once before the first timed process.

The cache is given as an interpreter option (-X pycache_prefix), not as PYTHONPYCACHEPREFIX: the
variable reaches every process the measured one starts (a workbench passes its environment to its
agents), and inside the sandbox it names a folder the agents cannot see, so their Python compiled every
module it imported from source at every turn (bench/runs_bench.py's docstring: ~75 ms of CPU a dispatch).
"""

from __future__ import annotations

import compileall
import functools
import os
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def python(folder: Path | None = None, *sources: Path) -> tuple[str, ...]:
    """The interpreter of a measured process, keeping its compiled modules in `folder`/bytecode (default:
    a new temporary folder), filled for `sources` (default: this checkout's workbench/). Drops
    PYTHONDONTWRITEBYTECODE (and any PYTHONPYCACHEPREFIX) from os.environ, so that the measured processes,
    and processes started through tmux, inherit the change, and the cache fills with what they import."""
    cache = (folder or Path(tempfile.mkdtemp(prefix="bench-bytecode-"))) / "bytecode"
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.pop("PYTHONPYCACHEPREFIX", None)
    kept = sys.pycache_prefix
    sys.pycache_prefix = str(cache)  # compileall writes where the measured processes will read
    try:
        for source in sources or (ROOT / "workbench",):
            compileall.compile_dir(str(source), quiet=1)
    finally:
        sys.pycache_prefix = kept
    return (sys.executable, "-X", f"pycache_prefix={cache}")


def command() -> str:
    """python() as the start of a shell command line (tmux's)."""
    return shlex.join(python())
