"""The `workbench` command. Thin: parse arguments, build a request, call the
core, print. Exit codes are a contract for scripts (workbench/errors.py)."""

from __future__ import annotations

import difflib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

from workbench import __version__
from workbench.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from workbench.report_cli import gate_options
from workbench.report_cli import report as report_command

if TYPE_CHECKING:
    from workbench.app.choices import Judge, Limits, Placement
    from workbench.triggers import TriggerRequest
    from workbench.validate.tree import FileReport

DIALECTS = ("skill-creator", "slow-powers", "chock")

_Command = TypeVar("_Command", bound=Callable[..., Any])


class Decorator(Protocol):
    """What click.option returns: it adds to a command and gives the same command back."""

    def __call__(self, command: _Command, /) -> _Command: ...


class _OpenByDefault(click.Group):
    """`workbench [SKILL_DIR]` opens the app: anything that is not a command is a path."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help", "--version")):
            _mistyped(args[0] if args else "", list(self.commands))
            args = ["open", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        # The files a command reads and writes can be anything (a folder where a file was,
        # a full disk, no permission): that is a message and exit 2, never a traceback.
        try:
            return super().invoke(ctx)
        except OSError as exc:
            from workbench.cli.output import print_os_error

            sys.exit(print_os_error(exc, ctx.invoked_subcommand or "open"))


def _mistyped(word: str, commands: list[str]) -> None:
    """A word that names no folder here and resembles a command is a mistyped command: said, exit 2. A
    folder that exists is always the skill to open, whatever it is called."""
    if not word or word.startswith("-") or Path(word).exists() or os.sep in word:
        return
    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.6)
    if close:
        click.echo(f'workbench: "{word}" is neither a command nor a folder here; did you mean "{close[0]}"?', err=True)
        sys.exit(EXIT_USAGE)


def _registered(kind: str) -> tuple[tuple[str, ...], str]:
    """The names a flag offers, and what each is, from the executor or judge registry."""
    from workbench.grading.judges import JUDGES
    from workbench.runs.executors import EXECUTORS

    registry = EXECUTORS if kind == "executor" else JUDGES
    return registry.names, "; ".join(f"{e.name}: {e.help}" for e in registry.entries.values())


def options(*decorators: Decorator) -> Decorator:
    """Several click options as one decorator, in the order given (as --help lists them)."""

    def apply(command: _Command) -> _Command:
        for decorator in reversed(decorators):
            command = decorator(command)
        return command

    return apply


JUDGES_OFFERED, JUDGES_HELP = _registered("judge")
EXECUTORS_OFFERED, EXECUTORS_HELP = _registered("executor")

judge_options = options(
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
    click.option(
        "--check-timeout",
        type=click.FloatRange(min=0.1),
        default=120.0,
        show_default=True,
        help="Seconds per command_check cell or chock replay before it is killed.",
    ),
)


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


def spending(
    runs: int | str | None, max_runs: int, max_cost: float | None, max_dispatches: int | None, fresh: bool | None
) -> dict:
    """The Limits fields of the repeat and spending options."""
    if max_dispatches == 0:  # it would plan an iteration and start nothing of it: a dry run is what is meant
        raise click.BadParameter(
            "0 starts no dispatch; to see the plan and the estimate without running anything, pass --dry-run",
            param_hint="--max-dispatches",
        )
    return {
        "runs": None if runs == "auto" else runs,
        "adaptive": runs == "auto",
        "max_runs": max_runs,
        "max_cost": max_cost,
        "max_dispatches": max_dispatches,
        "fresh": fresh,
    }


# Options `run`, `evaluate`, `improve`, `trigger` and `optimize-description` all take, written once.
agent_command_option = click.option(
    "--agent-command", help="With --executor command: the command to run (see docs/executors.md)."
)
model_option = click.option("--model", help="The model for the claude and codex executors.")
max_runs_option = click.option(
    "--max-runs",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="With --runs auto: the most runs per condition (per query for trigger).",
)
max_cost_option = click.option(
    "--max-cost",
    type=click.FloatRange(min=0),
    metavar="USD",
    help="Start no dispatch once what was spent plus what is in flight would pass USD dollars (docs/cost.md).",
)
yes_option = click.option(
    "--yes", is_flag=True, help="Do not ask when the estimate is above the config's confirm_above_usd."
)
jobs_option = click.option(
    "-j", "jobs", type=click.IntRange(min=1), default=4, show_default=True, help="Dispatches at once."
)
sandbox_option = click.option(
    "--sandbox",
    type=click.Choice(("auto", "bwrap", "none")),
    default="auto",
    show_default=True,
    help="Run agents in bubblewrap: read-only system and only the files they need, writable workspace, private "
    "home and /tmp, only their model's network (--network), bounded processes, memory and disk (the config's "
    "sandbox_* keys), nothing survives the run. auto: bwrap when it works here, else none with a warning.",
)
network_option = click.option(
    "--network",
    type=click.Choice(("model", "open")),
    help="What a sandboxed agent reaches. model: its model API only (its executor's base URL and the config's "
    "network_allow), nothing of this machine; open: any host and every local service, said on the run. Default: "
    "the config's network, else model.",
)
cluster_option = click.option(
    "--cluster",
    metavar="ADDRESS",
    help="Run the dispatches on the Dask scheduler at ADDRESS (tcp://host:8786) instead of here; grading "
    "stays here. `local`: the local pool, whatever the config says. Default: the config's cluster, else the "
    "local pool (docs/cluster.md).",
)


def proposer_options(what: str) -> Decorator:
    return options(
        click.option(
            "--proposer",
            type=click.Choice(("claude", "codex", "command")),
            default="claude",
            show_default=True,
            help=f"The agent that rewrites {what} (docs/improve.md, the proposer protocol).",
        ),
        click.option("--proposer-command", help="With --proposer command: the command to run (needs trust)."),
        click.option("--proposer-model", help="The model of the claude and codex proposers."),
    )


def executor_option(agent: str) -> Decorator:
    return click.option(
        "--executor",
        type=click.Choice(EXECUTORS_OFFERED),
        help=f"{agent} ({EXECUTORS_HELP}). Default: the config's executor, else demo.",
    )


def timeout_option(default: float, what: str) -> Decorator:
    return click.option("--timeout", type=click.FloatRange(min=0.1), default=default, show_default=True, help=what)


# The options of `run` that `evaluate` shares: the agent, the judge, repeats, concurrency, timeout.
agent_options = options(
    executor_option("The agent that runs each eval"),
    agent_command_option,
    model_option,
    judge_options,
    click.option(
        "--runs",
        type=RUNS,
        help="Runs per condition, overriding each eval's `runs`; auto: repeat in rounds and stop each eval (and an "
        "evaluation's decision) once settled (docs/improve.md).",
    ),
    max_runs_option,
    max_cost_option,
    click.option("--max-dispatches", type=click.IntRange(min=0), metavar="N", help="Start at most N agent dispatches."),
    click.option(
        "--fresh/--no-fresh",
        default=None,
        help="Draw new samples instead of reusing cached runs (the default with --failed).",
    ),
    yes_option,
    jobs_option,
    timeout_option(600.0, "Seconds per agent turn before it is killed with every process it started."),
    sandbox_option,
    network_option,
    cluster_option,
)

margin_option = click.option(
    "--margin",
    type=click.FloatRange(0, 1),
    default=0.05,
    show_default=True,
    help="Tie margin: a pass-rate difference smaller than this is a tie.",
)
workspace_option = click.option(
    "--workspace",
    type=click.Path(path_type=Path, file_okay=False),
    help="The workspace (default: <skill>-workspace beside the skills folder).",
)

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


wait_option = click.option(
    "--wait",
    is_flag=True,
    help="When another workbench is writing to the workspace, wait for it instead of stopping (exit 2).",
)


def _judge(judge: str | None, judge_command: str | None, judge_model: str | None, judge_base_url: str | None) -> Judge:
    from workbench.app.choices import Judge

    return Judge(judge, judge_command, judge_model, judge_base_url)


def _limits(jobs: int, timeout: float, spent: dict) -> Limits:
    from workbench.app.choices import Limits

    return Limits(jobs=jobs, timeout=timeout, **spent)


def _placement(sandbox: str, network: str | None, cluster: str | None, workspace: Path | None, wait: bool) -> Placement:
    from workbench.app.choices import Placement

    return Placement(sandbox, network, cluster, workspace, wait)


@click.group(cls=_OpenByDefault, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="workbench")
def cli() -> None:
    """Skill Workbench: author, validate, run and iterate agent skills.

    `workbench [SKILL_DIR]` opens the workbench on a skill (default: the current
    folder; a folder holding several skills lists them)."""


@cli.command("open")
@click.argument("skill_dir", required=False, type=click.Path(path_type=Path))
@click.option("--no-watch", is_flag=True, help="Do not watch the skill folder for changes on disk.")
def open_command(skill_dir: Path | None, no_watch: bool) -> None:
    """Open the workbench on a skill folder."""
    from workbench.skills import SkillsNotFound, find_skills

    try:
        skills = find_skills(skill_dir or Path("."))
    except SkillsNotFound as exc:
        click.echo(f"workbench: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    _run_app(skills, watch=not no_watch)


@cli.command()
@click.option("--no-watch", is_flag=True, help="Do not watch the skill folder for changes on disk.")
@click.option(
    "--draft",
    is_flag=True,
    help="With a first-draft SKILL.md that Improve mode can improve (demo/draft/README.md walks through it).",
)
def demo(no_watch: bool, draft: bool) -> None:
    """Open a fresh copy of the bundled demo skill (the shipped files stay as they are)."""
    from workbench.skills import copy_demo

    try:
        skill = copy_demo(draft)
    except FileNotFoundError as exc:
        click.echo(f"workbench demo: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(f"Demo copied to {skill}", err=True)
    _run_app([skill], watch=not no_watch)


@cli.command()
@click.argument("folder", required=False, type=click.Path(path_type=Path, file_okay=False))
@click.option("--name", help="The skill's name (default: the folder's name, as the spec wants it).")
@click.option(
    "--dialect",
    type=click.Choice(("slow-powers", "skill-creator", "chock")),
    default="slow-powers",
    show_default=True,
    help="The first suite's format.",
)
def init(folder: Path | None, name: str | None, dialect: str) -> None:
    """Start a skill from nothing: SKILL.md and a first valid suite in FOLDER
    (default: the current folder), one example of each assertion kind. Never
    overwrites a file that is there."""
    from workbench.cli.output import print_error
    from workbench.errors import WorkbenchError
    from workbench.new_skill import init as write_new_skill

    target = folder or Path(".")
    try:
        written = write_new_skill(target, name, dialect)
    except WorkbenchError as exc:
        sys.exit(print_error(exc, "init"))
    for path in written:
        click.echo(f"wrote {path}")
    skill = written[0].parent
    click.echo(f"Next: workbench validate {skill}, then workbench {skill} to write your cases.")


@cli.command()
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option(
    "--evals",
    "suite",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The eval suite to run (default: evals/evals.json, else evals/suite.yaml).",
)
@agent_options
@click.option(
    "--baseline",
    type=click.Choice(("without_skill", "old_skill", "none")),
    default="without_skill",
    show_default=True,
    help="What the skill is compared with.",
)
@click.option("--only", help="Only these eval ids, comma-separated.")
@click.option("--failed", is_flag=True, help="Only the evals that failed in the latest iteration.")
@click.option(
    "--workspace",
    type=click.Path(path_type=Path, file_okay=False),
    help="Where runs are written (default: <skill>-workspace beside the skills folder).",
)
@click.option(
    "--iteration",
    type=click.IntRange(min=1),
    help="The iteration to write (default: resume the latest if its plan is the same, else the next).",
)
@trust_option
@dry_run_option
@wait_option
@gate_options
def run(
    skill_dir: Path,
    suite: Path | None,
    executor: str | None,
    agent_command: str | None,
    model: str | None,
    judge: str | None,
    judge_command: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    check_timeout: float,
    runs: int | str | None,
    max_runs: int,
    max_cost: float | None,
    max_dispatches: int | None,
    fresh: bool | None,
    yes: bool,
    jobs: int,
    timeout: float,
    sandbox: str,
    network: str | None,
    cluster: str | None,
    baseline: str,
    only: str | None,
    failed: bool,
    workspace: Path | None,
    iteration: int | None,
    trust: bool,
    dry_run: bool,
    wait: bool,
    fail_under: float | None,
    eval_fail_under: float | None,
) -> None:
    """Run the skill's evals with and without the skill through an agent, and grade them.

    Exits 0 when the gates pass (with none given: every with-skill assertion
    passed), 1 when they do not, 2 on errors."""
    from workbench.app.choices import Agent
    from workbench.cli.run import run_command
    from workbench.pipeline import RunRequest, id_set

    request = RunRequest(
        skill_dir,
        suite,
        Agent(executor, agent_command, model),
        _judge(judge, judge_command, judge_model, judge_base_url),
        check_timeout,
        _limits(jobs, timeout, spending(runs, max_runs, max_cost, max_dispatches, fresh)),
        _placement(sandbox, network, cluster, workspace, wait),
        baseline=baseline,
        only=id_set(only),
        failed=failed,
        iteration=iteration,
    )
    sys.exit(run_command(request, trust, fail_under, eval_fail_under, yes, dry_run))


@cli.command()
@click.argument("iteration", type=click.Path(path_type=Path, exists=True, file_okay=False))
@judge_options
@click.option("-j", "jobs", type=click.IntRange(min=1), default=4, show_default=True, help="Runs graded at once.")
@trust_option
@dry_run_option
@wait_option
@gate_options
def grade(
    iteration: Path,
    judge: str | None,
    judge_command: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    check_timeout: float,
    jobs: int,
    trust: bool,
    dry_run: bool,
    wait: bool,
    fail_under: float | None,
    eval_fail_under: float | None,
) -> None:
    """Grade (again) the runs of ITERATION (<workspace>/iteration-N) without re-running agents.

    Reads the suite the iteration was run from as it is now, so a corrected
    assertion can be re-graded. Writes grading.json per run, benchmark.json and
    benchmark.md. Exit codes as for run."""
    from workbench.cli.grade import grade_command

    sys.exit(
        grade_command(
            iteration,
            _judge(judge, judge_command, judge_model, judge_base_url),
            check_timeout,
            jobs,
            trust,
            fail_under,
            eval_fail_under,
            wait,
            dry_run,
        )
    )


cli.add_command(report_command)  # defined apart, so `workbench report` starts without the other commands


@cli.group()
def version() -> None:
    """Versions of a skill (Improve mode): immutable snapshots in the workspace."""


@version.command("new")
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--from", "parent", help="The parent version (default: the current best).")
@workspace_option
@wait_option
def version_new(skill_dir: Path, parent: str | None, workspace: Path | None, wait: bool) -> None:
    """Snapshot SKILL_DIR's current files (all but evals/) as the next version.

    The first snapshot is v0, the baseline; later ones record their parent. A
    snapshot identical to its parent is refused."""
    from workbench.cli.improve import version_new_command

    sys.exit(version_new_command(skill_dir, parent, workspace, wait))


@cli.command()
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.argument("version_name", metavar="VERSION")
@workspace_option
@agent_options
@click.option("--only", help="Only these eval ids, comma-separated.")
@trust_option
@margin_option
@click.option("--auto-promote", is_flag=True, help="Make VERSION the current best when it wins.")
@click.option(
    "--decide",
    "decide_by",
    type=click.Choice(("rule", "comparator")),
    default="rule",
    show_default=True,
    help="rule: pass-rate delta, margin and interval; comparator: the judge compares the two versions' "
    "runs blind, majority of three per eval (comparison-N.json).",
)
@click.option("--require-win", is_flag=True, help="Exit 1 on a tie too: only a win passes.")
@dry_run_option
@wait_option
def evaluate(
    skill_dir: Path,
    version_name: str,
    workspace: Path | None,
    executor: str | None,
    agent_command: str | None,
    model: str | None,
    judge: str | None,
    judge_command: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    check_timeout: float,
    runs: int | str | None,
    max_runs: int,
    max_cost: float | None,
    max_dispatches: int | None,
    fresh: bool | None,
    yes: bool,
    jobs: int,
    timeout: float,
    sandbox: str,
    network: str | None,
    cluster: str | None,
    only: str | None,
    trust: bool,
    margin: float,
    auto_promote: bool,
    decide_by: str,
    require_win: bool,
    dry_run: bool,
    wait: bool,
) -> None:
    """Run VERSION's snapshot through the evals, grade it, and decide won/lost/tie
    against the current best, paired by eval (docs/improve.md says how).

    Exits 0 when VERSION won or tied (1 on a tie with --require-win), 1 when it
    lost, 2 on errors."""
    from workbench.app.choices import Agent
    from workbench.cli.run import evaluate_command
    from workbench.pipeline import RunRequest, id_set

    request = RunRequest(
        skill_dir,
        None,
        Agent(executor, agent_command, model),
        _judge(judge, judge_command, judge_model, judge_base_url),
        check_timeout,
        _limits(jobs, timeout, spending(runs, max_runs, max_cost, max_dispatches, fresh)),
        _placement(sandbox, network, cluster, workspace, wait),
        only=id_set(only),
        version=version_name,
        margin=margin,
        decide_by=decide_by,
        auto_promote=auto_promote,
    )
    sys.exit(evaluate_command(request, trust, require_win, yes, dry_run))


@cli.command()
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@proposer_options("the skill from the brief")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True, help="Proposals at most.")
@click.option(
    "--patience", type=click.IntRange(min=1), default=2, show_default=True, help="Stop after K rounds without a win."
)
@workspace_option
@agent_options
@trust_option
@margin_option
@click.option("--auto-promote", is_flag=True, help="Make each winner the current best and go on from it.")
@dry_run_option
@wait_option
def improve(
    skill_dir: Path,
    proposer: str,
    proposer_command: str | None,
    proposer_model: str | None,
    rounds: int,
    patience: int,
    workspace: Path | None,
    executor: str | None,
    agent_command: str | None,
    model: str | None,
    judge: str | None,
    judge_command: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    check_timeout: float,
    runs: int | str | None,
    max_runs: int,
    max_cost: float | None,
    max_dispatches: int | None,
    fresh: bool | None,
    yes: bool,
    jobs: int,
    timeout: float,
    sandbox: str,
    network: str | None,
    cluster: str | None,
    trust: bool,
    margin: float,
    auto_promote: bool,
    dry_run: bool,
    wait: bool,
) -> None:
    """Improve the skill with an agent: each round a proposer rewrites a copy of the
    current best from its failed expectations, the result becomes a version and is
    evaluated against the best with the rule of `evaluate`; analysis.json says which
    assertions flipped. Nothing is promoted without --auto-promote.

    Exits 0 when a version won, 1 when none did, 2 on errors."""
    from workbench.app.choices import Agent
    from workbench.cli.improve import improve_command
    from workbench.improving import ImproveRequest
    from workbench.pipeline import RunRequest

    spend = spending(runs, max_runs, None, max_dispatches, fresh)
    request = RunRequest(
        skill_dir,
        None,
        Agent(executor, agent_command, model),
        _judge(judge, judge_command, judge_model, judge_base_url),
        check_timeout,
        _limits(jobs, timeout, spend),
        _placement(sandbox, network, cluster, workspace, wait),
        margin=margin,
    )
    wanted = ImproveRequest(
        request,
        proposer,
        proposer_command,
        proposer_model,
        rounds,
        patience,
        max_cost,
        auto_promote,
    )
    sys.exit(improve_command(wanted, trust, dry_run))


trigger_options = options(
    click.option(
        "--queries",
        type=click.Path(path_type=Path, exists=True, dir_okay=False),
        help="The trigger eval set: a JSON array of {query, should_trigger} (default: evals/trigger-evals.json).",
    ),
    executor_option("The agent each query runs through"),
    agent_command_option,
    model_option,
    click.option(
        "--runs",
        type=RUNS,
        default="3",
        show_default=True,
        help="Runs of each query; auto: in rounds of 2, each query until settled (docs/triggers.md).",
    ),
    max_runs_option,
    jobs_option,
    max_cost_option,
    timeout_option(
        120.0, "Seconds per query's turn before the agent is killed (it is stopped sooner, once triggering is decided)."
    ),
    sandbox_option,
    network_option,
    click.option("--fresh", is_flag=True, help="Draw new samples instead of reusing identical earlier runs."),
    cluster_option,
    workspace_option,
    trust_option,
    dry_run_option,
    wait_option,
)


def _trigger_request(skill_dir: Path, **given: Any) -> TriggerRequest:
    from workbench.app.choices import Agent, Limits
    from workbench.triggers import TriggerRequest

    runs = given.pop("runs")
    return TriggerRequest(
        skill_dir,
        given.pop("queries"),
        Agent(given.pop("executor"), given.pop("agent_command"), given.pop("model")),
        Limits(
            runs=3 if runs == "auto" else int(runs),
            adaptive=runs == "auto",
            max_runs=given.pop("max_runs"),
            max_cost=given.pop("max_cost"),
            jobs=given.pop("jobs"),
            timeout=given.pop("timeout"),
            fresh=given.pop("fresh"),
        ),
        _placement(**given),
    )


@cli.command()
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@trigger_options
@yes_option
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
def trigger(skill_dir: Path, trust: bool, dry_run: bool, yes: bool, fmt: str, **given: Any) -> None:
    """Does the skill trigger? Run each query of the trigger eval set through the agent with the skill
    installed privately, stop it once triggering is decided, and report per query k/N and recall,
    precision and accuracy with intervals. Exit 0 when every query behaves as expected, 1 otherwise,
    2 on errors."""
    from workbench.cli.trigger import trigger_command

    sys.exit(trigger_command(_trigger_request(skill_dir, **given), trust, fmt, yes, dry_run))


@cli.command("optimize-description")
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True, help="Proposals at most.")
@click.option(
    "--holdout",
    type=click.FloatRange(0.05, 0.95),
    default=0.4,
    show_default=True,
    help="The share of each class of queries held out: the proposer never sees them, and they alone select.",
)
@click.option("--seed", type=int, help="The split's seed (default: the saved split's, else a new one, saved).")
@proposer_options("the description")
@trigger_options
def optimize_description(
    skill_dir: Path,
    rounds: int,
    holdout: float,
    seed: int | None,
    proposer: str,
    proposer_command: str | None,
    proposer_model: str | None,
    trust: bool,
    dry_run: bool,
    **given: Any,
) -> None:
    """Find a description that triggers better, judged on held-out queries only: split the trigger set
    (stratified, seeded, saved), propose descriptions from the train queries it gets wrong, measure each,
    keep one as a new version only when it beats the best on the held-out queries. Exit 0 when a
    description was kept, 1 when none beat the start, 2 on errors."""
    from workbench.cli.trigger import optimize_command
    from workbench.optimizing import OptimizeRequest

    request = OptimizeRequest(
        _trigger_request(skill_dir, **given),
        rounds,
        holdout,
        seed,
        proposer,
        proposer_command,
        proposer_model,
    )
    sys.exit(optimize_command(request, trust, dry_run))


@cli.command("draft-cases")
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--count", type=click.IntRange(1, 20), default=5, show_default=True, help="Cases to draft.")
@click.option(
    "--evals",
    "suite",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The suite to draft for (default: evals/evals.json).",
)
@click.option("--example", "examples", multiple=True, help="An example prompt a user might type (repeatable).")
@click.option(
    "--proposer",
    type=click.Choice(("claude", "codex", "command")),
    default="claude",
    show_default=True,
    help="The agent that drafts the cases.",
)
@click.option("--proposer-command", help="With --proposer command: the command to run (needs trust).")
@click.option("--proposer-model", help="The model of the claude and codex proposers.")
@click.option(
    "--sandbox", type=click.Choice(("auto", "bwrap", "none")), default="auto", show_default=True, help="As for run."
)
@trust_option
@dry_run_option
def draft_cases(
    skill_dir: Path,
    count: int,
    suite: Path | None,
    examples: tuple[str, ...],
    proposer: str,
    proposer_command: str | None,
    proposer_model: str | None,
    sandbox: str,
    trust: bool,
    dry_run: bool,
) -> None:
    """Draft new eval cases from SKILL.md (and --example prompts) into <suite>.drafts.json
    beside the suite, never into it: each joins the suite only when you accept it in the
    editor (Accept draft). Exits 0 with the drafts written, 2 on errors."""
    from workbench.cli.improve import draft_cases_command

    sys.exit(
        draft_cases_command(
            skill_dir, suite, count, list(examples), proposer, proposer_command, proposer_model, sandbox, trust, dry_run
        )
    )


@cli.command()
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.argument("version_name", metavar="VERSION")
@workspace_option
@click.option(
    "--write",
    is_flag=True,
    help="Also write VERSION's files into SKILL_DIR, after showing the diff; "
    "refused when that would overwrite uncommitted work.",
)
@click.option(
    "--yes",
    is_flag=True,
    help="Do not ask: before promoting a version below the best or that did not win, nor with --write before "
    "writing (the diff is still shown).",
)
@wait_option
def promote(skill_dir: Path, version_name: str, workspace: Path | None, write: bool, yes: bool, wait: bool) -> None:
    """Make VERSION the current best in history.json."""
    from workbench.cli.improve import promote_command

    sys.exit(promote_command(skill_dir, version_name, workspace, write, yes, wait))


@cli.command()
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@workspace_option
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
def history(skill_dir: Path, workspace: Path | None, fmt: str) -> None:
    """The version tree with pass rates, results and the best marker."""
    from workbench.cli.improve import history_command

    sys.exit(history_command(skill_dir, workspace, fmt))


def _run_app(skills: list[Path], watch: bool) -> None:
    from workbench.tui import start

    start.run_app(skills, watch)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--dialect", type=click.Choice(DIALECTS), help="Read eval suites as this dialect instead of detecting it."
)
@click.option(
    "--format",
    "output",
    type=click.Choice(("text", "json")),
    default="text",
    show_default=True,
    help="text: one line per problem, like a compiler; json: a list of files and their diagnostics.",
)
def validate(paths: tuple[Path, ...], dialect: str | None, output: str) -> None:
    """Check skills, eval suites and run artifacts against their formats.

    PATH is a file, a skill folder or a tree (default: the current folder).
    Trees are walked for SKILL.md, eval suites and workspace artifacts."""
    from workbench.validate.tree import validate_paths

    try:
        reports = validate_paths(list(paths) or [Path(".")], dialect)
    except OSError as exc:
        from workbench.cli.output import print_os_error

        sys.exit(print_os_error(exc, "validate"))
    if output == "json":
        click.echo(json.dumps([r.as_json() for r in reports], indent=2, ensure_ascii=False))
    else:
        _print_text(reports)
    sys.exit(EXIT_FAILED if any(r.errors for r in reports) else EXIT_OK)


def _print_text(reports: list[FileReport]) -> None:
    color = sys.stdout.isatty()
    styles = {"error": "red", "warning": "yellow"}
    for report in reports:
        for d in report.diagnostics:
            severity = click.style(d.severity, fg=styles[d.severity], bold=True) if color else d.severity
            click.echo(d.compiler_line(report.file, severity))
    for report in reports:
        if report.skipped:
            click.echo(f"{report.file}: skipped: {report.skipped}")
    checked = [r for r in reports if not r.skipped]
    errors = sum(r.errors for r in checked)
    warnings = sum(r.warnings for r in checked)
    skipped = len(reports) - len(checked)
    click.echo(
        f"{len(checked)} file{'s' if len(checked) != 1 else ''} checked: "
        f"{plural(errors, 'error')} · {plural(warnings, 'warning')}" + (f" · {skipped} skipped" if skipped else "")
    )


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def main() -> None:
    cli(prog_name="workbench")
