"""The option groups the commands share, each written once: one decorator registers a group's click
options and hands the command ONE typed value built from them (as inspect_ai's `_cli/common.py` does):
`agent` (workbench.app.choices.Agent), `judge` (Judge), `limits` (Limits), `placement` (Placement),
`proposer` (Proposer). A command's own options can be handed the same way (`bundle`).

Adding a flag to a shared choice: a field on its type in workbench/app/choices.py and an option in its
group below; every command that takes the group (and the request it builds) gets it."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

from workbench.app import offered
from workbench.app.choices import (
    RUN_TIMEOUT,
    TRIGGER_RUNS,
    TRIGGER_TIMEOUT,
    Agent,
    Judge,
    Limits,
    Placement,
    Proposer,
    limit_offered,
)

_Command = TypeVar("_Command", bound=Callable[..., Any])
CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"]}  # every command's, as the group's


class Decorator(Protocol):
    """What click.option returns: it adds to a command and gives the same command back."""

    def __call__(self, command: _Command, /) -> _Command: ...


def options(*decorators: Decorator) -> Decorator:
    """Several click options as one decorator, in the order given (as --help lists them)."""

    def apply(command: _Command) -> _Command:
        for decorator in reversed(decorators):
            command = decorator(command)
        return command

    return apply


def _names(decorators: tuple[Decorator, ...]) -> list[str]:
    """The parameter names the options of `decorators` give the command."""

    def probe() -> None: ...

    made = options(*decorators)(probe)
    return [str(param.name) for param in getattr(made, "__click_params__", [])]


def _handing(name: str, build: Callable[..., object], names: list[str], defaults: bool) -> Decorator:
    def apply(command: _Command) -> _Command:
        @functools.wraps(command)
        def given(*args: Any, **kwargs: Any) -> Any:
            taken = {n: kwargs.pop(n) for n in names if n in kwargs or not defaults}
            kwargs[name] = build(**taken)
            return command(*args, **kwargs)

        return given  # type: ignore[return-value]  # the same command, its options handed as one value

    return apply


def into(name: str, build: Callable[..., object], *decorators: Decorator) -> Decorator:
    """Register `decorators`' options, in that order, and hand the command `name=build(**their values)`."""
    handing = _handing(name, build, _names(decorators), defaults=False)
    together = options(*decorators)

    def apply(command: _Command) -> _Command:
        return together(handing(command))

    return apply


def bundle(name: str, kind: type) -> Decorator:
    """Hand the command `name=kind(...)` from the options, registered anywhere on it, named as kind's
    fields; a field no option of this command gives keeps its default."""
    return _handing(name, kind, [f.name for f in dataclasses.fields(kind)], defaults=True)


JUDGES_OFFERED, JUDGES_HELP = offered.registered("judge")
EXECUTORS_OFFERED, EXECUTORS_HELP = offered.registered("executor")


# ------------------------------------------------------------------ what the person asks of a command


@dataclasses.dataclass(frozen=True)
class Asked:
    """--trust, --yes and --dry-run, where a command takes them."""

    trust: bool = False
    yes: bool = False
    dry_run: bool = False


@dataclasses.dataclass(frozen=True)
class Gates:
    """--fail-under and --eval-fail-under (workbench/report_cli.py registers them)."""

    fail_under: float | None = None
    eval_fail_under: float | None = None


trust_option = click.option(
    "--trust",
    is_flag=True,
    help="Allow commands that do not come from the workbench "
    "itself to run (--agent-command, --judge-command, the evals file's command_check and "
    "chock guard scripts); trust is remembered per content.",
)
dry_run_option = click.option(
    "--dry-run",
    is_flag=True,
    help="Say what would run (the plan, the estimate, the commands it would ask you to trust) and stop: nothing "
    "is run or written.",
)
yes_option = click.option(
    "--yes", is_flag=True, help="Do not ask when the estimate is above the config's confirm_above_usd."
)
wait_option = click.option(
    "--wait",
    is_flag=True,
    help="When another workbench is writing to the workspace, wait for it instead of stopping (exit 2).",
)
WORKSPACE_HELP = "The workspace (default: <skill>-workspace beside the skills folder)."
RUNS_WRITTEN_HELP = "Where runs are written (default: <skill>-workspace beside the skills folder)."


def workspace_option(what: str = WORKSPACE_HELP) -> Decorator:
    return click.option("--workspace", type=click.Path(path_type=Path, file_okay=False), help=what)


margin_option = click.option(
    "--margin",
    type=click.FloatRange(0, 1),
    default=0.05,
    show_default=True,
    help="Tie margin: a pass-rate difference smaller than this is a tie.",
)
check_timeout_option = click.option(
    "--check-timeout",
    type=click.FloatRange(min=0.1),
    default=120.0,
    show_default=True,
    help="Seconds per command_check cell or chock replay before it is killed.",
)
only_option = click.option("--only", help="Only these eval ids, comma-separated.")


# ------------------------------------------------------------------ the agent


def _agent(executor: str | None, agent_command: str | None, model: str | None) -> Agent:
    return Agent(executor, agent_command, model)


def agent_options(what: str) -> Decorator:
    """--executor (`what` it runs), --agent-command, --model: handed as `agent`."""
    return into(
        "agent",
        _agent,
        click.option(
            "--executor",
            type=click.Choice(EXECUTORS_OFFERED),
            help=f"{what} ({EXECUTORS_HELP}). Default: the config's executor, else demo.",
        ),
        click.option("--agent-command", help="With --executor command: the command to run (see docs/executors.md)."),
        click.option("--model", help="The model for the claude and codex executors."),
    )


# ------------------------------------------------------------------ the judge


def _judge(judge: str | None, judge_command: str | None, judge_model: str | None, judge_base_url: str | None) -> Judge:
    return Judge(judge, judge_command, judge_model, judge_base_url)


judge_options = into(
    "judge",
    _judge,
    click.option(
        "--judge",
        type=click.Choice(JUDGES_OFFERED),
        help=f"Who grades rubrics and expectations ({JUDGES_HELP}). Default: demo for the demo agent, else the "
        "config's judge, else claude.",
    ),
    click.option(
        "--judge-command", help='The judge command: the prompt on stdin, {"passed": bool, "evidence": str} on stdout.'
    ),
    click.option("--judge-model", help="The judge's model (claude, anthropic)."),
    click.option(
        "--judge-base-url",
        help="The Messages API base URL for --judge anthropic (default: ANTHROPIC_BASE_URL, else api.anthropic.com).",
    ),
)


# ------------------------------------------------------------------ the limits


class Runs(click.ParamType):
    """--runs N or --runs auto."""

    name = "N|auto"

    def convert(self, value: int | str, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        if isinstance(value, int) or value == "auto":
            return value
        try:
            number = int(value)
        except ValueError:
            self.fail(f"{value!r} is neither a number of runs nor auto", param, ctx)
        if number < 1:
            self.fail(f"{number} is below 1", param, ctx)
        return number


RUNS = Runs()


@dataclasses.dataclass(frozen=True)
class Flow:
    """Where the limits' options differ between run, evaluate and improve (RUN) and trigger and
    optimize-description (TRIGGER): --runs' default and help, --timeout's, --fresh's form; `name` is
    the flow Limits' fields name (choices.limit_offered: --max-dispatches is offered where its field is)."""

    name: str

    runs_default: str | None
    runs_help: str
    timeout: float
    timeout_help: str
    fresh: Decorator


RUN = Flow(
    "run",
    None,
    "Runs per condition, overriding each eval's `runs`; auto: repeat in rounds and stop each eval (and an "
    "evaluation's decision) once settled (docs/improve.md).",
    RUN_TIMEOUT,
    "Seconds per agent turn before it is killed with every process it started.",
    click.option(
        "--fresh/--no-fresh",
        default=None,
        help="Draw new samples instead of reusing cached runs (the default with --failed).",
    ),
)
TRIGGER = Flow(
    "trigger",
    str(TRIGGER_RUNS),
    "Runs of each query; auto: in rounds of 2, each query until settled (docs/triggers.md).",
    TRIGGER_TIMEOUT,
    "Seconds per query's turn before the agent is killed (it is stopped sooner, once triggering is decided).",
    click.option("--fresh", is_flag=True, help="Draw new samples instead of reusing identical earlier runs."),
)


def _limits(
    runs: int | str | None,
    max_runs: int,
    max_cost: float | None,
    fresh: bool | None,
    jobs: int,
    timeout: float,
    max_dispatches: int | None = None,
) -> Limits:
    if max_dispatches == 0:  # it would plan an iteration and start nothing of it: a dry run is what is meant
        raise click.BadParameter(
            "0 starts no dispatch; to see the plan and the estimate without running anything, pass --dry-run",
            param_hint="--max-dispatches",
        )
    return Limits(
        runs=None if runs == "auto" else (None if runs is None else int(runs)),
        adaptive=runs == "auto",
        max_runs=max_runs,
        max_cost=max_cost,
        max_dispatches=max_dispatches,
        jobs=jobs,
        timeout=timeout,
        fresh=fresh,
    )


def limits_options(flow: Flow) -> Decorator:
    """--runs, --max-runs, --max-cost, --max-dispatches, --fresh, -j, --timeout: handed as `limits`."""
    dispatches = click.option(
        "--max-dispatches", type=click.IntRange(min=0), metavar="N", help="Start at most N agent dispatches."
    )
    return into(
        "limits",
        _limits,
        click.option(
            "--runs", type=RUNS, default=flow.runs_default, show_default=bool(flow.runs_default), help=flow.runs_help
        ),
        click.option(
            "--max-runs",
            type=click.IntRange(min=1),
            default=offered.MAX_RUNS,
            show_default=True,
            help="With --runs auto: the most runs per condition (per query for trigger).",
        ),
        click.option(
            "--max-cost",
            type=click.FloatRange(min=0),
            metavar="USD",
            help="Start no dispatch once what was spent plus what is in flight would pass USD dollars (docs/cost.md).",
        ),
        *([dispatches] if limit_offered("max_dispatches", flow.name) else []),
        flow.fresh,
        click.option(
            "-j", "jobs", type=click.IntRange(min=1), default=4, show_default=True, help="Dispatches at once."
        ),
        click.option(
            "--timeout", type=click.FloatRange(min=0.1), default=flow.timeout, show_default=True, help=flow.timeout_help
        ),
    )


# ------------------------------------------------------------------ the placement

SANDBOX_HELP = (
    "Run agents in bubblewrap: read-only system and only the files they need, writable workspace, private "
    "home and /tmp, only their model's network (--network), bounded processes, memory and disk (the config's "
    "sandbox_* keys), nothing survives the run. auto: bwrap when it works here, else none with a warning."
)


def sandbox_option(what: str = SANDBOX_HELP) -> Decorator:
    return click.option(
        "--sandbox", type=click.Choice(offered.SANDBOXES), default=offered.SANDBOX_DEFAULT, show_default=True, help=what
    )


def _placement(sandbox: str, network: str | None, cluster: str | None, workspace: Path | None, wait: bool) -> Placement:
    return Placement(sandbox, network, cluster, workspace, wait)


def placement_options(workspace: str = WORKSPACE_HELP) -> Decorator:
    """--sandbox, --network, --cluster, --workspace (`workspace`: what it holds), --wait: handed as `placement`."""
    return into(
        "placement",
        _placement,
        sandbox_option(),
        click.option(
            "--network",
            type=click.Choice(offered.NETWORKS),
            help="What a sandboxed agent reaches. model: its model API only (its executor's base URL and the config's "
            "network_allow), nothing of this machine; open: any host and every local service, said on the run. "
            "Default: the config's network, else model.",
        ),
        click.option(
            "--cluster",
            metavar="ADDRESS",
            help="Run the dispatches on the Dask scheduler at ADDRESS (tcp://host:8786) instead of here; grading "
            "stays here. `local`: the local pool, whatever the config says. Default: the config's cluster, else the "
            "local pool (docs/cluster.md).",
        ),
        workspace_option(workspace),
        wait_option,
    )


# ------------------------------------------------------------------ the proposer


def _proposer(proposer: str, proposer_command: str | None, proposer_model: str | None) -> Proposer:
    return Proposer(proposer, proposer_command, proposer_model)


def proposer_options(what: str) -> Decorator:
    """--proposer (`what` it does), --proposer-command, --proposer-model: handed as `proposer`."""
    return into(
        "proposer",
        _proposer,
        click.option(
            "--proposer",
            type=click.Choice(offered.PROPOSERS),
            default=offered.PROPOSERS[0],
            show_default=True,
            help=what,
        ),
        click.option("--proposer-command", help="With --proposer command: the command to run (needs trust)."),
        click.option("--proposer-model", help="The model of the claude and codex proposers."),
    )
