"""The `workbench` command's entry. `workbench report` starts alone: on a small iteration,
importing every other command (their registries, the sandbox, asyncio) would cost more
than the report itself; a plain command line skips click too (workbench/reporting.py).
So does `workbench FOLDER`: click and the other commands cost a tenth of a second before
the first form."""

from __future__ import annotations

import os
import sys
from pathlib import Path

NO_WATCH = "--no-watch"


def main() -> None:
    if sys.argv[1:2] == ["report"]:
        from workbench.reporting import run

        run(sys.argv[2:])  # exits, unless click is to read the command line
        from workbench.report_cli import report

        report(args=sys.argv[2:], prog_name="workbench report")
    elif (folder := folder_only(sys.argv[1:])) is not None:
        open_folder(folder, watch=NO_WATCH not in sys.argv[1:])
    else:
        from workbench.cli import main as workbench

        workbench()


def folder_only(args: list[str]) -> Path | None:
    """The folder of `workbench [FOLDER] [--no-watch]` when FOLDER is written as a path (a
    slash in it, or . or ..) or left out (the current folder): then it names no command,
    and `workbench open` would read it the same way. None: click reads the command line."""
    words = [arg for arg in args if arg != NO_WATCH]
    if len(args) - len(words) > 1 or len(words) > 1:
        return None
    if not words:
        return Path(".")
    word = words[0]
    if word.startswith("-") or not (os.sep in word or word in (".", "..")):
        return None
    return Path(word)


def open_folder(folder: Path, watch: bool) -> None:
    """`workbench open FOLDER`, its messages and exit codes, without click."""
    from workbench.tui import start

    start.pause_collector()  # from the first import on (collector.py)
    from workbench.app.skills import SkillsNotFound, find_skills
    from workbench.errors import EXIT_USAGE

    try:
        try:
            skills = find_skills(folder)
        except SkillsNotFound as exc:
            print(f"workbench: {exc}", file=sys.stderr)
            sys.exit(EXIT_USAGE)
        start.run_app(skills, watch)
    except OSError as exc:  # as the command line says any file problem: a message and exit 2, never a traceback
        from workbench.reporting import print_os_error

        sys.exit(print_os_error(exc, "open"))
