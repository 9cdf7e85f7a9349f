"""How the test suite runs: what its workbench processes pay at start, and how its tests are spread
over the workers (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys

# Counts the workbench modules a process compiles from source as it imports them.
COMPILED_FROM_SOURCE = """
import importlib.machinery, sys
compiled = []
original = importlib.machinery.SourceFileLoader.source_to_code
def counted(self, data, path, *args, **kwargs):
    compiled.append(str(path))
    return original(self, data, path, *args, **kwargs)
importlib.machinery.SourceFileLoader.source_to_code = counted
import workbench.cli, workbench.launch, workbench.runs.demo_agent, workbench.tui.app
print("\\n".join(path for path in compiled if "/workbench/" in path))
"""


def test_a_workbench_process_started_by_a_test_loads_its_modules_compiled():
    """As an installed workbench does (pip compiles it): with PYTHONDONTWRITEBYTECODE set, as on these
    machines and CI, every process the tests start would otherwise compile them from source again."""
    done = subprocess.run(
        [sys.executable, "-c", COMPILED_FROM_SOURCE],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [], f"compiled from source at start:\n{done.stdout}"
