"""A proposer: an agent that rewrites a skill from a brief (docs/improve.md,
"The proposer protocol").

It runs in a private copy of the best version's files (never evals/: the test
is not the skill's to change), with the brief on stdin and as the file named in
WORKBENCH_BRIEF, and prints stream-json like the command executor. The claude
and codex proposers are the real CLIs, sandboxed like agent runs; a command
proposer is the user's own program, run only once trusted. What it leaves is
checked before it can become a version: a proposal that changes nothing,
touches evals/, holds a link out, a .git or anything but files and folders, or
grows the skill past the size limits is refused with the reason."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from workbench.formats import paths
from workbench.formats.regular import read_regular
from workbench.runs import bounds, executors, network, sandbox
from workbench.runs.executors import Executor
from workbench.runs.processes import run_bounded
from workbench.runs.runner import SANDBOX_HINT, allowed_endpoints, first_line
from workbench.runs.transcript import Event, TurnOutcome
from workbench.validate.validator import validate_file

PROPOSERS = ("claude", "codex", "command")
SKILL_MD_LINES = 500  # the Agent Skills spec's advice for SKILL.md
SKILL_BYTES = 1_000_000  # every file of the skill together
SKILL_FILES = 1_000  # files and folders of the skill together
BRIEF = "WORKBENCH_BRIEF"


def make_proposer(name: str, command: str | None = None, model: str | None = None) -> Executor:
    """The proposer as an executor: it speaks the same protocol an agent run does."""
    if name not in PROPOSERS:
        raise ValueError(f"unknown proposer {name!r}; expected one of {', '.join(PROPOSERS)}")
    if name == "command":
        if not command:
            raise ValueError("--proposer command needs --proposer-command CMD")
        return executors.make("command", command)
    return executors.make(name, None, model)


@dataclass
class Proposal:
    changed: list[str] = field(default_factory=list)  # the skill's files it changed, added or removed
    refused: str | None = None  # why it cannot be a version; None: it can
    cost_usd: float | None = None  # what the proposer reported (None: unknown)
    events: list[Event] = field(default_factory=list)
    said: str = ""  # its last words
    failed: bool = False  # the proposer itself did not run to its end (could not start, crashed, timed out)

    @property
    def summary(self) -> str:
        if self.refused:
            return f"refused: {self.refused}"
        shown = ", ".join(self.changed[:10])
        return f"changed {shown}" + (f" and {len(self.changed) - 10} more" if len(self.changed) > 10 else "")


def propose(
    proposer: Executor,
    folder: Path,
    brief: str,
    before: dict[str, bytes],
    mode: str | sandbox.Holding,
    timeout: float = 900.0,
    cancel: threading.Event | None = None,
) -> Proposal:
    """Run the proposer in `folder` (a copy of the best's files, `before`), then check what it left."""
    ran = run_proposer(proposer, folder, brief, mode, timeout, cancel)
    if isinstance(ran, str):
        return Proposal(refused=ran, failed=True)
    outcome, _stdout = ran
    changed, refused = check(folder, before)
    return Proposal(changed, refused, outcome.cost_usd, outcome.events, outcome.last_assistant_text)


def run_proposer(
    proposer: Executor,
    folder: Path,
    brief: str,
    mode: str | sandbox.Holding,
    timeout: float = 900.0,
    cancel: threading.Event | None = None,
) -> tuple[TurnOutcome, str] | str:
    """The proposer's one turn in `folder`: (what it said, its stdout), or why it failed. mode: bwrap or none,
    or how the command holds its agents (sandbox.choose): sandboxed, it reaches only its own model API."""
    held = mode if isinstance(mode, sandbox.Holding) else sandbox.Holding(mode)
    boxed = held.sandbox == sandbox.BWRAP
    with contextlib.ExitStack() as stack:
        private = stack.enter_context(tempfile.TemporaryDirectory(prefix="workbench-proposer-"))
        home = Path(private) / "home"
        home.mkdir(mode=0o700)
        brief_file = home / "brief.md"
        brief_file.write_text(brief, "utf-8")
        command = proposer.turn(brief, None)
        command.env = {**command.env, **proposer.private_config(home), BRIEF: str(brief_file)}
        if boxed:
            try:
                allowed = allowed_endpoints(proposer, held.allow) if held.network == network.MODEL else ()
            except ValueError as exc:
                return f"the proposer could not start: {exc}"
            channel = stack.enter_context(network.Relay(allowed)).channel() if allowed else None
            disk = bounds.Disk.measured([folder, home])
            held_turn = sandbox.Confinement(channel, held.network == network.OPEN, held.limits, disk, (), held.show)
            command = sandbox.wrap(command, folder, home, held_turn)
        argv = command.argv if command.shell is None else ["/bin/sh", "-c", command.shell]
        assert argv, "a proposer without a program"
        try:
            finished = run_bounded(
                argv,
                command.stdin,
                timeout,
                cwd=folder,
                env=command.env,
                cancel=cancel,
                contained=boxed,
                bounds=command.bounds,
            )
        except OSError as exc:
            return f"the proposer could not start: {exc.strerror or exc}"
    if finished.bound:
        return f"the proposer {finished.bound} (its process tree was killed)"
    if finished.cancelled:
        return "stopped by you: nothing was made of what it had done"
    if finished.timed_out:
        return f"the proposer timed out after {timeout:g} s"
    if finished.code != 0:
        said = first_line(finished.stderr) or " ".join(finished.stdout.split())[-300:]
        hint = f" ({SANDBOX_HINT})" if boxed else ""
        return f"the proposer exited with status {finished.code}{hint}: {said}"
    return proposer.parse(finished.stdout, 1), finished.stdout


def check(folder: Path, before: dict[str, bytes]) -> tuple[list[str], str | None]:
    """The files the proposal changed, and why it cannot be a version (None: it can)."""
    after: dict[str, bytes] = {}
    seen = 0
    for parent, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            seen += 1
            if seen > SKILL_FILES:
                return [], f"the skill grew past {SKILL_FILES:,} files and folders"
            path = os.path.join(parent, name)
            relative = os.path.relpath(path, folder)
            if paths.is_git_name(name):
                return [], f"it made {relative}: a version holds the skill's files, no repository"
            if relative.split(os.sep)[0].rstrip(". ").lower() == "evals":  # as a case-blind file system reads it
                return [], "it touched evals/: the evals test the skill, and are not the skill's to change"
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                if not paths.inside(os.path.realpath(path), os.path.realpath(folder)):
                    return [], f"{relative} is a link out of the skill, to {os.path.realpath(path)}"
                after[relative] = b"link:" + os.readlink(path).encode()
            elif stat.S_ISREG(info.st_mode):
                if info.st_size > SKILL_BYTES:
                    return [], f"{relative} is {info.st_size:,} bytes; the skill's limit is {SKILL_BYTES:,}"
                try:
                    after[relative] = read_regular(path)
                except OSError as exc:
                    return [], f"{relative} cannot be read: {exc.strerror or exc}"
            elif not stat.S_ISDIR(info.st_mode):
                return [], f"{relative} is not a file or a folder"
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(parent, d))]
    changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
    if not changed:
        return [], "it changed nothing"
    if "SKILL.md" not in after:
        return changed, "it removed SKILL.md"
    lines = after["SKILL.md"].count(b"\n") + 1
    if lines > SKILL_MD_LINES:
        return (
            changed,
            f"SKILL.md grew to {lines} lines; the limit is {SKILL_MD_LINES} (the Agent Skills spec's advice)",
        )
    size = sum(len(data) for data in after.values())
    if size > SKILL_BYTES:
        return changed, f"the skill grew to {size:,} bytes; the limit is {SKILL_BYTES:,}"
    errors = [d for d in validate_file(folder / "SKILL.md").diagnostics if d.severity == "error"]
    if errors:
        first = errors[0]
        return changed, f"SKILL.md:{first.line}:{first.column}: {first.message}"
    return changed, None
