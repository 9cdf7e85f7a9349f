"""Decisions said out loud: a tie that hides a drop says which way and why it is
still a tie; the brief names the version it improves from and where it stands
against the best; promoting a version below the best, or one that did not win,
needs a yes (--yes on the command line), and says by how much."""

from __future__ import annotations

import json

import pytest
from support.cli import workbench

from workbench.improve import brief
from workbench.improve.decide import decide
from workbench.improve.history import load_history
from workbench.workspace.layout import default_workspace
from workbench.workspace.versions import VersionStore


def _cli(*args):
    """The command line, in this process: its output, exit codes and files are what these tests read."""
    return workbench(*args)


def test_a_clear_drop_with_a_tie_verdict_says_so():
    new = {"a": 0.6, "b": 1.0, "c": 0.8}
    best = {"a": 1.0, "b": 0.94, "c": 1.0}
    decision = decide(new, best, 0.05, (0.80, 0.98))
    assert decision.result == "tie"
    assert decision.verdict == "tie (lower by 18 points, not significant on 3 evals)"
    assert decision.evidence.endswith("-> tie (lower by 18 points, not significant on 3 evals)")
    inside = decide({"a": 1.0, "b": 1.0}, {"a": 1.0, "b": 0.96}, 0.05, (1.0, 0.98))
    assert inside.verdict == "tie (2 points apart, inside the 5-point margin)"


@pytest.mark.slow  # 16 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_brief_names_the_version_it_improves_from_and_the_best(worse_v1):
    workspace = default_workspace(worse_v1)
    store = VersionStore(workspace)
    text = brief.build(workspace, store, "v1", "changelog-entry", [])
    assert "as of v1 (pass rate 18% on its evals), not the best (v0, 23%)" in text, text[:600]
    assert "the current best" not in text
    best = brief.build(workspace, store, "v0", "changelog-entry", [])
    assert "as of v0, the current best version (pass rate 23% on its evals)" in best


def test_promoting_a_version_below_the_best_needs_yes_and_says_by_how_much(worse_v1):
    workspace = default_workspace(worse_v1)
    before = (workspace / "history.json").read_text()
    refused = _cli("promote", worse_v1, "v1")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    said = refused.stderr
    assert "v1's pass rate, 18%, is 5 points below the best's (v0, 23%)" in said, said
    assert "its last decision was tie (5 points apart, inside the 5-point margin)" in said
    assert "--yes" in said and "nothing promoted" in said
    assert (workspace / "history.json").read_text() == before
    done = _cli("promote", worse_v1, "v1", "--yes")
    assert done.returncode == 0, done.stderr
    history = load_history(workspace, VersionStore(workspace))
    assert history is not None and history.current_best == "v1"
    # The best itself, or back to it: nothing to ask.
    assert _cli("promote", worse_v1, "v1").returncode == 0
    record = json.loads((workspace / "evaluations.json").read_text())["v1"]["decision"]
    assert record["evidence"].endswith("-> tie (5 points apart, inside the 5-point margin)")
