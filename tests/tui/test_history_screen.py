"""Improve mode from the TUI alone: v0 of a weak skill, evaluate, edit the skill in
the editor, a new version, evaluate it, promote and write it (after the diff);
history.json, the git tags and the iterations agree."""

from __future__ import annotations

import json
import shutil
import sys
import time

import pytest
from conftest import DEMO
from textual.widgets import Input, Log, Select, TextArea, Tree

from tui.helpers import SIZE, field_at, focused, opened, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.dialogs import TrustDialog, WriteVersionDialog
from workbench.tui.screens.history import HistoryScreen
from workbench.tui.screens.results import ResultsScreen
from workbench.workspace.versions import VersionStore

DRAFT = DEMO.parent / "draft" / "changelog-entry" / "SKILL.md"


async def _until(pilot, condition, seconds=90):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        await pilot.pause(0.1)
    return condition()


def _evaluated(workspace, version):
    try:
        data = json.loads((workspace / "history.json").read_text())
    except (OSError, ValueError):
        return False
    return any(i["version"] == version and i["expectation_pass_rate"] is not None for i in data["iterations"])


@pytest.mark.slow  # 46 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_from_a_weak_skill_to_a_promoted_better_version_in_the_app(skill):
    shutil.copy(DRAFT, skill / "SKILL.md")
    workspace = skill.parent.parent / "changelog-entry-workspace"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        history = await opened(pilot, "ctrl+o", HistoryScreen)
        await pilot.press("n")  # v0, the baseline
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TrustDialog)  # the suite's command_check commands, listed
        await pilot.click("#yes")
        assert await _until(pilot, lambda: _evaluated(workspace, "v0") and not history.busy)
        await settle(pilot)
        # Back to editing: the skill learns to read the changelog first, ask, and touch nothing else.
        await pilot.press("escape")
        await settle(pilot)
        app.screen.query_one("#navigator").focus()
        await pilot.press("home")
        await settle(pilot)
        assert app.screen.current.rel == "SKILL.md"
        body = field_at(app, TextArea, "/body")
        (await focused(pilot, body)).text = (
            body.text.replace("1. **Look at the changelog.**", "1. **Read `CHANGELOG.md` first.**")
            .replace("guess", "ask\n   one short question")
            .replace("5. **Be tidy.**", "5. **Touch nothing else.**")
        )
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "Touch nothing else" in (skill / "SKILL.md").read_text()
        await pilot.press("ctrl+o")
        await settle(pilot)
        history = app.screen
        await pilot.press("n")  # v1 from v0
        await settle(pilot)
        assert history.selected == "v1"
        diff = "\n".join(history.query_one("#version-diff", Log).lines)
        assert "+5. **Touch nothing else.**" in diff and "-5. **Be tidy.**" in diff
        await pilot.press("e")
        assert await _until(pilot, lambda: _evaluated(workspace, "v1") and not history.busy)
        await settle(pilot)
        label = str(history.query_one(Tree).cursor_node.label)
        assert label.startswith("v1  won 100%")
        await pilot.press("r")  # the evaluation's results, then back
        await settle(pilot)
        assert isinstance(app.screen, ResultsScreen) and "with_skill 100%" in str(
            app.screen.query_one("#results-summary").render()
        )
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is history
        # Promote and write: the diff is shown first; the folder already holds v1, so it only promotes.
        await pilot.press("w")
        await settle(pilot)
        assert not isinstance(app.screen, WriteVersionDialog)
        data = json.loads((workspace / "history.json").read_text())
        assert data["current_best"] == "v1"
        assert [(i["version"], i["parent"], i["grading_result"], i["is_current_best"]) for i in data["iterations"]] == [
            ("v0", None, "baseline", False),
            ("v1", "v0", "won", True),
        ]
        # the means of the runs: the draft passes 2.5 of its 11 runs (7/33 assertions), the good one all
        assert [i["expectation_pass_rate"] for i in data["iterations"]] == [0.2273, 1.0]
        store = VersionStore(workspace)
        assert store.versions() == ["v0", "v1"] and store.parent_of("v1") == "v0"
        evaluations = json.loads((workspace / "evaluations.json").read_text())
        assert sorted(p.name for p in workspace.glob("iteration-*")) == [
            f"iteration-{evaluations[v]['iteration']}" for v in ("v0", "v1")
        ]
        # Going back to v0 in the folder shows the diff, then writes it.
        history.query_one(Tree).move_cursor(history.query_one(Tree).root.children[0])
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, WriteVersionDialog) and "-5. **Touch nothing else.**" in dialog.diff
        await pilot.click("#yes")
        await settle(pilot)
        assert "Be tidy" in (skill / "SKILL.md").read_text()
        assert json.loads((workspace / "history.json").read_text())["current_best"] == "v0"


@pytest.mark.slow  # 16 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_evaluating_asks_before_a_judge_command_runs(skill, tmp_path):
    marker = tmp_path / "judge-ran"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        history = await opened(pilot, "ctrl+o", HistoryScreen)
        await pilot.press("n")
        await settle(pilot)
        history.query_one("#judge", Select).value = "command"
        passing = 'echo "{\\"token\\": \\"$WORKBENCH_JUDGE_TOKEN\\", \\"passed\\": true}"'  # with the question's token
        history.query_one("#judge-command", Input).value = f"touch {marker}; {passing}"
        history.query_one("#versions", Tree).focus()
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TrustDialog)
        listed = "\n".join(str(s.render()) for s in app.screen.query(".const"))
        assert f"touch {marker}" in listed and "(the judge" in listed
        await pilot.click("#no")
        await pilot.pause(0.5)
        assert not history.busy and not marker.exists()


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_damaged_versions_repository_is_said_and_the_app_stays(skill):
    from textual.widgets import Static

    from workbench.improve import history as hist
    from workbench.workspace import layout

    workspace = layout.default_workspace(skill)
    hist.new_version(workspace, VersionStore(workspace), skill, "changelog-entry")
    store = workspace / "versions.git"
    (store / "HEAD").write_text("garbage\n")
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)
        said = str(app.screen.query_one("#history-status", Static).render())
        assert "is broken" in said and "versions repository is damaged" in said
        await pilot.press("escape")
        await settle(pilot)
        assert app.is_running


@pytest.mark.slow  # 12 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_skill_creator_legacy_history_shows_in_the_history_screen(tmp_path):
    from legacy_fixture import legacy_workspace, snapshot

    skill, workspace = legacy_workspace(tmp_path)
    theirs = snapshot(workspace)
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "ctrl+o", HistoryScreen)
        assert screen.workspace == workspace  # skill-creator's, beside the skill
        labels = []

        def walk(node):
            for child in node.children:
                labels.append((str(child.label), child.parent.data))
                walk(child)

        walk(screen.query_one("#versions", Tree).root)
        assert labels == [
            ("v0  baseline 65%", None),
            ("v1  won 75%", "v0"),
            ("v2  won 85%  ★ best", "v1"),
        ], labels
        assert screen.selected == "v2"
        assert "measured before the workbench" in str(screen.query_one("#version-facts").render())
        assert "+" in "\n".join(screen.query_one("#version-diff", Log).lines)  # v1 -> v2, from git
    assert VersionStore(workspace).versions() == ["v0", "v1", "v2"]
    assert snapshot(workspace) == theirs


PROPOSER = r"""
import json, pathlib, sys
brief = sys.stdin.read()
assert "EDITED BY THE PERSON" in brief  # the brief as the person left it in the dialog
skill = pathlib.Path("SKILL.md")
skill.write_text(skill.read_text().replace("**Look at the changelog.**", "**Read `CHANGELOG.md` first.**"))
print(json.dumps({"type": "result", "result": "Step 1 reads the changelog first.", "session_id": "p"}))
"""


@pytest.mark.slow  # 54 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_proposer_makes_the_next_version_from_the_history_screen_then_it_is_evaluated(skill, tmp_path):
    """i: the brief first (editable), the proposer (trusted first), its diff; e: evaluated, with why it won."""
    from workbench.tui.screens.dialogs import BriefDialog

    shutil.copy(DRAFT, skill / "SKILL.md")
    workspace = skill.parent.parent / "changelog-entry-workspace"
    proposer = tmp_path / "proposer.py"
    proposer.write_text(PROPOSER)
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        history = await opened(pilot, "ctrl+o", HistoryScreen)
        await pilot.press("n")  # v0
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, BriefDialog)
        area = dialog.query_one("#brief", TextArea)
        assert (
            area.text.startswith("# Improve the skill `changelog-entry`") and "**Look at the changelog.**" in area.text
        )
        area.insert("EDITED BY THE PERSON\n", (0, 0))
        dialog.query_one("#proposer", Select).value = "command"
        dialog.query_one("#proposer-command", Input).value = f"{sys.executable} {proposer}"
        await pilot.click("#yes")
        await settle(pilot)
        assert isinstance(app.screen, TrustDialog)  # the proposer command is the user's: trusted first
        await pilot.click("#yes")
        assert await _until(pilot, lambda: "v1" in history.rows and not history.busy, 30), [
            n.message for n in app._notifications
        ]
        await settle(pilot)
        diff = "\n".join(history.query_one("#version-diff", Log).lines)
        assert "+1. **Read `CHANGELOG.md` first.** Never write an entry before you have seen the" in diff
        assert history.selected == "v1"
        status = str(history.query_one("#history-status").render())
        assert "v1 proposed from v0" in status and "is proposing" not in status, status
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TrustDialog)
        await pilot.click("#yes")
        assert await _until(pilot, lambda: _evaluated(workspace, "v1") and not history.busy)
        await settle(pilot)
        facts = str(history.query_one("#version-facts").render())
        assert "Why (analysis.json):" in facts and "assertion(s) fixed" in facts
        assert "✓ export-json-flag · read-changelog-first" in facts
        # the Results screen of that evaluation offers to improve from its failures
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, ResultsScreen)
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, BriefDialog)
        text = app.screen.query_one("#brief", TextArea).text
        assert "## What failed (the runs of iteration-1, with_skill)" in text and "eval `" in text
        await pilot.press("escape")
    assert VersionStore(workspace).parent_of("v1") == "v0"


@pytest.mark.slow  # 15 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_proposer_can_be_stopped_and_nothing_is_made(skill, tmp_path):
    from workbench.tui.screens.dialogs import BriefDialog

    slow = tmp_path / "slow.py"
    slow.write_text("import sys, time\nsys.stdin.read()\nopen('SKILL.md', 'a').write('half\\n')\ntime.sleep(60)\n")
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        history = await opened(pilot, "ctrl+o", HistoryScreen)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, BriefDialog)
        app.screen.query_one("#proposer", Select).value = "command"
        app.screen.query_one("#proposer-command", Input).value = f"{sys.executable} {slow}"
        await pilot.click("#yes")
        await settle(pilot)
        await pilot.click("#yes")  # trust it
        assert await _until(pilot, lambda: history.busy, 10)
        started = time.monotonic()
        await pilot.press("x")
        assert await _until(pilot, lambda: not history.busy, 20)
        assert time.monotonic() - started < 15  # stopped, not waited out
        await settle(pilot)
        assert list(history.rows) == ["v0"]  # nothing made of the half-done work


@pytest.mark.slow  # 19 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("start", ["exits", "missing"])
async def test_the_status_line_says_how_the_proposal_ended(skill, tmp_path, start):
    """The status line said "… is proposing …" until the screen was left, after a failure too:
    it says how the proposal ended, in the notice's words."""
    from workbench.tui.screens.dialogs import BriefDialog

    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nsys.stdin.read()\nprint('no model here', file=sys.stderr)\nsys.exit(3)\n")
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        history = await opened(pilot, "ctrl+o", HistoryScreen)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, BriefDialog)
        app.screen.query_one("#proposer", Select).value = "command"
        command = f"{sys.executable} {broken}" if start == "exits" else str(tmp_path / "no-such-proposer")
        app.screen.query_one("#proposer-command", Input).value = command
        await pilot.click("#yes")
        await settle(pilot)
        if isinstance(app.screen, TrustDialog):
            await pilot.click("#yes")  # trust it
        await _until(pilot, lambda: history.busy, 5)
        assert await _until(pilot, lambda: not history.busy, 30)
        await settle(pilot)
        status = str(history.query_one("#history-status").render())
        assert "is proposing" not in status, status
        assert "v0" in status and ("failed" in status or "Refused" in status), status
        assert list(history.rows) == ["v0"]


@pytest.mark.parametrize("key", ["p", "w"])
async def test_p_and_w_on_a_version_not_evaluated_say_so_before_asking_anything(skill, key):
    """Promote and promote-and-write give the same answer for a version with no evaluation: say so,
    ask nothing, change nothing (p asked whether to promote it all the same, then the core refused)."""
    workspace = skill.parent.parent / "changelog-entry-workspace"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        history = await opened(pilot, "ctrl+o", HistoryScreen)
        await pilot.press("n")  # v0, the best as the first
        await settle(pilot)
        (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nOne more line.\n")
        await pilot.press("n")  # v1, not evaluated
        await settle(pilot)
        assert history.selected == "v1"
        before = (workspace / "history.json").read_text()
        await pilot.press(key)
        await settle(pilot)
        assert app.screen is history  # no question
        said = [n.message for n in app._notifications]
        assert "v1 has not been evaluated; evaluate it (e) before promoting it." in said, said
        assert (workspace / "history.json").read_text() == before
