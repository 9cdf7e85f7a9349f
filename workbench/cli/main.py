"""The `workbench` command: it only registers the commands, each a module of workbench/cli/ imported
when it is invoked or listed in help, so `workbench --version` and the app's start import none of
them. Exit codes are a contract for scripts (workbench/errors.py)."""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from pathlib import Path

import click

from workbench import __version__
from workbench.errors import EXIT_USAGE

# name -> "module:attribute" of its click command, one module per command.
COMMANDS = {
    "demo": "workbench.cli.demo:demo",
    "draft-cases": "workbench.cli.draft_cases:draft_cases",
    "evaluate": "workbench.cli.evaluate:evaluate",
    "grade": "workbench.cli.grade:grade",
    "history": "workbench.cli.history:history",
    "improve": "workbench.cli.improve:improve",
    "init": "workbench.cli.init:init",
    "open": "workbench.cli.open:open_command",
    "optimize-description": "workbench.cli.optimize_description:optimize_description",
    "promote": "workbench.cli.promote:promote",
    "report": "workbench.report_cli:report",  # apart, so `workbench report` starts without the other commands
    "run": "workbench.cli.run:run",
    "trigger": "workbench.cli.trigger:trigger",
    "validate": "workbench.cli.validate:validate",
    "version": "workbench.cli.version:version",
}


class Workbench(click.Group):
    """The commands of COMMANDS, each imported when first asked for; and `workbench [SKILL_DIR]` opens
    the app: anything that is not a command is a path."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command), target
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in COMMANDS and args[0] not in ("-h", "--help", "--version")):
            _mistyped(args[0] if args else "", list(COMMANDS))
            args = ["open", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        # The files a command reads and writes can be anything (a folder where a file was,
        # a full disk, no permission): that is a message and exit 2, never a traceback.
        try:
            return super().invoke(ctx)
        except OSError as exc:
            from workbench.cli.output import print_os_error

            sys.exit(print_os_error(exc, ctx.invoked_subcommand or "open"))


def _mistyped(word: str, commands: list[str]) -> None:
    """A word that names no folder here and resembles a command is a mistyped command: said, exit 2. A
    folder that exists is always the skill to open, whatever it is called."""
    if not word or word.startswith("-") or Path(word).exists() or os.sep in word:
        return
    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.6)
    if close:
        click.echo(f'workbench: "{word}" is neither a command nor a folder here; did you mean "{close[0]}"?', err=True)
        sys.exit(EXIT_USAGE)


@click.group(cls=Workbench, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="workbench")
def cli() -> None:
    """Skill Workbench: author, validate, run and iterate agent skills.

    `workbench [SKILL_DIR]` opens the workbench on a skill (default: the current
    folder; a folder holding several skills lists them)."""


def main() -> None:
    cli(prog_name="workbench")
