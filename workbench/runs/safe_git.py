"""Every git call the workbench makes goes through here, with a configuration that
cannot run a command someone else supplied.

Git runs commands named in its configuration: hooks, core.fsmonitor, filter and
diff drivers (textconv, external diff), aliases, pagers, ssh and credential
helpers. Repositories the workbench reads are not all its own to trust: an
agent (untrusted) works in each dispatch's repository and can edit its
.git/config; a skill folder comes from a stranger. So:

- the system and global config files are not read (GIT_CONFIG_NOSYSTEM,
  GIT_CONFIG_GLOBAL=/dev/null) and no GIT_* variable is inherited;
- `-c` pins hooks to nowhere, fsmonitor off, no pager, editor, ssh or askpass;
- every diff runs with --no-ext-diff and --no-textconv (DIFF_SAFE);
- before git reads a repository an agent could write, scrub() puts back the
  workbench's own .git/config, so no filter or diff driver it defines is left.

Aliases never run: the workbench calls git's own subcommands only."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import git

CONFIG = {
    "core.hooksPath": os.devnull,
    "core.fsmonitor": "false",
    "core.attributesFile": os.devnull,
    "core.pager": "cat",
    "core.editor": "false",
    "core.sshCommand": "false",
    "core.askPass": "false",
    "credential.helper": "",
    "protocol.allow": "never",
    "commit.gpgSign": "false",
    "tag.gpgSign": "false",
    "gc.auto": "0",
}
OPTIONS = tuple(item for key, value in CONFIG.items() for item in ("-c", f"{key}={value}"))
ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0"}
DIFF_SAFE = ("--no-ext-diff", "--no-textconv")
# What `git init` writes, and all a dispatch's repository needs.
_OWN_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"


def without_filters(work_tree: Path) -> list[str]:
    """`-c` settings that empty every filter driver a repository's own config defines.
    For a repository that is not the workbench's and must not be rewritten (the
    user's, around a skill folder): `git status` runs a clean filter on a file whose
    stat changed, and a config that came with the folder could name any command.
    Reading the config runs nothing; an empty clean, smudge or process runs nothing."""
    try:
        listed = run(["config", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$"], work_tree)
    except git.GitCommandError:  # none defined (exit 1)
        return []
    names = sorted({line.split()[0][len("filter.") :].rsplit(".", 1)[0] for line in listed.splitlines() if line})
    args: list[str] = []
    for name in names:
        for key in ("clean", "smudge", "process"):
            args += ["-c", f"filter.{name}.{key}="]
        args += ["-c", f"filter.{name}.required=false"]
    return args


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
    """git ARGS in cwd; its stdout without the last newline. Raises git.GitCommandError."""
    argv = command(*args)
    done = subprocess.run(argv, cwd=cwd, env=environ(env), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise git.GitCommandError(argv, done.returncode, done.stderr, done.stdout)
    return done.stdout[:-1] if done.stdout.endswith("\n") else done.stdout


def scrub(work_tree: Path) -> None:
    """Before git reads a repository an agent could write: its .git must be a real
    folder, and its config the workbench's own again (no driver, hook path, fsmonitor,
    include or worktree it set survives)."""
    git_dir = work_tree / ".git"
    if git_dir.is_symlink() or not git_dir.is_dir():
        raise git.GitCommandError(["scrub", str(work_tree)], 1, f"{git_dir} is not the workbench's repository any more")
    for name in ("commondir", "config.worktree"):
        (git_dir / name).unlink(missing_ok=True)
    # Git never makes a link inside .git; an agent can, to make the workbench's own writes (the config
    # below, loose objects of `git add`) land outside the workspace. Links go before git runs.
    for path in list(git_dir.rglob("*")):
        if path.is_symlink():
            path.unlink()
    config = git_dir / "config"
    config.unlink(missing_ok=True)  # a link or a file: written anew, never through what is there
    config.write_text(_OWN_CONFIG)


def configure(repo: git.Repo) -> git.Repo:
    """A gitpython Repo whose git calls get the same configuration and environment."""
    repo.git.set_persistent_git_options(c=[f"{key}={value}" for key, value in CONFIG.items()])
    repo.git.update_environment(**ENV)
    return repo
