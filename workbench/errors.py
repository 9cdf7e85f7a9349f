"""The errors a user can cause and fix, and the exit codes scripts rely on.

Every such error derives from WorkbenchError; the command line prints it with
one printer (cli/output.py) and exits with its code, the TUI shows it as a
notice. Anything else that escapes is a bug of ours."""

from __future__ import annotations

# Exit codes: a contract for scripts and CI.
EXIT_OK = 0  # nothing wrong (every gate passed)
EXIT_FAILED = 1  # the skill failed: assertions or a gate, or a version lost
EXIT_USAGE = 2  # the workbench could not do what was asked: usage, input, I/O, errors while grading


class WorkbenchError(Exception):
    """Something in the user's input, files or choices stops the work; the message says what and how to fix it."""

    exit_code = EXIT_USAGE


class Refused(WorkbenchError):
    """A request that cannot be carried out as given (a missing option, an unknown name, nothing to run)."""
