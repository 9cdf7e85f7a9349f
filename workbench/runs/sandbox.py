"""The agent's sandbox: one turn's argv wrapped in bubblewrap (bwrap).

Inside it:
- the system is read-only: /usr, /bin, /lib*, /sbin, /etc, /opt, plus what the
  agent needs to start: the install folder of its program (a node_modules
  prefix, a `bin`'s parent) and of its script interpreter, and the Python and
  source of the workbench (the demo agent is `python -m workbench...`);
- the only writable places are the dispatch's repository (the workspace), its
  private home (<run folder>/home, mounted over $HOME as the workbench sees it,
  and at its own path, where CLAUDE_CONFIG_DIR or CODEX_HOME point) and a
  private /tmp (a tmpfs per turn);
- every process dies with the run: a new pid namespace (--unshare-pid: when the
  turn's first process ends, the kernel kills the rest), --die-with-parent,
  and a new session (--new-session: no TIOCSTI into the workbench's terminal);
- no capabilities (--cap-drop ALL): even run as root, nothing in it can mount,
  remount a read-only folder writable, or change what it sees;
- the network is shared (the model API, 127.0.0.1 in the tests).
Everything else of the machine (the user's home, other projects) is not there.

The private home lives as long as its dispatch, so a follow-up turn (--resume)
finds the session state the first turn left in it.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from workbench.runs.executors.base import TurnCommand

AUTO, BWRAP, NONE = "auto", "bwrap", "none"
# Every process dies with the turn (its own pid namespace, dying with its parent), no TIOCSTI into the
# workbench's terminal (a new session), and no capabilities: run as root, a process with CAP_SYS_ADMIN could
# remount any read-only bind writable (`mount -o remount,bind,rw /usr`) and so leave the sandbox.
CONTAINMENT = ("--die-with-parent", "--unshare-pid", "--new-session", "--cap-drop", "ALL")
CHOICES = (AUTO, BWRAP, NONE)
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")


class SandboxUnavailable(Exception):
    pass


@functools.lru_cache(maxsize=1)
def unavailable() -> str | None:
    """Why bubblewrap cannot sandbox here, or None when it works (tried once)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return "bubblewrap (bwrap) is not installed"
    probe = [binary, "--ro-bind", "/", "/", *CONTAINMENT, "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap does not run: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap cannot create namespaces here ({said[-1] if said else f'exit {done.returncode}'})"
    return None


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
    return NONE, f"agents run without a sandbox: {why} (install the bubblewrap package, or pass --sandbox none)"


def wrap(command: TurnCommand, repo: Path, home: Path) -> TurnCommand:
    """The same turn, started inside bubblewrap."""
    inner = command.argv if command.shell is None else ["/bin/sh", "-c", command.shell]
    assert inner, "a turn without a program"
    env = {**os.environ, **command.env}
    user_home = os.path.abspath(env.get("HOME") or os.path.expanduser("~"))
    args = ["bwrap", *CONTAINMENT, "--proc", "/proc", "--dev", "/dev"]
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--tmpfs", "/tmp", "--setenv", "TMPDIR", "/tmp"]
    if user_home != "/":
        args += ["--bind", str(home), user_home]
    for root in read_only_roots(inner, command.shell, env, user_home):
        args += ["--ro-bind", root, root]
    args += ["--bind", str(home), str(home), "--bind", str(repo), str(repo), "--chdir", str(repo), "--", *inner]
    return TurnCommand(argv=args, env=command.env, stdin=command.stdin)


def read_only_roots(inner: list[str], shell: str | None, env: dict[str, str], user_home: str) -> list[str]:
    """Folders to show read-only: the Python and source of the workbench, and the
    install folders of the programs the turn names (its argv[0], or the words of its
    shell line that are programs or existing paths) and their #! interpreters."""
    roots: list[str] = []
    for place in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.realpath(sys.executable)):
        roots.append(_install_root(place if os.path.isdir(place) else os.path.dirname(place), user_home))
    roots += [p for p in sys.path if os.path.isabs(p) and os.path.isdir(p)]
    roots += [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if os.path.isabs(p) and os.path.isdir(p)]
    roots.append(str(Path(__file__).resolve().parents[2]))  # the workbench's own source
    words = inner[:1] if shell is None else _words(shell)
    for word in words:
        for program in _programs(word, env):
            roots.append(_install_root(program, user_home))
            interpreter = _interpreter(program, env)
            if interpreter:
                roots.append(_install_root(interpreter, user_home))
    out: list[str] = []
    for root in dict.fromkeys(os.path.realpath(r) for r in roots if r):
        if any(root == s or root.startswith(s + "/") for s in SYSTEM) or root == "/" or not os.path.exists(root):
            continue
        out.append(root)
    return out


def _words(shell: str) -> list[str]:
    try:
        return shlex.split(shell, comments=True)
    except ValueError:
        return shell.split()


def _programs(word: str, env: dict[str, str]) -> Iterable[str]:
    if "/" in word:
        path = os.path.expanduser(word)
        if os.path.isabs(path) and os.path.exists(path):
            yield path
            real = os.path.realpath(path)
            if real != path:
                yield real
        return
    found = shutil.which(word, path=env.get("PATH"))
    if found:
        yield found
        yield os.path.realpath(found)


def _interpreter(program: str, env: dict[str, str]) -> str | None:
    """The program that runs a #! script (through `env X` too), or None."""
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
        return shutil.which(rest[0], path=env.get("PATH")) if rest else None
    return parts[0]


def _install_root(path: str, user_home: str) -> str:
    """Where a program's installation starts: the folder holding its node_modules,
    the parent of its bin/, else its folder. Never the user's home or one of its
    ancestors: then the program's own folder or file only."""
    real = Path(os.path.realpath(path))
    folder = real if real.is_dir() else real.parent
    if "node_modules" in real.parts:
        root = Path(*real.parts[: real.parts.index("node_modules")])
    elif folder.name == "bin":
        root = folder.parent
    else:
        root = folder
    home = Path(user_home)
    if root == home or root in home.parents or root == Path("/"):
        root = folder if not (folder == home or folder in home.parents) else real
    return str(root)
