"""`workbench grade` and `workbench report`, and what `workbench run` shares with
them: choosing the judge, and trusting the evals file's commands."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from workbench.config import ConfigProblem, config_path, load_config
from workbench.grading import judges
from workbench.grading.artifact import ArtifactInvalid
from workbench.grading.benchmark import NoGradedRuns, write_benchmark
from workbench.grading.grade import GradeOptions, grade_iteration
from workbench.grading.report import render
from workbench.grading.review import load_review, outcome
from workbench.grading.suite import GradingSuite, suite_of_iteration
from workbench.runs import trust as trusted
from workbench.runs.launch import RunRefused
from workbench.validate.diagnostic import FileProblems

EXIT_USAGE = 2


@dataclass
class JudgeChoice:
    name: str | None = None
    command: str | None = None
    model: str | None = None
    base_url: str | None = None
    check_timeout: float = 120.0


def make_judge(choice: JudgeChoice, executor_name: str, err: Console, trust: bool) -> judges.Judge | None:
    """The judge asked for; by default the demo judge for the demo agent, else the
    configured one (Claude Code unless the config says otherwise)."""
    name, command = choice.name, choice.command
    from_config = False
    try:
        if name is None:
            name = "command" if command else "demo" if executor_name.startswith("demo") else None
            if name is None:
                name, from_config = load_config().judge or "claude", True
        judge = judges.make(name, command, choice.model, choice.base_url)
    except ConfigProblem as exc:
        err.print(f"workbench: the config file: {exc}", markup=False, highlight=False, soft_wrap=True)
        return None
    except ValueError as exc:
        where = f' (the "judge" key of {config_path()})' if from_config else ""
        err.print(f"workbench: {exc}{where}", markup=False, highlight=False, soft_wrap=True)
        return None
    if not judge.trusted_by_default:
        if not (trust or trusted.is_trusted(command)):
            err.print(f"workbench: the judge would run [b]{command}[/b] for every graded expectation. "
                      "Commands that do not come from the workbench run only with --trust.")
            return None
        trusted.trust(command, "judge command")
    return judge


def suite_trusted(suite: GradingSuite, trust: bool, err: Console) -> bool:
    """Commands from the evals file run only once this exact content is trusted."""
    if suite.trusted():
        return True
    if trust:
        suite.trust()
        return True
    err.print(f"workbench: {suite.suite} would run these commands in the runs' workspaces:")
    for command in suite.commands():
        err.print(f"  $ {command}", markup=False, highlight=False, soft_wrap=True)
    err.print("Review them, then pass --trust (trust is remembered until the file changes).")
    return False


def print_problems(exc: FileProblems, err: Console, message: str) -> None:
    for d in exc.diagnostics:
        err.print(d.compiler_line(exc.path), markup=False, highlight=False, soft_wrap=True)
    err.print(message)


def print_refused(exc: RunRefused, err: Console, verb: str) -> None:
    print_problems(exc, err,
                   f"workbench {verb}: {exc.path.name} has errors; fix them first (workbench validate shows them).")


def grade_command(iteration: Path, choice: JudgeChoice, jobs: int, trust: bool, fail_under: float | None) -> int:
    out, err = Console(), Console(stderr=True)
    try:
        suite = suite_of_iteration(iteration)
    except FileNotFoundError as exc:
        err.print(f"workbench grade: {exc}")
        return EXIT_USAGE
    except RunRefused as exc:
        print_refused(exc, err, "grade")
        return EXIT_USAGE
    judge = make_judge(choice, suite.executor, err, trust)
    if judge is None or not suite_trusted(suite, trust, err):
        return EXIT_USAGE
    err.print(f"Grading {iteration} with the {judge.label}")
    try:
        notes = grade_iteration(iteration, suite, GradeOptions(judge, True, choice.check_timeout), jobs)
        write_benchmark(iteration)
    except (NoGradedRuns, ArtifactInvalid) as exc:
        err.print(f"workbench grade: {exc}")
        return EXIT_USAGE
    for note in notes:
        err.print(f"note: {note}")
    review = load_review(iteration)
    out.print(render(review, str(iteration), "text"), markup=False, highlight=False, end="", soft_wrap=True)
    return outcome(review, fail_under)


def report_command(iteration: Path, fmt: str, fail_under: float | None) -> int:
    err = Console(stderr=True)
    review = load_review(iteration)
    if not review.results:
        err.print(f"workbench report: {iteration} has no graded runs (grading.json); "
                  "run `workbench grade` on it first.")
        return EXIT_USAGE
    print(render(review, str(iteration), fmt), end="")
    return outcome(review, fail_under)
