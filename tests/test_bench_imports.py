"""Every name a bench imports from the workbench exists: a bench is run by hand and by bench/run_all.py, not by
the suite, and an import inside one of its functions (tui_bench's, of a function moved into Format.case_of)
broke the editor's figures without a test noticing."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _imports(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) of every `from workbench... import name` in a file, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "workbench":
            found += [(node.module, alias.name, node.lineno) for alias in node.names]
    return found


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_a_bench_imports_only_names_the_workbench_has(path):
    missing = []
    for module, name, line in _imports(path):
        imported = importlib.import_module(module)
        if not hasattr(imported, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"{path.name}:{line}: {module} has no {name}")
    assert not missing, "\n".join(missing)
