"""The app opening each hostile suite of tests/test_hostile_files.py: the loading
screen ends, the problem is shown at its line, the app stays up and quits."""

from __future__ import annotations

import shutil

import pytest
from conftest import DEMO
from test_hostile_files import HOSTILE

from tui.helpers import SIZE, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.editor import EditorScreen
from workbench.tui.widgets.diagnostics import DiagnosticsPane


@pytest.mark.parametrize(("name", "file", "content", "where", "words"), HOSTILE, ids=[h[0] for h in HOSTILE])
async def test_the_app_opens_a_hostile_suite_and_shows_its_problem(tmp_path, name, file, content, where, words):
    skill = tmp_path / "skill"
    shutil.copytree(DEMO, skill)
    for old in (skill / "evals").glob("*.json"):
        old.unlink()
    (skill / "evals" / file).write_text(content)
    app = WorkbenchApp([skill], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, EditorScreen)  # the loading screen ended
        suite = app.screen.session.file(f"evals/{file}")
        assert suite is not None and suite.problem is not None
        assert words in suite.problem.message
        if where is not None:
            assert (suite.problem.line, suite.problem.column) == where
        app.screen.open_place(app.screen.place.__class__(suite.rel, None))
        await settle(pilot)
        pane = app.screen.query_one(DiagnosticsPane)
        assert pane.border_title.startswith(f"Problems in evals/{file}: 1 error")
        await pilot.press("ctrl+q")
        await settle(pilot)
    assert app.return_code in (0, None)
