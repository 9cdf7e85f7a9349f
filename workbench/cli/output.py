"""What every command prints the same way: errors (one printer, one set of exit
codes) and the list of commands that need trust."""

from __future__ import annotations

from typing import Protocol

import click

from workbench.errors import EXIT_FAILED, EXIT_USAGE, WorkbenchError
from workbench.grading.review import Review, below, outcome
from workbench.validate.diagnostic import FileProblems


def say(text: str) -> None:
    """One line to standard error, as it is (no markup: paths and commands print exactly)."""
    click.echo(text, err=True)


def print_error(exc: WorkbenchError, verb: str) -> int:
    """`file:line:col: severity: message` for each diagnostic, then `workbench VERB: message`; returns the exit code."""
    if isinstance(exc, FileProblems):
        for d in exc.diagnostics:
            say(d.compiler_line(exc.path))
        what = f"{exc.path.name} has the errors above; fix them by hand (nothing is repaired)."
        say(f"workbench {verb}: {what}")
    else:
        say(f"workbench {verb}: {exc}" + _choose_another(exc))
    return exc.exit_code


def _choose_another(exc: WorkbenchError) -> str:
    """For a program that cannot start: the option that chooses another (the core names no flag)."""
    from workbench.preflight import CannotStart

    if not isinstance(exc, CannotStart):
        return ""
    flag = {"agent": "--executor", "judge": "--judge", "proposer": "--proposer"}.get(exc.role)
    return f"; or choose another {exc.role} with {flag}" if flag else ""


def print_os_error(exc: OSError, verb: str) -> int:
    """`workbench VERB: PATH: what the system said`; returns the exit code (2)."""
    where = f"{exc.filename}: " if exc.filename else ""
    what = exc.strerror or str(exc)
    if isinstance(exc, IsADirectoryError):
        what += " (a folder where a file belongs)"
    say(f"workbench {verb}: {where}{what}")
    return EXIT_USAGE


class Trustable(Protocol):
    def untrusted(self) -> list[str]: ...
    def trust(self) -> None: ...


def print_trust_list(verb: str, asks: list[str]) -> None:
    """The commands the workbench did not write that would run, for a person to review before --trust."""
    say(f"workbench {verb}: these commands would run, and the workbench did not write them:")
    for command in asks:
        say(f"  $ {command}")
    say("Review them, then pass --trust (trust is remembered until what runs changes).")


def dry_run_end(asks: list[str]) -> None:
    """A dry run's last words: what --trust would trust, and that nothing happened."""
    if asks:
        click.echo("It would ask you to trust these commands, which the workbench did not write:")
        for command in asks:
            click.echo(f"  $ {command}")
    else:
        click.echo("Nothing in it needs your trust first.")
    click.echo("Nothing was run or written (--dry-run).")


def teller(verb: str):
    """`say` for the core's running commentary: one line each, under the command's one prefix."""
    return lambda text: say(f"workbench {verb}: {text}")


def refused_trust(work: Trustable, trust: bool, verb: str) -> int | None:
    """The pipeline's trust rule on the command line: with --trust, trust what
    `work` would run; without, list it and return the exit code (None: go on)."""
    asks = work.untrusted()
    if asks and not trust:
        print_trust_list(verb, asks)
        return EXIT_USAGE
    if asks:
        work.trust()
    return None


def gate(review: Review, fail_under: float | None, eval_fail_under: float | None) -> int:
    """The exit code of the gates, and which evals are under the per-eval one."""
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
