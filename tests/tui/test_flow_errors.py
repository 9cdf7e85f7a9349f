"""A screen's flow that fails with what it did not expect says so on screen, never silently (its worker runs
with exit_on_error=False, so the app and its unsaved edits stay)."""

from __future__ import annotations

from tui.helpers import SIZE, settle
from workbench.app import pipeline
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.runs import RunsScreen


async def test_an_unexpected_failure_in_a_flow_is_said(demo_copy, monkeypatch):
    def broken(request):
        raise RuntimeError("the disk said no")

    monkeypatch.setattr(pipeline, "prepare", broken)
    app = WorkbenchApp([demo_copy], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        await pilot.click("#start")
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert any("start failed: RuntimeError: the disk said no" in m for m in said), said
        assert app.is_running and isinstance(app.screen, RunsScreen)
