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

    python -I -S reaper.py --serve SOCKET_FD

The same wrapper without an interpreter start per child (issue 26: ~5-20 ms of
CPU each): one long-lived helper per workbench process takes requests on a unix
socket (argv, cwd, env, and the child's stdin, stdout, stderr and REPORT_FD as
passed descriptors) and forks, for each, a wrapper that does exactly the above
and ends by writing its exit status on REPORT_FD (a line STATUS_MARK N). The
helper is a subreaper too: what a wrapper killed from outside left behind comes
to it and is killed. When the workbench goes (its end of the socket closes, even
at a kill -9), every wrapper is told to stop, so every tree goes.
"""

from __future__ import annotations

import _signal as signal  # the C module: `signal` would import enum, a few ms per start
import ctypes
import json
import os
import select
import socket
import sys
import time

TYPE_CHECKING = False  # not typing's: the wrapper starts without importing it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
SIGTERM, SIGKILL = 15, 9
STATUS_MARK = "\0wrapper-exit-status "  # the last line a served wrapper writes on its report fd


class Stop(Exception):
    pass


def _stop(_signum: int, _frame: object) -> NoReturn:
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


def _kill_all(report: Callable[[str], None], started: float, why: str) -> None:
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


def wrap(command: list[str], report_fd: int, parent_gone: Callable[[], bool]) -> int:
    """Run command under this process as subreaper; kill what it leaves. Its exit status, as main returns it."""
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
        if parent_gone():  # the one to tell us died before we could ask to be told
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


def main(argv: list[str]) -> int:
    if argv[1] == "--serve":
        serve(int(argv[2]))
        return 0
    return wrap(argv[3:], int(argv[1]), lambda: os.getppid() == 1)


def serve(socket_fd: int) -> None:
    """The long-lived helper: a wrapper forked for each request, until the workbench's end closes."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(SIGTERM, signal.SIG_IGN)  # only the workbench's going ends it: its socket closes
    control = socket.socket(fileno=socket_fd)
    helper = os.getpid()
    wrappers: set[int] = set()
    buffered = b""
    while True:
        ready, _, _ = select.select([control], [], [], 0.5)
        _reap(wrappers)
        if not ready:
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, 1 << 16, 4)
        except OSError:
            data, fds = b"", []
        if not data:
            break
        buffered += data
        # One request: a 4-byte length, then its JSON; its four descriptors come with its first bytes.
        length = int.from_bytes(buffered[:4], "big")
        while len(buffered) < 4 + length:
            more = control.recv(1 << 16)
            if not more:
                break
            buffered += more
        request, buffered = json.loads(buffered[4 : 4 + length]), buffered[4 + length :]
        pid = os.fork()
        if pid == 0:
            os._exit(_wrapper(request, fds, control, helper))
        wrappers.add(pid)
        for fd in fds:
            os.close(fd)
        control.sendall(pid.to_bytes(4, "big"))
    # The workbench is gone: every wrapper kills its tree, then whatever came to us is killed.
    for pid in wrappers:
        try:
            os.kill(pid, SIGTERM)
        except ProcessLookupError:
            pass
    until = time.monotonic() + 5
    while wrappers and time.monotonic() < until:
        _reap(wrappers)
        time.sleep(0.01)
    _kill_all(lambda _line: None, time.monotonic(), "the workbench is gone")


def _reap(wrappers: set[int]) -> None:
    """Collect ended wrappers; kill anything else that came to us (left by a wrapper killed from outside)."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            break
        wrappers.discard(pid)
    for pid in _children():
        if pid not in wrappers:
            try:
                os.kill(pid, SIGKILL)
            except ProcessLookupError:
                pass


def _wrapper(request: dict, fds: list[int], control: socket.socket, helper: int) -> int:
    """In a fork of the helper: the child's own session, its descriptors in place, then wrap() it."""
    try:
        control.close()
        os.setsid()
        stdin, stdout, stderr, report_fd = fds
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
        for fd in (stdin, stdout, stderr):
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        code = wrap(request["argv"], report_fd, lambda: os.getppid() != helper)
        os.write(report_fd, f"{STATUS_MARK}{code}\n".encode())
        return code
    except BaseException as exc:  # never back into the helper's loop
        try:
            os.write(2, f"the workbench's wrapper failed: {exc}\n".encode())
        except OSError:
            pass
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
