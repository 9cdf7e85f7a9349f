"""Packaging: every third-party module the package imports is a declared
dependency."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from conftest import REPO

PACKAGE = REPO / "workbench"


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    names = set()
    for requirement in project.get("dependencies", []):
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        assert match, f"pyproject.toml: cannot read the dependency {requirement!r}"
        names.add(_normal(match.group(1)))
    return names


def _imported() -> dict[str, set[str]]:
    """Top-level module -> the files importing it: every import statement (inside
    functions too) and every importlib.import_module("literal") under workbench/."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(REPO))
        for node in ast.walk(ast.parse(path.read_text("utf-8"), where)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
                  in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str) and not node.args[0].value.startswith(".")):
                names = [node.args[0].value]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(where)
    return found


def test_the_import_scan_sees_imports_inside_functions():
    imported = _imported()
    assert "workbench/config.py" in imported["platformdirs"]  # imported inside config_dir()
    assert "textual" in imported and "json" in imported


def test_every_third_party_import_is_a_declared_dependency():
    declared, providers = _declared(), packages_distributions()
    problems = []
    for module, files in sorted(_imported().items()):
        if module in sys.stdlib_module_names or module == "workbench":
            continue
        shown = ", ".join(sorted(files))
        dists = {_normal(d) for d in providers.get(module, [])}
        if not dists:
            problems.append(f"{module} (imported in {shown}): no installed distribution provides it")
        elif not dists & declared:
            problems.append(f"{module} (imported in {shown}) comes from {' or '.join(sorted(dists))}, "
                            "which pyproject.toml's [project] dependencies do not declare")
    assert not problems, "\n".join(problems)
