"""Preflight before anything is spent: every command that starts an agent, a
judge or a proposer first checks that each is there and starts, as it will run
(inside the sandbox when sandboxed), and stops with exit 2 and what to install
or pass: before the estimate, before any dispatch, before anything is written.
A relative path to the agent's or the proposer's program means the user's
current folder, and a failing agent's first line of stderr is said where its
failure is said."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DEMO
from support.cli import workbench

from workbench.runs import sandbox
from workbench.workspace.layout import default_workspace

needs_bwrap = pytest.mark.skipif(sandbox.unavailable() is not None, reason="bubblewrap cannot sandbox here")
RESULT = '{"type": "result", "result": "done", "session_id": "s"}'


def _cli(*args, cwd=None, env=None):
    """The command line, in this process: its output, exit codes and files are what these tests read."""
    return workbench(*args, cwd=cwd, env={**os.environ, **(env or {})})


def _no_claude_env(tmp_path: Path) -> dict[str, str]:
    """No Claude Code anywhere, and no API key: nothing can judge but what is passed."""
    env = {"WORKBENCH_CLAUDE": str(tmp_path / "no-such-claude"), "WORKBENCH_CODEX": str(tmp_path / "no-such-codex")}
    if "ANTHROPIC_API_KEY" in os.environ:
        env["ANTHROPIC_API_KEY"] = ""
    return env


@pytest.fixture
def skill(tmp_path) -> Path:
    target = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, target)
    (target / "evals" / "trigger-evals.json").write_text(
        json.dumps(
            [{"query": "Add a changelog line", "should_trigger": True}, {"query": "Hi", "should_trigger": False}]
        )
    )
    return target


def _refused_before_anything(done: subprocess.CompletedProcess, skill: Path, *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot start" in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, (word, done.stderr)
    assert "dispatches" not in done.stderr  # said before the estimate
    assert not default_workspace(skill).exists()  # nothing planned, snapshot or written


@pytest.mark.parametrize(
    "args,words",
    [
        (("run", "--executor", "claude"), ("npm install -g @anthropic-ai/claude-code", "--executor")),
        (("evaluate", "v0", "--executor", "codex"), ("npm install -g @openai/codex", "--executor")),
        (("trigger", "--executor", "claude"), ("the agent (Claude Code)", "--executor")),
        (("improve", "--proposer", "codex", "--judge", "demo"), ("the proposer (Codex)", "--proposer")),
        (("optimize-description", "--proposer", "claude"), ("the proposer (Claude Code)", "--proposer")),
        (("draft-cases", "--proposer", "codex"), ("the proposer (Codex)", "--proposer")),
    ],
    ids=["run", "evaluate", "trigger", "improve", "optimize-description", "draft-cases"],
)
def test_a_program_that_is_not_installed_stops_the_command_before_anything_is_spent(skill, tmp_path, args, words):
    verb, *rest = args
    where = [skill, *rest[:1]] if verb == "evaluate" else [skill]
    options = rest[1:] if verb == "evaluate" else rest
    done = _cli(verb, *where, *options, "--trust", env=_no_claude_env(tmp_path))
    _refused_before_anything(done, skill, *words)


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_judge_default_follows_what_is_here_and_is_said(skill, tmp_path):
    agent = f"echo '{RESULT}'"
    common = ("run", skill, "--executor", "command", "--agent-command", agent, "--sandbox", "none")
    nothing = _cli(*common, "--trust", env=_no_claude_env(tmp_path))
    _refused_before_anything(nothing, skill, "the judge (Claude Code judge)", "--judge")
    keyed = _cli(*common, "--dry-run", env={**_no_claude_env(tmp_path), "ANTHROPIC_API_KEY": "sk-test"})
    assert keyed.returncode == 0, keyed.stderr
    assert "graded by the Anthropic API judge" in keyed.stdout
    # A part of the suite no judge reads needs none: it is not refused for want of one.
    unjudged = _cli(*common, "--only", "ambiguous-timeout-change", "--dry-run", env=_no_claude_env(tmp_path))
    assert unjudged.returncode == 0, unjudged.stderr


def _fake_shim(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A program on PATH that is a shim into the user's home, as pyenv's are: it works here, and not in a
    sandbox, whose home is private."""
    home = tmp_path / "home"
    real = home / ".fakeenv" / "libexec" / "fakepy"
    shim = home / ".fakeenv" / "shims" / "fakepy"
    for path, text in (
        (real, f"#!/bin/sh\necho '{RESULT}'\n"),
        (shim, '#!/bin/sh\nexec "$HOME/.fakeenv/libexec/fakepy" "$@"\n'),
    ):
        path.parent.mkdir(parents=True)
        path.write_text(text)
        path.chmod(0o755)
    return {"HOME": str(home), "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}"}, shim


@needs_bwrap
def test_a_shim_that_cannot_reach_its_home_in_the_sandbox_is_refused_before_the_run(skill, tmp_path):
    env, _shim = _fake_shim(tmp_path)
    common = ("run", skill, "--executor", "command", "--agent-command", "fakepy agent", "--judge", "demo", "--trust")
    refused = _cli(*common, "--sandbox", "bwrap", env=env)
    _refused_before_anything(refused, skill, "fakepy does not start", "status 127", "in the sandbox")
    outside = _cli(*common, "--sandbox", "none", "--only", "question-not-a-request", "--dry-run", env=env)
    assert outside.returncode == 0, outside.stderr  # as it runs outside, it starts


def _agent_script(folder: Path) -> Path:
    agent = folder / "agent.sh"
    agent.write_text(f"#!/bin/sh\ncat > /dev/null\necho '{RESULT}'\n")
    agent.chmod(0o755)
    return agent


@pytest.mark.parametrize("mode", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_relative_agent_command_means_the_current_folder(skill, tmp_path, mode):
    _agent_script(tmp_path)
    done = _cli(
        "run",
        skill,
        "--executor",
        "command",
        "--agent-command",
        "./agent.sh",
        "--judge",
        "demo",
        "--only",
        "question-not-a-request",
        "--baseline",
        "none",
        "--sandbox",
        mode,
        "--trust",
        cwd=tmp_path,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr  # it ran: nothing failed to start
    [record] = default_workspace(skill).glob("iteration-1/eval-*/with_skill/run-1/run.json")
    assert json.loads(record.read_text())["error"] is None
    assert f"$ {tmp_path / 'agent.sh'}" not in done.stderr  # trusted as written out in full, once


@pytest.mark.slow  # 20 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_relative_proposer_command_means_the_current_folder(tmp_path):
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    shutil.copy(DEMO.parent / "draft" / "changelog-entry" / "SKILL.md", skill / "SKILL.md")
    proposer = tmp_path / "myproposer.sh"
    proposer.write_text(
        f"#!/bin/sh\ncat > /dev/null\nprintf '\\nTouch nothing else.\\n' >> SKILL.md\necho '{RESULT}'\n"
    )
    proposer.chmod(0o755)
    done = _cli(
        "improve",
        skill,
        "--proposer",
        "command",
        "--proposer-command",
        "./myproposer.sh",
        "--rounds",
        "1",
        "--sandbox",
        "none",
        "--trust",
        cwd=tmp_path,
    )
    rounds = json.loads((default_workspace(skill) / "improve.json").read_text())["rounds"]
    assert not rounds[0]["outcome"].startswith("refused"), rounds
    assert rounds[0]["version"] == "v1" and done.returncode in (0, 1), done.stderr


def test_a_failing_agents_first_line_of_stderr_is_said_with_its_failure(skill, tmp_path):
    agent = tmp_path / "agent.sh"
    agent.write_text("#!/bin/sh\necho 'fakepy: the API key is not set' >&2\necho 'more detail' >&2\nexit 3\n")
    agent.chmod(0o755)
    done = _cli(
        "run",
        skill,
        "--executor",
        "command",
        "--agent-command",
        agent,
        "--judge",
        "demo",
        "--only",
        "question-not-a-request",
        "--baseline",
        "none",
        "--sandbox",
        "none",
        "--trust",
    )
    assert done.returncode == 2
    [record] = default_workspace(skill).glob("iteration-1/eval-*/with_skill/run-1/run.json")
    error = json.loads(record.read_text())["error"]
    assert error == "the agent exited with status 3: fakepy: the API key is not set"
