"""What a sandboxed agent reaches: its model API, and nothing else (docs/security.md, "The network").

The class: every way out of the sandbox that is not the model. On the host, beside the model's server on
127.0.0.1, run another loopback service, an abstract unix socket and a real Dask scheduler; a command agent
(the real `workbench run`, sandboxed) tries each, directly and through the proxy its environment names, and
writes down what answered. Only the model may; with --network open everything does (so the test means
something), and the run says so."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import DEMO
from support.process import command as workbench_command

from workbench.runs import netns, network, sandbox

ROOT = Path(__file__).resolve().parent.parent
DASK = Path(sys.executable).with_name("dask")
needs_bwrap = pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()}")


class Saying(BaseHTTPRequestHandler):
    """Answers every GET with its server's word."""

    word = b""

    def do_GET(self) -> None:  # noqa: N802 - the http.server's name
        self.send_response(200)
        self.send_header("content-length", str(len(self.word)))
        self.end_headers()
        self.wfile.write(self.word)

    def log_message(self, *args) -> None:
        pass


class Serving:
    def __init__(self, word: bytes) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (Saying,), {"word": word}))
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class AbstractSocket:
    """A unix socket in the abstract namespace: no file to hide, reachable from the same network namespace."""

    def __init__(self) -> None:
        self.name = f"workbench-test-{os.getpid()}-{time.monotonic_ns()}"
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind("\0" + self.name)
        self.listener.listen()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            connection.sendall(b"abstract-secret")
            connection.close()

    def close(self) -> None:
        self.listener.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """A real Dask scheduler on 127.0.0.1 (the plain `dask` command): whoever reaches it runs code."""
    if not DASK.exists():
        pytest.skip(f"the dask command is not at {DASK}")
    port = _free_port()
    log = tmp_path_factory.mktemp("dask") / "scheduler.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=out, stderr=out, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, log.read_text()[-2000:]
                time.sleep(0.1)
        yield port
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


AGENT = r"""
import json, os, socket, sys, urllib.request

def get(url, proxy=None):
    handler = urllib.request.ProxyHandler({"http": proxy} if proxy else {})
    try:
        return urllib.request.build_opener(handler).open(url, timeout=10).read().decode()
    except Exception as exc:
        return f"failed: {exc}"

def tcp(port):
    try:
        with socket.create_connection(("127.0.0.1", port), 5) as s:
            s.settimeout(2)
            try:
                return "connected: " + s.recv(100).decode("latin-1")
            except OSError:
                return "connected"
    except OSError as exc:
        return f"failed: {exc}"

def abstract(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0" + name)
        return "connected: " + s.recv(100).decode()
    except OSError as exc:
        return f"failed: {exc}"

def connect(target):
    proxy = os.environ.get("HTTPS_PROXY", "")
    if not proxy:
        return "no proxy"
    host, port = proxy.rsplit("/", 1)[-1].rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), 5) as s:
            s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            return s.recv(200).decode("latin-1").split("\r\n")[0]
    except OSError as exc:
        return f"failed: {exc}"

def ancestors():
    said, pid = [], os.getppid()
    while pid > 1:
        said.append(open(f"/proc/{pid}/cmdline").read().replace("\0", " "))
        pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    return said
sys.stdin.read()
ports = json.loads(os.environ["PORTS"])
said = {
    "model": get(f"http://127.0.0.1:{ports['model']}/v1/messages"),
    "model through the proxy": get(f"http://127.0.0.1:{ports['model']}/", os.environ.get("HTTP_PROXY")),
    "other loopback port": tcp(ports["other"]),
    "other port through the proxy": connect(f"127.0.0.1:{ports['other']}"),
    "abstract socket": abstract(ports["abstract"]),
    "dask scheduler": tcp(ports["dask"]),
    "dask through the proxy": connect(f"127.0.0.1:{ports['dask']}"),
    "a host on the internet": connect("example.com:443"),
    "ancestors": ancestors(),
}
open("net.json", "w").write(json.dumps(said))
print(json.dumps({"type": "result", "result": "ok", "session_id": "s", "usage": {"input_tokens": 1}}))
"""


def _run(
    tmp_path: Path, ports: dict, *extra: str, relay: str | None = None
) -> tuple[subprocess.CompletedProcess, dict, dict]:
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PORTS": json.dumps(ports),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{ports['model']}",  # the command agent's model API
    }
    if relay is not None:
        env["WORKBENCH_RELAY"] = relay
    args = ["run", str(skill), "--executor", "command", "--agent-command", f"{sys.executable} {agent}"]
    args += ["--only", "export-json-flag", "--baseline", "none", "--judge", "demo", "--sandbox", "bwrap", "--trust"]
    done = subprocess.run(
        workbench_command(*args, *extra),
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    [run] = (tmp_path / "changelog-entry-workspace").glob("iteration-1/*/*/run-1")
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "done", (record, done.stderr)
    return done, record, json.loads((run / "outputs" / "net.json").read_text())


@pytest.fixture
def services(scheduler):
    model, other, hidden = Serving(b"model-ok"), Serving(b"other-secret"), AbstractSocket()
    try:
        yield {"model": model.port, "other": other.port, "abstract": hidden.name, "dask": scheduler}
    finally:
        model.close()
        other.close()
        hidden.close()


@needs_bwrap
@pytest.mark.parametrize("relay", ["listening outside", "inside"])
def test_a_sandboxed_agent_reaches_its_model_and_nothing_else(tmp_path, services, relay):
    """Both ways the relay is reached: the workbench listening in the turn's own network namespace (as root),
    and inside.py, the sandbox's first process (elsewhere; WORKBENCH_RELAY=inside chooses it)."""
    if relay != "inside" and not netns.joinable():
        pytest.skip("the workbench cannot join a sandbox's network namespace here (not root)")
    done, record, said = _run(tmp_path, services, relay="inside" if relay == "inside" else None)
    assert any("inside.py" in a for a in said["ancestors"]) == (relay == "inside"), said["ancestors"]
    assert said["model"] == "model-ok" and said["model through the proxy"] == "model-ok", said
    for way in ("other loopback port", "abstract socket", "dask scheduler"):
        assert said[way].startswith("failed"), (way, said)
    for way in ("other port through the proxy", "dask through the proxy", "a host on the internet"):
        assert said[way].startswith("HTTP/1.1 403"), (way, said)
    assert record["network"] == "model"
    assert set(record["network_refused"]) == {
        f"127.0.0.1:{services['other']}",
        f"127.0.0.1:{services['dask']}",
        "example.com:443",
    }
    plan = json.loads((tmp_path / "changelog-entry-workspace" / "iteration-1" / "plan.json").read_text())
    assert plan["network"] == "model" and not any("network" in w for w in plan["warnings"])


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@needs_bwrap
def test_network_open_reaches_everything_and_says_so(tmp_path, services):
    done, record, said = _run(tmp_path, services, "--network", "open")
    assert said["other loopback port"].startswith("connected"), said
    assert said["abstract socket"] == "connected: abstract-secret" and said["dask scheduler"].startswith("connected")
    assert record["network"] == "open"
    assert "network is open" in done.stderr + done.stdout
    benchmark = (tmp_path / "changelog-entry-workspace" / "iteration-1" / "benchmark.md").read_text()
    assert "network is open" in benchmark


def test_endpoints_are_read_from_urls_and_host_port_and_refused_with_what_was_expected():
    assert network.endpoint("https://api.anthropic.com") == network.Endpoint("api.anthropic.com", 443)
    assert network.endpoint("http://127.0.0.1:8080/v1") == network.Endpoint("127.0.0.1", 8080)
    assert network.endpoint("[::1]:9000") == network.Endpoint("::1", 9000)
    assert network.endpoint("Example.com:8443").loopback is False
    assert network.endpoint("localhost:1").loopback and network.endpoint("127.0.0.2:1").loopback
    for bad in ("api.anthropic.com", "ftp://x", "host:0", "host:99999", ":80"):
        with pytest.raises(ValueError, match="endpoint|port"):
            network.endpoint(bad)


@pytest.mark.parametrize(
    "text,column,said",
    [
        ('{"network": "closed"}', 13, '"network" must be "model" or "open"'),
        ('{"network_allow": ["api.anthropic.com"]}', 19, '"network_allow" must be a list of endpoints'),
        ('{"network_allow": "https://x.org"}', 19, '"network_allow" must be a list of endpoints'),
        ('{"sandbox_processes": 0}', 23, '"sandbox_processes" must be a whole number, 1 or more'),
        ('{"sandbox_memory_mb": true}', 23, '"sandbox_memory_mb" must be a whole number, 1 or more'),
        ('{"sandbox_disk_mb": 1.5}', 21, '"sandbox_disk_mb" must be a whole number, 1 or more'),
    ],
)
def test_the_configs_network_and_bounds_are_refused_where_they_are_wrong(text, column, said):
    from workbench.config import ConfigProblem, config_path, load_config

    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(text)
    with pytest.raises(ConfigProblem) as caught:
        load_config()
    assert (caught.value.line, caught.value.column) == (1, column) and said in caught.value.message


def test_the_configs_network_and_bounds_reach_the_run(tmp_path):
    from workbench.app import pipeline
    from workbench.app.choices import Agent, Placement
    from workbench.config import config_path

    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(
        json.dumps({"network": "open", "network_allow": ["https://auth.example.com"], "sandbox_tmp_mb": 64})
    )
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    prepared = pipeline.prepare(pipeline.RunRequest(skill, agent=Agent("demo"), placement=Placement("none")))
    options = prepared.options
    assert options.network == "open" and options.network_allow == ("https://auth.example.com",)
    assert options.limits.tmp_mb == 64 and options.limits.processes == 1024
    flagged = pipeline.prepare(pipeline.RunRequest(skill, agent=Agent("demo"), placement=Placement("none", "model")))
    assert flagged.options.network == "model"  # the flag over the config


PLAIN_AGENT = r"""
import json, os, sys, urllib.request
sys.stdin.read()
try:  # as any client does: the proxy its environment names, unless NO_PROXY says the host is direct
    said = urllib.request.urlopen(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", timeout=10).read().decode()
except Exception as exc:
    said = f"failed: {exc}"
open("net.json", "w").write(json.dumps({"model": said}))
print(json.dumps({"type": "result", "result": "ok", "session_id": "s", "usage": {"input_tokens": 1}}))
"""


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="a server on a port below 1024 needs root")
@pytest.mark.parametrize("relay", [None, "inside"])
def test_a_model_on_a_port_below_1024_is_reached(tmp_path, relay):
    """inside.py cannot listen below 1024 (no capability): that endpoint goes through its proxy instead. The
    workbench, as root, listens there itself."""
    for port in range(1023, 900, -1):
        try:
            model = ThreadingHTTPServer(("127.0.0.1", port), type("H", (Saying,), {"word": b"model-ok"}))
            break
        except OSError:
            continue
    threading.Thread(target=model.serve_forever, daemon=True).start()
    try:
        skill = tmp_path / "skills" / "changelog-entry"
        shutil.copytree(DEMO, skill)
        agent = tmp_path / "agent.py"
        agent.write_text(PLAIN_AGENT)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}
        if relay is not None:
            env["WORKBENCH_RELAY"] = relay
        args = ["run", str(skill), "--executor", "command", "--agent-command", f"{sys.executable} {agent}"]
        args += ["--only", "export-json-flag", "--baseline", "none", "--judge", "demo", "--sandbox", "bwrap"]
        done = subprocess.run(
            workbench_command(*args, "--trust"),
            capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
        )  # fmt: skip
    finally:
        model.shutdown()
        model.server_close()
    [run] = (tmp_path / "changelog-entry-workspace").glob("iteration-1/*/*/run-1")
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "done", (record, done.stderr)
    assert json.loads((run / "outputs" / "net.json").read_text()) == {"model": "model-ok"}


@needs_bwrap
def test_sockets_the_workbench_makes_in_a_turns_namespace_are_there_and_nowhere_else(tmp_path):
    """netns.listeners: a socket made in a sandbox's namespace is reached from inside it, not from the host
    (the port is free on the host: nothing answers there); a namespace that is gone is NotMade, saying why."""
    if not netns.joinable():
        pytest.skip("the workbench cannot join a sandbox's network namespace here (not root)")
    port = _free_port()
    box = subprocess.Popen(["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "sleep", "30"])
    try:
        deadline = time.monotonic() + 10
        while not (child := Path(f"/proc/{box.pid}/task/{box.pid}/children").read_text().split()):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        [(at, listener)] = netns.listeners(int(child[0]), [("127.0.0.1", port, True)])
        assert at == 0 and listener.getsockname() == ("127.0.0.1", port)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), 2)
        probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('reached')"
        inside = subprocess.run(
            ["nsenter", "-t", child[0], "-n", sys.executable, "-c", probe], capture_output=True, text=True, timeout=30
        )
        assert inside.stdout.strip() == "reached", inside.stderr
        listener.close()
    finally:
        box.kill()
        box.wait()
    with pytest.raises(netns.NotMade, match="the turn's network could not be set up"):
        netns.listeners(box.pid, [("127.0.0.1", port, True)])
