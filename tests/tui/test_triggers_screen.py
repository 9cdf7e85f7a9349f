"""The Triggers screen: ctrl+l from the editor, t measures the trigger set with
the latest results shown misses and false triggers first, o optimizes the
description (split, rounds and the best held-out score in its log), keeping a
winner as a version."""

from __future__ import annotations

import json
import sys
import time

import pytest
from test_triggers import AGENT, OPTIMIZE_SET, PROPOSER, skill_with
from textual.widgets import DataTable, Input, Log, Select

from tui.helpers import SIZE, opened, settle
from workbench.app.optimize_description import optimize_folder
from workbench.config import write_config
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.dialogs import ConfirmDialog, TrustDialog
from workbench.tui.screens.triggers import TriggersScreen
from workbench.workspace.layout import default_workspace
from workbench.workspace.versions import VersionStore


async def _until(pilot, condition, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        await pilot.pause(0.1)
    return condition()


def _rows(screen: TriggersScreen) -> list[tuple[str, ...]]:
    table = screen.query_one("#queries", DataTable)
    return [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]


@pytest.mark.slow  # 16 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_t_measures_the_demo_set_and_lists_the_false_trigger_first(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "ctrl+l", TriggersScreen)
        assert "not measured yet" in str(screen.query_one("#triggers-status").render())
        await pilot.press("t")  # the demo agent: trusted, free
        assert await _until(
            pilot, lambda: not screen.busy and "latest" in str(screen.query_one("#triggers-status").render())
        )
        await settle(pilot)
        rows = _rows(screen)
        assert "FALSE TRIGGER" in rows[0][0] and rows[0][3] == "Rename the variable x to count in main.py"
        assert rows[0][1] == "3/3" and all(r[0] == "ok" for r in rows[1:])
        status = str(screen.query_one("#triggers-status").render())
        assert "recall 1.00" in status and "precision 0.75" in status


@pytest.mark.slow  # 14 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_o_optimizes_with_held_out_queries_and_keeps_the_winner_as_a_version(tmp_path, monkeypatch):
    # The stand-in agent imports trigger_rule.py from beside it: the sandbox shows only the files it is told of.
    write_config(sandbox_show=[str(AGENT.parent / "trigger_rule.py")])
    skill = skill_with(tmp_path, OPTIMIZE_SET)
    proposer = tmp_path / "describe.py"
    proposer.write_text(PROPOSER)
    monkeypatch.setenv("HELD_OUT", "[]")
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "ctrl+l", TriggersScreen)
        screen.query_one("#trigger-executor", Select).value = "command"
        screen.query_one("#trigger-command", Input).value = f"{sys.executable} {AGENT}"
        screen.query_one("#trigger-runs", Input).value = "1"
        screen.query_one("#rounds", Input).value = "2"
        screen.query_one("#proposer", Select).value = "command"
        screen.query_one("#proposer-command", Input).value = f"{sys.executable} {proposer}"
        screen.query_one("#queries", DataTable).focus()
        await pilot.press("o")
        # what it will run, before anything does (once the proposer is found to start, in a thread)
        assert await _until(pilot, lambda: isinstance(app.screen, ConfirmDialog), 30), app.screen
        await pilot.click("#yes")
        await pilot.pause()
        assert isinstance(app.screen, TrustDialog)  # the proposer and the agent are the user's commands
        await pilot.click("#yes")
        assert await _until(pilot, lambda: not screen.busy)
        await settle(pilot)
        said = "\n".join(screen.query_one("#trigger-log", Log).lines)
        assert "split (seed" in said and "held-out" in said
        assert "round 1: rejected" in said and "round 2: kept as v1" in said
        assert "best: v1, held-out accuracy" in said
    assert VersionStore(default_workspace(skill)).parent_of("v1") == "v0"
    folder = optimize_folder(default_workspace(skill), skill / "evals" / "trigger-evals.json")
    log = json.loads((folder / "optimize.json").read_text())
    assert [e["outcome"] for e in log] == ["rejected", "kept"]


async def test_the_options_typed_are_kept_when_leaving_by_escape(skill):
    """Options typed and left with Escape (nothing started) are there on the next visit, as after a start."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "ctrl+l", TriggersScreen)
        screen.query_one("#holdout", Input).focus()
        await pilot.press("end", "backspace", "backspace", "backspace", *"0.25")
        screen.query_one("#trigger-max-runs", Input).value = "7"
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, TriggersScreen)
        await pilot.press("ctrl+l")
        await settle(pilot)
        again = app.screen
        assert isinstance(again, TriggersScreen) and again is not screen
        assert again.query_one("#holdout", Input).value == "0.25"
        assert again.query_one("#trigger-max-runs", Input).value == "7"


async def test_o_with_a_proposer_that_cannot_start_says_so_before_any_question(skill):
    """As optimize-description does on the command line: the proposer is checked before anything is asked."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "ctrl+l", TriggersScreen)
        screen.query_one("#proposer", Select).value = "command"
        screen.query_one("#proposer-command", Input).value = "no-such-proposer-here --go"
        screen.query_one("#queries", DataTable).focus()
        await pilot.press("o")
        await settle(pilot)
        assert app.screen is screen, app.screen  # no question asked
        said = "\n".join(n.message for n in app._notifications)
        assert "'no-such-proposer-here' is not found" in said, said
        assert not screen.busy
