"""The `workbench` command, a thin edge: workbench/cli/main.py registers the commands, one module
each (run.py, evaluate.py, improve.py, trigger.py, ...), which parse their options into the typed
choices of workbench/cli/options.py, build a request, call the core and print. Exit codes are a
contract for scripts (workbench/errors.py)."""

from workbench.cli.main import cli, main

__all__ = ["cli", "main"]
