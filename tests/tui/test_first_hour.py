"""The first hour in the app: a new assertion opens on its first required field
with what it lacks flagged; the Runs, History and Triggers screens refuse a
program that cannot start with the same words as the command line, before
anything runs; Improve names the version it starts from; promoting a version
below the best, or one that did not win, asks first."""

from __future__ import annotations

import json
import time

import pytest
from textual.widgets import Button, Select, TextArea, Tree

from tui.helpers import SIZE, opened, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.dialogs import BriefDialog, ConfirmDialog
from workbench.tui.screens.history import HistoryScreen
from workbench.tui.screens.runs import RunsScreen
from workbench.tui.screens.triggers import TriggersScreen
from workbench.tui.widgets.form import FormView
from workbench.workspace.layout import default_workspace


async def _until(pilot, condition, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        await pilot.pause(0.1)
    return condition()


def _said(app) -> str:
    return "\n".join(n.message for n in app._notifications)


def _button(app, action: str, pointer: str) -> Button:
    return next(
        b for b in app.screen.query(Button) if b.name and json.loads(b.name)[:2] == [action, pointer] and b.display
    )


@pytest.mark.slow  # 16 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_new_assertion_opens_on_its_first_required_field_with_what_it_lacks_flagged(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _button(app, "append", "/evals/0/assertions").press()
        await settle(pilot)
        assert getattr(app.focused, "pointer", None) == "/evals/0/assertions/4/id"
        rows = app.screen.query_one(FormView).rows
        for field in ("id", "check"):
            row = rows[f"/evals/0/assertions/4/{field}"]
            assert row.has_class("-error"), field
            assert f"{field} is empty" in str(row.problem.render())
        assert "None" not in str(app.screen.query_one("#diagnostics").render())
        await pilot.press(*"reads-first")
        await settle(pilot)
        assert app.screen.current.document.data["evals"][0]["assertions"][4]["id"] == "reads-first"


def _cannot_start(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("WORKBENCH_CLAUDE", str(tmp_path / "no-such-claude"))


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_runs_screen_refuses_an_agent_that_cannot_start_as_the_cli_does(skill, tmp_path, monkeypatch):
    _cannot_start(monkeypatch, tmp_path)
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        screen.query_one("#executor", Select).value = "claude"
        await settle(pilot)
        estimate = screen.query_one("#estimate")
        assert await _until(pilot, lambda: "cannot start" in str(estimate.render()))
        assert "the agent (Claude Code) cannot start" in str(estimate.render())
        await pilot.click("#start")
        await settle(pilot)
        assert "the agent (Claude Code) cannot start" in _said(app) and "npm install" in _said(app)
        assert not screen.running and not screen.dispatches
    assert not default_workspace(skill).exists()


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_history_screen_refuses_an_evaluation_whose_agent_cannot_start(skill, tmp_path, monkeypatch):
    _cannot_start(monkeypatch, tmp_path)
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        history = await opened(pilot, "ctrl+o", HistoryScreen)
        await pilot.press("n")  # v0
        await settle(pilot)
        history.query_one("#executor", Select).value = "claude"
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert "the agent (Claude Code) cannot start" in _said(app)
        assert not history.busy
    assert not list(default_workspace(skill).glob("iteration-*"))


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_triggers_screen_refuses_an_agent_that_cannot_start(skill, tmp_path, monkeypatch):
    _cannot_start(monkeypatch, tmp_path)
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "ctrl+l", TriggersScreen)
        screen.query_one("#trigger-executor", Select).value = "claude"
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        assert "the agent (Claude Code) cannot start" in _said(app)
        assert not screen.busy
    assert not (default_workspace(skill) / "triggers").exists()


@pytest.mark.slow  # 21 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_improve_names_the_version_it_starts_from_and_promoting_a_worse_one_asks(worse_v1):
    workspace = default_workspace(worse_v1)
    app = WorkbenchApp([worse_v1], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        history = await opened(pilot, "ctrl+o", HistoryScreen)
        tree = history.query_one(Tree)
        v1 = next(node for node in tree.root.children[0].children if str(node.label).startswith("v1"))
        tree.move_cursor(v1)
        await settle(pilot)
        assert history.selected == "v1"
        await pilot.press("i")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, BriefDialog)
        assert "from v1, 18%, not the best (v0, 23%)" in str(dialog.query_one("#question").render())
        assert "not the best (v0, 23%)" in dialog.query_one("#brief", TextArea).text
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        asked = app.screen
        assert isinstance(asked, ConfirmDialog)
        assert "18%, is 5 points below the best's (v0, 23%)" in str(asked.query_one("#question").render())
        await pilot.press("escape")
        await settle(pilot)
        assert json.loads((workspace / "history.json").read_text())["current_best"] == "v0"
        await pilot.press("p")
        await settle(pilot)
        await pilot.click("#yes")
        await settle(pilot)
        assert json.loads((workspace / "history.json").read_text())["current_best"] == "v1"
