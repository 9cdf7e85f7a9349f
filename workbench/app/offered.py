"""What the command line and the screens offer for each shared choice, named once: the executors and
judges from their registries (with what each is), the proposers, the sandbox and network modes and their
defaults, the most runs an adaptive design takes. The edges (cli/, tui/) take their lists from here, never
from the layers below the application."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.improve.adaptive import MAX_RUNS
from workbench.runs import modes

SANDBOXES, SANDBOX_DEFAULT = modes.SANDBOXES, modes.AUTO
NETWORKS, NETWORK_DEFAULT = modes.NETWORKS, modes.MODEL

if TYPE_CHECKING:  # for the type checker; at run time __getattr__ below
    from workbench.improve.proposal import PROPOSERS


def __getattr__(name: str) -> Any:
    """PROPOSERS, looked up in the proposal's module when first asked for: the commands that offer no
    proposer (validate, version, history, promote, init) start without it and the runner it brings."""
    if name != "PROPOSERS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from workbench.improve.proposal import PROPOSERS as proposers

    globals()[name] = proposers  # once
    return proposers


__all__ = [
    "MAX_RUNS",
    "NETWORKS",
    "NETWORK_DEFAULT",
    "PROPOSERS",
    "SANDBOXES",
    "SANDBOX_DEFAULT",
    "executor_names",
    "judge_names",
    "registered",
]


def registered(kind: str) -> tuple[tuple[str, ...], str]:
    """The names offered for "executor" or "judge", and what each is ("name: help; ..."), from its registry."""
    from workbench.grading.judges import JUDGES
    from workbench.runs.executors import EXECUTORS

    registry = EXECUTORS if kind == "executor" else JUDGES
    return registry.names, "; ".join(f"{e.name}: {e.help}" for e in registry.entries.values())


def executor_names() -> tuple[str, ...]:
    from workbench.runs.executors import EXECUTORS

    return EXECUTORS.names


def judge_names() -> tuple[str, ...]:
    from workbench.grading.judges import JUDGES

    return JUDGES.names
