"""One writer per workspace: every command and screen that writes to a workspace
(run, grade, evaluate, version new, promote) holds its lock while it writes.

The lock is fcntl.flock on `<workspace>/.workbench.lock`: the kernel releases it
when its holder exits, however it exits (kill -9 too), so a lock left by a dead
process is simply free. The holder writes its pid and command into the file so a
second writer can say who is in the way. The file itself is never deleted: a
deleted lock file lets two processes lock two different files of the same name.
A second lock in the same process is refused as well (flock locks belong to
open files, not processes): the app cannot run and promote at once either."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.formats.regular import read_regular_text

FILE = ".workbench.lock"
UNNAMED = "another process"


class WorkspaceBusy(WorkbenchError):
    """Another writer holds the workspace."""


def holder(workspace: Path) -> str:
    """Who holds (or last held) the lock, as its holder wrote it: 'pid N (command)'."""
    try:
        lines = read_regular_text(workspace / FILE, 4096, errors="replace").splitlines()
    except OSError:
        lines = []
    if len(lines) >= 2 and lines[0].isdigit():
        return f"pid {lines[0]} ({lines[1]})" + (f", since {lines[2]}" if len(lines) > 2 else "")
    return UNNAMED  # it has the lock and has not written its name yet


def command_line() -> str:
    """This process as a person would recognise it: `workbench run skill --trust`, or the app."""
    argv = sys.argv[1:] if sys.argv and sys.argv[0].endswith(("__main__.py", "workbench")) else sys.argv
    return " ".join(["workbench", *argv] if argv else ["workbench"])[:300]


@contextlib.contextmanager
def hold(
    workspace: Path,
    what: str,
    wait: bool = False,
    waiting: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the workspace's lock for `what` (a verb: run, promote...). Raises
    WorkspaceBusy naming the holder, or with wait=True waits for it (telling
    `waiting` who it waits for, once)."""
    workspace.mkdir(parents=True, exist_ok=True)
    fd = os.open(workspace / FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = holder(workspace)
            for _ in range(20):  # a holder writes its name just after it locks: give it a moment to
                if who != UNNAMED:
                    break
                time.sleep(0.05)
                who = holder(workspace)
            if not wait:
                raise WorkspaceBusy(
                    f"{workspace} is in use by {who}: one writer at a time. Wait for it to finish and run this "
                    "again, or add --wait to wait for it."
                ) from None
            if waiting is not None:
                waiting(f"waiting for {who} to finish with {workspace}…")
            fcntl.flock(fd, fcntl.LOCK_EX)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n{command_line()} ({what})\n{stamp}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
