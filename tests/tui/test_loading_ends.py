"""The loading screen always ends, in the skill or in the error; the file watcher
never dies silently."""

from __future__ import annotations

import asyncio
import os
import shutil

import pytest
from conftest import DEMO
from textual.widgets import Label

import workbench.tui.app as app_module
from tui.helpers import SIZE, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.editor import EditorScreen
from workbench.tui.screens.picker import LoadingScreen


async def test_a_skill_that_cannot_be_read_ends_the_loading_screen_with_the_reason(tmp_path, monkeypatch):
    skill = tmp_path / "skill"
    shutil.copytree(DEMO, skill)

    def unreadable(root):
        raise PermissionError(13, "Permission denied", str(root / "evals"))

    monkeypatch.setattr(app_module, "SkillSession", unreadable)
    app = WorkbenchApp([skill], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, LoadingScreen)
        said = str(app.screen.query_one("#picker-title", Label).render())
        assert "Could not open" in said and "Permission denied" in said
        await pilot.press("ctrl+q")
        await settle(pilot)
    assert app.return_code == 0


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_fifo_named_like_a_suite_is_listed_with_why_and_nothing_hangs(tmp_path):
    skill = tmp_path / "skill"
    shutil.copytree(DEMO, skill)
    os.mkfifo(skill / "evals" / "more.evals.json")
    app = WorkbenchApp([skill], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, EditorScreen)
        fifo = app.screen.session.file("evals/more.evals.json")
        assert fifo is not None and fifo.problem is not None and "FIFO" in fifo.problem.message
        assert fifo.document is None and fifo.refused


async def test_the_watcher_says_it_stopped_and_starts_again(tmp_path, monkeypatch):
    skill = tmp_path / "skill"
    shutil.copytree(DEMO, skill)
    import watchfiles

    calls = []
    real = watchfiles.awatch

    def failing_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OSError(28, "inotify watch limit reached")
        return real(*args, **kwargs)

    monkeypatch.setattr(watchfiles, "awatch", failing_once)
    app = WorkbenchApp([skill], watch=True, blink=False)
    # Every message the app shows, kept: a shown one expires after its timeout (10 s), which a loaded
    # machine can take to start the watcher again.
    said: list[str] = []
    shown = app.notify
    monkeypatch.setattr(app, "notify", lambda message, *a, **k: (said.append(str(message)), shown(message, *a, **k))[1])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for _ in range(50):
            if len(calls) >= 2:
                break
            await asyncio.sleep(0.1)
        assert len(calls) >= 2  # started again
        assert any("stopped" in message and "watch limit" in message for message in said)
        # And it watches: an outside edit is reloaded.
        suite = skill / "evals" / "evals.json"
        suite.write_text(suite.read_text().replace('"changelog-entry"', '"changelog-entry" ', 1))
        for _ in range(50):
            if any("changed on disk" in n.message for n in app._notifications):
                break
            await asyncio.sleep(0.1)
        assert any("changed on disk" in n.message for n in app._notifications)
