"""The application layer's shared rules (workbench/app), each written once: the trust rule and the
holding of agents. Every flow asks them; these tests pin what they say."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from workbench.app import placement
from workbench.app import trust as app_trust
from workbench.app.cost import ask_first
from workbench.errors import Refused, WorkbenchError
from workbench.grading import judges
from workbench.runs import executors, sandbox
from workbench.runs import trust as store
from workbench.runs.estimate import DEFAULT_CONFIRM_ABOVE, Estimate

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def trust_store(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path


def test_a_command_is_asked_once_until_trusted_and_built_ins_never(trust_store):
    command = executors.make("command", "bash agent.sh")
    built_in = executors.make("demo", None)
    judge = judges.make("command", "python judge.py", None, None)
    programs = [
        app_trust.agent(command, "bash agent.sh"),
        app_trust.agent(built_in, None),
        app_trust.judge(judge, "python judge.py"),
        app_trust.proposer("command", "./propose.sh", "a copy of the skill's files"),
        app_trust.proposer("claude", None, "a copy of the skill's files"),
    ]
    assert app_trust.asks(programs) == [
        "bash agent.sh  (the agent, in every dispatch's workspace)",
        "python judge.py  (the judge, for every graded expectation)",
        "./propose.sh  (the proposer, in a copy of the skill's files)",
    ]
    app_trust.trust(programs)
    assert app_trust.asks(programs) == []
    assert store.is_trusted("bash agent.sh") and store.is_trusted("./propose.sh")


def test_holding_refuses_a_bad_choice_with_its_reason():
    with pytest.raises(Refused, match="unknown sandbox 'tight'"):
        placement.hold("tight")
    with pytest.raises(Refused, match="unknown network 'wide'"):
        placement.hold("none", "wide")
    assert placement.hold("none").sandbox == sandbox.NONE


@pytest.mark.skipif(sandbox.unavailable() is not None, reason="bubblewrap cannot run here")
def test_holding_refuses_an_agent_whose_model_api_is_no_endpoint(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "not a url at all")
    agent = executors.make("claude", None)
    with pytest.raises(Refused, match="the agent's model API"):
        placement.hold("bwrap", "model", agent)
    assert placement.hold("bwrap", "open", agent).network == "open"  # an open network reaches anything


def test_the_sandbox_is_chosen_and_trust_is_stored_only_in_the_app_layer():
    """sandbox.choose and the trust store are asked in one place each (the suite keeps its own commands'
    trust, grading/suite.py): a flow or a screen that called them itself would be a second copy of the
    rule, free to drift."""
    found = []
    for path in (ROOT / "workbench").rglob("*.py"):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(("workbench/runs/", "workbench/app/")) or relative == "workbench/grading/suite.py":
            continue
        source = path.read_text()
        if re.search(r"\bsandbox\.choose\(|\bchoose\(sandbox_choice", source):
            found.append(f"{relative}: sandbox.choose")
        if re.search(r"(?<![\w.])trust\.(trust|is_trusted)\(", source):
            found.append(f"{relative}: the trust store")
    assert not found, found


def _estimate(cost: float | None, most: float | None = None) -> Estimate:
    guess = Estimate(10, 10, cost, None, 60.0, "a test")
    if most is not None:
        return Estimate(40, 40, most, None, 240.0, "a test").within(guess)
    return guess


def test_a_run_asks_first_when_the_most_it_may_cost_is_above_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "config"))
    assert ask_first(None) is None and ask_first(_estimate(None)) is None  # nothing known: nothing to ask
    assert ask_first(_estimate(DEFAULT_CONFIRM_ABOVE)) is None
    asked = ask_first(_estimate(DEFAULT_CONFIRM_ABOVE + 0.01))
    assert asked is not None and asked.limit_usd == DEFAULT_CONFIRM_ABOVE
    # --runs auto: its first round is cheap, every round to --max-runs is not; the most is asked about
    asked = ask_first(_estimate(1.0, most=DEFAULT_CONFIRM_ABOVE * 4))
    assert asked is not None and asked.most_usd == DEFAULT_CONFIRM_ABOVE * 4
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.json").write_text(json.dumps({"confirm_above_usd": 50}))
    assert ask_first(_estimate(1.0, most=DEFAULT_CONFIRM_ABOVE * 4)) is None
    (tmp_path / "config" / "config.json").write_text('{"confirm_above_usd": "lots"}')
    with pytest.raises(WorkbenchError, match="confirm_above_usd"):  # said, never a silent default
        ask_first(_estimate(100.0))
