"""The one interface of an executor."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.runs.transcript import TurnOutcome, parse_stream_json


@dataclass
class TurnCommand:
    """How to start one turn: argv (or a shell line), extra environment, stdin; or, for an executor that runs
    in the workbench's own process (a test's fake agent, never sandboxed), `call`: the turn itself, given
    the folder it works in, returning what it prints."""

    argv: list[str] | None = None
    shell: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    stdin: str = ""
    bounds: Any = None  # a sandboxed turn's bounds (workbench/runs/bounds.py TurnBounds), for run_bounded
    call: Callable[[Path], str] | None = None


def protocol_env(prompt: str, session_id: str | None) -> dict[str, str]:
    """The command protocol's environment: the prompt, and the session to resume."""
    env = {"WORKBENCH_PROMPT": prompt}
    if session_id:
        env["WORKBENCH_SESSION"] = session_id
    return env


class Executor:
    name = "executor"
    label = "executor"  # what the UI and reports call it
    skills_folder = ".claude/skills"  # where a with-skill run stages the skill
    trusted_by_default = True  # False: a command from the user's own config that must be trusted
    priced_model: str | None = None  # the model an estimate prices a dispatch as (None: cannot tell)

    def turn(self, prompt: str, session_id: str | None) -> TurnCommand:
        raise NotImplementedError

    def parse(self, stdout: str, turn: int) -> TurnOutcome:
        return parse_stream_json(stdout, turn)

    def identity(self) -> dict:
        """What determines this executor's behaviour, for the dispatch cache."""
        return {"executor": self.name}

    def private_config(self, home: Path) -> dict[str, str]:
        """Make the agent's private config folder inside `home` (one per dispatch, kept
        between its turns so --resume works) holding only what the agent needs, and
        return the environment that points the agent at it. Nothing else of the
        user's config (skills, plugins, CLAUDE.md, AGENTS.md) is visible to a run."""
        return {}

    def user_skill_places(self) -> list[tuple[Path, bool]]:
        """Folders of the user's own scope where the agent finds installed skills, each
        with whether the private config alone hides it (else only the sandbox does)."""
        return []

    def model_endpoints(self) -> list[str]:
        """Where its model API is (URLs or host:port), as this machine's environment and config say: what a
        sandboxed turn's confined network reaches (workbench/runs/network.py)."""
        return []


def copy_private(names: list[str], source: Path, target: Path) -> None:
    """Copy the named files (credentials, provider config) from the user's config
    folder into a private one, readable by the user only."""
    target.mkdir(parents=True, exist_ok=True, mode=0o700)
    for name in names:
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
            os.chmod(target / name, 0o600)
