"""The `workbench` command. Thin: parse arguments, build a request, call the
core, print. Exit codes are a contract for scripts (workbench/errors.py)."""

from __future__ import annotations

import difflib
import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench import __version__
from workbench.cli.options import (
    RUN,
    RUNS_WRITTEN_HELP,
    TRIGGER,
    Asked,
    Gates,
    agent_options,
    bundle,
    check_timeout_option,
    dry_run_option,
    judge_options,
    limits_options,
    margin_option,
    only_option,
    placement_options,
    proposer_options,
    sandbox_option,
    trust_option,
    wait_option,
    workspace_option,
    yes_option,
)
from workbench.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from workbench.report_cli import gate_options
from workbench.report_cli import report as report_command

if TYPE_CHECKING:
    from workbench.app.choices import Agent, Judge, Limits, Placement, Proposer
    from workbench.pipeline import RunRequest
    from workbench.triggers import TriggerRequest
    from workbench.validate.tree import FileReport

DIALECTS = ("skill-creator", "slow-powers", "chock")


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


def _run_request(skill_dir: Path, agent: Agent, judge: Judge, limits: Limits, placement: Placement) -> RunRequest:
    from workbench.pipeline import RunRequest

    return RunRequest(skill_dir, agent=agent, judge=judge, limits=limits, placement=placement)


@dataclass(frozen=True)
class RunScope:
    """run's own options."""

    suite: Path | None
    check_timeout: float
    baseline: str
    only: str | None
    failed: bool
    iteration: int | None


@dataclass(frozen=True)
class Evaluated:
    """evaluate's own options."""

    check_timeout: float
    only: str | None
    margin: float
    auto_promote: bool
    decide_by: str
    require_win: bool


@dataclass(frozen=True)
class Improved:
    """improve's own options."""

    rounds: int
    patience: int
    check_timeout: float
    margin: float
    auto_promote: bool


@dataclass(frozen=True)
class Optimized:
    """optimize-description's own options."""

    rounds: int
    holdout: float
    seed: int | None


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
@agent_options("The agent that runs each eval")
@judge_options
@check_timeout_option
@limits_options(RUN)
@yes_option
@placement_options(RUNS_WRITTEN_HELP)
@click.option(
    "--baseline",
    type=click.Choice(("without_skill", "old_skill", "none")),
    default="without_skill",
    show_default=True,
    help="What the skill is compared with.",
)
@only_option
@click.option("--failed", is_flag=True, help="Only the evals that failed in the latest iteration.")
@click.option(
    "--iteration",
    type=click.IntRange(min=1),
    help="The iteration to write (default: resume the latest if its plan is the same, else the next).",
)
@trust_option
@dry_run_option
@gate_options
@bundle("scope", RunScope)
@bundle("asked", Asked)
@bundle("gates", Gates)
def run(
    skill_dir: Path,
    agent: Agent,
    judge: Judge,
    limits: Limits,
    placement: Placement,
    scope: RunScope,
    asked: Asked,
    gates: Gates,
) -> None:
    """Run the skill's evals with and without the skill through an agent, and grade them.

    Exits 0 when the gates pass (with none given: every with-skill assertion
    passed), 1 when they do not, 2 on errors."""
    from workbench.cli.run import run_command
    from workbench.pipeline import id_set

    request = replace(
        _run_request(skill_dir, agent, judge, limits, placement),
        suite=scope.suite,
        check_timeout=scope.check_timeout,
        baseline=scope.baseline,
        only=id_set(scope.only),
        failed=scope.failed,
        iteration=scope.iteration,
    )
    sys.exit(run_command(request, asked.trust, gates.fail_under, gates.eval_fail_under, asked.yes, asked.dry_run))


@cli.command()
@click.argument("iteration", type=click.Path(path_type=Path, exists=True, file_okay=False))
@judge_options
@check_timeout_option
@click.option("-j", "jobs", type=click.IntRange(min=1), default=4, show_default=True, help="Runs graded at once.")
@trust_option
@dry_run_option
@wait_option
@gate_options
@bundle("asked", Asked)
@bundle("gates", Gates)
def grade(
    iteration: Path, judge: Judge, check_timeout: float, jobs: int, asked: Asked, wait: bool, gates: Gates
) -> None:
    """Grade (again) the runs of ITERATION (<workspace>/iteration-N) without re-running agents.

    Reads the suite the iteration was run from as it is now, so a corrected
    assertion can be re-graded. Writes grading.json per run, benchmark.json and
    benchmark.md. Exit codes as for run."""
    from workbench.cli.grade import grade_command

    sys.exit(grade_command(iteration, judge, check_timeout, jobs, asked, gates, wait))


cli.add_command(report_command)  # defined apart, so `workbench report` starts without the other commands


@cli.group()
def version() -> None:
    """Versions of a skill (Improve mode): immutable snapshots in the workspace."""


@version.command("new")
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--from", "parent", help="The parent version (default: the current best).")
@workspace_option()
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
@agent_options("The agent that runs each eval")
@judge_options
@check_timeout_option
@limits_options(RUN)
@yes_option
@placement_options()
@only_option
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
@bundle("wanted", Evaluated)
@bundle("asked", Asked)
def evaluate(
    skill_dir: Path,
    version_name: str,
    agent: Agent,
    judge: Judge,
    limits: Limits,
    placement: Placement,
    wanted: Evaluated,
    asked: Asked,
) -> None:
    """Run VERSION's snapshot through the evals, grade it, and decide won/lost/tie
    against the current best, paired by eval (docs/improve.md says how).

    Exits 0 when VERSION won or tied (1 on a tie with --require-win), 1 when it
    lost, 2 on errors."""
    from workbench.cli.run import evaluate_command
    from workbench.pipeline import id_set

    request = replace(
        _run_request(skill_dir, agent, judge, limits, placement),
        check_timeout=wanted.check_timeout,
        only=id_set(wanted.only),
        version=version_name,
        margin=wanted.margin,
        decide_by=wanted.decide_by,
        auto_promote=wanted.auto_promote,
    )
    sys.exit(evaluate_command(request, asked.trust, wanted.require_win, asked.yes, asked.dry_run))


@cli.command()
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@proposer_options("The agent that rewrites the skill from the brief (docs/improve.md, the proposer protocol).")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True, help="Proposals at most.")
@click.option(
    "--patience", type=click.IntRange(min=1), default=2, show_default=True, help="Stop after K rounds without a win."
)
@agent_options("The agent that runs each eval")
@judge_options
@check_timeout_option
@limits_options(RUN)
@yes_option
@placement_options()
@trust_option
@margin_option
@click.option("--auto-promote", is_flag=True, help="Make each winner the current best and go on from it.")
@dry_run_option
@bundle("wanted", Improved)
@bundle("asked", Asked)
def improve(
    skill_dir: Path,
    proposer: Proposer,
    agent: Agent,
    judge: Judge,
    limits: Limits,
    placement: Placement,
    wanted: Improved,
    asked: Asked,
) -> None:
    """Improve the skill with an agent: each round a proposer rewrites a copy of the
    current best from its failed expectations, the result becomes a version and is
    evaluated against the best with the rule of `evaluate`; analysis.json says which
    assertions flipped. Nothing is promoted without --auto-promote.

    Exits 0 when a version won, 1 when none did, 2 on errors."""
    from workbench.cli.improve import improve_command
    from workbench.improving import ImproveRequest

    each = replace(limits, max_cost=None)  # --max-cost is the whole loop's: proposers and evaluations
    request = replace(
        _run_request(skill_dir, agent, judge, each, placement),
        check_timeout=wanted.check_timeout,
        margin=wanted.margin,
    )
    loop = ImproveRequest(
        request,
        proposer.name,
        proposer.command,
        proposer.model,
        wanted.rounds,
        wanted.patience,
        limits.max_cost,
        wanted.auto_promote,
    )
    sys.exit(improve_command(loop, asked.trust, asked.dry_run))


queries_option = click.option(
    "--queries",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The trigger eval set: a JSON array of {query, should_trigger} (default: evals/trigger-evals.json).",
)


def _trigger_request(
    skill_dir: Path, queries: Path | None, agent: Agent, limits: Limits, placement: Placement
) -> TriggerRequest:
    from workbench.triggers import TriggerRequest

    return TriggerRequest(skill_dir, queries, agent, limits, placement)


@cli.command()
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@queries_option
@agent_options("The agent each query runs through")
@limits_options(TRIGGER)
@placement_options()
@trust_option
@dry_run_option
@yes_option
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@bundle("asked", Asked)
def trigger(
    skill_dir: Path,
    queries: Path | None,
    agent: Agent,
    limits: Limits,
    placement: Placement,
    asked: Asked,
    fmt: str,
) -> None:
    """Does the skill trigger? Run each query of the trigger eval set through the agent with the skill
    installed privately, stop it once triggering is decided, and report per query k/N and recall,
    precision and accuracy with intervals. Exit 0 when every query behaves as expected, 1 otherwise,
    2 on errors."""
    from workbench.cli.trigger import trigger_command

    request = _trigger_request(skill_dir, queries, agent, limits, placement)
    sys.exit(trigger_command(request, asked.trust, fmt, asked.yes, asked.dry_run))


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
@proposer_options("The agent that rewrites the description (docs/improve.md, the proposer protocol).")
@queries_option
@agent_options("The agent each query runs through")
@limits_options(TRIGGER)
@placement_options()
@trust_option
@dry_run_option
@bundle("wanted", Optimized)
@bundle("asked", Asked)
def optimize_description(
    skill_dir: Path,
    wanted: Optimized,
    proposer: Proposer,
    queries: Path | None,
    agent: Agent,
    limits: Limits,
    placement: Placement,
    asked: Asked,
) -> None:
    """Find a description that triggers better, judged on held-out queries only: split the trigger set
    (stratified, seeded, saved), propose descriptions from the train queries it gets wrong, measure each,
    keep one as a new version only when it beats the best on the held-out queries. Exit 0 when a
    description was kept, 1 when none beat the start, 2 on errors."""
    from workbench.cli.trigger import optimize_command
    from workbench.optimizing import OptimizeRequest

    request = OptimizeRequest(
        _trigger_request(skill_dir, queries, agent, limits, placement),
        wanted.rounds,
        wanted.holdout,
        wanted.seed,
        proposer.name,
        proposer.command,
        proposer.model,
    )
    sys.exit(optimize_command(request, asked.trust, asked.dry_run))


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
@proposer_options("The agent that drafts the cases.")
@sandbox_option("As for run.")
@trust_option
@dry_run_option
@bundle("asked", Asked)
def draft_cases(
    skill_dir: Path,
    count: int,
    suite: Path | None,
    examples: tuple[str, ...],
    proposer: Proposer,
    sandbox: str,
    asked: Asked,
) -> None:
    """Draft new eval cases from SKILL.md (and --example prompts) into <suite>.drafts.json
    beside the suite, never into it: each joins the suite only when you accept it in the
    editor (Accept draft). Exits 0 with the drafts written, 2 on errors."""
    from workbench.cli.improve import draft_cases_command

    sys.exit(draft_cases_command(skill_dir, suite, count, list(examples), proposer, sandbox, asked))


@cli.command()
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.argument("version_name", metavar="VERSION")
@workspace_option()
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
@workspace_option()
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
