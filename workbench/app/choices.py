"""The choices every flow shares, typed once and composed by every request (RunRequest, TriggerRequest,
and through them ImproveRequest and OptimizeRequest): the agent, the judge, the limits and the
placement; improve, optimize-description and draft-cases also take a Proposer. The command line builds
each from one option group (workbench/cli/options.py) and the screens from their forms; a field added
here reaches every flow that takes the type.

None means "not said": pipeline.defaults() and the flows decide (the flag, then the config, then ours)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.improve.adaptive import MAX_RUNS
from workbench.runs import sandbox

if TYPE_CHECKING:
    from workbench.app.trust import Program
    from workbench.runs.executors import Executor

RUN_TIMEOUT = 600.0  # seconds per agent turn of run and evaluate
TRIGGER_RUNS = 3  # run_eval.py's --runs-per-query default
TRIGGER_TIMEOUT = 120.0  # seconds: one short turn, stopped once decided


@dataclass(frozen=True)
class Agent:
    """Who runs each eval or query: the executor (None: the config's, else demo), the command of the
    command executor, the model of claude and codex."""

    executor: str | None = None
    command: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class Judge:
    """Who grades rubrics and expectations (None: the default, see pipeline.defaults())."""

    name: str | None = None
    command: str | None = None
    model: str | None = None
    base_url: str | None = None


@dataclass(frozen=True)
class Limits:
    """How much a flow repeats and spends, and how fast: repeats per condition (None: each eval's own;
    adaptive: rounds until settled, at most max_runs), the most dollars and dispatches, dispatches at
    once, seconds per agent turn, and whether to draw new samples instead of cached runs (None: only
    for --failed's reruns). The defaults are run's and evaluate's; for_triggers() gives trigger's."""

    runs: int | None = None
    adaptive: bool = False
    max_runs: int = MAX_RUNS
    max_cost: float | None = None  # dollars (workbench/runs/budget.py)
    max_dispatches: int | None = None
    jobs: int = 4
    timeout: float = RUN_TIMEOUT
    fresh: bool | None = None

    @classmethod
    def for_triggers(cls) -> Limits:
        """Trigger's and optimize-description's defaults: 3 runs of each query, short turns, cached runs."""
        return cls(runs=TRIGGER_RUNS, timeout=TRIGGER_TIMEOUT, fresh=False)

    def repeats(self, default: int) -> int:
        """The runs planned per condition: up to max_runs when adaptive, else runs (or `default`)."""
        if self.adaptive:
            return self.max_runs
        return default if self.runs is None else self.runs


@dataclass(frozen=True)
class Placement:
    """Where and how the agents are held: the sandbox (auto | bwrap | none) and its network (None: the
    config's, else model), a Dask scheduler (None: the config's, else the local pool), the workspace
    (None: <skill>-workspace beside the skills folder), and whether to wait for another writer."""

    sandbox: str = sandbox.AUTO
    network: str | None = None
    cluster: str | None = None
    workspace: Path | None = None
    wait: bool = False


@dataclass(frozen=True)
class Proposer:
    """The agent that proposes (improve's versions, optimize-description's descriptions, draft-cases'
    cases): claude, codex or a command (the person's, needing trust), and the model of the first two."""

    name: str = "claude"
    command: str | None = None
    model: str | None = None
    timeout: float = 900.0  # seconds one proposal may take

    def absolute(self) -> Proposer:
        """The command with its program's relative path made the user's current folder's: a proposer
        runs in a private copy of the skill, where a relative path means nothing."""
        from workbench.app.preflight import absolute_command

        return replace(self, command=absolute_command(self.command))

    def executor(self) -> Executor:
        """The proposer made, its command absolute. Raises Refused (an unknown name, a command proposer
        with no command)."""
        from workbench.errors import Refused
        from workbench.improve.proposal import make_proposer

        placed = self.absolute()
        try:
            return make_proposer(placed.name, placed.command, placed.model)
        except ValueError as exc:
            raise Refused(str(exc)) from None

    def program(self, works_on: str) -> Program:
        """What trust asks about it (app/trust.py), its command absolute."""
        from workbench.app import trust

        return trust.proposer(self.name, self.absolute().command, works_on)
