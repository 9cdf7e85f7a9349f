"""The one interface of an executor."""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.runs.transcript import TurnOutcome, parse_stream_json


@dataclass
class TurnCommand:
    """How to start one turn: argv (or a shell line), extra environment, stdin."""

    argv: list[str] | None = None
    shell: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    stdin: str = ""


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

    def turn(self, prompt: str, session_id: str | None) -> TurnCommand:
        raise NotImplementedError

    def parse(self, stdout: str, turn: int) -> TurnOutcome:
        return parse_stream_json(stdout, turn)

    def identity(self) -> dict:
        """What determines this executor's behaviour, for the dispatch cache."""
        return {"executor": self.name}
