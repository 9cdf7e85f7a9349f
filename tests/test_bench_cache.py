"""The tui, report and cluster benches keep the measured workbench's compiled modules as runs_bench.py does
(issue 26, round 4): by the interpreter's option, so that what the measured process starts does not get it.

bench/installed.py gave the cache as PYTHONPYCACHEPREFIX in os.environ, and every process a measured
workbench started (its agents) inherited it: inside the sandbox that folder is not shown, so a sandboxed
agent's Python compiled every module it imported from source at every turn (tests/test_runs_bench.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import installed  # noqa: E402
import tui_screen  # noqa: E402

# What the measured process imports (from the cache), and what a process it starts sees of the cache.
MEASURED = textwrap.dedent(
    """
    import os, subprocess, sys
    import workbench.cli.run
    print("measured", sys.pycache_prefix)
    child = "import os, sys; print('child', sys.pycache_prefix, os.environ.get('PYTHONPYCACHEPREFIX'))"
    subprocess.run([sys.executable, "-c", child], check=True)
    """
)


@pytest.fixture
def environ(monkeypatch):
    """installed.python() changes os.environ for the bench's whole process: put back after the test."""
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"):
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("started", ["argv", "tmux command line"])
def test_the_measured_process_keeps_its_cache_and_what_it_starts_does_not_get_it(tmp_path, environ, started):
    script = tmp_path / "measured.py"
    script.write_text(MEASURED)
    if started == "argv":  # report_bench and cluster_bench
        python = installed.python(tmp_path)
        argv = [*python, "-v", str(script)]
    else:  # tui_screen: a shell command line, as tmux runs it (the bench's cache, in a temporary folder)
        python = installed.python()
        argv = ["sh", "-c", tui_screen._command(tui_screen._python(f"-v {script}"), str(tmp_path))]
    cache = Path(python[-1].removeprefix("pycache_prefix="))
    assert cache.parent.exists() and cache.name == "bytecode"
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=os.environ, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout.splitlines()
    assert said == [f"measured {cache}", "child None None"]
    # The workbench's modules were read compiled, from the sitting's cache, none compiled from source.
    read = [
        line for line in done.stderr.splitlines() if line.startswith("# code object from ") and "/workbench/" in line
    ]
    assert any(f"{cache}" in line and line.endswith(".pyc'") for line in read), read[:5]
    assert [line for line in read if line.endswith(".py")] == []
