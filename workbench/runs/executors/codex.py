"""The Codex CLI: `codex exec --json`, resuming for follow-up turns; its events
are mapped into the same transcript model."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

from workbench.formats.regular import read_regular_text
from workbench.runs import cost
from workbench.runs.executors.base import Executor, TurnCommand, copy_private
from workbench.runs.transcript import ASSISTANT, TOOL_RESULT, TOOL_USE, Event, TurnOutcome

DEFAULT_API = "https://api.openai.com"


def user_home() -> Path:
    """The user's CODEX_HOME."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


class CodexExecutor(Executor):
    name = "codex"
    skills_folder = ".agents/skills"

    def __init__(self, model: str | None = None, binary: str | None = None) -> None:
        self.model = model
        self.binary = binary or os.environ.get("WORKBENCH_CODEX", "codex")
        self.label = "Codex" + (f" ({model})" if model else "")

    def turn(self, prompt: str, session_id: str | None) -> TurnCommand:
        argv = [self.binary, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        if self.model:
            argv += ["--model", self.model]
        if session_id:
            argv += ["resume", session_id]
        return TurnCommand(argv=[*argv, "-"], stdin=prompt)

    def parse(self, stdout: str, turn: int) -> TurnOutcome:
        """Codex JSONL: thread.started, item.completed (agent_message, command_execution,
        file_change, ...), turn.completed with usage."""
        outcome = TurnOutcome()
        for line in stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                if line.strip():
                    outcome.garbage.append(line)
                continue
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            if kind == "thread.started":
                outcome.session_id = event.get("thread_id")
            elif kind == "item.completed" and isinstance(event.get("item"), dict):
                item = event["item"]
                item_type = item.get("type") or item.get("item_type")
                if item_type in ("agent_message", "assistant_message"):
                    outcome.events.append(Event(ASSISTANT, turn, text=str(item.get("text", ""))))
                elif item_type == "command_execution":
                    outcome.events.append(
                        Event(
                            TOOL_USE,
                            turn,
                            name="Bash",
                            input={"command": item.get("command")},
                            tool_id=str(item.get("id", "")),
                        )
                    )
                    outcome.events.append(
                        Event(
                            TOOL_RESULT,
                            turn,
                            text=str(item.get("aggregated_output", "")),
                            tool_id=str(item.get("id", "")),
                            is_error=item.get("exit_code") not in (0, None),
                        )
                    )
                elif item_type == "file_change":
                    changes = {"changes": item.get("changes")}
                    outcome.events.append(
                        Event(TOOL_USE, turn, name="apply_patch", input=changes, tool_id=str(item.get("id", "")))
                    )
            elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
                usage = event["usage"]
                outcome.tokens = sum(v for v in usage.values() if isinstance(v, int))
                # Codex reports tokens, not dollars: priced by the dated table (workbench/runs/cost.py).
                outcome.cost_usd = cost.price(self.priced_model, {**usage, "cached_inside_input": True})
        return outcome

    @property
    def priced_model(self) -> str:  # type: ignore[override]  # a property where the base has a plain value
        """The model its usage is priced as: the one asked for, else the user's config.toml's, else
        Codex's default (prices.json)."""
        if self.model:
            return self.model
        try:
            chosen = tomllib.loads(read_regular_text(user_home() / "config.toml")).get("model")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            chosen = None
        return chosen if isinstance(chosen, str) and chosen else cost.default_codex_model()

    def private_config(self, home: Path) -> dict[str, str]:
        """CODEX_HOME: the user's config.toml (their provider and model) and auth.json, nothing else."""
        folder = home / ".codex"
        copy_private(["config.toml", "auth.json"], user_home(), folder)
        return {"CODEX_HOME": str(folder)}

    def user_skill_places(self) -> list[tuple[Path, bool]]:
        return [(Path.home() / ".agents" / "skills", False), (user_home() / "skills", True)]

    def identity(self) -> dict:
        return {"executor": self.name, "model": self.model}

    def model_endpoints(self) -> list[str]:
        """Its provider's base_url (config.toml's model_provider), else OPENAI_BASE_URL, else OpenAI's API."""
        try:
            config = tomllib.loads(read_regular_text(user_home() / "config.toml"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            config = {}
        provider = config.get("model_provider")
        providers = config.get("model_providers")
        if isinstance(provider, str) and isinstance(providers, dict) and isinstance(providers.get(provider), dict):
            url = providers[provider].get("base_url")
            if isinstance(url, str) and url:
                return [url]
        return [os.environ.get("OPENAI_BASE_URL") or DEFAULT_API]
