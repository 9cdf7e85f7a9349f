"""`workbench report`'s work and what it prints, without click: workbench/launch.py
calls it directly for a plain command line (an iteration and known options with
valid values); anything else (help, a mistake) goes through the click command in
workbench/report_cli.py, which says it as every command does."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

from workbench.errors import EXIT_FAILED, EXIT_USAGE

TYPE_CHECKING = False  # not typing's: a report starts faster without importing it
if TYPE_CHECKING:
    from workbench.grading.review import Review

FORMATS = ("text", "json", "junit", "html")
OPTIONS = {
    "--format": "fmt",
    "--output": "output",
    "--fail-under": "fail_under",
    "--eval-fail-under": "eval_fail_under",
}


def say(text: str) -> None:
    """One line to standard error, as it is (no markup: paths and commands print exactly)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def print_os_error(exc: OSError, verb: str) -> int:
    """`workbench VERB: PATH: what the system said`; returns the exit code (2)."""
    where = f"{exc.filename}: " if exc.filename else ""
    what = exc.strerror or str(exc)
    if isinstance(exc, IsADirectoryError):
        what += " (a folder where a file belongs)"
    say(f"workbench {verb}: {where}{what}")
    return EXIT_USAGE


def gate(review: Review, fail_under: float | None, eval_fail_under: float | None) -> int:
    """The exit code of the gates, and which evals are under the per-eval one."""
    from workbench.grading.review import below, outcome

    code = outcome(review, fail_under, eval_fail_under)
    new = review.new_configuration
    rate = review.rate(new) if new else None
    if code == EXIT_FAILED and fail_under is not None and rate is not None and rate < fail_under - 1e-12:
        say(f"The with-skill pass rate, {rate:.0%}, is under --fail-under {fail_under:g}.")
    if code == EXIT_FAILED and eval_fail_under is not None:
        under = below(review, eval_fail_under)
        if under:
            say(f"Under --eval-fail-under {eval_fail_under:g}: {', '.join(under)}")
    return code


def report_command(
    iteration: Path, fmt: str, fail_under: float | None, eval_fail_under: float | None, output: Path | None = None
) -> int:
    from workbench.grading.report import render, write
    from workbench.grading.review import load_review

    not_one = not_an_iteration(iteration)
    if not_one:
        say(f"workbench report: {not_one}")
        return EXIT_USAGE
    review = load_review(iteration)
    for note in review.notes:
        say(f"workbench report: {note}")
    if not review.results:
        say(f"workbench report: {iteration} has no graded runs (grading.json); run `workbench grade` on it first.")
        return EXIT_USAGE
    if output is None:
        write(review, str(iteration), fmt, sys.stdout)
    else:
        from workbench.formats.save import atomic_write

        try:  # atomic: a reader (a CI artifact upload, a browser) never sees half a report
            new = not output.exists()
            atomic_write(output, render(review, str(iteration), fmt))
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
    from workbench.workspace import layout

    if (folder / layout.PLAN).is_file() or layout.eval_folders(folder):
        return None
    from workbench.workspace.layout import default_workspace

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


def plain_arguments(args: list[str]) -> dict | None:
    """report's arguments when the command line is plain: one existing folder and known options,
    each once, with a value click would take as it is; None for anything else (click says it)."""
    found: dict = {"iteration": None, "fmt": "text", "output": None, "fail_under": None, "eval_fail_under": None}
    seen: set[str] = set()
    index = 0
    while index < len(args):
        word = args[index]
        if word in OPTIONS and word not in seen and index + 1 < len(args) and not args[index + 1].startswith("-"):
            seen.add(word)
            found[OPTIONS[word]] = args[index + 1]
            index += 2
        elif not word.startswith("-") and found["iteration"] is None and word:
            found["iteration"] = word
            index += 1
        else:
            return None
    folder = found["iteration"]
    if folder is None or found["fmt"] not in FORMATS or not (os.path.isdir(folder) and os.access(folder, os.R_OK)):
        return None
    for name in ("fail_under", "eval_fail_under"):
        if found[name] is not None:
            try:
                found[name] = float(found[name])
            except ValueError:
                return None
            if not 0 <= found[name] <= 1:
                return None
    if found["output"] is not None:
        if not found["output"] or os.path.isdir(found["output"]):
            return None
        found["output"] = Path(found["output"])
    found["iteration"] = Path(found["iteration"])
    return found


def run(args: list[str]) -> bool:
    """Run `workbench report ARGS` and exit when they are plain; False when click should read them."""
    found = plain_arguments(args)
    if found is None:
        return False
    gc.disable()  # see report_cli.report
    try:
        code = report_command(**found)
    except OSError as exc:
        code = print_os_error(exc, "report")
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a reader gone (a pipe closed): the interpreter's own exit says it, as before
        sys.exit(code)
    # Everything is written (a file given by --output atomically, already): end without taking
    # apart the hundreds of thousands of objects read, which costs more than reading 1,000 runs' summaries.
    os._exit(code)
