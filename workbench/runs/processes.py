"""The one way the workbench runs a child (an agent's turn, a command_check, a
chock guard, a judge): bounded in time, in size, and in what it leaves behind.

- Its own process group and session (start_new_session), under the subreaper
  wrapper (workbench/runs/reaper.py): whatever it starts, even a grandchild that
  called setsid() and holds stdout open, is killed when it exits or at its
  timeout. A process group alone cannot do that: setsid() leaves the group.
  The wrapper is forked by one long-lived helper (Helper below), so no
  interpreter starts per child.
- Reading is bounded in time (the deadline covers reading, not only waiting: no
  communicate() that waits for an EOF that never comes) and in size (the first
  `limit` bytes of each stream are kept, the rest is drained and counted).
- The result says what was killed, when, and what was cut."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.runs import reaper
from workbench.runs.bounds import alive

if TYPE_CHECKING:
    from workbench.runs.bounds import TurnBounds

REAPER = Path(__file__).with_name("reaper.py")
OUTPUT_LIMIT = 4 * 1024 * 1024  # bytes kept of each of stdout and stderr
GRACE = 5.0  # seconds the wrapper gets to kill its tree before the group is killed from here
WATCH = 0.2  # seconds between looks at a sandboxed turn's bounds
CHUNK = 65536


@dataclass
class Finished:
    """How a bounded child ended. code is None when it was stopped (timeout or cancel)."""

    code: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    cancelled: bool = False
    decided: bool = False  # stopped because `decided` said what was wanted was seen (not a failure)
    killed: list[str] = field(default_factory=list)  # "killed pid N (name) T s after start: why"
    cut: list[str] = field(default_factory=list)  # "stdout cut at N bytes (M more bytes dropped)"
    bound: str | None = None  # the sandbox's bound it hit ("hit the process bound: 64 processes"): stopped

    @property
    def evidence(self) -> str:
        """What was killed and cut, for a verdict or a run record ('' when nothing was)."""
        return "; ".join(self.killed + self.cut)


def startable(program: str, env: dict[str, str], cwd: str | Path | None) -> None:
    """Raise OSError as exec would, before the wrapper starts (it can only say 127)."""
    if os.sep in program:
        path = Path(program) if os.path.isabs(program) else Path(cwd or ".") / program
        if not path.exists():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if not os.access(path, os.X_OK) or path.is_dir():
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    elif shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def run_bounded(
    argv: list[str],
    stdin: str = "",
    timeout: float = 120.0,
    cwd: str | Path | None = None,
    env: dict[str, str] | None = None,
    limit: int = OUTPUT_LIMIT,
    cancel: threading.Event | None = None,
    contained: bool = False,
    decided: Callable[[str], bool] | None = None,
    bounds: TurnBounds | None = None,
) -> Finished:
    """Run argv to its end or its timeout. Raises OSError when it cannot start.
    contained: argv is already a pid namespace that dies whole with its first
    process (bubblewrap's --unshare-pid --die-with-parent): the kernel kills
    everything in it, so the wrapper (a Python start, ~12 ms of CPU) is skipped.
    decided: told each new run of whole stdout lines once, as they end; once it says True,
    the child's tree is stopped as at a cancel, and Finished.decided says so.
    bounds: argv is bubblewrap's, and the turn is held in these bounds (workbench/runs/bounds.py) from before
    its first process runs; they are looked at as it runs, and a bound hit stops it as a timeout does, said in
    Finished.bound. Whatever is left of it in its cgroups is killed at the end."""
    full_env = {**os.environ, **(env or {})}
    startable(argv[0], full_env, cwd)
    if not contained and bounds is None:
        served = Helper.shared().start(argv, stdin, cwd, full_env)
        if served is not None:
            helped, report_read = served
            return _read(helped, report_read, stdin, timeout, limit, cancel, False, decided, None, time.monotonic())
    report_read, report_write = os.pipe()
    started = time.monotonic()
    wrapper = [] if contained else [sys.executable, "-I", "-S", str(REAPER), str(report_write), "--"]
    passed: tuple[int, ...] = () if contained else (report_write,)
    if bounds is not None:
        argv, extra = bounds.command(argv)
        passed += extra
    try:
        with bounds.starting() if bounds is not None else contextlib.nullcontext():  # born in its cgroups
            process = subprocess.Popen(
                [*wrapper, *argv],
                cwd=cwd,
                env=full_env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=passed,
            )
    except OSError:
        os.close(report_read)
        if bounds is not None:
            bounds.close()  # its pipes closed, its cgroups (made, still empty) removed
        raise
    finally:
        os.close(report_write)
    try:
        if bounds is not None:
            bounds.started()
        return _read(process, report_read, stdin, timeout, limit, cancel, contained, decided, bounds, started)
    finally:
        if bounds is not None:
            bounds.close()


class Served:
    """A child wrapped by the helper's fork (not our own child): what _read needs of a Popen. Its exit
    status comes as the last line of its report (reaper.STATUS_MARK); wait() is told it by _read."""

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int) -> None:
        self.pid = pid
        self.stdin = os.fdopen(stdin, "wb", buffering=0)
        self.stdout = os.fdopen(stdout, "rb", buffering=0)
        self.stderr = os.fdopen(stderr, "rb", buffering=0)
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        """The status its wrapper reported; else it is still going, or was killed before it could say."""
        if self.returncode is not None:
            return self.returncode
        until = time.monotonic() + (timeout or 0)
        while alive(self.pid):
            if time.monotonic() >= until:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            time.sleep(0.01)
        self.returncode = 128 + signal.SIGKILL
        return self.returncode


class Helper:
    """The long-lived wrapper helper (reaper.py --serve), one per workbench process, started on first use.
    It never dies with the thread that started it (no parent-death signal): it ends when our end of its
    socket closes, which the kernel does when this process ends, however it ends."""

    _shared: Helper | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(REAPER), "--serve", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,  # a Ctrl-C at the terminal is ours to handle, not the helper's
            )
        finally:
            theirs.close()
        self.socket = ours
        self.owner = os.getpid()
        self.lock = threading.Lock()
        self.broken = False

    @classmethod
    def shared(cls) -> Helper:
        with cls._lock:
            helper = cls._shared
            if helper is None or helper.owner != os.getpid() or helper.broken:  # a fork of ours starts its own
                helper = cls._shared = cls()
            return helper

    def start(
        self, argv: list[str], stdin: str, cwd: str | Path | None, env: dict[str, str]
    ) -> tuple[Served, int] | None:
        """(Served, the report's read end) for argv started under a fresh wrapper; None when the helper
        cannot serve (then the caller starts a wrapper of its own). OSError as Popen would raise it."""
        where = os.path.abspath(cwd if cwd is not None else ".")
        if not os.path.isdir(where):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(cwd))
        request = json.dumps({"argv": argv, "cwd": where, "env": env}).encode()
        ends = [os.pipe() for _ in range(4)]  # stdin, stdout, stderr, report: (read, write) each
        theirs = [ends[0][0], ends[1][1], ends[2][1], ends[3][1]]
        ours = [ends[0][1], ends[1][0], ends[2][0], ends[3][0]]
        try:
            with self.lock:
                message = len(request).to_bytes(4, "big") + request
                sent = socket.send_fds(self.socket, [message], theirs)
                self.socket.sendall(message[sent:])  # a signal can cut a large send short
                reply = b""
                while len(reply) < 4:
                    more = self.socket.recv(4 - len(reply))
                    if not more:
                        raise OSError(errno.EPIPE, "the wrapper helper ended")
                    reply += more
        except OSError:
            self.broken = True
            for fd in theirs + ours:
                os.close(fd)
            return None
        for fd in theirs:
            os.close(fd)
        return Served(int.from_bytes(reply, "big"), ours[0], ours[1], ours[2]), ours[3]


def _read(
    process: subprocess.Popen | Served,
    report_read: int,
    stdin: str,
    timeout: float,
    limit: int,
    cancel: threading.Event | None,
    contained: bool,
    decided: Callable[[str], bool] | None,
    bounds: TurnBounds | None,
    started: float,
) -> Finished:
    """run_bounded's reading, to the child's end, its timeout, its cancel or a bound it hit."""
    assert process.stdin and process.stdout and process.stderr
    report = os.fdopen(report_read, "rb", buffering=0)
    out, err, rep = process.stdout.fileno(), process.stderr.fileno(), report.fileno()
    kept = {out: bytearray(), err: bytearray(), rep: bytearray()}
    dropped = {out: 0, err: 0, rep: 0}
    selector = selectors.DefaultSelector()
    for fd in kept:
        selector.register(fd, selectors.EVENT_READ)
    pending = memoryview(stdin.encode())
    if pending:
        os.set_blocking(process.stdin.fileno(), False)
        selector.register(process.stdin, selectors.EVENT_WRITE)
    else:
        process.stdin.close()
    deadline = started + timeout
    stopped_at: float | None = None
    timed_out = cancelled = seen = False
    hit: str | None = None
    look = started + WATCH  # when the bounds are looked at next
    told = 0  # bytes of stdout already told to `decided`
    try:
        while selector.get_map():
            now = time.monotonic()
            if bounds is not None and stopped_at is None and now >= look:
                hit, look = bounds.check(), now + WATCH
            if stopped_at is None and (now >= deadline or seen or hit or (cancel is not None and cancel.is_set())):
                timed_out = now >= deadline and not hit
                cancelled = not timed_out and not seen and not hit
                if contained:  # its first process goes, and the kernel takes the whole namespace with it
                    _kill_group(process)
                else:
                    _stop(process)
                stopped_at = now
            if stopped_at is not None and now - stopped_at > GRACE:
                break
            wait = (stopped_at + GRACE - now) if stopped_at is not None else deadline - now
            if cancel is not None:
                wait = min(wait, 0.1)
            if bounds is not None and stopped_at is None:
                wait = min(wait, look - now)
            for key, _ in selector.select(max(wait, 0.0)):
                if key.fileobj is process.stdin:
                    try:
                        written = os.write(process.stdin.fileno(), pending[:CHUNK])
                    except BlockingIOError:
                        continue
                    except OSError:  # it closed its stdin: the rest is not read
                        written = len(pending)
                    pending = pending[written:]
                    if not pending:
                        selector.unregister(process.stdin)
                        process.stdin.close()
                    continue
                data = os.read(key.fd, CHUNK)
                if not data:
                    selector.unregister(key.fd)
                    continue
                room = max(limit - len(kept[key.fd]), 0)
                kept[key.fd] += data[:room]
                dropped[key.fd] += max(len(data) - room, 0)
                if decided is not None and key.fd == out and not seen and b"\n" in data[:room]:
                    whole = kept[out].rfind(b"\n") + 1  # the lines ended so far; each is told once
                    seen = decided(kept[out][told:whole].decode("utf-8", "replace"))
                    told = whole
    finally:
        selector.close()
    if isinstance(process, Served):  # its wrapper's last report line is its exit status
        text, mark = bytes(kept[rep]), reaper.STATUS_MARK.encode()
        if mark in text:
            text, said = text.split(mark, 1)
            kept[rep] = bytearray(text)
            process.returncode = int(said.split(b"\n", 1)[0])
    code: int | None = None
    try:
        code = process.wait(GRACE if stopped_at is None else max(stopped_at + GRACE - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:  # the wrapper did not finish in time: the group goes, from here
        _kill_group(process)
        process.wait()
    if stopped_at is not None:
        code = None
    elif bounds is not None:
        hit = bounds.check(final=True)  # it ended by itself: a bound hit on the way still fails it
    for stream in (process.stdin, process.stdout, process.stderr, report):
        try:
            stream.close()
        except OSError:
            pass
    killed = kept[rep].decode("utf-8", "replace").splitlines()
    if hit and stopped_at is not None:
        killed.insert(0, f"{hit}: its process tree was killed")
    elif timed_out:
        killed.insert(0, f"timed out after {timeout:g} s: its process tree was killed")
    elif cancelled:
        killed.insert(0, "cancelled: its process tree was killed")
    elif seen:
        killed.insert(0, "stopped once its output decided what was asked: its process tree was killed")
    cut = [
        f"{name} cut at {limit} bytes ({dropped[fd]} more bytes dropped)"
        for name, fd in (("stdout", out), ("stderr", err))
        if dropped[fd]
    ]
    return Finished(
        code,
        kept[out].decode("utf-8", "replace"),
        kept[err].decode("utf-8", "replace"),
        round(time.monotonic() - started, 3),
        timed_out,
        cancelled,
        seen and not timed_out and not hit,
        killed,
        cut,
        hit,
    )


async def run_bounded_async(argv: list[str], pool: Executor | None = None, **options: Any) -> Finished:
    """run_bounded in a thread of `pool`; cancelling the awaiting task kills the child's tree."""
    import asyncio  # here: its caller's loop has it loaded; the commands that run no agent start without it

    cancel = threading.Event()
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(pool, lambda: run_bounded(argv, cancel=cancel, **options))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancel.set()
        try:  # wait for it to be gone, so nothing of it outlives the event loop
            await asyncio.wait_for(asyncio.shield(future), GRACE + 2)
        except BaseException:
            pass
        raise


def _stop(process: subprocess.Popen | Served) -> None:
    """Ask the wrapper to kill its whole tree (it is the only one that can reach
    descendants that left the group); the group is killed from here after GRACE."""
    try:
        os.kill(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def _kill_group(process: subprocess.Popen | Served) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
