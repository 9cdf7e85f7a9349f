"""`workbench run` and `workbench evaluate`: a request to the pipeline, a
progress bar while dispatches move, a summary table and the results after."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from workbench.app import pipeline
from workbench.app.cost import CostQuestion, Estimate, ask_first
from workbench.app.progress import DONE, FAILED, QUEUED, REUSED, RUNNING, SKIPPED, STOPPED, Dispatch
from workbench.app.review import cost_line, render
from workbench.cli.options import (
    CONTEXT,
    RUN,
    RUNS_WRITTEN_HELP,
    Asked,
    Gates,
    agent_options,
    bundle,
    check_timeout_option,
    dry_run_option,
    judge_options,
    limits_options,
    only_option,
    placement_options,
    trust_option,
    yes_option,
)
from workbench.cli.output import dry_run_end, gate, print_error, refused_trust, say
from workbench.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, WorkbenchError
from workbench.formats.money import money
from workbench.formats.regular import read_object
from workbench.report_cli import gate_options
from workbench.workspace import layout

if TYPE_CHECKING:
    from workbench.app.choices import Agent, Judge, Limits, Placement

out = Console()
err = Console(stderr=True)


def start(
    request: pipeline.RunRequest, trust: bool, verb: str, yes: bool = False, dry_run: bool = False
) -> pipeline.Prepared | int:
    """Prepare the request, say what it will cost, ask above the config's threshold, and trust what it
    would run when --trust says so; an exit code when it cannot start (0 after a dry run)."""
    try:
        prepared = pipeline.prepare(request)
        question = ask_first(prepared.estimate)
    except WorkbenchError as exc:
        return print_error(exc, verb)
    for warning in prepared.warnings:
        err.print(f"workbench {verb}: warning: {warning}", markup=False, highlight=False)
    guess = prepared.estimate
    if dry_run:
        click.echo(planned(prepared))
        if guess is not None:
            click.echo(f"Estimate: {said(guess)}")
        dry_run_end(prepared.untrusted())
        return EXIT_OK
    if guess is not None:
        # Said with the heading once the run holds its workspace (a refused run says one line), or here
        # when it is asked about.
        refused = confirmed(question, yes, verb)
        if refused is not None:
            return refused
        if request.limits.max_cost is not None and guess.per_dispatch_usd is None:
            say(
                f"workbench {verb}: warning: a dispatch's cost cannot be estimated: --max-cost counts what the "
                "agent reports once each dispatch ends, and cannot foresee any (--max-dispatches can)"
            )
    refused = refused_trust(prepared, trust, verb)
    return prepared if refused is None else refused


def planned(prepared: pipeline.Prepared) -> str:
    """What a run would dispatch, with what, graded by whom, into where: a dry run's plan."""
    every = prepared.launch.potential or prepared.dispatches
    evals = len({d.case.id for d in every})
    configurations = ", ".join(dict.fromkeys(d.configuration for d in every))
    most = f" (the first round of --runs auto, at most {len(every)})" if prepared.launch.potential else ""
    return (
        f"Would run {len(prepared.dispatches)} dispatches{most}: {evals} eval(s), each as {configurations}, with the "
        f"{prepared.executor.label}{where(prepared)}, graded by the {prepared.judge.label}, into {prepared.iteration}"
    )


def where(prepared: pipeline.Prepared) -> str:
    """Said in the heading when the dispatches run elsewhere (docs/cluster.md)."""
    return f" on the cluster at {prepared.options.cluster}" if prepared.options.cluster else ""


def said(guess: Estimate) -> str:
    return f"{guess.line()} ({guess.basis})"


def confirmed(asked: CostQuestion | None, yes: bool, verb: str) -> int | None:
    """None when the run may start: --yes, nothing to ask (app.cost.ask_first), or a person said yes."""
    if yes or asked is None:
        return None
    err.print(f"workbench {verb}: {said(asked.estimate)}", markup=False, highlight=False, soft_wrap=True)
    most = "At most" if asked.estimate.up_to is not None else "About"
    question = f"{most} {money(asked.most_usd)} is above confirm_above_usd, {money(asked.limit_usd)} (config)."
    if not sys.stdin.isatty():
        say(f"workbench {verb}: {question} Pass --yes to run it, or lower it with --only, --runs or --max-cost.")
        return EXIT_USAGE
    if click.confirm(f"{question} Run it?", default=False, err=True):
        return None
    say(f"workbench {verb}: not started.")
    return EXIT_USAGE


def launch(prepared: pipeline.Prepared, verb: str, heading: str) -> pipeline.Outcome | int:
    """Run with a progress bar; an exit code when it could not finish. The heading
    and the bar show once the workspace is ours (a refused run says only why), and
    every message prints after the bar stops: a live bar would re-wrap it."""
    dispatches = prepared.dispatches
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )
    task = progress.add_task("dispatches", total=len(dispatches))

    def started() -> None:
        if prepared.estimate is not None:
            err.print(f"workbench {verb}: {said(prepared.estimate)}", markup=False, highlight=False, soft_wrap=True)
        err.print(heading, markup=False, highlight=False, soft_wrap=True)
        progress.start()

    tally = Tally()

    def moved(dispatch: Dispatch) -> None:
        finished, running = tally.moved(dispatch)
        # --runs auto adds rounds as it goes: the total grows with them
        progress.update(task, total=len(dispatches), completed=finished, description=f"dispatches ({running} running)")

    def told(text: str) -> None:
        if progress.live.is_started:
            progress.console.print(f"workbench {verb}: {text}", markup=False, highlight=False)
        else:
            say(f"workbench {verb}: {text}")

    try:
        try:
            return pipeline.run(prepared, moved, told, started)
        finally:
            if progress.live.is_started:
                progress.stop()
    except KeyboardInterrupt:
        say(f"workbench {verb}: cancelled; agents were stopped. Run the same command again to resume.")
        return EXIT_USAGE
    except WorkbenchError as exc:
        return print_error(exc, verb)


class Tally:
    """Finished and running dispatches, kept as each one moves: counting them all at every move made a run of
    5,000 dispatches count 5,000 statuses some 20,000 times."""

    ENDED = (DONE, FAILED, REUSED, SKIPPED)  # not STOPPED: never ran

    def __init__(self) -> None:
        self.seen: dict[int, str] = {}  # id(dispatch) -> the status it was counted with
        self.finished = self.running = 0

    def moved(self, dispatch: Dispatch) -> tuple[int, int]:
        before, now = self.seen.get(id(dispatch)), dispatch.status
        if before != now:
            self.finished += (now in self.ENDED) - (before in self.ENDED)
            self.running += (now == RUNNING) - (before == RUNNING)
            self.seen[id(dispatch)] = now
        return self.finished, self.running


def run_command(
    request: pipeline.RunRequest,
    trust: bool,
    fail_under: float | None,
    eval_fail_under: float | None,
    yes: bool = False,
    dry_run: bool = False,
) -> int:
    prepared = start(request, trust, "run", yes, dry_run)
    if isinstance(prepared, int):
        return prepared
    planned = len(prepared.dispatches)
    most = len(prepared.launch.potential or [])
    what = f"{planned} dispatches (the first round of --runs auto, at most {most})" if most else f"{planned} dispatches"
    limit = request.limits.max_dispatches
    if limit is not None and limit < planned:
        what += f", at most {limit} of them by --max-dispatches"
    heading = (
        f"Running {what} with the {prepared.executor.label}{where(prepared)}, graded by the {prepared.judge.label}, "
        f"into {prepared.iteration}"
    )
    result = launch(prepared, "run", heading)
    if isinstance(result, int):
        return result
    print_summary(out, prepared.dispatches)
    for dispatch in prepared.dispatches:
        if dispatch.status == FAILED:
            record = read_object(dispatch.folder / layout.RUN_RECORD)
            tail = str(record.get("stderr_tail") or "").strip().splitlines()[-3:]
            err.print(
                f"[red]failed[/] eval-{dispatch.case.id} {dispatch.configuration} run-{dispatch.run_number}: "
                f"{record.get('error')}" + ("\n    " + "\n    ".join(tail) if tail else "")
            )
    out.print(
        render(result.review, str(result.iteration), "text"), markup=False, highlight=False, end="", soft_wrap=True
    )
    for line in rounds_said(result):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    if kept_gradings(result, "run"):
        return EXIT_USAGE
    err.print(f"Graded by the {prepared.judge.label}; benchmark.json and benchmark.md are in {result.iteration}")
    if result.stopped:
        return budget_stopped(result, "run")
    return gate(result.review, fail_under, eval_fail_under)


def kept_gradings(result: pipeline.Outcome, verb: str) -> bool:
    """Says which runs kept their earlier grading (the judge failed where it had decided) and what that
    leaves undone; True when there were any."""
    if not result.kept:
        return False
    say(f"workbench {verb}: {len(result.kept)} run(s) kept their earlier grading, which the new one would lose:")
    for _folder, why in result.kept:
        say(f"  {why}")
    say(
        f"workbench {verb}: benchmark.json and benchmark.md of {result.iteration} are as they were"
        + (", and this evaluation is not recorded in history.json" if result.evaluation is not None else "")
        + ". Grade the iteration again once the judge answers (workbench grade)."
    )
    return True


def rounds_said(result: pipeline.Outcome) -> list[str]:
    """--runs auto: how many dispatches in how many rounds, and each eval's and the decision's when and why."""
    rounds = result.prepared.launch.adaptive
    if rounds is None:
        return []
    ran = len(result.prepared.dispatches)
    most = len(result.prepared.launch.potential or [])
    lines = [
        f"--runs auto: {ran} dispatches in {len(rounds.rounds)} round(s), of at most {most} (--max-runs "
        f"{rounds.max_runs})"
    ]
    for case_id, settled in rounds.evals.items():
        lines.append(f"  eval {case_id}: {settled['why']}")
    if rounds.decision is not None:
        lines.append(f"  decision: {rounds.decision['why']}")
    return lines


def budget_stopped(result: pipeline.Outcome, verb: str) -> int:
    """The budget left dispatches unstarted: the iteration is incomplete, said so, exit 2."""
    left = sum(d.status == STOPPED for d in result.prepared.dispatches)
    say(
        f"workbench {verb}: {result.stopped.said(flags=True) if result.stopped else 'stopped'}. {left} dispatch(es) "
        f"not started: {result.iteration} is incomplete and "
        "is not graded as complete. Run the same command with a higher limit to finish it."
    )
    return EXIT_USAGE


def evaluate_command(
    request: pipeline.RunRequest, trust: bool, require_win: bool, yes: bool = False, dry_run: bool = False
) -> int:
    """0 when the version won or tied (a tie is 1 with --require-win), 1 when it lost, 2 on errors."""
    prepared = start(request, trust, "evaluate", yes, dry_run)
    if isinstance(prepared, int):
        return prepared
    version = request.version
    heading = (
        f"Evaluating {version} (its snapshot) with the {prepared.executor.label}{where(prepared)}, graded by the "
        f"{prepared.judge.label}"
    )
    result = launch(prepared, "evaluate", heading)
    if isinstance(result, int):
        return result
    evaluation = result.evaluation
    assert evaluation is not None
    rate = f"pass rate {evaluation.rate:.0%}" if evaluation.rate is not None else "no pass rate"
    print(
        f"{version}: {rate} ({evaluation.passed}/{evaluation.total} with-skill assertions passed) in "
        f"{evaluation.iteration}"
    )
    if evaluation.best_ran_here:
        print(
            f"The best, {evaluation.best}, had no runs on these evals with this executor and judge: it ran here as "
            "old_skill."
        )
    if evaluation.decision is not None:
        print(f"{version} against {evaluation.best}: {evaluation.evidence}")
    else:
        print(f"{version}: {evaluation.result}")
    skill_dir = request.skill_dir.resolve()
    print(cost_line(result.review.cost()))
    for line in rounds_said(result):
        print(line)
    if result.stopped:
        return budget_stopped(result, "evaluate")
    if kept_gradings(result, "evaluate"):
        return EXIT_USAGE
    if result.review.errors:
        say(
            f"workbench evaluate: {result.review.errors} run(s) or expectation(s) could not be graded (see the "
            f"report of {evaluation.iteration}); this evaluation is not recorded in history.json."
        )
        return EXIT_USAGE
    if not evaluation.recorded:
        say("--only ran a part of the suite: the result is shown, not recorded in history.json.")
    if evaluation.promoted:
        print(f"{version} is now the current best (--auto-promote).")
    elif evaluation.result == "won":
        print(
            f"{version} won: promote it with `workbench promote {skill_dir} {version}` (add --write to put its "
            "files in the skill folder)."
        )
    if evaluation.result == "lost":
        return EXIT_FAILED
    if require_win and evaluation.result == "tie":
        say(f"workbench evaluate: {version} tied, and --require-win asks for a win.")
        return EXIT_FAILED
    return EXIT_OK


COLUMNS = ("eval", "configuration", "run", "status", "turns", "stopped because", "tokens", "cost", "seconds")
REASON = COLUMNS.index("stopped because")  # the one column cut to fit the console (failures are said in full after)
COLOURS = {"done": "32", "failed": "31", "reused": "36"}  # green, red, cyan: as rich names them


def summary_rows(dispatches: list[Dispatch]) -> list[tuple[list[str], str]]:
    """Each dispatch's cells, in order, with its status's colour key."""
    rows = []
    for d in dispatches:
        record = read_object(d.folder / layout.RUN_RECORD)
        timing = read_object(d.folder / layout.TIMING)
        status = d.status if d.status not in (QUEUED,) else "not run"
        if d.status == SKIPPED:
            status = f"{record.get('status', 'done')} (resumed)"
        if d.status == STOPPED:
            status = "not run (budget)"
        cells = [
            str(d.case.id),
            d.configuration,
            str(d.run_number),
            status,
            str(record.get("turns", "")),
            " ".join(str(record.get("stop_reason") or record.get("error") or "").split()),
            str(timing.get("total_tokens", "")),
            (money(record.get("cost_usd")) if record else "") + (" (reused)" if record.get("reused") else ""),
            str(timing.get("total_duration_seconds", "")),
        ]
        rows.append((cells, d.status))
    return rows


def print_summary(console: Console, dispatches: list[Dispatch]) -> None:
    """The Runs table, drawn as rich draws one (a heavy head, a light body), but as plain lines written once:
    rich's own table measures every cell (~1 ms a row, 5 s for 5,000 dispatches). Widths come from the cells;
    only the reason a dispatch stopped is cut with … to keep the table within the console."""
    rows = summary_rows(dispatches)
    widths = [max([len(name), *(len(cells[i]) for cells, _ in rows)]) for i, name in enumerate(COLUMNS)]
    room = console.width - (sum(widths) - widths[REASON]) - 3 * len(COLUMNS) - 1
    widths[REASON] = max(len(COLUMNS[REASON]), min(widths[REASON], room))
    coloured = console.is_terminal and not console.no_color and console.color_system is not None

    def cut(text: str, width: int) -> str:
        return text if len(text) <= width else text[: width - 1] + "…"

    def line(cells: list[str], bar: str, status: str | None = None, bold: bool = False) -> str:
        parts = []
        for i, text in enumerate(cells):
            text = cut(text, widths[i]).ljust(widths[i])
            if coloured and bold:
                text = f"\x1b[1m{text}\x1b[0m"
            elif coloured and i == 3 and status in COLOURS:
                text = f"\x1b[{COLOURS[status]}m{text}\x1b[0m"
            parts.append(f" {text} ")
        return bar + bar.join(parts) + bar

    def rule(left: str, fill: str, middle: str, right: str) -> str:
        return left + middle.join(fill * (w + 2) for w in widths) + right

    width = sum(widths) + 3 * len(COLUMNS) + 1
    title = "Runs".center(width).rstrip()
    lines = [f"\x1b[3m{title}\x1b[0m" if coloured else title, rule("┏", "━", "┳", "┓")]
    lines += [line(list(COLUMNS), "┃", bold=True), rule("┡", "━", "╇", "┩")]
    lines += [line(cells, "│", status) for cells, status in rows]
    lines.append(rule("└", "─", "┴", "┘"))
    console.file.write("\n".join(lines) + "\n")
    console.file.flush()


def run_request(
    skill_dir: Path, agent: Agent, judge: Judge, limits: Limits, placement: Placement
) -> pipeline.RunRequest:
    return pipeline.RunRequest(skill_dir, agent=agent, judge=judge, limits=limits, placement=placement)


@dataclass(frozen=True)
class RunScope:
    """run's own options."""

    suite: Path | None
    check_timeout: float
    baseline: str
    only: str | None
    failed: bool
    iteration: int | None


@click.command(context_settings=CONTEXT)
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
    request = replace(
        run_request(skill_dir, agent, judge, limits, placement),
        suite=scope.suite,
        check_timeout=scope.check_timeout,
        baseline=scope.baseline,
        only=pipeline.id_set(scope.only),
        failed=scope.failed,
        iteration=scope.iteration,
    )
    sys.exit(run_command(request, asked.trust, gates.fail_under, gates.eval_fail_under, asked.yes, asked.dry_run))
