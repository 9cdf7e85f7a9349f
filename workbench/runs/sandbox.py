"""The agent's sandbox: one turn's argv wrapped in bubblewrap (bwrap).

Inside it:
- the system is read-only: /usr, /bin, /lib*, /sbin, /etc, /opt; beside it only what the turn needs to start,
  each read-only: the Python of the workbench (its interpreter's install, its site-packages) and the
  `workbench` package folder itself, never the checkout that holds it; the install folder of the agent's
  program (a node_modules prefix, a bin's prefix; never a general folder of home such as ~/.local); and
  each script file the agent command names, as that file, never its folder. Nothing shown is ever the
  user's home or one of its ancestors, the current folder or one of its ancestors, or a folder that holds
  the workspace, the dispatch or the skill (`Shown`);
- the only writable places are the dispatch's repository (the workspace), its private home (<run folder>/home,
  mounted over $HOME as the workbench sees it, and at its own path, where CLAUDE_CONFIG_DIR or CODEX_HOME
  point), a private /tmp and /dev/shm (a tmpfs each, per turn, of the /tmp bound's size); the sandbox's own
  root and /dev are tmpfs mounts bwrap makes (as big as half the machine's memory): both are read-only once
  everything is mounted (the devices in /dev still take writes);
- its IPC namespace is its own (--unshare-ipc): no SysV shared memory, semaphore or queue of the machine's is
  in reach, and what it makes there goes with it;
- every process dies with the run: a new pid namespace (--unshare-pid: when the turn's first process ends,
  the kernel kills the rest), --die-with-parent, and a new session (--new-session: no TIOCSTI into the
  workbench's terminal);
- no capabilities (--cap-drop ALL): even run as root, nothing in it can mount, remount a read-only folder
  writable, or change what it sees;
- the network is its own (--unshare-net): only the model API is reached, through the run's relay
  (workbench/runs/network.py); `--network open` shares the machine's instead;
- its processes, memory, file sizes, /tmp and disk growth are bounded (workbench/runs/bounds.py).

The private home lives as long as its dispatch, so a follow-up turn (--resume) finds the session state the
first turn left in it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.runs import bounds, inside, netns, network
from workbench.runs.executors.base import TurnCommand
from workbench.runs.modes import AUTO, BWRAP, NONE  # noqa: F401  (sandbox.AUTO ... as callers name them)
from workbench.runs.modes import SANDBOXES as CHOICES

if TYPE_CHECKING:
    from workbench.config import Config

# Every process dies with the turn (its own pid namespace, dying with its parent), no TIOCSTI into the
# workbench's terminal (a new session), SysV IPC of its own (the machine's shared memory segments are neither
# read nor kept past the turn), and no capabilities: run as root, a process with CAP_SYS_ADMIN could
# remount any read-only bind writable (`mount -o remount,bind,rw /usr`) and so leave the sandbox.
CONTAINMENT = ("--die-with-parent", "--unshare-pid", "--unshare-ipc", "--new-session", "--cap-drop", "ALL")
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
INSIDE = Path(__file__).with_name("inside.py")  # the sandbox's first process when its network is confined
RELAY_SOCKET = "/run/workbench/relay.sock"  # where a turn's channel to the relay is, inside
PACKAGE = Path(__file__).resolve().parents[1]  # the `workbench` package folder


class SandboxUnavailable(Exception):
    pass


@functools.lru_cache(maxsize=1)
def unavailable() -> str | None:
    """Why bubblewrap cannot sandbox here, or None when it works (tried once)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return "bubblewrap (bwrap) is not installed"
    probe = [binary, "--ro-bind", "/", "/", *CONTAINMENT, "--unshare-net", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap does not run: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap cannot create namespaces here ({said[-1] if said else f'exit {done.returncode}'})"
    return None


@functools.lru_cache(maxsize=1)
def _sized_tmpfs() -> bool:
    """Whether this bubblewrap can bound a tmpfs's size (--size, bubblewrap 0.7 and later)."""
    try:
        said = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in said


def resolve(choice: str) -> tuple[str, str | None]:
    """auto|bwrap|none -> (bwrap|none, a warning to show or None). Raises
    SandboxUnavailable when bwrap is asked for and cannot work, ValueError on a bad choice."""
    if choice not in CHOICES:
        raise ValueError(f"unknown sandbox {choice!r}; expected one of {', '.join(CHOICES)}")
    if choice == NONE:
        return NONE, None
    why = unavailable()
    if why is None:
        return BWRAP, None
    if choice == BWRAP:
        raise SandboxUnavailable(f"--sandbox bwrap: {why}")
    return NONE, (
        f"agents run without a sandbox: {why} (install the bubblewrap package, or pass --sandbox none); "
        "their network is not confined to the model API and no bound holds their processes, memory or disk"
    )


@dataclass(frozen=True)
class Holding:
    """How a command's agents are held, as chosen once (flags, then the config, then ours) and said on the run."""

    sandbox: str  # bwrap | none, as resolved
    network: str = network.MODEL  # model | open
    allow: tuple[str, ...] = ()  # endpoints the config adds to the model's (network_allow)
    show: tuple[str, ...] = ()  # files and folders the config shows read-only beside what the turn needs
    limits: bounds.Limits = field(default_factory=bounds.Limits)
    warnings: tuple[str, ...] = ()


def choose(sandbox_choice: str, network_choice: str | None = None, config: Config | None = None) -> Holding:
    """The one resolution of --sandbox and --network with the config's network, network_allow and sandbox_*
    bounds. Raises SandboxUnavailable and ValueError as resolve() does."""
    from workbench.config import load_config, where

    config = config or load_config()
    mode, no_sandbox = resolve(sandbox_choice)
    chosen = network_choice or config.network or network.MODEL
    if chosen not in network.CHOICES:
        raise ValueError(f"unknown network {chosen!r}; expected one of {', '.join(network.CHOICES)}")
    warnings = [no_sandbox] if no_sandbox else []
    if mode == BWRAP and chosen == network.OPEN:
        warnings.append(
            "the agents' network is open (--network open): they can reach any host, and every service of this machine"
        )
    if mode == BWRAP:
        unsized = [] if _sized_tmpfs() else ["/tmp and /dev/shm are not bounded (bwrap < 0.7)"]
        missing = bounds.means().not_in_force() + unsized
        if missing:
            warnings.append("bounds not in force on this machine: " + "; ".join(missing))
    show = tuple(os.path.abspath(os.path.expanduser(p)) for p in config.sandbox_show or ())
    for path in show:
        why = Shown(os.path.expanduser("~"), ()).refusal(path)
        if why:
            raise ValueError(f"{where('sandbox_show')}: {path} {why}")
    allow = tuple(config.network_allow or ())
    return Holding(mode, chosen, allow, show, config_limits(config), tuple(warnings))


def config_limits(config: Config) -> bounds.Limits:
    """The config's sandbox_* keys over the defaults."""
    keys = {
        "processes": config.sandbox_processes,
        "memory_mb": config.sandbox_memory_mb,
        "file_mb": config.sandbox_file_mb,
        "tmp_mb": config.sandbox_tmp_mb,
        "disk_mb": config.sandbox_disk_mb,
    }
    return replace(bounds.Limits(), **{k: v for k, v in keys.items() if v is not None})


@dataclass
class Confinement:
    """How one turn is held beyond the files it sees."""

    channel: network.Channel | None = None  # its way out to the model (None: it reaches nothing)
    open_network: bool = False  # --network open: the machine's network, shared
    limits: bounds.Limits = field(default_factory=bounds.Limits)
    disk: bounds.Disk | None = None  # the folders whose growth is bounded
    hidden: tuple[Path, ...] = ()  # folders never shown, nor anything that holds them (the workspace, the skill)
    show: tuple[str, ...] = ()  # what the config's sandbox_show adds, by the same rule
    # A run's places already worked out (shown_places), kept by its runner from one turn to the next; None: none kept.
    places: dict[tuple, list[tuple[str, str]]] | None = None


def wrap(command: TurnCommand, repo: Path, home: Path, confinement: Confinement | None = None) -> TurnCommand:
    """The same turn, started inside bubblewrap; its bounds ride along for run_bounded."""
    if command.call is not None:
        raise LedOut("an agent that runs in the workbench's own process cannot be sandboxed (--sandbox none)")
    held = confinement or Confinement()
    inner = command.argv if command.shell is None else ["/bin/sh", "-c", command.shell]
    assert inner, "a turn without a program"
    env = {**os.environ, **command.env}
    user_home = os.path.abspath(env.get("HOME") or os.path.expanduser("~"))
    args = ["bwrap", *CONTAINMENT, "--proc", "/proc", "--dev", "/dev"]
    if not held.open_network:
        args.append("--unshare-net")  # its own loopback and nothing else of the machine
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for place in bounds.TMPFS:  # /tmp and /dev/shm: memory the turn writes, each of the /tmp bound's size
        if _sized_tmpfs():
            args += ["--size", str(held.limits.tmp_mb * bounds.MB)]
        args += ["--tmpfs", place]
    args += ["--setenv", "TMPDIR", "/tmp"]
    if user_home != "/":
        args += ["--bind", str(home), user_home]
    for source, target in shown_places(inner, command.shell, env, user_home, (repo, home), held):
        args += ["--ro-bind", source, target]
    args += ["--bind", str(home), str(home), "--bind", str(repo), str(repo), "--chdir", str(repo)]
    if user_home != "/":
        _no_link_on_the_way(home, user_home, [args[i + 2] for i, a in enumerate(args) if a in ("--bind", "--ro-bind")])
    ready: Callable[[int], None] | None = None
    if held.channel is not None and netns.joinable():
        # The workbench listens in the turn's own namespace before its go: nothing of ours starts inside.
        channel, proxy = held.channel, network.proxy_port(held.channel.relay.loopback)
        args += _proxy_environment(env, f"http://127.0.0.1:{proxy}")
        ready = functools.partial(_serve_in, channel, proxy)
    elif held.channel is not None:
        held.channel.serve_path()
        relay = held.channel.relay
        args += ["--bind", str(held.channel.path), RELAY_SOCKET]
        python = os.path.realpath(sys.executable)
        loopback = [str(e) for e in relay.loopback]
        inner = [python, "-I", "-S", str(INSIDE), RELAY_SOCKET, *loopback, "--", *inner]
    # Last, once every mount point is made: the root and /dev are tmpfs mounts bwrap made (unbounded, memory
    # no bound counts), and nothing of the turn needs to write there.
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    return TurnCommand(
        argv=[*args, "--", *inner],
        env=command.env,
        stdin=command.stdin,
        bounds=bounds.TurnBounds(held.limits, held.disk, ready=ready),
    )


def shown_places(
    inner: list[str], shell: str | None, env: dict[str, str], user_home: str, own: tuple[Path, Path], held: Confinement
) -> list[tuple[str, str]]:
    """What a turn is shown read-only beside the system (Shown.places). own: its repository and private home,
    never shown. Worked out once per run (held.places) when both are inside a hidden folder (the workspace): the
    rule then gives the same places whichever dispatch asks, as it reads nothing else of the dispatch; each time
    they are used, their sources are checked to be what they were (_unchanged). Each turn worked them out afresh,
    ~1.5 ms on the event loop (its home's hidden folders listed, ~30 paths resolved)."""
    hidden = [_realpath(os.fspath(p)) for p in held.hidden] if held.places is not None else []
    if not all(any(_within(folder, _realpath(os.fspath(p))) for folder in hidden) for p in own):
        return Shown(user_home, (*own, *held.hidden)).places(inner, shell, env, held.show)
    assert held.places is not None  # else nothing is hidden, and own is not inside it
    xdg = tuple(env.get(name) for name in XDG_HOMES)
    key = (user_home, tuple(hidden), tuple(inner), shell, env.get("PATH"), xdg, held.show)
    found = held.places.get(key)
    if found is None or not _unchanged(found):
        found = held.places[key] = Shown(user_home, held.hidden).places(inner, shell, env, held.show)
    return found


def _unchanged(places: list[tuple[str, str]]) -> bool:
    """Each source of places worked out earlier is still the real place it was: it exists and no link was put
    on its way since (an agent's install updated during the run, a shown folder replaced by a link into the
    workspace): else the rule is asked again. Two calls a source, where the rule takes ~30 lookups."""
    return all(_resolved(source) == source for source, _ in places)


def _serve_in(channel: network.Channel, proxy: int, pid: int) -> None:
    channel.serve_in(pid, proxy)


def _proxy_environment(env: dict[str, str], proxy: str) -> list[str]:
    """bubblewrap's options giving the agent its proxy environment: every other endpoint through the proxy,
    the sandbox's own loopback never (every other *_proxy variable of the machine, in any case, dropped)."""
    ours = {*inside.PROXY_VARIABLES, "NO_PROXY", "no_proxy"}
    # Every proxy variable of the machine in any other case goes: urllib reads HTTPS_proxy beside https_proxy.
    args = [a for name in env if name.lower().endswith("_proxy") and name not in ours for a in ("--unsetenv", name)]
    for name in inside.PROXY_VARIABLES:
        args += ["--setenv", name, proxy]
    for name in ("NO_PROXY", "no_proxy"):
        args += ["--setenv", name, inside.LOOPBACK_NAMES]
    return args


class LedOut(ValueError):
    """A mount point of the turn would be made through a link in its private home: the turn is not started."""


def _no_link_on_the_way(home: Path, user_home: str, targets: list[str]) -> None:
    """The private home is mounted over home first, so every later mount point inside home is made in it,
    by bubblewrap, following links: a link the agent left there in an earlier turn (home/.local ->
    /oldroot/<a host folder>: the host, as bubblewrap sees it while it sets up) would have the next turn's
    set-up make folders and files on the host. Each folder on the way to such a mount point is a folder,
    or missing (bubblewrap makes it), never a link: raises LedOut, naming it."""
    for target in targets:
        if not target.startswith(user_home.rstrip("/") + "/"):
            continue
        way = home
        parts = Path(os.path.relpath(target, user_home)).parts
        for at, part in enumerate(parts):
            way = way / part
            try:
                mode = os.lstat(way).st_mode
            except FileNotFoundError:
                break  # bubblewrap makes the rest, inside the private home
            last = at == len(parts) - 1  # the mount point itself: a file or a folder, never a link
            if stat.S_ISLNK(mode) or not (last or stat.S_ISDIR(mode)):
                kind = "a link" if stat.S_ISLNK(mode) else "not a folder"
                raise LedOut(
                    f"{way} in the agent's private home is {kind}, on the way to where the sandbox shows "
                    f"{target}: a turn is never set up through it"
                )


class Shown:
    """What a turn is shown read-only beside the system: (source, where inside) pairs, by one rule."""

    def __init__(self, user_home: str, held: Iterable[Path]) -> None:
        self._reals: dict[str, str] = {}
        homes = {user_home, os.path.expanduser("~")}
        try:
            homes.add(pwd.getpwuid(os.getuid()).pw_dir)
        except KeyError:
            pass
        self.homes = {self.real(p) for p in homes if p}
        # Never these, nor a folder that holds one of them.
        self.kept = self.homes | {self.real(os.getcwd())}
        self.general: set[str] = set()  # folders of home no install-folder rule may pick (places() fills it)
        # Never these, nor a folder that holds one, nor a folder inside one (a file inside is shown when named).
        self.held = {self.real(os.fspath(p)) for p in held}

    def real(self, path: str) -> str:
        """path's real place, looked up once while this turn's sandbox is set up: a lookup costs a lstat per
        component, and the same few places (the Python, the agent's program, home) are asked about many times."""
        found = self._reals.get(path)
        if found is None:
            found = self._reals[path] = _realpath(path)
        return found

    def allowed(self, path: str, folder: bool) -> bool:
        real = self.real(path)
        return folder == os.path.isdir(real) and self.refusal(path) is None

    def refusal(self, path: str) -> str | None:
        """Why path is never shown, or None."""
        real = self.real(path)
        if not os.path.exists(real):
            return "does not exist"
        if real == "/" or any(_within(real, kept) for kept in self.kept):
            return "is your home, the current folder or a folder holding one of them: never shown"
        folder = os.path.isdir(real)
        if any(_within(real, held) or (folder and _within(held, real)) for held in self.held):
            return "holds the workspace or the skill, or is a folder inside one: never shown"
        return None

    def places(
        self, inner: list[str], shell: str | None, env: dict[str, str], extra: Iterable[str] = ()
    ) -> list[tuple[str, str]]:
        self.shown: dict[str, tuple[str, bool]] = {}  # where inside -> (source, a folder)
        self.general = _general_folders(self.homes, env, self.real)
        for path, folder in self._python():
            self._show(path, folder)
        for path in extra:
            self._show(path, os.path.isdir(path))
        for word in inner[:1] if shell is None else _words(shell):
            for path in _named(word, env):
                self._program(path, env, depth=0)
        folders = [t for t, (_, folder) in self.shown.items() if folder]
        return [
            (source, target)
            for target, (source, _) in sorted(self.shown.items())
            if not any(t != target and _within(t, target) for t in folders)  # already in sight
        ]

    def _show(self, path: str, folder: bool) -> bool:
        """Show path at its real place, and at the place named when that differs (a link's name)."""
        if not self.allowed(path, folder):
            return False
        real = self.real(path)
        for target in dict.fromkeys([real, os.path.abspath(path)]):
            if not _system(target):
                self.shown.setdefault(target, (real, folder))
        return True

    def _install(self, folder: str) -> bool:
        """Show folder as a program's install folder, unless it is a general folder of home (~/.local,
        ~/.config, ...: what else is in it is not the program's)."""
        return self.real(folder) not in self.general and self._show(folder, True)

    def _python(self) -> list[tuple[str, bool]]:
        """The workbench's Python: its interpreter's installs when they may be shown whole, else their
        stdlib and site-packages folders; the site-packages on sys.path; the `workbench` package itself."""
        found: list[tuple[str, bool]] = [(str(PACKAGE), True)]
        for prefix in dict.fromkeys([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]):
            if self.allowed(prefix, True) and self.real(prefix) not in self.general:
                found.append((prefix, True))
                continue
            paths = sysconfig.get_paths(vars={"base": prefix, "platbase": prefix, "installed_base": prefix})
            found += [(paths[k], True) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
            found.append((os.path.join(prefix, "pyvenv.cfg"), False))
        found += [(sys.executable, False), (self.real(sys.executable), False)]
        found += [(p, True) for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
        return found

    def _program(self, path: str, env: dict[str, str], depth: int) -> None:
        """A program the turn runs: its install folder when it has one (the prefix of a node_modules, the
        prefix of a binary in a bin/ beside a lib/) and that is no general folder of home, else the file
        alone (and for a Python script in a bin/, the prefix's lib/pythonX.Y/site-packages it imports from,
        as `pip install --user` lays it out in ~/.local); a script's #! interpreter likewise."""
        real = self.real(path)
        parts = Path(real).parts
        folders: list[str] = []
        if "node_modules" in parts:
            first = parts.index("node_modules")
            last = len(parts) - 1 - parts[::-1].index("node_modules")
            package = last + (3 if last + 1 < len(parts) and parts[last + 1].startswith("@") else 2)
            folders.append(str(Path(*parts[:first])))
            if package < len(parts):
                folders.append(str(Path(*parts[:package])))  # its own package, when the prefix may not be shown
        interpreter = _interpreter(real, env)
        prefix = Path(real).parent.parent
        if interpreter is None and Path(real).parent.name == "bin" and (prefix / "lib").is_dir():
            folders.append(str(prefix))  # a binary and the libraries beside it
        named = Path(os.path.abspath(path)).parent
        if named.name == "bin" and any((named.parent / mark).exists() for mark in INSTALL_MARKS):
            folders.append(str(named.parent))  # a virtualenv's python: a link out of it, its pyvenv.cfg beside
        if interpreter and Path(real).parent.name == "bin":
            version = _python_version(self.real(interpreter))
            if version:
                folders.append(str(prefix / "lib" / f"python{version}" / "site-packages"))
        if not any(self._install(folder) for folder in folders):
            self._show(real, False)
        elif interpreter:
            self._show(real, False)  # the script itself, beside the site-packages it needs
        self._show(path, False)  # by the name the command uses (a link in node_modules/.bin)
        if interpreter and depth < 2:
            self._program(interpreter, env, depth + 1)


XDG_HOMES = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "XDG_BIN_HOME")
INSTALL_MARKS = ("pyvenv.cfg", "conda-meta")  # what a folder holding one install of a program has at its top
USER_DIRS = ("Desktop", "Documents", "Downloads", "Music", "Pictures", "Public", "Templates", "Videos")


def _general_folders(homes: Iterable[str], env: dict[str, str], real: Callable[[str], str]) -> set[str]:
    """Folders of home that many programs share, so that none is ever a program's install folder: home
    itself, each hidden folder in it (~/.local, ~/.config, ~/.cache, ~/.ssh, ...), each folder of ~/.local
    (share, state, lib, bin), the XDG user folders (~/Downloads, ...) and whatever the XDG_*_HOME variables
    name; but a folder that says it is one install (a virtualenv's pyvenv.cfg, a conda prefix's conda-meta,
    ~/.venv say) is one program's. Real paths."""
    found: set[str] = set()
    for home in homes:
        found |= {os.path.join(home, name) for name in USER_DIRS}
        for folder in (home, os.path.join(home, ".local")):
            with contextlib.suppress(OSError):  # folders only (a link to one too): a file is never an install folder
                found |= {
                    entry.path
                    for entry in os.scandir(folder)
                    if (folder != home or entry.name.startswith(".")) and entry.is_dir()
                }
    named = [env.get(name) or os.environ.get(name) for name in XDG_HOMES]
    found |= {path for path in named if path and os.path.isabs(path)}
    found = {path for path in found if not any(os.path.exists(os.path.join(path, m)) for m in INSTALL_MARKS)}
    return {real(path) for path in [*found, *homes]}


def _realpath(path: str) -> str:
    """os.path.realpath(path), resolved by the kernel where path exists (an O_PATH open, and the link
    /proc/self/fd says it leads to): two system calls where realpath takes an lstat per component and its
    Python around each (a sandboxed turn's set-up asks for ~30)."""
    return _resolved(path) or os.path.realpath(path)


def _resolved(path: str) -> str | None:
    """Where the kernel finds path now (an O_PATH open, and the link /proc/self/fd says it leads to); None
    when it is not there, or not a path of this root (no /proc, a file deleted meanwhile)."""
    try:
        fd = os.open(path, os.O_PATH)
    except (OSError, ValueError):
        return None
    try:
        found = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    finally:
        os.close(fd)
    return found if found.startswith("/") and not found.endswith(" (deleted)") else None


def _python_version(real: str) -> str | None:
    """X.Y of a Python interpreter, by its real name (python3 is a link to python3.11; `real` is its real
    path), or None."""
    name = os.path.basename(real)
    found = re.fullmatch(r"python(\d+\.\d+)", name)
    return found.group(1) if found else None


def _within(folder: str, path: str) -> bool:
    """path is folder or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _system(path: str) -> bool:
    """Inside the read-only system the sandbox shows anyway."""
    return any(_within(s, path) for s in SYSTEM)


@functools.lru_cache(maxsize=64)  # the same command line every turn of a run: shlex is ~50 us of it
def _words(shell: str) -> tuple[str, ...]:
    try:
        words = shlex.split(shell, comments=True)
    except ValueError:
        words = shell.split()
    # --config=/path/file names a file too
    return tuple(part for word in words for part in ([word, word.split("=", 1)[1]] if "=" in word else [word]))


def _named(word: str, env: dict[str, str]) -> Iterable[str]:
    """The files a word of the command names: an absolute path to a file, or a program found on PATH."""
    if "/" in word:
        path = os.path.expanduser(word)
        if os.path.isabs(path) and os.path.isfile(path):
            yield path
        return
    found = shutil.which(word, path=env.get("PATH"))
    if found:
        yield found


def shebang(program: str | Path) -> tuple[str, bool] | None:
    """What a #! script names to run it, and whether through `env` (then a bare name, its options skipped);
    None for a file without a #! line, or one that cannot be read."""
    try:
        with open(program, "rb") as handle:
            first = handle.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    parts = first[2:].decode("utf-8", "replace").split()
    if not parts:
        return None
    if os.path.basename(parts[0]) == "env" and len(parts) > 1:
        rest = [p for p in parts[1:] if not p.startswith("-")]
        return (rest[0], True) if rest else None
    return parts[0], False


def _interpreter(program: str, env: dict[str, str]) -> str | None:
    """The program that runs a #! script (through `env X` too: found on the turn's PATH), or None."""
    named = shebang(program)
    if named is None or not named[1]:
        return named[0] if named else None
    return shutil.which(named[0], path=env.get("PATH"))
