"""`workbench grade` and `workbench report`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.cli.output import gate, print_error, print_os_error, refused_trust, say
from workbench.errors import EXIT_USAGE, WorkbenchError
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
) -> int:
    from workbench import pipeline  # here: `report` needs none of it, and starts faster without

    try:
        work = pipeline.prepare_grading(iteration, choice, check_timeout, jobs)
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
