"""The choices every flow shares, typed once and composed by every request (RunRequest, TriggerRequest,
and through them ImproveRequest and OptimizeRequest): the agent, the judge, the limits and the
placement; improve, optimize-description and draft-cases also take a Proposer. The command line builds
each from one option group (workbench/cli/options.py) and the screens from their forms; a field added
here reaches every flow that takes the type.

None means "not said": pipeline.defaults() and the flows decide (the flag, then the config, then ours)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.improve.adaptive import MAX_RUNS
from workbench.runs import modes

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
class Shown:
    """How a screen's form shows a field of Limits (workbench/tui/widgets/limits_form.py builds the Runs
    and Triggers screens' limit fields from these): its name, its tooltip, what a blank field means, and
    the flows whose screens show it ("run": the Runs screen; "trigger": the Triggers screen), the least
    value a person may type. The field's type says the widget: a number, a whole number, a check box (its
    label: `blank`); `auto`: the name of the bool field that "auto" in this one sets instead (runs: adaptive)."""

    label: str
    tooltip: str
    blank: str = ""
    flows: tuple[str, ...] = ("run", "trigger")
    auto: str | None = None
    least: float = 0


def shown(label: str, tooltip: str, **more: Any) -> Any:
    """A field of Limits shown on the screens' forms, with its default (`default=`)."""
    default = more.pop("default", None)
    return field(default=default, metadata={"shown": Shown(label, tooltip, **more)})


def limit_offered(name: str, flow: str) -> bool:
    """Whether `flow` ("run": run, evaluate, improve; "trigger": trigger, optimize-description) offers the
    Limits field `name`, on its screen and its command line alike (Shown.flows; a field not shown: all)."""
    found = next(f for f in fields(Limits) if f.name == name)
    return "shown" not in found.metadata or flow in found.metadata["shown"].flows


@dataclass(frozen=True)
class Limits:
    """How much a flow repeats and spends, and how fast: repeats per condition (None: each eval's own;
    adaptive: rounds until settled, at most max_runs), the most dollars and dispatches, whether to draw
    new samples instead of cached runs (None: only for --failed's reruns), dispatches at once and
    seconds per agent turn. The defaults are run's and evaluate's; for_triggers() gives trigger's.

    A field here reaches every flow (each request composes Limits), the command line's limits group
    (workbench/cli/options.py) and, with shown(), the Runs and Triggers screens' forms."""

    runs: int | None = shown(
        "Runs each",
        "Runs per condition, overriding each eval's `runs`; auto: repeat in rounds until each is settled, at "
        "most Max runs",
        blank="each eval's own",
        auto="adaptive",
        least=1,
    )
    adaptive: bool = False
    max_runs: int = shown("Max runs (auto)", "With auto: the most runs per condition", default=MAX_RUNS, least=1)
    max_cost: float | None = shown(  # dollars (workbench/runs/budget.py)
        "Max cost ($)", "Start no dispatch once what was spent plus what is in flight would pass this", blank="no limit"
    )
    max_dispatches: int | None = shown(
        "Max dispatches", "Start at most this many", blank="no limit", flows=("run",), least=1
    )
    fresh: bool | None = shown(
        "Fresh samples",
        "Draw new samples instead of reusing cached runs (always for the failed evals' reruns)",
        blank="no cache",
    )
    jobs: int = shown("At once", "Dispatches running at once", default=4, least=1)
    timeout: float = shown("Turn timeout (s)", "Seconds per agent turn", default=RUN_TIMEOUT, least=0.1)

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

    sandbox: str = modes.AUTO
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
