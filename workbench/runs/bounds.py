"""Bounds on a sandboxed turn: its processes, its memory, the size of each file it writes, its private /tmp
and how much its workspace and private home grow. An agent that forks without end or fills its disk ends as a
failed run that names the bound it hit, and the machine is unharmed.

How each is held, best first, as this machine allows (`means()`, found once):
- processes and memory: a cgroup of the turn's own (cgroup v2 where the workbench's cgroup delegates the pids
  and memory controllers, else the v1 pids and memory hierarchies) holds every process of the turn from
  before its first one runs: pids.max and the memory limit are enforced by the kernel, pids.events and the
  OOM-kill count say when they were hit, and at the end whatever is left in it is killed;
- without a writable cgroup: RLIMIT_NPROC (it binds no process of root, and counts the user's whole machine),
  the turn's processes counted in its pid namespace, and RLIMIT_AS per process for memory;
- the size of one file: RLIMIT_FSIZE, always;
- /tmp: the sandbox's tmpfs mounts (/tmp and /dev/shm) have that size each (bwrap --size); the root and /dev,
  tmpfs mounts too, are read-only (workbench/runs/sandbox.py). Each is held open from outside once the
  sandbox is set up, so that one found full is named even when the turn ended before a look;
- the workspace and the private home: their size is watched while the turn runs.

The limits reach the turn through bubblewrap itself: it is started in the turn's cgroups (cgroup v1: the
thread that starts it joins them for that moment, `TurnBounds.starting`) and with --info-fd and --block-fd,
says the pid of the sandbox's first process and waits; that process is given its rlimits (and, on cgroup v2,
put into the cgroups from outside), and only then let go, so nothing of the turn ever ran unbounded. Linux
only."""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import json
import os
import resource
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

MB = 1024 * 1024
WATCH = 0.2  # seconds between looks at the counters while a turn runs
KIND = "workbench"  # the cgroups made here are named workbench-<pid>[-<n>]
STALE = 60.0  # seconds a dead workbench's empty cgroup is left before another removes it
TMPFS = ("/tmp", "/dev/shm")  # the sandbox's writable memory-backed folders, each of the /tmp bound's size
SET_UP = 5.0  # seconds bubblewrap may take to set the sandbox up before its tmpfs mounts are held


@dataclass(frozen=True)
class Limits:
    """What one sandboxed turn may use (the config's sandbox_* keys; these are the defaults)."""

    processes: int = 1024  # tasks: processes and their threads
    memory_mb: int = 4096
    file_mb: int = 1024  # the size of any one file it writes
    tmp_mb: int = 512  # its private /tmp (memory-backed)
    disk_mb: int = 4096  # how much its workspace and private home may grow

    def as_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Means:
    """How this machine can hold the bounds: a cgroup folder under which a turn's cgroup is made, per
    controller (None: not writable here), and whether RLIMIT_NPROC binds this user."""

    pids: Path | None = None
    memory: Path | None = None
    v2: bool = False
    nproc_binds: bool = False

    def not_in_force(self) -> list[str]:
        """What the warning on a sandboxed run says is not held here as the docs describe."""
        said = []
        if self.pids is None:
            said.append(
                "processes are only counted while the turn runs (no writable pids cgroup"
                + (")" if self.nproc_binds else ", and RLIMIT_NPROC does not bind root)")
            )
        if self.memory is None:
            said.append(
                "memory is bounded per process only (no writable memory cgroup): a turn that hits it is not "
                "named as such"
            )
        return said


# ------------------------------------------------------------------ what the machine offers


@functools.lru_cache(maxsize=1)
def means() -> Means:
    """Found once: cgroup v2 with delegated controllers, else v1's pids and memory hierarchies, else rlimits."""
    nproc = os.geteuid() != 0
    mounts = _cgroup_mounts()
    mine = _own_cgroups()
    unified = mounts.get("")
    if unified is not None and "" in mine:
        found = _v2(unified[0] / _relative(mine[""], unified[1]))
        if found is not None:
            return Means(found if "pids" in _controllers(found) else None,
                         found if "memory" in _controllers(found) else None, True, nproc)  # fmt: skip
    folders: dict[str, Path | None] = {}
    for controller in ("pids", "memory"):
        folders[controller] = None
        if controller in mounts and controller in mine:
            mount, root = mounts[controller]
            folders[controller] = _v1(mount / _relative(mine[controller], root))
    return Means(folders["pids"], folders["memory"], False, nproc)


def _cgroup_mounts() -> dict[str, tuple[Path, str]]:
    """controller -> (mount point, the hierarchy's root path mounted there); "" for cgroup v2."""
    found: dict[str, tuple[Path, str]] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, rest = before.split(), after.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        if rest[0] == "cgroup2":
            found.setdefault("", (Path(fields[4]), fields[3]))
        elif rest[0] == "cgroup":
            for option in rest[2].split(","):
                if option in ("pids", "memory"):
                    found.setdefault(option, (Path(fields[4]), fields[3]))
    return found


def _own_cgroups() -> dict[str, str]:
    """controller -> the workbench's own cgroup path ("" for v2)."""
    found: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        _number, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def _relative(path: str, root: str) -> str:
    if root != "/" and path.startswith(root):
        path = path[len(root) :]
    return path.lstrip("/")


def _controllers(folder: Path) -> set[str]:
    try:
        return set((folder / "cgroup.subtree_control").read_text().split())
    except OSError:
        return set()


def _v1(own: Path) -> Path | None:
    """A folder of our own under the workbench's v1 cgroup, where each turn gets a child; None when not
    writable."""
    if not own.is_dir():
        return None
    _sweep(own)
    folder = own / f"{KIND}-{os.getpid()}"
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return None
    atexit.register(_remove, folder)
    return folder


def _v2(own: Path) -> Path | None:
    """The workbench's own v2 cgroup when it can hold children with the pids and memory controllers: they are
    enabled in its subtree, or can be. A cgroup that holds processes cannot enable them (the "no internal
    processes" rule): when the workbench is alone in it (started in a delegated scope of its own), it moves
    into a leaf of its own first. None when neither works."""
    wanted = {"pids", "memory"}
    try:
        available = set((own / "cgroup.controllers").read_text().split())
    except OSError:
        return None
    if not available & wanted:
        return None
    if (wanted & available) <= _controllers(own):
        _sweep(own)
        return own
    enable = " ".join(f"+{c}" for c in sorted(wanted & available))
    try:
        (own / "cgroup.subtree_control").write_text(enable)
    except OSError as exc:
        if exc.errno != errno.EBUSY or _procs(own) != [os.getpid()]:
            return None
        leaf = own / f"{KIND}-{os.getpid()}"
        try:
            leaf.mkdir(exist_ok=True)
            (leaf / "cgroup.procs").write_text(str(os.getpid()))
            (own / "cgroup.subtree_control").write_text(enable)
        except OSError:
            return None
    _sweep(own)
    return own


def _sweep(folder: Path) -> None:
    """Cgroups a workbench that died left behind here (theirs are named by its pid): removed when empty."""
    with contextlib.suppress(OSError):
        for child in folder.iterdir():
            name = child.name
            if not name.startswith(f"{KIND}-") or not child.is_dir():
                continue
            owner = name.split("-")[1]
            if owner.isdigit() and int(owner) != os.getpid() and not Path(f"/proc/{owner}").exists():
                # Not one made a moment ago: a workbench in another pid namespace (whose pid is not in our
                # /proc) may be about to use it. cgroupfs keeps a folder's mtime when a folder is made in it,
                # so a turn's folder made a moment ago (not joined yet, so empty) says it is in use.
                if _newest(child) < time.time() - STALE:
                    _remove(child)


def _newest(folder: Path) -> float:
    """When the folder or a folder in it was made (its turns' folders)."""
    times = [folder.stat().st_mtime]
    for child in folder.iterdir():
        with contextlib.suppress(OSError):
            if child.is_dir():
                times.append(child.stat().st_mtime)
    return max(times)


def _remove(folder: Path) -> None:
    """A cgroup and its children, once nothing lives in them (rmdir is how a cgroup goes)."""
    with contextlib.suppress(OSError):
        for child in folder.iterdir():
            if child.is_dir():
                _remove(child)
        folder.rmdir()


def _procs(folder: Path) -> list[int]:
    try:
        return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


@functools.lru_cache(maxsize=1)
def _user_tasks() -> int:
    """The tasks this user runs now: RLIMIT_NPROC counts them all, so a turn's own allowance comes on top."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            count += int(fields.get("Threads", "1").strip() or 1)
    return count


# ------------------------------------------------------------------ one turn


_turns = iter(range(1, 1 << 62))


class SetUpTime:
    """How long bubblewrap takes to set a sandbox up here, from its first process's start to its final root
    (a moving average of the last turns'): the tmpfs look waits for most of it before it first looks."""

    SHARE = 0.6  # of the usual time waited before the first look: a slower set-up is seen at the next looks
    MOST = 0.05  # seconds: never waited more before a first look, whatever a loaded machine took before

    def __init__(self) -> None:
        self.usual = 0.0

    def first_look(self) -> float:
        return min(self.usual * self.SHARE, self.MOST)

    def took(self, seconds: float) -> None:
        self.usual = seconds if not self.usual else 0.8 * self.usual + 0.2 * seconds


_set_up = SetUpTime()


@dataclass
class Disk:
    """The folders a dispatch's agent writes on disk (its workspace and private home) and their size when the
    workbench had made them: the disk bound is on how much they grow."""

    folders: list[Path]
    base: int = 0

    @classmethod
    def measured(cls, folders: list[Path]) -> Disk:
        return cls(folders, usage(folders)[0])


class Unheld(Exception):
    """A turn's first process could not be put in its cgroups: said as the bound it hit, never run."""


@dataclass
class TurnBounds:
    """One sandboxed turn's bounds: in force from before its first process runs to after its last is gone."""

    limits: Limits
    disk: Disk | None = None
    means: Means = field(default_factory=lambda: means())
    child: int | None = None  # the sandbox's first process, as bubblewrap said
    cgroups: list[Path] = field(default_factory=list)
    hit: str | None = None  # the bound it hit, in words
    # Told the sandbox's first process once it is set up, before its go (the relay listening in its network
    # namespace, workbench/runs/netns.py); an OSError it raises stops the turn there, said in `hit`.
    ready: Callable[[int], None] | None = None
    _fds: tuple[int, int, int, int] | None = None
    tmpfs: dict[str, int] = field(default_factory=dict)  # place inside -> a descriptor of its tmpfs, held
    _next_walk: float = 0.0
    _walk_every: float = WATCH
    _born_inside: bool = False  # started in its cgroups (starting()): nothing to move from outside
    _joining: bool = False  # starting() is to join its cgroups (cgroup v1)

    def command(self, argv: list[str]) -> tuple[list[str], tuple[int, ...]]:
        """bubblewrap's argv with the pipes it says its pid on and waits on, and the fds to pass it; the turn's
        cgroups made. Started under starting(); close() after, whatever happens."""
        info_read, info_write = os.pipe()
        block_read, block_write = os.pipe()
        self._fds = (info_read, info_write, block_read, block_write)
        self._make()
        fds = ["--info-fd", str(info_write), "--block-fd", str(block_read)]
        return [argv[0], *fds, *argv[1:]], (info_write, block_read)

    @contextlib.contextmanager
    def starting(self) -> Iterator[None]:
        """cgroup v1: the calling thread in the turn's cgroups while it starts bubblewrap, which is born in them
        (a child is in its parent thread's cgroups), and back where it was after. A thread moves itself (0
        written to `tasks`) without the lock that every fork and exec of the machine takes: moving another's
        pid in (cgroup.procs) waits for that lock (an RCU grace period, 10-20 ms here) holding the mutex of
        every cgroup change, so each turn's start waited for it, and for every other turn's. Where that cannot
        be done (v2 moves no single thread; a cgroup it could not leave), started() moves the first process."""
        joined: list[Path] = []
        if self._joining and self.cgroups:
            try:
                for folder in self.cgroups:
                    _move_this_thread(folder / "tasks")
                    joined.append(_home(folder))
            except OSError:  # not joined after all: started() moves its first process, as on v2
                self._leave(joined)
                joined = []
                self._limit_processes(self.limits.processes)
        self._born_inside = bool(joined)
        try:
            yield
        finally:
            self._leave(joined)

    def _leave(self, homes: list[Path]) -> None:
        """The calling thread back in the workbench's own cgroups: never left in a turn's, whose end kills what
        is in it."""
        for home in homes:
            _move_this_thread(home)

    def _limit_processes(self, most: int) -> None:
        for folder in self.cgroups:
            if folder.parent == self.means.pids:
                with contextlib.suppress(OSError):
                    (folder / "pids.max").write_text(str(most))

    def started(self) -> None:
        """bubblewrap runs and waits: its first process is in the cgroups (born there, or moved now) and gets
        its rlimits, its tmpfs mounts are held, then it goes on."""
        assert self._fds is not None
        info_read, info_write, block_read, block_write = self._fds
        self._fds = None  # closed here, each once: a number closed twice may be another thread's by then
        for fd in (info_write, block_read):
            os.close(fd)
        try:
            self.child = _child_pid(info_read)
            if self.child is not None:
                try:
                    self._hold(self.child)
                except Unheld as exc:  # killed before the go: nothing of the agent has run
                    self.hit = str(exc)
                    with contextlib.suppress(OSError):
                        os.kill(self.child, signal.SIGKILL)  # pid 1 of its namespace: everything in it
                    return
                # Before it goes on: bubblewrap waits on --block-fd in its final root, all mounted, so the
                # mounts are found while its set-up runs beside the cgroup's (a look after the go, as
                # before, kept the turn's stdin waiting for a look that found them a few ms late).
                self._hold_tmpfs(self.child)
                if self.ready is not None:
                    try:
                        self.ready(self.child)
                    except OSError as exc:  # killed before the go, as above, saying why in words
                        if not alive(self.child):  # bubblewrap's own set-up failed: its exit and message stand
                            return
                        self.hit = exc.strerror or str(exc)
                        with contextlib.suppress(OSError):
                            os.kill(self.child, signal.SIGKILL)
                        return
        finally:
            os.close(info_read)
            with contextlib.suppress(OSError):
                os.write(block_write, b"go")
            os.close(block_write)

    def _hold_tmpfs(self, pid: int) -> None:
        """Once the sandbox's root is set up, a descriptor of each of its tmpfs mounts: a full one is seen
        after the turn's end too (its mount namespace gone, the tmpfs lives while held), where a look at
        /proc/PID/root would find nothing. bubblewrap changes root twice (to a scratch tmpfs holding the new
        root while it mounts, then to that root, where it waits for the go): the new root is the one where
        each place is a mount of its own. The first look waits for most of the set-up time the last turns
        took: each look costs (a dozen a turn, 1 ms of CPU, when looked at from the start)."""
        ours = os.stat("/")
        began = time.monotonic()
        deadline = began + SET_UP
        time.sleep(_set_up.first_look())
        while time.monotonic() < deadline and len(self.tmpfs) < len(TMPFS):
            try:
                root = os.stat(f"/proc/{pid}/root")
            except OSError:  # it ended already
                return
            if (root.st_dev, root.st_ino) != (ours.st_dev, ours.st_ino):
                held = {}
                for place in TMPFS:
                    with contextlib.suppress(OSError):
                        fd = os.open(f"/proc/{pid}/root{place}", os.O_PATH | os.O_DIRECTORY)
                        if os.fstat(fd).st_dev != root.st_dev:
                            held[place] = fd
                        else:
                            os.close(fd)
                if len(held) == len(TMPFS):
                    self.tmpfs = held
                    _set_up.took(time.monotonic() - began)
                    return
                for fd in held.values():
                    os.close(fd)
            time.sleep(0.0005)  # bubblewrap sets up in a few ms: looked at often, the turn waits little

    def abandon(self) -> None:
        """bubblewrap could not start: the pipes are closed."""
        for fd in self._fds or ():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = None

    def _make(self) -> None:
        """The turn's cgroups, each with its limit written (a folder that cannot be made is left out)."""
        limits, found = self.limits, self.means
        name = f"{KIND}-{os.getpid()}-{next(_turns)}" if found.v2 else f"turn-{next(_turns)}"
        writes: list[tuple[Path, str, str]] = []
        # v1: starting() joins them, when it can go back to the workbench's own cgroups (each holds KIND-<pid>/)
        self._joining = not found.v2 and all(
            os.access(folder.parent / "tasks", os.W_OK) for folder in (found.pids, found.memory) if folder is not None
        )
        if found.pids is not None:
            writes.append((found.pids / name, "pids.max", str(limits.processes)))
        if found.memory is not None:
            memory = found.memory / name
            if found.v2:
                writes += [(memory, "memory.max", str(limits.memory_mb * MB)), (memory, "memory.swap.max", "0")]
            else:
                writes += [
                    (memory, "memory.limit_in_bytes", str(limits.memory_mb * MB)),
                    (memory, "memory.memsw.limit_in_bytes", str(limits.memory_mb * MB)),
                ]
        for folder, key, value in writes:
            if folder not in self.cgroups:
                try:  # parents too: another workbench's sweep may have taken our (empty) folder meanwhile
                    folder.mkdir(parents=True)
                except OSError:
                    continue
                self.cgroups.append(folder)
            if key == "pids.max" and self._joining:  # bubblewrap's own first process is in it too (starting)
                value = str(limits.processes + 1)
            with contextlib.suppress(OSError):  # memsw and swap.max exist only with swap accounting
                (folder / key).write_text(value)

    def _hold(self, pid: int) -> None:
        """The sandbox's first process, as bubblewrap said it: in the turn's cgroups (moved there unless it was
        born in them) and given its rlimits."""
        limits, found = self.limits, self.means
        for folder in () if self._born_inside else self.cgroups:
            try:
                (folder / "cgroup.procs").write_text(str(pid))
            except OSError as exc:  # gone (another workbench's sweep), full: the turn would run unbounded
                raise Unheld(
                    f"could not be held in its bounds (its cgroup {folder.parent.name}/{folder.name}: "
                    f"{exc.strerror or exc}); a turn never runs unbounded"
                ) from None
        rlimits = [(resource.RLIMIT_FSIZE, limits.file_mb * MB)]
        if found.pids is None and found.nproc_binds:
            rlimits.append((resource.RLIMIT_NPROC, limits.processes + _user_tasks()))
        if found.memory is None:
            rlimits.append((resource.RLIMIT_AS, limits.memory_mb * MB))
        for which, most in rlimits:
            with contextlib.suppress(OSError, ValueError):
                resource.prlimit(pid, which, (most, most))

    def check(self, final: bool = False) -> str | None:
        """The bound the turn hit, in words, or None; looked at while it runs and once when it ended."""
        if self.hit is None:
            self.hit = self._counters() or self._tmp() or self._disk(final)
        return self.hit

    def _counters(self) -> str | None:
        for folder in self.cgroups:
            if _count(folder / "pids.events", "max"):
                return f"hit the process bound: {self.limits.processes} processes"
            events = folder / ("memory.events" if self.means.v2 else "memory.oom_control")
            if _count(events, "oom_kill"):
                return f"hit the memory bound: {self.limits.memory_mb} MB"
        if self.means.pids is None and self.child is not None:
            try:  # no pids cgroup: the processes of its pid namespace, counted in its own /proc
                running = sum(name.isdigit() for name in os.listdir(f"/proc/{self.child}/root/proc"))
            except OSError:
                running = 0
            if running >= self.limits.processes:
                return f"hit the process bound: {self.limits.processes} processes"
        return None

    def _tmp(self) -> str | None:
        for place, fd in self.tmpfs.items():
            try:
                tmp = os.fstatvfs(fd)
            except OSError:
                continue
            if tmp.f_blocks and tmp.f_bavail * tmp.f_frsize < 64 * 1024:
                return f"hit the /tmp bound: {self.limits.tmp_mb} MB" + ("" if place == "/tmp" else f" ({place})")
        return None

    def _disk(self, final: bool) -> str | None:
        if self.disk is None or (not final and time.monotonic() < self._next_walk):
            return None
        began = time.monotonic()
        total, largest, where = usage(self.disk.folders)
        where = next((os.path.relpath(where, f) for f in self.disk.folders if _inside(where, f)), where)
        # A walk of a big workspace costs: looked at no more than a twentieth of the time.
        self._walk_every = max(WATCH, (time.monotonic() - began) * 20)
        self._next_walk = time.monotonic() + self._walk_every
        if largest >= self.limits.file_mb * MB:
            return f"hit the file size bound: {self.limits.file_mb} MB ({where})"
        if total - self.disk.base > self.limits.disk_mb * MB:
            return f"hit the disk bound: its workspace and home grew by more than {self.limits.disk_mb} MB"
        return None

    def close(self) -> None:
        """Whatever is left in the turn's cgroups is killed, and they are removed; its tmpfs mounts let go.
        The removal waits for the killed processes to be gone (rmdir fails until then): done by the removal
        thread (Removals), so the turn's slot does not wait for it."""
        self.abandon()
        for fd in self.tmpfs.values():
            os.close(fd)
        self.tmpfs = {}
        for folder in self.cgroups:
            if not _emptied(folder):
                _removals().add(folder)
        self.cgroups = []


def alive(pid: int) -> bool:
    """A live process (not a zombie) of that pid."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :][:1] not in "ZX"


def _home(folder: Path) -> Path:
    """The `tasks` of the workbench's own cgroup v1, which holds <KIND>-<pid>/, which holds the turn's folder."""
    return folder.parent.parent / "tasks"


def _move_this_thread(tasks: Path) -> None:
    """The calling thread into the cgroup v1 of that `tasks` file (0: the writer itself)."""
    fd = os.open(tasks, os.O_WRONLY)
    try:
        os.write(fd, b"0")
    finally:
        os.close(fd)


def _emptied(folder: Path) -> bool:
    """Whatever is in the cgroup is killed; True when it is removed already (nothing was left). Never the
    workbench itself: a thread of it is in a turn's cgroup only while it starts the turn (TurnBounds.starting)."""
    for pid in _procs(folder):
        if pid == os.getpid():
            continue
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    try:
        folder.rmdir()
        return True
    except OSError:
        return False


class Removals:
    """Turn cgroups whose killed processes are still going: each is killed again and removed once empty, by
    one thread, within STAY seconds; what is still there at the workbench's exit is waited for then (as long),
    so no cgroup of a turn outlives the workbench that made it."""

    STAY = 5.0

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.pending: dict[Path, float] = {}  # folder -> when it is given up
        self.changed = threading.Condition()
        threading.Thread(target=self._work, name="workbench-cgroups", daemon=True).start()
        atexit.register(self.drain)

    def add(self, folder: Path) -> None:
        with self.changed:
            self.pending[folder] = time.monotonic() + self.STAY
            self.changed.notify()

    def _work(self) -> None:
        while True:
            with self.changed:
                while not self.pending:
                    self.changed.wait()
            self._pass()
            time.sleep(0.01)

    def _pass(self) -> None:
        with self.changed:
            folders = list(self.pending.items())
        now = time.monotonic()
        done = [folder for folder, until in folders if _emptied(folder) or now > until]
        with self.changed:
            for folder in done:
                self.pending.pop(folder, None)
            self.changed.notify_all()

    def drain(self) -> None:
        """Every pending removal done or given up (at exit: before the workbench's own cgroup goes)."""
        while True:
            with self.changed:
                if not self.pending:
                    return
            self._pass()
            time.sleep(0.01)


_removal: list[Removals] = []


def _removals() -> Removals:
    """This process's removal thread, started on first use (a forked child starts its own)."""
    if not _removal or _removal[0].owner != os.getpid():
        _removal[:] = [Removals()]
    return _removal[0]


def _child_pid(fd: int) -> int | None:
    """The pid bubblewrap writes on --info-fd ({"child-pid": N, ...}); None when it ended before saying it."""
    said = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue
        if not chunk:
            break
        said += chunk
        try:
            pid = json.loads(said).get("child-pid")
        except ValueError:
            continue
        return pid if isinstance(pid, int) else None
    return None


def _inside(path: str, folder: Path) -> bool:
    return path.startswith(str(folder).rstrip("/") + "/")


def _count(path: Path, key: str) -> int:
    """A counter of a cgroup's events file ("key N" lines); 0 when it is not there."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def usage(folders: list[Path]) -> tuple[int, int, str]:
    """(bytes the folders' files take on disk, the size of the largest file, its path); links not followed."""
    total = largest = 0
    where = ""
    stack = [str(f) for f in folders]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += info.st_blocks * 512
            if info.st_size > largest:
                largest, where = info.st_size, entry.path
    return total, largest, where
