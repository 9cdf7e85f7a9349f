"""The confined network of a sandboxed agent: it reaches its model API and nothing else (docs/security.md).

The sandbox has a network namespace of its own (bwrap --unshare-net): its own loopback, nothing of the
machine's, so no host service on 127.0.0.1, no abstract unix socket and no cluster scheduler is in reach.
What it may reach goes through two relays:
- inside, listening sockets on each allowed loopback endpoint at the same address and port as on the host,
  and on an HTTP proxy port for every other endpoint: made in the turn's namespace by the workbench itself
  where it may join it (Channel.serve_in, workbench/runs/netns.py), else by the sandbox's first process
  (workbench/runs/inside.py, over a unix socket of the turn's: Channel.serve_path);
- outside, one `Relay` per run (a thread of the workbench, started and stopped with the run) takes each
  connection on a unix socket of its turn (a `Channel`, in a private 0700 folder, bound into that turn's
  sandbox alone), checks the endpoint it is for against the run's allow list, and only then connects.
  A CONNECT to an allowed host:port is tunnelled; a plain-HTTP proxy request to one is sent on as one
  request (Connection: close); anything else gets 403 and is written down in the turn's `refused`.

The relay lives in the workbench's own process, so what a turn can take of it is bounded: CONNECTIONS open
connections per turn (and a share of the process's descriptors for all turns together), the ones past it
answered 503 at once and closed; FIRST_LINE_TIMEOUT for what a connection must say first; HEADER_LIMIT bytes
of a request's head, and each stream's buffer (asyncio's pause at twice its limit, drain's high-water mark)
while it is piped. An error accepting a connection (out of descriptors) is not printed: accepting pauses.

The allow list: the executor's model endpoint (Executor.model_endpoints) and the config's network_allow."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import resource
import shutil
import socket
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from workbench.formats.endpoint import PORTS, Endpoint, endpoint
from workbench.runs.modes import MODEL, OPEN  # noqa: F401  (network.MODEL ... as callers name them)
from workbench.runs.modes import NETWORKS as CHOICES  # noqa: F401

MORE = "and more endpoints, not kept"
HEADER_LIMIT = 64 * 1024  # bytes of a proxy request's head read before it is refused
CONNECT_TIMEOUT = 30.0  # to connect to the model endpoint
FIRST_LINE_TIMEOUT = 5.0  # for a connection's first line and a proxy request's head: both are sent at once
CONNECTIONS = 32  # open at once on one turn's channel; far above what an agent's HTTP client keeps
RESERVED_FDS = 256  # descriptors the relay never takes from the workbench, whatever the turns open
LOCAL = ("127.0.0.1", "::1")  # what "localhost" is listened on
PROXY_PORT = 3128  # where a turn's own namespace has its proxy (the first port its endpoints leave free)
REFUSALS = 64  # distinct refusals kept for a turn's record; past them, one line says there were more


def endpoints(texts: Iterable[str]) -> tuple[Endpoint, ...]:
    return tuple(sorted({endpoint(t) for t in texts}))


@dataclass
class Channel:
    """One turn's way out, and the endpoints it was refused. Served one of two ways: a unix socket of its own
    bound into the sandbox, where inside.py listens (`serve_path`); or, where the workbench may join the turn's
    network namespace, listening sockets made there by the workbench itself (`serve_in`, workbench/runs/netns.py)."""

    path: Path
    relay: Relay
    refused: list[str] = field(default_factory=list)
    servers: list[asyncio.AbstractServer] = field(default_factory=list)
    open: int = 0  # its connections open now
    tasks: set[asyncio.Task] = field(default_factory=set)  # their tasks: cancelled when the channel closes

    def close(self) -> None:
        self.relay.close(self)

    def serve_path(self) -> None:
        """The unix socket at `path`, for inside.py, which says first what each connection is for."""
        self.relay.serve(self, path=self.path)

    def serve_in(self, pid: int, proxy: int) -> None:
        """Listening in the network namespace of process `pid`: on each allowed loopback endpoint at its own
        address and port, and on 127.0.0.1:`proxy` as the HTTP proxy for the rest. Raises netns.NotMade."""
        from workbench.runs import netns  # ctypes and threads only for a sandboxed turn

        wanted: list[tuple[str, int, bool]] = []
        said: list[bytes] = []
        for allowed in self.relay.loopback:
            for address in LOCAL if allowed.host == "localhost" else [allowed.host.strip("[]")]:
                wanted.append((address, allowed.port, address != "::1" or allowed.host != "localhost"))
                said.append(b"TO " + str(allowed).encode() + b"\n")
        wanted.append(("127.0.0.1", proxy, True))
        said.append(b"PROXY\n")
        made = netns.listeners(pid, wanted)
        self.relay.serve(self, listening=[(listener, said[at]) for at, listener in made])

    def refuse(self, what: str) -> None:
        """Kept for the run's record once, and no more than REFUSALS of them: an agent asking for hosts
        without end grows neither the workbench's memory nor run.json."""
        if what in self.refused or (self.refused and self.refused[-1] == MORE):
            return
        self.refused.append(what if len(self.refused) < REFUSALS else MORE)


def proxy_port(loopback: Iterable[Endpoint]) -> int:
    """The port of the proxy a turn's own namespace listens on: any port none of its loopback endpoints has."""
    taken = {e.port for e in loopback}
    return next(port for port in itertools.count(PROXY_PORT) if port not in taken)


class Relay:
    """The host side, one per run: connects a sandboxed turn to its allowed endpoints, and to nothing else."""

    def __init__(self, allowed: Iterable[Endpoint]) -> None:
        self.allowed = frozenset(allowed)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.folder: Path | None = None
        self.numbers = itertools.count(1)
        self.open = 0  # connections open now, every turn's
        # Each connection costs two descriptors (the turn's and the model's): all of them together never
        # take the workbench's last RESERVED_FDS, whatever -j is.
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        self.most = max(CONNECTIONS, ((soft if soft != resource.RLIM_INFINITY else 65536) - RESERVED_FDS) // 2)

    @property
    def loopback(self) -> list[Endpoint]:
        """The allowed endpoints the sandbox listens on at their own address (the rest go through its proxy);
        one server allowed by two names (localhost:P beside 127.0.0.1:P or [::1]:P) once, as localhost: a
        second listener at the same address and port stopped every turn."""
        found = sorted(e for e in self.allowed if e.loopback)
        named = {e.port for e in found if e.host == "localhost"}
        return [e for e in found if e.host == "localhost" or e.port not in named or e.host.strip("[]") not in LOCAL]

    def __enter__(self) -> Relay:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def start(self) -> Relay:
        # A folder only this user can enter: nothing else on the machine can use the relay's sockets.
        self.folder = Path(tempfile.mkdtemp(prefix="workbench-relay-"))
        os.chmod(self.folder, 0o700)
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(_quiet_on_os_errors)
        self.thread = threading.Thread(target=self.loop.run_forever, name="workbench-relay", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.loop is not None and self.thread is not None:
            with contextlib.suppress(RuntimeError, TimeoutError):
                asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            if not self.thread.is_alive():
                self.loop.close()
        self.loop = self.thread = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    async def _shutdown(self) -> None:
        """Every connection still open is cancelled and has ended before the loop closes (a coroutine left
        to the loop's closing would print its error)."""
        current = asyncio.current_task()
        tasks = [task for task in asyncio.all_tasks() if task is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def channel(self) -> Channel:
        """One turn's channel, not yet served (Channel.serve_path or serve_in): closed after the turn."""
        assert self.loop is not None and self.folder is not None, "the relay is not started"
        return Channel(self.folder / f"turn-{next(self.numbers)}.sock", self)

    def serve(
        self, channel: Channel, path: Path | None = None, listening: Iterable[tuple[socket.socket, bytes]] = ()
    ) -> None:
        """The channel served on a unix socket at `path` (each connection says first what it is for), or on
        these listening sockets (each with what its connections are for)."""
        assert self.loop is not None, "the relay is not started"
        try:
            servers = asyncio.run_coroutine_threadsafe(self._listen(channel, path, listening), self.loop).result(10)
        except BaseException:
            for listener, _said in listening:
                listener.close()
            raise
        channel.servers += servers

    async def _listen(
        self, channel: Channel, path: Path | None, listening: Iterable[tuple[socket.socket, bytes]]
    ) -> list[asyncio.AbstractServer]:
        def serving(said: bytes | None) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
            async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                if channel.open >= CONNECTIONS or self.open >= self.most:
                    # Refused at once, saying why: a connection held here holds the workbench's descriptors.
                    why = f"more than {min(CONNECTIONS, self.most)} connections at once to the relay"
                    channel.refuse(why)
                    await _answer(writer, 503, f"the workbench's relay refused a connection: {why}")
                    writer.close()
                    return
                channel.open += 1
                self.open += 1
                task = asyncio.current_task()
                if task is not None:
                    channel.tasks.add(task)
                try:
                    await self._serve(channel, reader, writer, said)
                except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, TimeoutError):
                    pass
                except asyncio.CancelledError:  # its turn ended, or the relay stopped: it ends, quietly
                    pass  # (let out, asyncio's callback for the connection printed a traceback for each)
                finally:
                    channel.tasks.discard(task)
                    channel.open -= 1
                    self.open -= 1
                    writer.close()

            return serve

        servers: list[asyncio.AbstractServer] = []
        if path is not None:
            servers.append(await asyncio.start_unix_server(serving(None), path=str(path), limit=HEADER_LIMIT))
            os.chmod(path, 0o600)
        for listener, said in listening:
            servers.append(await asyncio.start_server(serving(said), sock=listener, limit=HEADER_LIMIT))
        return servers

    def close(self, channel: Channel) -> None:
        if self.loop is None or not channel.servers:
            return
        servers, channel.servers = channel.servers, []
        for server in servers:
            self.loop.call_soon_threadsafe(server.close)
        # Its connections end with it: one left open held two descriptors, a place under the run's cap and the
        # ended turn's namespace.
        self.loop.call_soon_threadsafe(_cancel, channel)
        with contextlib.suppress(OSError):
            channel.path.unlink()

    async def _serve(
        self, channel: Channel, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, said: bytes | None
    ) -> None:
        """said: what the connection is for, known from where it came; None: its first line says (inside.py)."""
        if said is None:
            said = await asyncio.wait_for(reader.readline(), FIRST_LINE_TIMEOUT)
        if said.startswith(b"TO "):  # a connection to a loopback endpoint the sandbox listens on
            wanted = endpoint(said[3:].decode("ascii", "replace"))
            if wanted not in self.allowed:
                channel.refuse(str(wanted))
                return
            upstream = await self._connect(wanted)
            await _pipe(reader, writer, *upstream)
        elif said == b"PROXY\n":
            await self._proxy(channel, reader, writer)

    async def _proxy(self, channel: Channel, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), FIRST_LINE_TIMEOUT)
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = (lines[0].split(" ") + ["", "", ""])[:3]
        tunnel = method.upper() == "CONNECT"
        try:
            wanted, path = (endpoint(target), "") if tunnel else _absolute(target)
        except ValueError:
            await _answer(writer, 400, f"not a proxy request: {lines[0][:200]!r}")
            return
        if wanted not in self.allowed:
            channel.refuse(str(wanted))
            await _answer(
                writer,
                403,
                f"the workbench's sandbox lets the agent reach only its model API; {wanted} is not allowed "
                "(the config's network_allow adds an endpoint; --network open opts out)",
            )
            return
        try:
            upstream = await self._connect(wanted)
        except (OSError, TimeoutError) as exc:
            await _answer(writer, 502, f"{wanted} cannot be reached: {exc}")
            return
        if tunnel:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:  # one request, in origin form, and the connection closed after its answer
            kept = [
                line
                for line in lines[1:]
                if line and not line.lower().startswith(("proxy-", "connection:", "keep-alive:"))
            ]
            upstream[1].write(("\r\n".join([f"{method} {path} {version}", *kept, "Connection: close"]) + "\r\n\r\n")
                              .encode("latin-1"))  # fmt: skip
        await _pipe(reader, writer, *upstream)

    async def _connect(self, wanted: Endpoint) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.wait_for(asyncio.open_connection(wanted.host, wanted.port), CONNECT_TIMEOUT)


def _cancel(channel: Channel) -> None:
    for task in list(channel.tasks):
        task.cancel()


def _quiet_on_os_errors(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """What a turn makes go wrong on its socket (accepting while out of descriptors: asyncio pauses accepting
    and says so with a traceback) is not the workbench's error to print; anything else is."""
    if isinstance(context.get("exception"), OSError):
        return
    loop.default_exception_handler(context)


def _absolute(target: str) -> tuple[Endpoint, str]:
    """A plain-HTTP proxy request's target (http://host:port/path?query): where to, and the path to ask for."""
    parts = urlsplit(target)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(target)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Endpoint(parts.hostname.lower(), parts.port or PORTS["http"]), path


async def _answer(writer: asyncio.StreamWriter, status: int, why: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway", 503: "Service Unavailable"}[status]
    body = (why + "\n").encode()
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()


async def _pipe(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    upstream_reader: asyncio.StreamReader,
    upstream_writer: asyncio.StreamWriter,
) -> None:
    async def copy(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                target.write(data)
                await target.drain()
            if target.can_write_eof():
                target.write_eof()
        except OSError:
            pass

    try:
        await asyncio.gather(copy(reader, upstream_writer), copy(upstream_reader, writer))
    finally:
        upstream_writer.close()
