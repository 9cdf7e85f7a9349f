"""How the test suite runs: what its workbench processes pay at start, how its tests are spread over
the workers (tests/conftest.py), and how they start the workbench (tests/support)."""

from __future__ import annotations

import ast
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.process import ENTRY

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


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
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


def _starts_the_workbench(source: str) -> list[int]:
    """The lines where code (not a docstring) names `python -m workbench`: the arguments "-m", "workbench"
    side by side in a list, tuple or call, or "-m workbench" in a string."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if re.search(re.escape(" ".join(ENTRY)) + r"\b", node.value):
                found.append(node.lineno)
        items = node.elts if isinstance(node, ast.List | ast.Tuple) else node.args if isinstance(node, ast.Call) else []
        words = [item.value if isinstance(item, ast.Constant) else None for item in items]
        found += [node.lineno for first, second in itertools.pairwise(words) if (first, second) == ENTRY]
    return found


def test_every_workbench_process_a_test_starts_goes_through_tests_support():
    """One way to start the command line in this process (support.cli) and one to start a real process
    (support.process): a helper of a test file's own would start processes where none is needed."""
    tests = Path(__file__).resolve().parent
    support = tests / "support"
    assert _starts_the_workbench('run([sys.executable, "-m", "workbench", "run"])') == [1]  # the check sees one
    elsewhere = {
        str(path.relative_to(tests)): lines
        for path in sorted(tests.rglob("*.py"))
        if support not in path.parents and (lines := _starts_the_workbench(path.read_text()))
    }
    assert elsewhere == {}, f"start the workbench through tests/support: {elsewhere}"
    assert _starts_the_workbench((support / "process.py").read_text())  # and there it is
