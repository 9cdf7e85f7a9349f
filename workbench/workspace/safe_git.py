"""Every git process the workbench starts goes through here, with a configuration
that cannot run a command someone else supplied, on repositories whose content
cannot configure it.

Git obeys what it finds: hooks, core.fsmonitor, filter and diff drivers
(textconv, external diff), aliases, pagers, ssh and credential helpers in its
config files; attributes (filters, line-ending and encoding conversions, diff
drivers, export-ignore and export-subst) in `.gitattributes` files of the work
tree, in `info/attributes`, and in a bare repository's HEAD tree; a nested
repository's own config when it descends into a gitlink; replace refs and grafts
that change which objects it reads. So:

- git never reads a tree the workbench did not write: an agent's workspace, a
  skill folder, a returned tree are read as data by workspace/trees.py and written as
  objects by workspace/git_objects.py; git then runs only on object stores the
  workbench made (a run's TREES, versions.git, a chock replay), with no work
  tree, or on the user's own repository (`workbench promote --write` asks it
  which files are committed) with commands that read the index and objects only;
- the system and global config files are not read (GIT_CONFIG_NOSYSTEM,
  GIT_CONFIG_GLOBAL=/dev/null), nor system attributes (GIT_ATTR_NOSYSTEM), nor
  replace refs (GIT_NO_REPLACE_OBJECTS); no GIT_* variable is inherited;
- `-c` pins hooks to nowhere, fsmonitor and the untracked cache off, attributes
  from an empty tree (git 2.42 and later read a bare repository's attributes from
  HEAD otherwise), no pager, editor, ssh, askpass or credential helper;
- every diff runs with --no-ext-diff and --no-textconv (DIFF_SAFE);
- before git reads an old run's repository an agent could write, scrub() puts
  back the workbench's own .git/config and removes what redirects reading.

Aliases never run: the workbench calls git's own subcommands only."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import git

from workbench.workspace.git_objects import CONFIG as _CONFIG
from workbench.workspace.git_objects import EMPTY_TREE

CONFIG = {
    "core.hooksPath": os.devnull,
    "core.fsmonitor": "false",
    "core.untrackedCache": "false",
    "core.attributesFile": os.devnull,
    "attr.tree": EMPTY_TREE,
    "core.pager": "cat",
    "core.editor": "false",
    "core.sshCommand": "false",
    "core.askPass": "false",
    "core.quotePath": "false",
    "credential.helper": "",
    "protocol.allow": "never",
    "submodule.recurse": "false",
    "diff.ignoreSubmodules": "all",
    "commit.gpgSign": "false",
    "tag.gpgSign": "false",
    "gc.auto": "0",
}
OPTIONS = tuple(item for key, value in CONFIG.items() for item in ("-c", f"{key}={value}"))
ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_TERMINAL_PROMPT": "0",
}
DIFF_SAFE = ("--no-ext-diff", "--no-textconv")


def identity(name: str, email: str, date: str | None = None) -> dict[str, str]:
    """Author and committer for commits the workbench makes (no user config is read)."""
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    if date:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return env


def environ(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, **ENV, **(extra or {})}


def command(*args: str) -> list[str]:
    return ["git", *OPTIONS, *args]


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """git ARGS in cwd; its stdout (UTF-8, undecodable bytes replaced) without the last newline.
    Raises git.GitCommandError."""
    out = run_bytes(args, cwd, env).decode("utf-8", "replace")
    return out[:-1] if out.endswith("\n") else out


def run_bytes(
    args: list[str],
    cwd: Path,
    env: dict[str, str] | None = None,
    stdin: bytes = b"",
    timeout: float | None = None,
    limit: int | None = None,
) -> bytes:
    """git ARGS in cwd; its stdout as bytes (a diff of files in any encoding). Raises git.GitCommandError,
    also when it runs past timeout or says more than limit bytes (it is killed: what git prints is read as
    it comes, never whole, so a repository that makes it print without end cannot grow the workbench)."""
    argv = command(*args)
    what = "git " + next((a for a in args if not a.startswith("-")), "")
    process = subprocess.Popen(
        argv, cwd=cwd, env=environ(env), stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    stopped: list[str] = []

    def stop(why: str) -> None:
        if process.poll() is None:
            stopped.append(why)
            process.kill()

    errors = bytearray()
    helpers = [threading.Thread(target=_drain, args=(process.stderr, errors), daemon=True)]
    if stdin:
        helpers.append(threading.Thread(target=_feed, args=(process.stdin, stdin), daemon=True))
    late = f"{what} did not answer within {timeout or 0:g} s and was stopped"
    timer = threading.Timer(timeout or 0, stop, (late,))
    if timeout is not None:
        timer.start()
    for helper in helpers:
        helper.start()
    out = bytearray()
    try:
        assert process.stdout is not None
        while chunk := process.stdout.read(1 << 16):
            out += chunk
            if limit is not None and len(out) > limit:
                stop(f"{what} said more than {limit >> 20} MB and was stopped")
                break
        process.stdout.close()
        process.wait()
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
    for helper in helpers:
        helper.join()
    if stopped:
        raise failed(argv, -9, stopped[0])
    if process.returncode != 0:
        raise failed(argv, process.returncode, errors.decode("utf-8", "replace"), bytes(out))
    return bytes(out)


def failed(argv: list[str], status: int, stderr: str = "", stdout: bytes = b"") -> Exception:
    """gitpython's GitCommandError (what callers catch), made as it is raised: gitpython is imported then, not
    by every command that may run git (~45 ms of each `workbench run`'s start)."""
    from git import GitCommandError

    return GitCommandError(argv, status, stderr, stdout)


def errors() -> tuple[type[git.GitCommandError], ...]:
    """For an except clause: gitpython's GitCommandError once gitpython is imported; else none, as none can
    have been raised."""
    # Half imported by another thread, it has no GitCommandError yet: none can have been raised then either
    # (failed() waits for the import to end).
    found = getattr(sys.modules.get("git"), "GitCommandError", None)
    return (found,) if found is not None else ()


_ERRORS = 64 << 10  # of what git says on stderr, the start is kept (its reason); the rest is read and dropped


def _drain(stream: IO[bytes] | None, into: bytearray) -> None:
    assert stream is not None
    with stream:
        while chunk := stream.read(1 << 16):
            into += chunk[: max(0, _ERRORS - len(into))]


def _feed(stream: IO[bytes] | None, data: bytes) -> None:
    assert stream is not None
    try:
        with stream:
            stream.write(data)
    except (BrokenPipeError, OSError):
        pass  # git stopped reading (it failed, or was stopped): its exit says why


def scrub(work_tree: Path) -> None:
    """Before git reads a repository an agent could write (only an old run's, made before the workbench
    kept its own baseline): its .git must be a real folder, its config the workbench's own again (no
    driver, hook path, fsmonitor, include or worktree it set survives), and nothing in it may redirect
    what git reads (alternates, grafts, a shallow file, replace refs)."""
    git_dir = work_tree / ".git"
    if git_dir.is_symlink() or not git_dir.is_dir():
        raise failed(["scrub", str(work_tree)], 1, f"{git_dir} is not the workbench's repository any more")
    for name in ("commondir", "config.worktree", "objects/info/alternates", "objects/info/http-alternates"):
        (git_dir / name).unlink(missing_ok=True)
    for name in ("info/grafts", "shallow", "info/attributes"):
        (git_dir / name).unlink(missing_ok=True)
    # Git never makes a link inside .git; an agent can, to make the workbench's own writes (the config
    # below, loose objects of `git add`) land outside the workspace. Links go before git runs.
    for path in list(git_dir.rglob("*")):
        if path.is_symlink():
            path.unlink()
    config = git_dir / "config"
    config.unlink(missing_ok=True)  # a link or a file: written anew, never through what is there
    config.write_text(_CONFIG.format(bare="false"))


def configure(repo: git.Repo) -> git.Repo:
    """A gitpython Repo whose git calls get the same configuration and environment."""
    repo.git.set_persistent_git_options(c=[f"{key}={value}" for key, value in CONFIG.items()])
    repo.git.update_environment(**ENV)
    return repo
