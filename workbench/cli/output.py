"""What every command prints the same way: errors (one printer, one set of exit
codes) and the list of commands that need trust."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import click

from workbench.errors import EXIT_USAGE, WorkbenchError
from workbench.reporting import gate, print_os_error, say  # with `report`, which starts without this package
from workbench.validate.diagnostic import FileProblems

__all__ = ["dry_run_end", "gate", "print_error", "print_os_error", "print_trust_list", "refused_trust", "say", "teller"]


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
    from workbench.app.preflight import CannotStart

    if not isinstance(exc, CannotStart):
        return ""
    flag = {"agent": "--executor", "judge": "--judge", "proposer": "--proposer"}.get(exc.role)
    return f"; or choose another {exc.role} with {flag}" if flag else ""


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


def teller(verb: str) -> Callable[[str], None]:
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
