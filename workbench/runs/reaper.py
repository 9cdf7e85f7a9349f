"""A tiny wrapper that every bounded child runs under:

    python -I -S reaper.py REPORT_FD -- ARGV...

Why a wrapper: a process group is not enough. A child can call setsid() (or
double-fork into a new session), leave the group, keep the parent's stdout open
and outlive any killpg(); reading "until EOF" then waits for it. Linux's
answer is a *child subreaper* (prctl PR_SET_CHILD_SUBREAPER): every orphan in
the subtree is re-parented to the nearest subreaper instead of to init,
whatever session or group it moved to. So this wrapper makes itself a
subreaper, starts ARGV, and when ARGV exits (or when it is told to stop with
SIGTERM, or when the workbench dies: PR_SET_PDEATHSIG) it SIGKILLs every
process still below it, re-reading its children until none is left. Nothing it
started can outlive it, so its exit means EOF on the pipes.

It reports what it killed (pid, name, when) on REPORT_FD, one line each; its
exit status is ARGV's (128+N for a signal). Standalone on purpose: no imports
from the workbench, `-I -S` so it starts in a few milliseconds. Linux only.
"""

from __future__ import annotations

import _signal as signal  # the C module: `signal` would import enum, a few ms per start
import ctypes
import os
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
SIGTERM, SIGKILL = 15, 9


class Stop(Exception):
    pass


def _stop(_signum, _frame):
    raise Stop


def _children() -> list[int]:
    me = os.getpid()
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{task}/children") as handle:
                found += [int(pid) for pid in handle.read().split()]
    except OSError:
        pass
    return found


def _name(pid: int) -> str | None:
    """A live process's name; None for one already dead (a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            stat = handle.read()
    except OSError:
        return None
    name, state = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :][:1]
    return None if state in "ZX" else name


def _kill_all(report, started: float, why: str) -> None:
    """SIGKILL every process below us; orphans of the killed come to us too, so loop
    until waitpid says there are no children left."""
    signal.signal(SIGTERM, signal.SIG_IGN)
    seen: set[int] = set()
    while True:
        for pid in _children():
            if pid not in seen:
                seen.add(pid)
                name = _name(pid)
                if name is not None:
                    report(f"killed pid {pid} ({name}) {time.monotonic() - started:.2f} s after start: {why}")
            try:
                os.kill(pid, SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue


def _settle(seconds: float = 0.2) -> None:
    """Let children that are already ending finish by themselves (bwrap's pid-1
    process outlives the command by a few milliseconds), so only real leftovers
    are killed and reported."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        if not [pid for pid in _children() if _name(pid) is not None]:
            return
        time.sleep(0.005)


def main(argv: list[str]) -> int:
    report_fd = int(argv[1])
    command = argv[3:]
    started = time.monotonic()

    def report(line: str) -> None:
        try:
            os.write(report_fd, (line + "\n").encode())
        except OSError:
            pass

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0)
    signal.signal(SIGTERM, _stop)
    os.set_inheritable(report_fd, False)
    status = None
    try:
        if os.getppid() == 1:  # the workbench died before we could ask to be told
            raise Stop
        child = os.fork()
        if child == 0:
            signal.signal(SIGTERM, signal.SIG_DFL)
            try:
                os.execvp(command[0], command)
            except OSError as exc:
                os.write(2, f"cannot run {command[0]}: {exc.strerror}\n".encode())
            os._exit(127)
        while status is None:
            pid, code = os.waitpid(-1, 0)
            if pid == child:
                status = code
        _settle()
        _kill_all(report, started, "left behind when the command exited")
    except Stop:
        _kill_all(report, started, "the run's time was up or it was cancelled")
        return 128 + SIGTERM if status is None else os.waitstatus_to_exitcode(status)
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
