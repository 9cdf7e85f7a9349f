"""Listening sockets made in a sandboxed turn's own network namespace by the workbench itself, before the turn
goes on (docs/security.md, "The network"): the relay then takes each connection from outside, and no process of
ours starts inside the sandbox (workbench/runs/inside.py, a Python start of ~14 ms of CPU every turn, is what
this saves; it stays the way where this cannot be done).

A namespace is a property of a thread (a task), not of the process: a short thread of its own joins the turn's
namespace (setns), makes the sockets, and ends; a socket keeps the namespace it was made in, whoever holds it.
No other thread of the workbench ever changes namespace, and nothing but socket, bind and listen runs in that
thread while it is inside. Joining needs CAP_SYS_ADMIN over the turn's namespace: the workbench run as root
(bubblewrap makes the namespace in the machine's user namespace then). `joinable()` finds out once."""

from __future__ import annotations

import errno
import functools
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
CLONE_NEWNET = 0x40000000
SETTLE = 2.0  # seconds the turn's loopback may take to come up (bubblewrap brings it up before its mounts)


class NotMade(OSError):
    """The sockets could not be made in the turn's namespace."""


@functools.lru_cache(maxsize=1)
def _setns() -> Any:  # the C function, or None
    import ctypes  # here: a sandboxed turn's need, not every start's

    try:
        return ctypes.CDLL(None, use_errno=True).setns
    except (OSError, AttributeError):
        return None


def _join(fd: int) -> None:
    import ctypes

    setns = _setns()
    if setns is None or setns(fd, CLONE_NEWNET) != 0:
        code = ctypes.get_errno() if setns is not None else errno.ENOSYS
        raise OSError(code, os.strerror(code))


@functools.lru_cache(maxsize=1)
def joinable() -> bool:
    """Whether this process may join a turn's network namespace: root, with setns (tried on its own).
    WORKBENCH_RELAY=inside says no: inside.py's way, kept tested on a machine where this way is taken."""
    if os.environ.get("WORKBENCH_RELAY") == "inside" or os.geteuid() != 0 or _setns() is None:
        return False
    try:
        _in_thread(lambda: None, "/proc/thread-self/ns/net", own_refused=False)
    except OSError:
        return False
    return True


def listeners(pid: int, wanted: list[tuple[str, int, bool]]) -> list[tuple[int, socket.socket]]:
    """Listening TCP sockets at these (address, port, required) in the network namespace of process `pid`
    (bubblewrap's first process of the turn, waiting for its go), each with its place in `wanted`; one not
    required is left out when it cannot be made (::1 for "localhost" where there is no IPv6). Raises NotMade,
    saying why; none is left open then."""

    def make() -> list[tuple[int, socket.socket]]:
        made: list[tuple[int, socket.socket]] = []
        try:
            for at, (address, port, required) in enumerate(wanted):
                try:
                    made.append((at, _listen(address, port)))
                except OSError:
                    if required:
                        raise
        except OSError:
            for _at, listener in made:
                listener.close()
            raise
        return made

    try:
        return _in_thread(make, f"/proc/{pid}/ns/net")
    except OSError as exc:
        raise NotMade(exc.errno, f"the turn's network could not be set up: {exc.strerror or exc}") from None


def _listen(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        deadline = time.monotonic() + SETTLE
        while True:
            try:
                listener.bind((address, port))
                break
            except OSError as exc:  # the loopback not up yet: bubblewrap brings it up as it starts
                if exc.errno != errno.EADDRNOTAVAIL or time.monotonic() > deadline:
                    raise
                time.sleep(0.001)
        listener.listen(128)
        listener.setblocking(False)
        return listener
    except OSError:
        listener.close()
        raise


def _same(one: int, other: int) -> bool:
    first, second = os.fstat(one), os.fstat(other)
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _in_thread(work: Callable[[], T], namespace: str, own_refused: bool = True) -> T:
    """work() run in a thread of its own inside the namespace at that path, which ends after it: if going back
    failed, nothing else would ever run in the wrong namespace."""
    result: dict[str, Any] = {}

    def inside() -> None:
        try:
            ours = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
            try:
                theirs = os.open(namespace, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    if own_refused and _same(ours, theirs):  # a pid no longer the turn's: the machine's own
                        raise OSError(errno.EPERM, "the process is not in a network namespace of its own")
                    _join(theirs)
                finally:
                    os.close(theirs)
                try:
                    result["made"] = work()
                finally:
                    _join(ours)  # a failure here ends this thread: it runs nothing more
            finally:
                os.close(ours)
        except OSError as exc:
            result["error"] = exc

    thread = threading.Thread(target=inside, name="workbench-netns", daemon=True)
    thread.start()
    thread.join()
    if "error" in result:
        for _at, listener in result.get("made") or ():  # made, then going back failed: not kept
            listener.close()
        raise result["error"]
    return result["made"]
