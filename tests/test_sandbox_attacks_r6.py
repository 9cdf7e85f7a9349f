"""Attacks on round 6's relay (the workbench, as root, makes a turn's listening sockets in the turn's own network
namespace from a short thread of its own, and its relay accepts them from outside; docs/security.md, "The
network"), as a hostile agent and a hostile suite would make them. Each test is an attack: passing, it held; a
strict xfail is a hole found, said in its reason.

The class: every way the agent, or a file of the suite, could use this way to reach what it must not, or to
hurt the workbench:
- reaching a host service through the listeners: another port or address of the sandbox's loopback
  (127.0.0.2, ::1, IPv4-mapped IPv6), the proxy with odd targets (another name or spelling of the loopback,
  userinfo, a plain request whose Host says another port, a second request piped after the first);
- binding the turn's ports before the workbench does, or anything of the turn running before the go;
- the workbench's thread making a socket in the wrong namespace (a pid that is not the turn's any more: the
  child died in its set-up and its number was taken), or a workbench thread left in a turn's namespace after
  a success or a failure (then its later sockets and processes would be there);
- holding the relay's descriptors or memory through the listeners: more connections than the cap, silent
  connections (slowloris), a head past the limit; all must come back when they end;
- a turn's listeners outliving its channel, or one turn reaching another turn's listeners (-j);
- the allow list itself making the sockets fail (two names of one loopback model: every turn stopped);
- the environment: ALL_PROXY and NO_PROXY in any case dropped, the proxy variables ours, whatever the
  machine's environment had.

These run the relay in this process and a turn as `wrap` + `run_bounded` make it (what `workbench run` does,
without its start-up), or a bare bubblewrap box joined with nsenter: a few seconds each."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from workbench.formats.endpoint import endpoint
from workbench.runs import netns, network, sandbox
from workbench.runs.executors.base import TurnCommand
from workbench.runs.processes import run_bounded

needs_bwrap = pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()}")
needs_join = pytest.mark.skipif(
    not netns.joinable(), reason="the workbench cannot join a sandbox's network namespace here (not root)"
)
PYTHON = "/usr/bin/python3"


class Saying(BaseHTTPRequestHandler):
    word = b""

    def do_GET(self) -> None:  # noqa: N802 - the http.server's name
        self.send_response(200)
        self.send_header("content-length", str(len(self.word)))
        self.end_headers()
        self.wfile.write(self.word)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serving(word: bytes) -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (Saying,), {"word": word}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def relay(*allowed: str) -> Iterator[network.Relay]:
    with network.Relay([endpoint(a) for a in allowed]) as started:
        yield started


@contextlib.contextmanager
def box() -> Iterator[int]:
    """A bare bubblewrap sandbox with a network namespace of its own: the pid of its first process."""
    bwrap = subprocess.Popen(
        ["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--die-with-parent", "sleep", "60"]
    )
    try:
        deadline = time.monotonic() + 10
        while not (child := Path(f"/proc/{bwrap.pid}/task/{bwrap.pid}/children").read_text().split()):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        yield int(child[0])
    finally:
        if child:  # pid 1 of the box's pid namespace: everything in it dies with it
            with contextlib.suppress(OSError):
                os.kill(int(child[0]), signal.SIGKILL)
        bwrap.kill()
        bwrap.wait()
        deadline = time.monotonic() + 10
        while child and _alive(int(child[0])) and time.monotonic() < deadline:
            time.sleep(0.01)


def _alive(pid: int) -> bool:
    """Whether the process still has its namespaces (a zombie, or a pid gone, has none)."""
    try:
        os.close(os.open(f"/proc/{pid}/ns/net", os.O_RDONLY))
    except OSError:
        return False
    return True


def inside(pid: int, code: str, timeout: float = 60) -> dict:
    """Python run in the network namespace of `pid`: the dict it prints as JSON."""
    done = subprocess.run(
        ["nsenter", "-t", str(pid), "-n", sys.executable, "-I", "-c", code],
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def turn(tmp_path: Path, script: str, used: network.Relay, env: dict | None = None) -> tuple[dict, network.Channel]:
    """One sandboxed turn relayed by `used` (its listeners made by the workbench in the turn's namespace): what
    the script prints as JSON, and the turn's channel (closed)."""
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    channel = used.channel()
    held = sandbox.Confinement(channel=channel)
    command = sandbox.wrap(TurnCommand(argv=[PYTHON, "-I", "-c", script], env=env or {}), repo, home, held)
    try:
        finished = run_bounded(
            command.argv, cwd=repo, env=command.env, contained=True, bounds=command.bounds, timeout=60
        )
    finally:
        channel.close()
    assert finished.code == 0 and finished.bound is None, finished
    return json.loads(finished.stdout), channel


def threads_out_of_our_namespace() -> list[str]:
    ours = os.stat("/proc/self/ns/net").st_ino
    found = []
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            if os.stat(task / "ns" / "net").st_ino != ours:
                found.append((task / "comm").read_text().strip())
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


PROBES = r"""
import json, os, socket, sys, urllib.request
ports = json.loads(os.environ["PORTS"])
model, other = ports["model"], ports["other"]
proxy = int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1])

def bind(address, port):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family) as s:
            s.bind((address, port))
            s.listen()
            return "bound"
    except OSError as exc:
        return f"failed: {exc}"

def ask(address, port, data):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family) as s:
            s.settimeout(5)
            s.connect((address, port))
            s.sendall(data)
            got = b""
            while chunk := s.recv(65536):
                got += chunk
            return got.decode("latin-1")
    except OSError as exc:
        return f"failed: {exc}"

def get(host):
    return f"GET / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode()

said = {
    "bind the model's port": bind("127.0.0.1", model),
    "bind the proxy's port": bind("127.0.0.1", proxy),
    "model": ask("127.0.0.1", model, get("x")),
    "model at IPv4-mapped IPv6": ask("::ffff:127.0.0.1", model, get("x")),
    "model at 127.0.0.2": ask("127.0.0.2", model, get("x")),
    "model at ::1": ask("::1", model, get("x")),
    "other port": ask("127.0.0.1", other, get("x")),
    "other through the model's listener (Host)": ask("127.0.0.1", model, get(f"127.0.0.1:{other}")),
    "plain proxy request whose Host is the other": ask(
        "127.0.0.1", proxy, f"GET http://127.0.0.1:{model}/ HTTP/1.1\r\nHost: 127.0.0.1:{other}\r\n\r\n".encode()
    ),
    "a second request piped after the first": ask(
        "127.0.0.1", proxy,
        f"GET http://127.0.0.1:{model}/ HTTP/1.1\r\nHost: x\r\n\r\n"
        f"GET http://127.0.0.1:{other}/ HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
    ),
    "proxy at IPv4-mapped IPv6": ask("::ffff:127.0.0.1", proxy, f"CONNECT 127.0.0.1:{other} HTTP/1.1\r\n\r\n".encode()),
}
for target in [
    f"127.0.0.1:{other}", f"localhost:{other}", f"LOCALHOST:{other}", f"[::ffff:127.0.0.1]:{other}",
    f"127.1:{other}", f"2130706433:{other}", f"0.0.0.0:{other}", f"[::]:{other}", f"[::1]:{other}",
    f"127.0.0.1:{model}@127.0.0.1:{other}", f"127.0.0.1:{other}#127.0.0.1:{model}", f" 127.0.0.1:{other}",
]:
    said[f"CONNECT {target}"] = ask("127.0.0.1", proxy, f"CONNECT {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
for target in [f"http://127.0.0.1:{other}/", f"http://127.0.0.1:{model}@127.0.0.1:{other}/", f"http://[::1]:{other}/"]:
    said[f"GET {target}"] = ask("127.0.0.1", proxy, f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
said["environment"] = {k: v for k, v in os.environ.items() if k.lower().endswith("_proxy")}
said["urllib's proxies"] = urllib.request.getproxies()
print(json.dumps(said))
"""


@needs_bwrap
@needs_join
def test_the_listeners_reach_the_model_and_nothing_else_however_asked(tmp_path):
    """The agent binds the turn's ports (taken before its first instruction: the workbench listened before the
    go), connects to the model's port at other loopback addresses, and asks the proxy for the host's other
    service in every spelling it has: only the model ever answers, and never the other service."""
    with serving(b"model-ok") as model, serving(b"other-secret") as other, relay(f"127.0.0.1:{model}") as used:
        said, channel = turn(tmp_path, PROBES, used, env={"PORTS": json.dumps({"model": model, "other": other})})
    environment, proxies = said.pop("environment"), said.pop("urllib's proxies")
    assert not any("other-secret" in str(v) for v in said.values()), said
    assert said["bind the model's port"].startswith("failed") and "in use" in said["bind the model's port"], said
    assert said["bind the proxy's port"].startswith("failed") and "in use" in said["bind the proxy's port"], said
    assert said["model"].endswith("model-ok") and said["model at IPv4-mapped IPv6"].endswith("model-ok"), said
    for way in ("model at 127.0.0.2", "model at ::1", "other port"):
        assert said[way].startswith("failed"), (way, said)
    for way, answer in said.items():
        if way.startswith(("CONNECT", "GET http")) or way == "proxy at IPv4-mapped IPv6":
            assert answer.startswith(("HTTP/1.1 403", "HTTP/1.1 400")), (way, answer)
    assert f"127.0.0.1:{other}" in channel.refused
    proxy = f"http://127.0.0.1:{network.PROXY_PORT}"
    assert environment["HTTPS_PROXY"] == environment["https_proxy"] == proxy, environment
    assert proxies["https"] == proxies["http"] == proxy, proxies


@needs_bwrap
@needs_join
def test_all_proxy_and_no_proxy_of_the_machine_are_dropped_in_any_case(tmp_path, monkeypatch):
    """The machine's (or a suite's) ALL_PROXY and NO_PROXY, in any case, would send the agent around the
    proxy or to one that is not ours: dropped; NO_PROXY is the sandbox's loopback only."""
    script = "import json, os; print(json.dumps({k: v for k, v in os.environ.items() if k.lower().endswith('proxy')}))"
    odd = {"ALL_PROXY": "socks5://10.0.0.1:1", "all_proxy": "x", "All_Proxy": "x", "No_Proxy": "*", "NO_PROXY": "*"}
    with relay("127.0.0.1:9") as used:
        said, _channel = turn(tmp_path, script, used, env=odd)
    assert not any(k.lower() == "all_proxy" for k in said), said
    assert {k: v for k, v in said.items() if k.lower() == "no_proxy"} == {
        "NO_PROXY": "localhost,127.0.0.1,::1",
        "no_proxy": "localhost,127.0.0.1,::1",
    }, said


@needs_bwrap
@needs_join
def test_a_proxy_variable_of_the_machine_in_another_case_does_not_win_over_ours(tmp_path):
    script = "import json, urllib.request; print(json.dumps(urllib.request.getproxies()))"
    with relay("127.0.0.1:9") as used:
        said, _channel = turn(
            tmp_path, script, used, env={"https_proxy": "http://10.0.0.1:1", "HTTPS_proxy": "http://10.0.0.1:1"}
        )
    assert said["https"] == f"http://127.0.0.1:{network.PROXY_PORT}", said


@needs_bwrap
@needs_join
def test_a_pid_that_is_not_a_sandbox_gets_no_listeners():
    port = _free_port()
    host_process = subprocess.Popen(["sleep", "30"])  # the turn's pid, taken by a process of the machine
    try:
        with pytest.raises(netns.NotMade):
            made = netns.listeners(host_process.pid, [("127.0.0.1", port, True)])
            try:  # made on the host: the port answers there
                socket.create_connection(("127.0.0.1", port), 2).close()
            finally:
                for _at, listener in made:
                    listener.close()
    finally:
        host_process.kill()
        host_process.wait()


@needs_bwrap
@needs_join
def test_no_thread_of_the_workbench_is_left_in_a_turns_namespace():
    """After sockets made, after a failure while joined (an address in use: the second bind of the same port),
    and after a namespace that is gone: every thread of the workbench is in its own namespace, the netns
    thread has ended, and a socket the workbench makes next is on the host."""
    port = _free_port()
    with box() as pid:
        made = netns.listeners(pid, [("127.0.0.1", port, True)])
        with pytest.raises(netns.NotMade, match="in use"):
            netns.listeners(
                pid, [("127.0.0.1", port + 1 if port < 65535 else port - 1, True), ("127.0.0.1", port, True)]
            )
        for _at, listener in made:
            listener.close()
    with pytest.raises(netns.NotMade):
        netns.listeners(pid, [("127.0.0.1", port, True)])
    assert threads_out_of_our_namespace() == []
    assert not [t for t in threading.enumerate() if t.name == "workbench-netns"]
    with socket.create_server(("127.0.0.1", port)) as host, socket.create_connection(("127.0.0.1", port), 2):
        assert host.accept()  # the port is the host's: nothing of the box's was made here


@needs_bwrap
@needs_join
def test_a_turns_listeners_close_with_its_channel_and_another_turn_never_sees_them():
    """Two turns at once (-j): each one's model listener and proxy are in its own namespace only; once a turn's
    channel is closed, nothing listens in its namespace any more, and the workbench holds no descriptor of it."""
    probe = r"""
import json, socket, sys
said = {}
for port in map(int, sys.argv[1:]):
    try:
        with socket.create_connection(("127.0.0.1", port), 5) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            s.settimeout(5)
            got = b""
            while chunk := s.recv(1000):
                got += chunk
            said[port] = got.decode("latin-1") or "closed"
    except OSError as exc:
        said[port] = f"failed: {exc}"
print(json.dumps(said))
"""
    with serving(b"model-ok") as model, relay(f"127.0.0.1:{model}") as used, box() as first, box() as second:
        fds = len(os.listdir("/proc/self/fd"))
        proxy = network.proxy_port(used.loopback)
        one, two = used.channel(), used.channel()
        one.serve_in(first, proxy)
        two.serve_in(second, proxy)
        code = probe.replace("sys.argv[1:]", repr([model, proxy]))
        assert inside(first, code)[str(model)].endswith("model-ok")
        two.close()
        after = inside(second, code)
        assert all(v.startswith("failed") for v in after.values()), after
        assert inside(first, code)[str(model)].endswith("model-ok"), "closing one turn closed another's"
        one.close()
        deadline = time.monotonic() + 5
        while len(os.listdir("/proc/self/fd")) > fds and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(os.listdir("/proc/self/fd")) <= fds, "a turn's listener outlived its channel"
        assert all(v.startswith("failed") for v in inside(first, code).values())


@needs_bwrap
@needs_join
def test_the_caps_hold_on_the_listeners_in_the_namespace(monkeypatch):
    """40 silent connections at once to the proxy listener: 32 are held, the rest answered 503 at once; the
    silent ones are closed at the first-line timeout; a head past 64 KB is closed unanswered; afterwards the
    relay holds nothing of them (its count and its descriptors are back)."""
    monkeypatch.setattr(network, "FIRST_LINE_TIMEOUT", 1.5)  # the silent ones closed sooner
    flood = r"""
import json, select, socket, time
held = [socket.create_connection(("127.0.0.1", PROXY), 5) for _ in range(40)]
time.sleep(0.5)
readable = select.select(held, [], [], 0.3)[0]
answers = [s.recv(100).decode("latin-1")[:12] if s in readable else "held" for s in held]
time.sleep(2)  # past the first-line timeout
closed = 0
for s in held:
    s.settimeout(2)
    try:
        closed += s.recv(100) == b""
    except OSError:
        pass
big = socket.create_connection(("127.0.0.1", PROXY), 5)
big.settimeout(5)
try:
    big.sendall(b"GET http://127.0.0.1:9/ HTTP/1.1\r\nX: " + b"a" * 200_000 + b"\r\n\r\n")
except OSError:
    pass
try:
    big_said = big.recv(100).decode("latin-1")
except OSError as exc:
    big_said = f"failed: {exc}"
print(json.dumps({"answers": answers, "closed": closed, "big": big_said}))
"""
    with relay("127.0.0.1:9") as used, box() as pid:
        fds = len(os.listdir("/proc/self/fd"))
        proxy = network.proxy_port(used.loopback)
        channel = used.channel()
        channel.serve_in(pid, proxy)
        said = inside(pid, flood.replace("PROXY", str(proxy)))
        assert said["answers"].count("held") == network.CONNECTIONS, said
        assert said["answers"].count("HTTP/1.1 503") == 40 - network.CONNECTIONS, said
        assert said["closed"] == network.CONNECTIONS, said
        assert not said["big"].startswith("HTTP/1.1 200"), said
        assert any("more than 32 connections" in r for r in channel.refused), channel.refused
        deadline = time.monotonic() + 5
        while (used.open or channel.open) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert used.open == channel.open == 0
        channel.close()
        while len(os.listdir("/proc/self/fd")) > fds and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(os.listdir("/proc/self/fd")) <= fds


@needs_bwrap
@needs_join
def test_two_names_of_one_loopback_model_do_not_stop_the_turn(tmp_path):
    script = r"""
import json, os, socket
with socket.create_connection(("127.0.0.1", int(os.environ["MODEL"])), 5) as s:
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    print(json.dumps({"model": s.makefile("rb").read().decode("latin-1")}))
"""
    with serving(b"model-ok") as model, relay(f"localhost:{model}", f"127.0.0.1:{model}") as used:
        said, _channel = turn(tmp_path, script, used, env={"MODEL": str(model)})
    assert said["model"].endswith("model-ok")


@contextlib.contextmanager
def silent() -> Iterator[int]:
    """A model that takes connections, reads what it is sent, and never answers nor closes (until the test
    ends): a streaming answer stalled, a server's keep-alive, a head never finished."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def take() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                connection, _ = server.accept()
                held.append(connection)

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for connection in held:
            connection.close()
        server.close()


@needs_bwrap
@needs_join
def test_a_turns_connections_end_with_the_turn(tmp_path):
    script = r"""
import json, os, socket
port = int(os.environ["MODEL"])
held = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(3)]
for s in held:
    s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")  # a head never finished
print(json.dumps({"sent": len(held)}))
"""
    with silent() as model, relay(f"127.0.0.1:{model}") as used:
        said, channel = turn(tmp_path, script, used, env={"MODEL": str(model)})
        assert said == {"sent": 3}
        deadline = time.monotonic() + 5
        while used.open and time.monotonic() < deadline:
            time.sleep(0.05)
        assert used.open == channel.open == 0, f"{used.open} connections of an ended turn still held"


@needs_bwrap
@needs_join
def test_the_relay_stops_quietly_with_a_turns_connection_still_open(caplog):
    left = r"""
import socket
s = socket.create_connection(("127.0.0.1", MODEL), 5)
s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")
print("{}")
"""
    with silent() as model, box() as pid:
        with relay(f"127.0.0.1:{model}") as used:
            channel = used.channel()
            channel.serve_in(pid, network.proxy_port(used.loopback))
            inside(pid, left.replace("MODEL", str(model)))
            deadline = time.monotonic() + 5
            while not used.open and time.monotonic() < deadline:
                time.sleep(0.05)
            channel.close()
    said = [r.getMessage() for r in caplog.records if r.name == "asyncio" and r.levelname == "ERROR"]
    assert said == [], said


def _broken_turn(tmp_path: Path, used: network.Relay) -> tuple[list[str], TurnCommand, Path]:
    """A relayed turn whose bubblewrap fails its set-up after it said its child's pid (a source to mount that is
    not there: a file of the suite gone between the plan and the turn)."""
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    command = sandbox.wrap(TurnCommand(argv=["/bin/true"]), repo, home, sandbox.Confinement(channel=used.channel()))
    argv = list(command.argv)
    argv[argv.index("--") : argv.index("--")] = ["--ro-bind", str(tmp_path / "gone"), "/gone"]
    return argv, command, repo


@needs_bwrap
@needs_join
def test_a_sandbox_that_fails_its_set_up_is_not_called_a_network_failure(tmp_path):
    with relay("127.0.0.1:9") as used:
        argv, command, repo = _broken_turn(tmp_path, used)
        finished = run_bounded(argv, cwd=repo, contained=True, bounds=command.bounds, timeout=30)
    assert "Can't find source path" in finished.stderr, finished  # bubblewrap's own reason
    assert finished.bound is None, finished


@needs_bwrap
@needs_join
def test_a_turn_stopped_for_its_network_says_why_in_words(tmp_path, monkeypatch):
    def taken(address: str, port: int) -> socket.socket:
        raise OSError(errno.EADDRINUSE, os.strerror(errno.EADDRINUSE))

    monkeypatch.setattr(netns, "_listen", taken)
    with relay("127.0.0.1:9") as used:
        repo, home = tmp_path / "repo", tmp_path / "home"
        repo.mkdir()
        home.mkdir()
        command = sandbox.wrap(TurnCommand(argv=["/bin/true"]), repo, home, sandbox.Confinement(channel=used.channel()))
        finished = run_bounded(command.argv, cwd=repo, contained=True, bounds=command.bounds, timeout=30)
    assert finished.bound is not None and "could not be set up" in finished.bound, finished
    assert "[Errno" not in finished.bound, finished.bound


@needs_bwrap
@needs_join
def test_turns_starting_at_once_each_get_their_listeners_in_their_own_namespace():
    """Six turns' sockets made at once on six threads (-j 6): each box listens on its own port only, none on
    another's, and no thread of the workbench is left in any box's namespace."""
    probe = r"""
import json, socket
said = {}
for port in PORTS:
    try:
        socket.create_connection(("127.0.0.1", port), 2).close()
        said[port] = "reached"
    except OSError:
        said[port] = "failed"
print(json.dumps(said))
"""
    ports = [_free_port() for _ in range(6)]
    with contextlib.ExitStack() as stack:
        pids = [stack.enter_context(box()) for _ in ports]
        made: dict[int, list] = {}
        go = threading.Barrier(len(pids))

        def one(at: int) -> None:
            go.wait()
            made[at] = netns.listeners(pids[at], [("127.0.0.1", ports[at], True)])

        threads = [threading.Thread(target=one, args=(at,)) for at in range(len(pids))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sorted(made) == list(range(len(pids)))
        try:
            for at, pid in enumerate(pids):
                said = inside(pid, probe.replace("PORTS", repr(ports)))
                assert said == {str(p): "reached" if p == ports[at] else "failed" for p in ports}, (at, said)
        finally:
            for listeners in made.values():
                for _at, listener in listeners:
                    listener.close()
    assert threads_out_of_our_namespace() == []
