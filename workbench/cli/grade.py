"""`workbench grade` and `workbench report`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.cli.output import dry_run_end, gate, print_error, print_os_error, refused_trust, say
from workbench.errors import EXIT_OK, EXIT_USAGE, WorkbenchError
from workbench.formats.save import atomic_write
from workbench.grading.report import render
from workbench.grading.review import load_review

if TYPE_CHECKING:
    from workbench.pipeline import JudgeChoice


def grade_command(
    iteration: Path,
    choice: JudgeChoice,
    check_timeout: float,
    jobs: int,
    trust: bool,
    fail_under: float | None,
    eval_fail_under: float | None,
    wait: bool = False,
    dry_run: bool = False,
) -> int:
    from workbench import pipeline  # here: `report` needs none of it, and starts faster without
    from workbench.runs import layout

    try:
        work = pipeline.prepare_grading(iteration, choice, check_timeout, jobs)
        if dry_run:
            runs = len(layout.runs(iteration))
            click.echo(f"Would grade the {runs} run folder(s) of {iteration} with the {work.judge.label}.")
            dry_run_end(work.untrusted())
            return EXIT_OK
        refused = refused_trust(work, trust, "grade")
        if refused is not None:
            return refused
        say(f"Grading {iteration} with the {work.judge.label}")
        graded, review = pipeline.regrade(work, wait, say)
    except WorkbenchError as exc:
        return print_error(exc, "grade")
    for note in graded.notes:
        say(f"note: {note}")
    print(render(review, str(iteration), "text"), end="")
    code = gate(review, fail_under, eval_fail_under)
    if graded.complete:
        return code
    if graded.kept:
        say(f"workbench grade: {len(graded.kept)} run(s) kept their earlier grading, which the new one would lose:")
        for _folder, why in graded.kept:
            say(f"  {why}")
    if graded.undecided:
        say(f"workbench grade: {len(graded.undecided)} run(s) have expectations that could not be decided.")
    say(
        f"workbench grade: benchmark.json and benchmark.md of {iteration} are as they were: they are written only "
        "when every run graded decided all its expectations. Grade again once the judge answers."
    )
    return EXIT_USAGE


def report_command(
    iteration: Path, fmt: str, fail_under: float | None, eval_fail_under: float | None, output: Path | None = None
) -> int:
    not_one = not_an_iteration(iteration)
    if not_one:
        say(f"workbench report: {not_one}")
        return EXIT_USAGE
    review = load_review(iteration)
    if not review.results:
        say(f"workbench report: {iteration} has no graded runs (grading.json); run `workbench grade` on it first.")
        return EXIT_USAGE
    text = render(review, str(iteration), fmt)
    if output is None:
        print(text, end="")
    else:
        try:  # atomic: a reader (a CI artifact upload, a browser) never sees half a report
            new = not output.exists()
            atomic_write(output, text)
            if new:  # a report is to share: the usual mode (umask), not the temporary file's private one
                umask = os.umask(0)
                os.umask(umask)
                output.chmod(0o666 & ~umask)
        except OSError as exc:
            return print_os_error(exc, "report")
        say(f"Wrote {output}")
    return gate(review, fail_under, eval_fail_under)


def not_an_iteration(folder: Path) -> str | None:
    """What a folder given as an iteration is instead, and what to pass; None when it is an iteration."""
    from workbench.runs import layout
    from workbench.runs.workspace import default_workspace

    if (folder / layout.PLAN).is_file() or layout.eval_folders(folder):
        return None
    if (folder / "SKILL.md").is_file() or (folder / "evals").is_dir():
        workspace = default_workspace(folder.resolve())
        numbers = layout.iteration_numbers(workspace) if workspace.is_dir() else []
        if not numbers:
            return (
                f"{folder} is a skill folder, not an iteration, and its workspace ({workspace}) has none yet: "
                f"`workbench run {folder}` makes the first"
            )
        return (
            f"{folder} is a skill folder, not an iteration: pass one of its workspace's iterations, the latest is "
            f"{layout.iteration_dir(workspace, numbers[-1])}"
        )
    numbers = layout.iteration_numbers(folder)
    if numbers:
        return (
            f"{folder} is a workspace, not an iteration: pass one of its {len(numbers)} iteration(s), the latest is "
            f"{layout.iteration_dir(folder, numbers[-1])}"
        )
    return (
        f"{folder} is not an iteration (no plan.json, no eval-* folders): pass <workspace>/iteration-N, the folder "
        "`workbench run` names when it starts"
    )
