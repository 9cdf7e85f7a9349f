"""The workbench's command line run in the test's own process, as `python -m workbench args` would run
it (the same entry, workbench.launch.main), at the cost of a call instead of a process start (~0.4 s of
CPU each). For what a process does not change: the output, the exit code, the files written. What only a
real process shows (a kill, a signal, a lock held by another pid, the terminal) goes to support.process."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner

from workbench import launch


def workbench(
    *args: str | Path,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """`workbench args` to its end, as subprocess.run(..., capture_output=True, text=True) returns it: env
    is the whole environment, as subprocess takes it (None: this one); stdin is input, or empty (not a
    terminal, as a test's process has it). An exception it lets out is a traceback on stderr and exit 1,
    as the interpreter would make it."""
    argv = [str(arg) for arg in args]
    assert launch.folder_only(argv) is None, "the app itself runs in a process of its own (support.process)"
    changes: dict[str, str | None] = {}
    if env is not None:
        changes = {name: value for name, value in env.items() if os.environ.get(name) != value}
        changes.update({name: None for name in os.environ if name not in env})
    here, saved_argv, saved_exit, collecting = os.getcwd(), sys.argv, os._exit, gc.isenabled()
    code = 0
    with CliRunner().isolation(input=input or "", env=changes) as (out, err, _):
        try:
            if cwd is not None:
                os.chdir(cwd)
            sys.argv = ["workbench", *argv]
            os._exit = _exit  # type: ignore[assignment]  # see _exit
            launch.main()
        except SystemExit as exc:
            code = _exit_status(exc.code)
        except Exception:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit = saved_exit
            os.chdir(here)
            sys.argv = saved_argv
            if collecting:
                gc.enable()  # `report` turns it off for its short life (reporting.py)
            _end_helper()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode(errors="backslashreplace")
    return subprocess.CompletedProcess(["workbench", *argv], code, _text(stdout), _text(stderr))


def _exit(code: int) -> None:
    """`report` ends its process with os._exit once all is written (reporting.py): here, the command's end."""
    raise SystemExit(code)


def _exit_status(code: object) -> int:
    """What the interpreter makes of sys.exit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _text(said: str) -> str:
    """As subprocess's text mode reads a pipe (universal newlines)."""
    return said.replace("\r\n", "\n").replace("\r", "\n")


def _end_helper() -> None:
    """The agents' wrapper helper (runs/processes.py) ends with the process that started it: here, with
    the command, so that no helper of an earlier command is left among the machine's processes."""
    processes = sys.modules.get("workbench.runs.processes")
    if processes is None:
        return
    helper = processes.Helper._shared
    if helper is not None and helper.owner == os.getpid():
        processes.Helper._shared = None
        helper.socket.close()
        helper.process.wait(timeout=30)
