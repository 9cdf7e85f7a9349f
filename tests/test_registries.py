"""The extension points are registries, and every list a user sees comes from
them: the CLI's choices, the TUI's selects, the docs."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from workbench.cli import cli
from workbench.grading import judges
from workbench.grading.kinds import KINDS, AssertionKind, kind, register
from workbench.registry import Registry
from workbench.runs import executors

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _choices(command: str, option: str) -> tuple[str, ...]:
    found = cli.get_command(click.Context(cli), command)
    assert found is not None
    params = {p.name: p for p in found.params}
    assert isinstance(params[option].type, click.Choice)
    return tuple(params[option].type.choices)


def test_the_cli_offers_exactly_the_registered_names():
    for command in ("run", "evaluate"):
        assert _choices(command, "executor") == executors.NAMES == tuple(executors.EXECUTORS.entries)
        assert _choices(command, "judge") == judges.NAMES == tuple(judges.JUDGES.entries)
    assert _choices("grade", "judge") == judges.NAMES


def test_the_docs_name_every_registered_executor_judge_and_assertion_kind():
    executors_doc = (DOCS / "executors.md").read_text()
    grading_doc = (DOCS / "grading.md").read_text()
    for name in executors.NAMES:
        assert re.search(rf"^\| `{name}` \|", executors_doc, re.M), f"docs/executors.md has no row for {name}"
    for name in judges.NAMES:
        assert f"- `{name}`" in grading_doc, f"docs/grading.md does not describe the {name} judge"
    for name in KINDS:
        assert f"`{name}`" in grading_doc or name in ("expectation", "expect"), f"docs/grading.md lacks {name}"


def test_a_new_executor_is_one_registration_away(monkeypatch):
    registry = Registry("executor")
    registry.register(
        "echo",
        "workbench.runs.executors.command:CommandExecutor",
        "echo",
        takes=("command",),
        requires="--agent-command CMD",
    )
    made = registry.make("echo", command="echo hi", model="ignored")
    assert made.command == "echo hi"
    with pytest.raises(ValueError, match="the echo executor needs --agent-command CMD"):
        registry.make("echo")
    with pytest.raises(ValueError, match="unknown executor 'nope'; expected one of echo"):
        registry.make("nope")
    with pytest.raises(ValueError, match="already registered"):
        registry.register("echo", "x:y", "again")


def test_a_new_assertion_kind_is_one_registration_away(monkeypatch):
    from workbench.grading.verdict import Verdict

    monkeypatch.setitem(KINDS, "always", AssertionKind("always", lambda *_: Verdict(True, "always")))
    assert kind("always").grade(None, "", None, None).passed
    with pytest.raises(ValueError, match="already registered"):
        register(AssertionKind("always", lambda *_: Verdict(True, "")))
    assert kind("some judge-read text kind") is KINDS["llm_judge"]  # anything else a judge reads
