"""Attacks on round 5's sandbox change (the workbench's thread joins a turn's cgroup v1 to start bubblewrap in
it; the paths a turn's set-up shows are resolved by the kernel), as a hostile agent and a hostile suite
would make them. Each test is an attack: passing, it held; a strict xfail is a hole found, said in its reason.

- the workbench's thread is never left in a turn's cgroup (an error in Popen while joined, a full pids
  cgroup at the join, turns starting at once on several threads), and a turn's end or its memory bound
  never kills the workbench;
- the +1 of pids.max (bubblewrap's own first process) is not the agent's;
- what a turn's set-up resolves and mounts: magic links of /proc, names with newlines, and a link the agent
  left in its private home on the way to a mount point of the next turn."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from workbench.runs import bounds, sandbox
from workbench.runs.executors.base import TurnCommand
from workbench.runs.processes import run_bounded

ROOT = Path(__file__).resolve().parent.parent
needs_bwrap = pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()}")


def _v1() -> bounds.Means:
    found = bounds.means()
    if found.v2 or found.pids is None:
        pytest.skip("no writable cgroup v1 here: the thread joins a turn's cgroups on v1 only")
    return found


def _thread_cgroups() -> str:
    return Path("/proc/thread-self/cgroup").read_text()


def _turn_folders(found: bounds.Means) -> set[Path]:
    return {f for base in (found.pids, found.memory) if base is not None for f in base.glob("turn-*")}


def _turn(tmp_path: Path, argv: list[str], limits: bounds.Limits | None = None, env: dict | None = None):
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    held = sandbox.Confinement(limits=limits or bounds.Limits())
    return sandbox.wrap(TurnCommand(argv=argv, env=env or {}), repo, home, held), repo


def _gone(folders: set[Path], within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while any(f.exists() for f in folders) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not any(f.exists() for f in folders)


# --- the workbench's own thread and a turn's cgroups ------------------------------------------------------


@needs_bwrap
def test_an_error_in_popen_while_joined_leaves_the_thread_where_it_was(tmp_path):
    """Popen fails after its fork (the turn's folder is gone: chdir fails in the child), i.e. between the
    join and the leave: the error reaches the caller, the thread is back in its own cgroups, and the turn's
    cgroups (made, joined, left) are removed, with the workbench alive."""
    found = _v1()
    command, _repo = _turn(tmp_path, ["/bin/true"])
    assert command.bounds is not None
    ours, before = _thread_cgroups(), _turn_folders(found)
    with pytest.raises(OSError):
        run_bounded(command.argv, cwd=tmp_path / "no-such-folder", contained=True, bounds=command.bounds)
    assert _thread_cgroups() == ours, "the workbench's thread was left in a turn's cgroup"
    assert _gone(_turn_folders(found) - before), "a turn's cgroup outlived its failed start"


@needs_bwrap
def test_a_full_pids_cgroup_at_the_join_fails_the_start_and_the_thread_leaves(tmp_path, monkeypatch):
    """pids.max already reached when the thread joins (a join is never refused by pids.max, a fork then is):
    bubblewrap cannot be forked, the start fails as an OSError, and the thread is not left behind in a
    cgroup that will be killed."""
    found = _v1()
    made = bounds.TurnBounds._make

    def full(self):
        made(self)
        for folder in self.cgroups:
            if folder.parent == found.pids:
                (folder / "pids.max").write_text("0")

    monkeypatch.setattr(bounds.TurnBounds, "_make", full)
    command, repo = _turn(tmp_path, ["/bin/true"])
    ours, before = _thread_cgroups(), _turn_folders(found)
    with pytest.raises(OSError):
        run_bounded(command.argv, cwd=repo, contained=True, bounds=command.bounds)
    assert _thread_cgroups() == ours, "the workbench's thread was left in a full turn cgroup"
    assert _gone(_turn_folders(found) - before)


@needs_bwrap
def test_turns_starting_at_once_on_several_threads_each_start_in_their_own_cgroups(tmp_path):
    """Eight turns started at once on eight threads (-j 8): each turn's processes are in its own cgroups,
    none in another's; each thread is back in the workbench's cgroups after; the turns that end at once
    (their ends kill what is left in their cgroups) kill no thread of the workbench; nothing is left."""
    found = _v1()
    before = _turn_folders(found)
    ours = _thread_cgroups()
    results: dict[int, tuple[str, str, int]] = {}
    errors: list[BaseException] = []
    go = threading.Barrier(8)

    def one(number: int) -> None:
        try:
            command, repo = _turn(tmp_path / f"t{number}", ["/bin/cat", "/proc/self/cgroup"])
            go.wait()
            finished = run_bounded(command.argv, cwd=repo, contained=True, bounds=command.bounds, timeout=60)
            results[number] = (finished.stdout, _thread_cgroups(), finished.code)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    seen: set[str] = set()
    for number, (said, after, code) in results.items():
        assert code == 0, (number, said)
        assert after == ours, f"thread {number} was left in a turn's cgroup: {after}"
        [pids] = [line.split(":", 2)[2] for line in said.splitlines() if line.split(":")[1] == "pids"]
        assert "/turn-" in pids and pids not in seen, (number, pids, seen)
        seen.add(pids)
    assert len(results) == 8
    assert _thread_cgroups() == ours
    assert _gone(_turn_folders(found) - before)


FORKS = """import os, time
children = []
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children.append(pid)
print(sum(name.isdigit() for name in os.listdir("/proc")), flush=True)
for pid in children:
    os.kill(pid, 9)
"""


@needs_bwrap
def test_the_one_more_of_pids_max_is_bubblewraps_not_the_agents(tmp_path):
    """pids.max is the bound plus one on v1 (bubblewrap's own first process is born in the cgroup now): the
    agent, forking until it fails, has at most the bound of processes in its sandbox (its pid namespace's
    /proc counts each, the sandbox's init included), and reaches it."""
    _v1()
    most = 12
    command, repo = _turn(tmp_path, ["/usr/bin/python3", "-I", "-c", FORKS], bounds.Limits(processes=most))
    finished = run_bounded(command.argv, cwd=repo, contained=True, bounds=command.bounds, timeout=60)
    assert finished.code == 0, finished
    running = int(finished.stdout.split()[0])
    assert running == most, f"{running} processes in the sandbox under a bound of {most}"


WORKBENCH = """
import sys
from pathlib import Path
from workbench.runs import bounds, sandbox
from workbench.runs.executors.base import TurnCommand
from workbench.runs.processes import run_bounded

ballast = bytearray(300 << 20)  # the workbench is the biggest process the OOM killer could choose
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
base = Path(sys.argv[1])
repo, home = base / "repo", base / "home"
repo.mkdir(exist_ok=True)
home.mkdir(exist_ok=True)
held = sandbox.Confinement(limits=bounds.Limits(memory_mb=16, processes=64))
agent = "sleep 60 & exec /usr/bin/python3 -c 'x = bytearray(200 << 20); x[::4096] = b\\"y\\" * len(x[::4096])'"
for turn in range(4):
    command = sandbox.wrap(TurnCommand(argv=["/bin/sh", "-c", agent]), repo, home, held)
    finished = run_bounded(command.argv, cwd=repo, contained=True, bounds=command.bounds, timeout=60)
    print(turn, finished.bound, flush=True)
print("alive", flush=True)
"""


@pytest.mark.slow
@needs_bwrap
def test_a_turn_that_hits_its_memory_bound_or_leaves_processes_never_takes_the_workbench(tmp_path):
    """The OOM killer of a turn's memory cgroup kills the biggest process in it: were the workbench's thread
    there, that would be the workbench (300 MB here). Four turns beside two busy loops hit a 16 MB bound and
    leave a sleep behind (killed at the turn's end): the workbench lives, and each names the bound."""
    _v1()
    if bounds.means().memory is None:
        pytest.skip("no writable memory cgroup here")
    script = tmp_path / "host.py"  # (not workbench.py: it would shadow the package)
    script.write_text(WORKBENCH)
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)]
    try:
        done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True,
                              timeout=240, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert done.returncode == 0, f"the workbench ended with {done.returncode}: {done.stdout} {done.stderr[-500:]}"
    assert done.stdout.splitlines()[-1] == "alive"
    assert done.stdout.count("hit the memory bound: 16 MB") == 4, done.stdout


# --- what a turn's set-up resolves and mounts -------------------------------------------------------------


def test_magic_links_of_proc_resolve_to_what_they_name_and_are_refused_as_that(tmp_path, monkeypatch):
    """/proc/self/cwd, /proc/self/root and /proc/self/fd/N (a descriptor of the workbench open on home) are
    resolved by the kernel to what they lead to, so the rule refuses them as that: home, the current folder,
    the root; a program reached through one is shown at its real place."""
    home, work = tmp_path / "user", tmp_path / "user" / "project"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    shown = sandbox.Shown(str(home), ())
    fd = os.open(home, os.O_RDONLY)
    try:
        for path in ("/proc/self/cwd", "/proc/self/root", f"/proc/self/fd/{fd}", f"/proc/{os.getpid()}/cwd/.."):
            assert shown.refusal(path) is not None, path
            assert sandbox._realpath(path) == os.path.realpath(path), path
    finally:
        os.close(fd)
    assert sandbox._realpath("/proc/self/exe") == os.path.realpath(sys.executable)


@needs_bwrap
def test_a_name_with_a_newline_shows_that_program_and_nothing_beside_it(tmp_path):
    """A program in a folder whose name holds a newline (the kernel's /proc/self/fd link keeps it, no
    escaping): it is shown and runs, and what is beside it in that folder is not shown."""
    folder = tmp_path / "tools\nbin"
    folder.mkdir()
    shutil.copy("/usr/bin/cat", folder / "tool")
    (folder / "secret").write_text("NEWLINE-SECRET\n")
    assert sandbox._realpath(str(folder / "tool")) == str(folder / "tool")
    command, repo = _turn(tmp_path, [str(folder / "tool"), str(folder / "secret")])
    done = subprocess.run(command.argv, capture_output=True, text=True, timeout=60, cwd=repo)
    assert "NEWLINE-SECRET" not in done.stdout, done.stdout
    assert "No such file" in done.stderr, done.stderr  # the program ran (shown), the file beside it is not there


@needs_bwrap
@pytest.mark.parametrize("where", ["the agent's program in ~/.local/bin", "the workspace in home", "the mount point"])
def test_a_link_left_in_the_private_home_does_not_lead_the_next_turns_mount_points_out(tmp_path, where):
    """What is shown at a path inside home (the agent's program in ~/.local/bin, Claude Code's usual place;
    the dispatch's own repository and home, when the workspace is in a project in home) has its mount point
    in the private home, mounted over home first. The private home lives as long as the dispatch (a
    follow-up turn, --resume, finds it), and in its last turn the agent replaced `.local` (or `project`) with
    a link to /oldroot/<a folder of the host>: bubblewrap's view of the host while it sets the sandbox up.
    Found in round 5 (and before it): the next turn's set-up made <that folder>/bin/tool (or <that
    folder>/ws/run-1/repo and home) on the host. Now the turn is not set up through a link (sandbox.LedOut),
    which the runner records as the turn's error ("the turn was not started: ...")."""
    user, outside = tmp_path / "user", tmp_path / "host-folder"
    run = user / "project" / "ws" / "run-1" if where == "the workspace in home" else tmp_path / "ws" / "run-1"
    home, repo = run / "home", run / "repo"
    for folder in (user / ".local" / "bin", user / ".local" / "lib", home, repo, outside):
        folder.mkdir(parents=True, exist_ok=True)
    shutil.copy("/usr/bin/cat", user / ".local" / "bin" / "tool")
    left = {"the workspace in home": "project", "the mount point": ".local/bin/tool"}.get(where, ".local")
    if where == "the mount point":  # the program's own mount point a dangling link to a host file
        (home / ".local" / "bin").mkdir(parents=True)
        (home / left).symlink_to(f"/oldroot{outside}/planted")
    else:
        (home / left).symlink_to(f"/oldroot{outside}")  # what the agent's last turn left in its private home
    env = {"HOME": str(user)}
    argv = [str(user / ".local" / "bin" / "tool") if left != "project" else "/bin/cat", "/etc/hostname"]
    with pytest.raises(sandbox.LedOut, match=f"{left} in the agent's private home is a link"):
        sandbox.wrap(TurnCommand(argv=argv, env=env), repo, home)  # the turn is not set up through it
    made = sorted(str(p.relative_to(outside)) for p in outside.rglob("*"))
    assert not made, f"the next turn's set-up wrote {made} in a folder of the host"


def test_no_thread_of_the_test_process_is_in_a_turns_cgroup():
    """After the attacks above in this worker: no thread of this process is in a turn's cgroup."""
    for task in Path("/proc/self/task").iterdir():
        try:
            said = (task / "cgroup").read_text()
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        assert "/turn-" not in said, (task.name, said)


# --- another workbench's sweep, between a turn's cgroups being made and joined ----------------------------

SWEPT_WORKBENCH = """
import os, subprocess, sys, time
from pathlib import Path
own_pids, own_memory, other, forks, base = map(Path, sys.argv[1:6])
how = sys.argv[6]  # "swept": by another workbench's start; "removed": by anything else
for own in (own_pids, own_memory):
    (own / "cgroup.procs").write_text("0")  # this workbench runs in cgroups of its own (pids and memory)
from workbench.runs import bounds, sandbox
from workbench.runs.executors.base import TurnCommand
from workbench.runs.processes import run_bounded

found = bounds.means()
assert found.pids == own_pids / f"workbench-{os.getpid()}", found
made = bounds.TurnBounds._make


def made_then_swept(self):
    made(self)
    if how == "removed":
        for folder in self.cgroups:
            folder.rmdir()
        return
    for folder in (found.pids, found.memory):  # a workbench that has run for two minutes
        os.utime(folder, (time.time() - 120, time.time() - 120))
    subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, str(other), str(own_pids),
                    str(own_memory)], check=True)


bounds.TurnBounds._make = made_then_swept
repo, home = base / "repo", base / "home"
repo.mkdir()
home.mkdir()
held = sandbox.Confinement(limits=bounds.Limits(processes=12))
command = sandbox.wrap(TurnCommand(argv=["/usr/bin/python3", "-I", "-c", forks.read_text()]), repo, home, held)
finished = run_bounded(command.argv, cwd=repo, contained=True, bounds=command.bounds, timeout=60)
print((finished.stdout.split() or ['0'])[0], finished.bound, flush=True)
"""

OTHER_WORKBENCH = """
import sys
from pathlib import Path
for own in sys.argv[1:3]:
    (Path(own) / "cgroup.procs").write_text("0")  # another workbench, started in the same cgroups
from workbench.runs import bounds
bounds.means()  # its start sweeps the cgroups it takes for a dead workbench's
"""


@needs_bwrap
@pytest.mark.skipif(shutil.which("unshare") is None, reason="no unshare(1) here to start a pid namespace")
@pytest.mark.parametrize("how", ["swept", "removed"])
def test_another_workbenchs_sweep_cannot_take_a_turns_cgroups_before_it_is_born_in_them(tmp_path, how):
    """A workbench A (in cgroups of its own here, so that the sweep touches nobody else's) makes a turn's
    cgroups; at that moment workbench B starts in the same cgroups but another pid namespace, and sweeps.
    Found in round 5 (the fallback's moves failed silently): the agent forked 200 processes under a bound of
    12, and the run named no bound. Now a turn whose first process cannot be put in its cgroups is killed
    before the go, and says so as the bound it hit ("removed"); and the sweep leaves a workbench's folder
    alone while a turn's folder in it was made a moment ago ("swept")."""
    found = _v1()
    if found.memory is None:
        pytest.skip("no writable memory cgroup here")
    owns = [base.parent / f"r5-attack-{os.getpid()}" for base in (found.pids, found.memory)]
    for own in owns:
        own.mkdir()
    (tmp_path / "a.py").write_text(SWEPT_WORKBENCH)
    (tmp_path / "b.py").write_text(OTHER_WORKBENCH)
    (tmp_path / "forks.py").write_text(FORKS)
    (tmp_path / "turn").mkdir()
    try:
        done = subprocess.run(
            [sys.executable, str(tmp_path / "a.py"), *map(str, owns), str(tmp_path / "b.py"),
             str(tmp_path / "forks.py"), str(tmp_path / "turn"), how],
            capture_output=True, text=True, timeout=120, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    finally:
        deadline = time.monotonic() + 10
        for own in owns:
            while own.exists() and time.monotonic() < deadline:
                for folder in sorted(own.rglob("*"), key=lambda p: -len(p.parts)):
                    if folder.is_dir():
                        with contextlib.suppress(OSError):
                            folder.rmdir()
                with contextlib.suppress(OSError):
                    own.rmdir()
                time.sleep(0.05)
    assert done.returncode == 0, done.stderr[-800:]
    running, _, bound = done.stdout.strip().partition(" ")
    assert int(running) <= 12, f"{running} processes in the sandbox under a bound of 12 (bound named: {bound})"
    if how == "swept":  # the sweep leaves a turn's folder made a moment ago: the turn is held, and says so
        assert bound == "hit the process bound: 12 processes", bound
    else:  # gone all the same: the turn is not run, and says why
        assert "could not be held in its bounds" in bound and "never runs unbounded" in bound, bound
