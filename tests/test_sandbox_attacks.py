"""The sandbox's holes found by attacking issue 24 as a hostile agent (the first test of each class is the
attacker's own, from the attack's report; the rest are what its class implies). Three classes:

- bounds hold every writable place of the sandbox, not /tmp alone: the sandbox's root and /dev are tmpfs
  mounts too; each is bounded or read-only, /dev/shm has the /tmp bound, and a bound hit is named;
- what the sandbox shows of home: no install-folder rule ever shows a general folder of home (~, ~/.local,
  ~/.config, ~/.cache, ~/.local/share, an XDG folder); a binary there is shown alone, a `pip --user` script
  with only the site-packages it needs;
- the relay's own resources: nothing an agent does through its relay socket takes more than its share of
  the workbench's descriptors, and nothing it does there prints a traceback."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from attack_runs import records, run_agent, workbench
from conftest import DEMO

from workbench.formats.endpoint import endpoint
from workbench.runs import bounds, executors, netns, network, sandbox
from workbench.runs.executors.base import TurnCommand
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.runner import RunOptions

needs_bwrap = pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()}")
RESULT = """echo '{"type":"result","result":"ok","session_id":"s","usage":{"input_tokens":1}}'"""


def _inside(tmp_path: Path, script: str, env: dict | None = None, tmp_mb: int = 8) -> subprocess.CompletedProcess:
    """script run by bash in a real sandbox of a turn (sandbox.wrap), its workspace and home in tmp_path."""
    repo, home = tmp_path / "turn" / "repo", tmp_path / "turn" / "home"
    for folder in (repo, home):
        folder.mkdir(parents=True, exist_ok=True)
    held = sandbox.Confinement(limits=bounds.Limits(tmp_mb=tmp_mb))
    wrapped = sandbox.wrap(TurnCommand(shell=script, env=env or {}), repo, home, held)  # its words are shown
    return subprocess.run(
        wrapped.argv or [], capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})}
    )


# --- bounds: every writable place of the sandbox, not /tmp alone -------------------------------------------

SMALL = {"sandbox_processes": 64, "sandbox_memory_mb": 96, "sandbox_file_mb": 64, "sandbox_tmp_mb": 8,
         "sandbox_disk_mb": 24}  # fmt: skip


@needs_bwrap
@pytest.mark.parametrize("place", ["/dev/shm/big", "/big", "/dev/big"])
def test_the_tmp_bound_holds_every_writable_tmpfs_of_the_sandbox(tmp_path, place):
    """bounds: /tmp is bounded at sandbox_tmp_mb, but the sandbox's root and /dev are tmpfs mounts too,
    writable and as big as half the machine's memory: 40 MB go there past an 8 MB /tmp bound. (The attacker's
    test asked for a failed run naming a bound in all three places; the root and /dev are now read-only, so
    there the write itself is refused and nothing is kept: that is what it asserts for them.)"""
    config = Path(os.environ["WORKBENCH_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.json").write_text(json.dumps(SMALL))
    body = f"head -c 40000000 /dev/zero > {place} && echo wrote > wrote.txt\nsleep 1\n{RESULT}"
    run_agent(tmp_path, body, "bwrap")
    record = records(tmp_path, "run.json")["with_skill"]
    [repo] = (tmp_path / "changelog-entry-workspace").glob("iteration-1/*/with_skill/run-1/repo")
    if place.startswith("/dev/shm"):
        assert record["status"] == "failed" and record.get("bound") == "hit the /tmp bound: 8 MB (/dev/shm)", (
            f"40 MB written to {place} past an 8 MB /tmp bound: the run is {record['status']!r}, "
            f"bound {record.get('bound')!r}"
        )
    else:
        assert not (repo / "wrote.txt").exists(), f"40 MB written to {place}: the run is {record['status']!r}"


def _run_bounded_without_cgroup(tmp_path: Path, monkeypatch, script: str) -> tuple[dict, str]:
    """One sandboxed dispatch of `script` as the agent, bounded without a cgroup (RLIMIT_AS per process):
    its run.json and what it wrote to kept.txt ("" when the bound stopped it first)."""
    monkeypatch.setattr(bounds, "means", lambda: bounds.Means(nproc_binds=os.geteuid() != 0))
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    agent = tmp_path / "agent.sh"
    agent.write_text(script)
    executor = executors.make("command", f"bash {agent}")
    options = RunOptions(jobs=1, timeout=120, baseline="none", sandbox="bwrap", only={"export-json-flag"})
    options.limits = bounds.Limits(processes=64, memory_mb=96, tmp_mb=8)
    launch = prepare_launch(skill, executor, options, workspace=tmp_path / "ws")
    asyncio.run(run_launch(launch, executor, options))
    [dispatch] = launch.dispatches
    kept_file = dispatch.folder / "repo" / "kept.txt"
    return json.loads((dispatch.folder / "run.json").read_text()), kept_file.read_text() if kept_file.exists() else ""


@needs_bwrap
def test_without_a_cgroup_a_tmpfs_of_the_sandbox_still_cannot_take_the_machines_memory(tmp_path, monkeypatch):
    """bounds: without a writable cgroup, memory is RLIMIT_AS per process, which no tmpfs page counts in:
    an agent keeps 200 MB (up to half the machine's memory per mount) in /dev/shm past a 96 MB bound."""
    record, kept = _run_bounded_without_cgroup(
        tmp_path,
        monkeypatch,
        "cat > /dev/null\nfor i in 1 2 3 4; do head -c 50000000 /dev/zero > /dev/shm/part-$i; done\n"
        f"du -sm /dev/shm > kept.txt\n{RESULT}\n",
    )
    assert record["status"] == "failed", f"the agent kept {kept.split()[:1]} MB of memory in /dev/shm past 96 MB"
    assert record.get("bound") == "hit the /tmp bound: 8 MB (/dev/shm)", record
    assert not kept or int(kept.split()[0]) <= 9, kept  # (none when the bound stopped it before du ran)


MEMORY_FILES = """import os
held = []
for _ in range(4):  # 4 x 50 MB: each under the 64 MB file bound, none mapped, none in /tmp or /dev/shm
    fd = os.memfd_create("kept")
    for _ in range(50):
        os.write(fd, b"x" * (1 << 20))
    held.append(fd)
open("kept.txt", "w").write(str(sum(os.fstat(fd).st_size for fd in held) >> 20))
"""


@needs_bwrap
@pytest.mark.xfail(
    strict=True,
    reason="known gap (docs/security.md): without a memory cgroup, memory the kernel holds for the agent "
    "(memfd files, SysV segments, socket buffers) is counted by no rlimit; a cgroup bounds it",
)
def test_without_a_cgroup_memory_files_of_no_mount_still_count_against_the_bound(tmp_path, monkeypatch):
    """bounds, memory held outside the processes: without a writable cgroup (RLIMIT_AS per process), the
    sized /tmp and /dev/shm were the only places the agent could keep memory outside its address space;
    memfd_create files are on the kernel's internal tmpfs, which no mount of the sandbox sizes, and write()
    fills them without mapping a page. Found: the run is 'done' and the agent kept 200 MB past 96 MB."""
    record, said = _run_bounded_without_cgroup(
        tmp_path, monkeypatch, f"cat > /dev/null\n/usr/bin/python3 - <<'PY'\n{MEMORY_FILES}PY\n{RESULT}\n"
    )
    kept = int(said) if said else 0
    assert kept <= 96, f"the agent kept {kept} MB in memory files past a 96 MB bound ({record['status']})"


@needs_bwrap
def test_every_writable_place_of_the_sandbox_is_the_turns_own_or_bounded(tmp_path):
    """The class, from inside: the only places a write lands are the workspace, the private home, /tmp and
    /dev/shm (each tmpfs sized at the /tmp bound); the root, /dev and the folders bwrap made on the way to
    what is shown are read-only, and the devices still take writes (/dev/null)."""
    probe = r"""
for place in /big /dev/big /tmp/ok /dev/shm/ok "$HOME/ok" ./ok; do
  if echo x 2>/dev/null > "$place"; then echo "writable $place"; else echo "refused $place"; fi
done
echo x > /dev/null && echo "devnull ok"
df -k /tmp /dev/shm | tail -n 2 | awk '{print "size " $6 " " $2}'
"""
    home = tmp_path / "user"
    home.mkdir()
    done = _inside(tmp_path, probe, env={"HOME": str(home)}, tmp_mb=8)
    said = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    for place in ("/big", "/dev/big"):
        assert f"refused {place}" in said, (place, said)
    for place in ("/tmp/ok", "/dev/shm/ok", f"{home}/ok", "./ok"):
        assert f"writable {place}" in said, (place, said)
    assert "devnull ok" in said
    assert "size /tmp 8192" in said and "size /dev/shm 8192" in said, said


@needs_bwrap
def test_the_machines_shared_memory_segments_are_out_of_the_sandboxs_reach(tmp_path):
    """SysV shared memory is memory too, and outside every mount: a segment the agent makes in the machine's
    IPC namespace outlives its turn (no pid namespace takes it), and the machine's own segments (a desktop's
    shared pixmaps) are there to read. The sandbox's IPC namespace is its own."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    key = 0x5B0C_1AB5
    segment = libc.shmget(key, 4096, 0o600 | 0o1000)  # IPC_CREAT
    assert segment >= 0, os.strerror(ctypes.get_errno())
    try:
        done = _inside(tmp_path, "cat /proc/sysvipc/shm")
    finally:
        libc.shmctl(segment, 0, None)  # IPC_RMID
    assert done.returncode == 0, done.stderr
    assert str(key) not in done.stdout.split(), done.stdout


# --- what the sandbox shows: an install folder that is a general folder of home ---------------------------


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@needs_bwrap
@pytest.mark.parametrize("how", ["named", "interpreter"])
def test_an_agent_program_in_home_local_bin_shows_nothing_else_of_home_local(tmp_path, how):
    """what the sandbox shows: a binary in ~/.local/bin (node or uv from a tarball, `pip --user`'s
    neighbours) has ~/.local/lib beside it, so ~/.local is shown whole as its "install folder", and with it
    ~/.local/share: keyrings, shell histories, application tokens. Named on the command line, or as the
    #! interpreter of the agent's script."""
    home = tmp_path / "home"
    local = home / ".local"
    for folder in ("bin", "lib/python3.11/site-packages", "share/keyrings"):
        (local / folder).mkdir(parents=True)
    shutil.copy("/usr/bin/bash", local / "bin" / "bash")  # any binary installed there
    (local / "share" / "keyrings" / "login.keyring").write_text("KEYRING-SECRET\n")
    project = home / "project"
    skill = project / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    script = tmp_path / "agents" / "agent.sh"
    script.parent.mkdir()
    script.write_text(
        f"#!{local / 'bin' / 'bash'}\ncat > /dev/null\n"
        'cat "$HOME/.local/share/keyrings/login.keyring" > got.txt 2>&1\n'
        f"{RESULT}\n"
    )
    script.chmod(0o755)
    command = f"{local / 'bin' / 'bash'} {script}" if how == "named" else str(script)
    args = ["run", str(skill), "--executor", "command", "--agent-command", command, "--only", "export-json-flag"]
    args += ["--baseline", "none", "--judge", "demo", "--sandbox", "bwrap", "--trust"]
    done = workbench(project, *args, env={"HOME": str(home)})
    [got] = (project / "changelog-entry-workspace").glob("iteration-1/*/*/run-1/repo/got.txt")
    assert "KEYRING-SECRET" not in got.read_text(), (got.read_text(), done.stderr[-500:])
    record = records(project, "run.json")["with_skill"]
    assert record["status"] == "done", record  # its binary is shown, and runs


# Each: where the program is, the general folder an install-folder rule would pick, and what is beside the
# program there and not its own (relative to home).
GENERAL = {
    "a bin/ of ~/.config": (".config/bin/tool", ".config", ".config/bin/sibling"),
    "a bin/ of home itself": ("bin/tool", "", "bin/sibling"),
    "a bin/ of ~/.local/share": (".local/share/bin/tool", ".local/share", ".local/share/bin/sibling"),
    "a bin/ of ~/Downloads": ("Downloads/bin/tool", "Downloads", "Downloads/bin/sibling"),
    "a bin/ of $XDG_DATA_HOME": ("data/bin/tool", "data", "data/bin/sibling"),
    "node_modules in ~/.local/lib": (
        ".local/lib/node_modules/tool/cli",
        ".local/lib",
        ".local/lib/node_modules/other/x",
    ),
    "node_modules in ~/.cache": (".cache/node_modules/tool/cli", ".cache", ".cache/node_modules/other/x"),
}


@needs_bwrap
@pytest.mark.parametrize("where", list(GENERAL))
def test_no_install_folder_rule_shows_a_general_folder_of_home(tmp_path, where):
    """The class: whatever rule picks an install folder (a bin/ beside a lib/, a node_modules prefix), a
    general folder of home is never it, nor home itself: the program is shown (and runs), what else is in
    that folder is not."""
    home = tmp_path / "user"
    name, general, other = GENERAL[where]
    program, folder = home / name, home / general
    for made in (program.parent, folder / "lib", (home / other).parent):
        made.mkdir(parents=True, exist_ok=True)
    shutil.copy("/usr/bin/cat", program)
    (folder / "lib" / "token").write_text("GENERAL-SECRET\n")
    (home / other).write_text("SIBLING-SECRET\n")
    env = {"HOME": str(home), "XDG_DATA_HOME": str(home / "data")}
    # (the secrets by pattern: a file the command names is shown, by the rule for a script's arguments)
    probe = f"echo ran | {program} ; cat {folder}/lib/tok* {home / other}* 2>&1 ; true"
    done = _inside(tmp_path, probe, env=env)
    assert "ran" in done.stdout, done.stderr  # the program itself is shown
    assert "SECRET" not in done.stdout, done.stdout


PIP_USER_SCRIPT = """#!{python}
from tool_module import ANSWER
print(ANSWER)
"""


@needs_bwrap
def test_a_pip_user_script_gets_its_site_packages_and_nothing_else_of_home_local(tmp_path):
    """A `pip install --user` script (~/.local/bin/tool, `#!` a system Python) needs
    ~/.local/lib/pythonX.Y/site-packages: only that folder is shown beside it, not ~/.local/share."""
    home = tmp_path / "user"
    python = "/usr/bin/python3"
    version = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    site = home / ".local" / "lib" / f"python{version}" / "site-packages"
    site.mkdir(parents=True)
    (site / "tool_module.py").write_text("ANSWER = 'from-site-packages'\n")
    (home / ".local" / "share").mkdir()
    (home / ".local" / "share" / "history").write_text("HISTORY-SECRET\n")
    tool = home / ".local" / "bin" / "tool"
    tool.parent.mkdir()
    tool.write_text(PIP_USER_SCRIPT.format(python=python))
    tool.chmod(0o755)
    done = _inside(tmp_path, f"{tool} ; cat {home}/.local/share/hist* 2>&1 ; true", env={"HOME": str(home)})
    assert "from-site-packages" in done.stdout, done.stdout + done.stderr
    assert "HISTORY-SECRET" not in done.stdout


@needs_bwrap
def test_a_virtualenv_in_a_hidden_folder_of_home_is_still_an_install_folder(tmp_path):
    """~/.venv is a hidden folder of home, but one install (it says so: pyvenv.cfg): an agent installed in
    it runs, with its packages, as it did before the general folders were kept out."""
    home = tmp_path / "user"
    venv = home / ".venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = venv.glob("lib/python*/site-packages")
    (site / "tool_module.py").write_text("ANSWER = 'from-the-venv'\n")
    tool = venv / "bin" / "tool"
    tool.write_text(PIP_USER_SCRIPT.format(python=venv / "bin" / "python"))
    tool.chmod(0o755)
    done = _inside(tmp_path, f"{tool}", env={"HOME": str(home)})
    assert "from-the-venv" in done.stdout, done.stdout + done.stderr


# --- what the sandbox reaches: the relay's own resources --------------------------------------------------

HOLDER = (
    r"""
case "$PWD" in
*without_skill*)  # an honest run beside it: it waits, writes its answer and ends (graded while the other holds)
  sleep 10
  echo honest > honest.txt
  ;;
*)  # holds every connection to its relay socket it can get, from three processes
  for k in 1 2 3; do
    python3 - <<'PY' &
import os, signal, socket, time
signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError()))
signal.alarm(8)
held = []
proxy = os.environ["HTTP_PROXY"].rsplit("/", 1)[-1].rsplit(":", 1)
try:
    while True:
        if os.path.exists("/run/workbench/relay.sock"):  # inside.py's way: the relay's own socket
            s = socket.socket(socket.AF_UNIX)
            s.connect("/run/workbench/relay.sock")
        else:  # the relay listening in the sandbox's namespace: its proxy port
            s = socket.create_connection((proxy[0], int(proxy[1])))
        held.append(s)
except (OSError, TimeoutError):
    pass
signal.alarm(0)
time.sleep(4)  # its turn lasts past the honest run's grading
PY
  done
  wait
  ;;
esac
"""
    + RESULT
)


@pytest.mark.slow  # 11-13 s of a worker in a whole run (33 s before its holder stopped waiting 25 s after its grab)
@needs_bwrap
@pytest.mark.parametrize("relay", ["listening outside", "inside"])
def test_one_agent_cannot_take_the_workbenchs_descriptors_through_the_relay(tmp_path, relay):
    """what the sandbox reaches: the relay runs in the workbench's own process and accepts every connection
    a turn opens to its socket (each waits 30 s for its first line). One agent opening them without end takes
    the workbench's file descriptors (1024, a usual soft limit): the other run beside it is not graded ("Too
    many open files"), its condition scores 0 %, and asyncio's tracebacks fill the terminal."""

    def usual_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}  # a model endpoint: the turns get a relay socket
    if relay == "inside":
        env["WORKBENCH_RELAY"] = "inside"
    elif not netns.joinable():
        pytest.skip("the workbench cannot join a sandbox's network namespace here (not root)")
    done = run_agent(tmp_path, HOLDER, "bwrap", "--baseline", "without_skill", "-j", "2", env=env,
                      preexec=usual_limit)  # fmt: skip
    gradings = records(tmp_path, "grading.json")
    honest = gradings["without_skill"]["expectations"]
    assert not [e for e in honest if "Too many open files" in e["evidence"]], honest[0]["evidence"]
    assert "Traceback" not in done.stderr, done.stderr[-800:]
    holder = records(tmp_path, "run.json")["with_skill"]
    assert any("connections at once" in said for said in holder.get("network_refused", [])), holder


class _Upstream:
    """A model endpoint on the host's loopback that says pong to each connection and closes it."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                connection.sendall(b"pong\n")


def _talk(path: Path, first: bytes, timeout: float = 10) -> bytes:
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(timeout)
        client.connect(str(path))
        if first:  # nothing to send: sending it anyway fails (EPIPE) once a refusal has already closed the connection
            client.sendall(first)
        said = b""
        while chunk := client.recv(4096):
            said += chunk
        return said


def test_a_turn_past_its_share_of_relay_connections_is_refused_at_once_and_told_so():
    """More than the cap of open connections on one turn's channel: the ones past it are answered at once
    (an HTTP 503 saying why) and closed, the turn's record says so, another turn's channel is served as
    usual, and once the turn's connections close it is served again."""
    upstream = _Upstream()
    model = endpoint(f"127.0.0.1:{upstream.port}")
    with network.Relay([model]) as relay:
        greedy, other = relay.channel(), relay.channel()
        greedy.serve_path()  # the unix socket inside.py talks to (where the workbench cannot listen inside)
        other.serve_path()
        held = []
        for _ in range(32):  # the cap the docs give
            client = socket.socket(socket.AF_UNIX)
            client.connect(str(greedy.path))
            held.append(client)
        time.sleep(0.5)  # every held one accepted
        began = time.monotonic()
        refused = _talk(greedy.path, b"", timeout=10)
        assert time.monotonic() - began < 5, "the connection past the cap was not refused at once"
        assert refused.startswith(b"HTTP/1.1 503") and b"connections at once" in refused, refused
        assert any("connections at once" in said for said in greedy.refused), greedy.refused
        assert _talk(other.path, f"TO {model}\n".encode()) == b"pong\n"  # the other turn is unaffected
        for client in held:
            client.close()
        # Served again once the relay has seen them close (polled: beside busy loops it takes longer than 0.5 s).
        deadline, said = time.monotonic() + 15, b""
        while time.monotonic() < deadline:
            try:
                said = _talk(greedy.path, f"TO {model}\n".encode())
            except (BrokenPipeError, ConnectionResetError):  # refused before the line was sent: still full
                said = b""
            if said == b"pong\n":
                break
            time.sleep(0.2)
        assert said == b"pong\n", said
    upstream.listener.close()


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_connection_that_says_nothing_is_closed_after_a_short_wait():
    """A connection that never sends its first line holds a descriptor of the workbench: it is closed after
    the first-line wait (a few seconds, not the 30 s of a connection to the model)."""
    with network.Relay([]) as relay:
        channel = relay.channel()
        channel.serve_path()
        began = time.monotonic()
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(60)
            client.connect(str(channel.path))
            assert client.recv(1) == b""
        took = time.monotonic() - began
    assert 4 <= took < 15, f"closed after {took:.1f} s"  # 5 s, with room for a loaded machine


def test_what_a_turn_is_refused_is_kept_once_and_within_bounds():
    """Each refused endpoint was kept in the workbench's memory once per request (and merged into run.json
    by a quadratic look-up): an agent asking for hosts without end grew both without end. Each is kept
    once, at most REFUSALS of them, then one line saying there were more."""
    with network.Relay([]) as relay:
        channel = relay.channel()
        channel.serve_path()
        for number in [*range(200), *range(10)]:
            said = _talk(channel.path, f"PROXY\nCONNECT host-{number}.example:443 HTTP/1.1\r\n\r\n".encode())
            assert said.startswith(b"HTTP/1.1 403"), said
    refused = channel.refused
    assert len(refused) == len(set(refused)) and len(refused) <= 65, (len(refused), refused[-3:])
    assert refused[:2] == ["host-0.example:443", "host-1.example:443"] and "more" in refused[-1], refused[-1]
