"""The layers of docs/architecture.md, enforced: every import under workbench/
counts (module level, inside functions, under TYPE_CHECKING), no import runs
back up a layer, and no two modules import each other, directly or round a
circle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "workbench"

# Lowest first. A module may import its own layer and the layers below it;
# the groups of one layer (session and runs) do not import each other.
LAYERS: list[tuple[str, ...]] = [
    ("workbench", "workbench.errors", "workbench.registry", "workbench.formats", "workbench.config"),
    ("workbench.validate",),
    ("workbench.session",),
    ("workbench.workspace",),
    ("workbench.runs",),
    ("workbench.grading",),
    ("workbench.improve", "workbench.app.rounds", "workbench.app.preflight"),
    ("workbench.app",),
    (
        "workbench.app.pipeline",
        "workbench.app.improve_loop",
        "workbench.app.triggers",
        "workbench.app.optimize_description",
    ),
    ("workbench.app.skills", "workbench.app.new_skill"),
    ("workbench.tui",),
    ("workbench.cli", "workbench.__main__", "workbench.launch", "workbench.report_cli", "workbench.reporting"),
]
SIBLINGS = [{"workbench.session", "workbench.runs"}]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def group_of(module: str) -> str:
    """The longest layer prefix naming this module ('workbench' only for the package itself)."""
    best = ""
    for layer in LAYERS:
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best = prefix
    if best == "workbench" and module != "workbench":
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best


def layer_of(module: str) -> int:
    group = group_of(module)
    return next(i for i, layer in enumerate(LAYERS) if group in layer)


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    return imports_in(path.read_text(), module, path.name == "__init__.py")


def imports_in(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every workbench module this source imports, wherever the import statement is."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # `from a import b` imports the module a.b when there is one, else a.
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name.startswith("workbench") and name != module:
                found.add(name)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_runs_up_a_layer(module):
    mine = layer_of(module)
    for imported in GRAPH[module]:
        if imported == "workbench":
            continue
        theirs = layer_of(imported)
        assert theirs <= mine, f"{module} (layer {group_of(module)}) imports {imported} from above it"
        pair = {group_of(module), group_of(imported)}
        assert not any(pair == s for s in SIBLINGS), f"{module} imports {imported}: sibling layers"


def test_no_import_circle():
    """Tarjan's strongly connected components: a component of two or more is a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in GRAPH[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert not circles, f"modules that import each other: {circles}"


def test_the_checker_sees_imports_inside_functions_and_type_checking():
    """The rules above cannot pass by missing imports: these forms are all found."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from workbench.tui import app\n"
        "def f():\n    import workbench.cli\n    from ..improve import history\n"
        "    from .decide import Decision\n"
    )
    assert imports_in(source, "workbench.improve.evaluate") == {
        "workbench.tui.app",
        "workbench.cli",
        "workbench.improve.history",
        "workbench.improve.decide",
    }


# The edges (tui/ and cli/) ask the application layer (issue 27): below it they import only the session, errors,
# config, registry, the formats and the types that describe files (a diagnostic; the iteration layout,
# skill-creator's format of where runs lie). Every flow and every list they show comes through app/.
EDGES = ("workbench.tui", "workbench.cli")
EDGES_MAY_IMPORT = (
    "workbench.app",
    "workbench.session",
    "workbench.errors",
    "workbench.config",
    "workbench.registry",
    "workbench.formats",
    "workbench.validate.diagnostic",
    "workbench.workspace.layout",
    "workbench.tui",
    "workbench.cli",
    "workbench.launch",
    "workbench.report_cli",
    "workbench.reporting",
)


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def test_the_edges_ask_the_application_layer():
    below = sorted(
        f"{module} imports {imported}"
        for module, imports in GRAPH.items()
        if _under(module, EDGES)
        for imported in imports
        if imported != "workbench" and not _under(imported, EDGES_MAY_IMPORT)
    )
    assert not below, "the edges reach below the application layer (ask app/ instead):\n" + "\n".join(below)


def test_the_edge_rule_sees_a_screen_reaching_into_the_core():
    """The rule above cannot pass by missing what it forbids: a screen importing the runner is caught."""
    found = imports_in("from workbench.runs.runner import Dispatch\n", "workbench.tui.screens.runs")
    assert found == {"workbench.runs.runner"} and not _under("workbench.runs.runner", EDGES_MAY_IMPORT)
