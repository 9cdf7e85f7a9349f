"""`workbench run`: a progress bar while dispatches move, a summary table after."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from workbench.grading.artifact import ArtifactInvalid
from workbench.grading.benchmark import NoGradedRuns, write_benchmark
from workbench.grading.cli_grade import JudgeChoice, make_judge, print_problems, print_refused, suite_trusted
from workbench.grading.grade import GradeOptions, grade_as_it_goes
from workbench.grading.report import render
from workbench.grading.review import load_review, outcome
from workbench.grading.suite import load_suite
from workbench.runs import executors
from workbench.runs import trust as trusted
from workbench.runs.launch import RunRefused, prepare_launch, run_launch
from workbench.runs.runner import DONE, FAILED, QUEUED, REUSED, RUNNING, SKIPPED, Dispatch, RunOptions

EXIT_USAGE = 2


def run_command(skill_dir: Path, suite: Path | None, executor_name: str, agent_command: str | None,
                model: str | None, choice: JudgeChoice, runs: int | None, jobs: int, timeout: float, baseline: str,
                only: str | None, failed: bool, workspace: Path | None, iteration: int | None, trust: bool,
                fail_under: float | None = None) -> int:
    out, err = Console(), Console(stderr=True)
    try:
        executor = executors.make(executor_name, agent_command, model)
    except ValueError as exc:
        err.print(f"workbench run: {exc}")
        return EXIT_USAGE
    if not executor.trusted_by_default and not (trust or trusted.is_trusted(agent_command)):
        err.print(f"workbench run: this would run [b]{agent_command}[/b] in every workspace. "
                  "Commands that do not come from the workbench run only with --trust.")
        return EXIT_USAGE
    if not executor.trusted_by_default and trust:
        trusted.trust(agent_command, f"agent command (workbench run {skill_dir})")
    old_skill = None
    if baseline == "old_skill":
        from workbench.improve.history import HistoryBroken, best_folder

        try:
            old_skill = best_folder(skill_dir, workspace)
        except HistoryBroken as exc:
            print_problems(exc, err,
                           "workbench run: history.json is broken; fix it by hand (nothing is repaired silently).")
            return EXIT_USAGE
        if old_skill is None:
            err.print("workbench run: --baseline old_skill compares with the current best version; there are no "
                      "versions yet (workbench version new, then workbench evaluate).")
            return EXIT_USAGE
    options = RunOptions(runs=runs, jobs=jobs, timeout=timeout, baseline=baseline,
                         only={i.strip() for i in only.split(",") if i.strip()} if only else None, failed=failed)
    try:
        launch = prepare_launch(skill_dir, executor, options, suite, workspace, iteration, old_skill)
    except RunRefused as exc:
        print_refused(exc, err, "run")
        return EXIT_USAGE
    except (FileNotFoundError, ValueError) as exc:
        err.print(f"workbench run: {exc}")
        return EXIT_USAGE
    if not launch.dispatches:
        err.print("workbench run: nothing to run (check --only / --failed).")
        return EXIT_USAGE
    grading = load_suite(launch.suite, launch.skill_name, executor.label)
    judge = make_judge(choice, executor.label, err, trust)
    if judge is None or not suite_trusted(grading, trust, err):
        return EXIT_USAGE
    after = grade_as_it_goes(grading, GradeOptions(judge, True, choice.check_timeout))
    err.print(f"Running {len(launch.dispatches)} dispatches with the {executor.label} into {launch.folder}")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=False) as progress:
        task = progress.add_task("dispatches", total=len(launch.dispatches))

        def moved(dispatch: Dispatch) -> None:
            finished = sum(d.status in (DONE, FAILED, REUSED, SKIPPED) for d in launch.dispatches)
            running = sum(d.status == RUNNING for d in launch.dispatches)
            progress.update(task, completed=finished, description=f"dispatches ({running} running)")

        try:
            asyncio.run(run_launch(launch, executor, options, moved, after))
        except KeyboardInterrupt:
            err.print("workbench run: cancelled; agents were stopped. Run the same command again to resume.")
            return EXIT_USAGE
    out.print(summary(launch.dispatches))
    failures = [d for d in launch.dispatches if d.status == FAILED]
    for dispatch in failures:
        record = json.loads((dispatch.folder / "run.json").read_text())
        tail = (record.get("stderr_tail") or "").strip().splitlines()[-3:]
        err.print(f"[red]failed[/] eval-{dispatch.case.id} {dispatch.configuration} run-{dispatch.run_number}: "
                  f"{record.get('error')}" + ("\n    " + "\n    ".join(tail) if tail else ""), markup=True)
    iteration_dir = launch.folder
    try:
        write_benchmark(iteration_dir)
    except (NoGradedRuns, ArtifactInvalid) as exc:
        err.print(f"workbench run: {exc}")
        return EXIT_USAGE
    review = load_review(iteration_dir)
    out.print(render(review, str(iteration_dir), "text"), markup=False, highlight=False, end="", soft_wrap=True)
    err.print(f"Graded by the {judge.label}; benchmark.json and benchmark.md are in {iteration_dir}")
    return outcome(review, fail_under)


def summary(dispatches: list[Dispatch]) -> Table:
    table = Table(title="Runs")
    for column in ("eval", "configuration", "run", "status", "turns", "stopped because", "tokens", "seconds"):
        table.add_column(column)
    for d in dispatches:
        record = {}
        try:
            record = json.loads((d.folder / "run.json").read_text())
            timing = json.loads((d.folder / "timing.json").read_text())
        except (OSError, ValueError):
            timing = {}
        status = d.status if d.status not in (QUEUED,) else "not run"
        if d.status == SKIPPED:
            status = f"{record.get('status', 'done')} (resumed)"
        colour = {"done": "green", "failed": "red", "reused": "cyan"}.get(d.status, "")
        table.add_row(str(d.case.id), d.configuration, str(d.run_number),
                      f"[{colour}]{status}[/]" if colour else status, str(record.get("turns", "")),
                      str(record.get("stop_reason") or record.get("error") or ""),
                      str(timing.get("total_tokens", "")), str(timing.get("total_duration_seconds", "")))
    return table
