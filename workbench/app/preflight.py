"""Preflight: before a command plans, prices or dispatches anything, every
program it will start (the agent, the judge, the proposer) is there and starts,
as it will run: inside the sandbox when it runs sandboxed.

What is started to find out (docs/security.md, "What runs, and when"):
- the agent CLIs the workbench drives (Claude Code, Codex): `--version`, which
  must succeed;
- an installed program a command line names by bare name (python3, node, uv),
  and the interpreter a script's `#!/usr/bin/env NAME` line names: `NAME
  --version` with nothing on stdin for at most PROBE_SECONDS; only "cannot
  execute" (status 126 or 127, or bubblewrap's execvp failing) counts against
  it, since not every program knows --version;
- never a script named by path (`./agent.sh`): it is the user's own command,
  which runs only once trusted; it is looked for (there, executable, its `#!`
  interpreter there) and not started.

A program that passed is remembered for the process (by its path and
modification time, and how it ran): the Runs screen asks again at every
change of its options."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import Refused
from workbench.runs import sandbox
from workbench.runs.executors import Executor, TurnCommand
from workbench.runs.processes import run_bounded

if TYPE_CHECKING:
    from workbench.grading.judges.base import Judge

PROBE_SECONDS = 15.0
CANNOT_EXECUTE = (126, 127)
# Words a shell line may start with that are no program of their own.
SHELL_WORDS = {"exec", "command", "env", "nohup", "time", "builtin"}
SHELL_BUILTINS = {
    "cd", "true", "false", "echo", "printf", "test", "[", "exit", "export", "set", "unset", "read", ":", ".",
    "source", "eval", "if", "for", "while", "until", "case", "{", "(", "!", "trap", "wait", "shift", "type",
}  # fmt: skip
# What to install, per program the workbench drives itself.
INSTALL = {
    "claude": "install Claude Code (npm install -g @anthropic-ai/claude-code), or point WORKBENCH_CLAUDE at it",
    "codex": "install the Codex CLI (npm install -g @openai/codex), or point WORKBENCH_CODEX at it",
}
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


class CannotStart(Refused):
    """A program the command needs cannot start here; `role` says which (agent, judge, proposer)."""

    def __init__(self, role: str, label: str, why: str, fix: str = "") -> None:
        super().__init__(f"the {role} ({label}) cannot start: {why}" + (f"; {fix}" if fix else ""))
        self.role = role


@dataclass(frozen=True)
class Program:
    """One program a command will start, as it will start it."""

    role: str  # agent | judge | proposer
    label: str  # the executor's or judge's label, as the heading says it
    turn: TurnCommand  # its argv (the CLIs) or its shell line (a command)
    sandboxed: bool
    known: str | None = None  # "claude" | "codex": a CLI the workbench drives (--version must succeed)


def of_executor(executor: Executor, role: str, mode: str) -> Program | None:
    """The program an agent or proposer turn starts; None for the demo agent (the workbench's own Python)."""
    if executor.name == "demo":
        return None
    turn = executor.turn("", None)
    known = executor.name if executor.name in INSTALL else None
    return Program(role, executor.label, turn, mode == sandbox.BWRAP, known)


def check_judge(judge: Judge) -> None:
    """Raise CannotStart when the judge cannot run at all (its program missing or not starting, its key
    unset): each judge says so itself (Judge.unready), without being asked anything."""
    why = judge.unready()
    if why:
        raise CannotStart("judge", judge.label, why, INSTALL.get(judge.name, ""))


def check(program: Program | None) -> None:
    """Raise CannotStart when the program is missing or does not start as it will run."""
    if program is None:
        return
    if program.turn.argv is not None:
        _check_argv(program)
    elif program.turn.shell is not None:
        _check_shell(program)


def absolute_command(command: str | None, cwd: Path | None = None) -> str | None:
    """A command line whose program is a relative path (`./agent.sh`, `bin/agent`) with that path made
    absolute from `cwd` (the user's current folder): the command runs elsewhere (a dispatch's repository, a
    private copy), where the relative path means nothing. The rest of the line is left as written."""
    if not command:
        return command
    at, word = _program_word(command)
    if word is None or "/" not in word or word.startswith(("/", "~", "$")):
        return command
    full = shlex.quote(str(((cwd or Path.cwd()) / word).resolve()))
    return command[:at] + full + command[at + len(word) :]


# ---------------------------------------------------------------- the checks


def _check_argv(program: Program) -> None:
    argv = program.turn.argv
    assert argv
    name = argv[0]
    fix = INSTALL.get(program.known or "", "")
    found = name if os.sep in name else shutil.which(name, path=_path(program.turn))
    if found is None or not os.path.exists(found):
        raise CannotStart(program.role, program.label, f"{name!r} is not found", fix)
    said = _probe([name, "--version"], program, strict=program.known is not None)
    if said is not None:
        raise CannotStart(program.role, program.label, f"{name} --version {said}", fix)


def _check_shell(program: Program) -> None:
    shell = program.turn.shell
    assert shell is not None
    _at, word = _program_word(shell)
    if word is None or word in SHELL_BUILTINS:
        return  # a shell construct: nothing to look for before it runs
    if "/" not in word:
        if shutil.which(word, path=_path(program.turn)) is None:
            raise CannotStart(program.role, program.label, f"{word!r} is not found on PATH", "install it")
        said = _probe([word, "--version"], program, strict=False)
        if said is not None:
            raise CannotStart(program.role, program.label, f"{word} does not start: {said}")
        return
    path = Path(os.path.expanduser(word))
    if not path.is_absolute():
        return  # relative to where it runs (absolute_command makes the user's own absolute first)
    if not path.exists():
        raise CannotStart(program.role, program.label, f"{word} is not there")
    if path.is_dir() or not os.access(path, os.X_OK):
        raise CannotStart(program.role, program.label, f"{word} is not an executable file", f"chmod +x {word}")
    named = sandbox.shebang(path)
    interpreter = named[0] if named else None
    if interpreter is None:
        return
    if "/" in interpreter:
        if not os.path.exists(interpreter):
            raise CannotStart(program.role, program.label, f"{word} starts with #!{interpreter}, which is not there")
        return
    if shutil.which(interpreter, path=_path(program.turn)) is None:
        raise CannotStart(
            program.role, program.label, f"{word} runs {interpreter} (its #! line), which is not found on PATH"
        )
    said = _probe([interpreter, "--version"], program, strict=False)
    if said is not None:
        raise CannotStart(program.role, program.label, f"{word} runs {interpreter} (its #! line), which {said}")


_started: set[tuple] = set()


def _probe(argv: list[str], program: Program, strict: bool) -> str | None:
    """None when argv starts as the program will run (sandboxed or not); else what went wrong, in the
    words of the first line it printed."""
    env = {**program.turn.env}
    found = shutil.which(argv[0], path=_path(program.turn)) or argv[0]
    try:
        stamp = os.stat(found).st_mtime_ns
    except OSError:
        stamp = 0
    key = (tuple(argv), os.path.realpath(found), stamp, program.sandboxed, strict)
    if key in _started:
        return None
    mode = sandbox.BWRAP if program.sandboxed else sandbox.NONE
    with tempfile.TemporaryDirectory(prefix="workbench-preflight-") as private:
        repo, home = Path(private) / "repo", Path(private) / "home"
        repo.mkdir()
        home.mkdir(mode=0o700)
        turn = TurnCommand(argv=list(argv), env=env)
        if mode == sandbox.BWRAP:
            turn = sandbox.wrap(turn, repo, home)
        assert turn.argv
        try:
            done = run_bounded(turn.argv, "", PROBE_SECONDS, cwd=repo, env=turn.env, contained=mode == sandbox.BWRAP)
        except OSError as exc:
            return f"cannot be executed ({exc.strerror or exc})"
    where = " in the sandbox" if mode == sandbox.BWRAP else ""
    lines = [line.strip() for line in (done.stderr + "\n" + done.stdout).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if done.code is None:  # still going at the deadline: it started
        _started.add(key)
        return None
    failed = done.code != 0 if strict else done.code in CANNOT_EXECUTE or first.startswith("bwrap: execvp")
    if failed:
        return f"exits with status {done.code}{where}" + (f": {first}" if first else "")
    _started.add(key)
    return None


def _program_word(command: str) -> tuple[int, str | None]:
    """Where the program of a shell line starts, and the word (None when it cannot be told)."""
    try:
        lexer = shlex.shlex(command, posix=False, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        at = 0
        for token in lexer:
            at = command.find(token, at)
            if ASSIGNMENT.match(token) or token in SHELL_WORDS:
                at += len(token)
                continue
            if token[:1] in "'\"" or any(c in token for c in "$`*?"):
                return 0, None
            return at, token
    except ValueError:
        return 0, None
    return 0, None


def _path(turn: TurnCommand) -> str:
    return turn.env.get("PATH") or os.environ.get("PATH", os.defpath)
