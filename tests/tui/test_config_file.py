"""A broken config file in the app: said on opening, the default theme used, and
the file left as it is when a theme is chosen."""

from __future__ import annotations

import pytest

from tui.helpers import SIZE, settle
from workbench.config import config_dir
from workbench.tui.app import WorkbenchApp


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_broken_config_file_is_said_and_kept(skill):
    folder = config_dir()
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"theme": "solarized-dark",}')
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert any("config.json:1:28: not valid JSON" in m for m in said), said
        assert app.theme == "workbench-dark"
        app.theme = "workbench-light"
        await pilot.pause()
        assert any("Theme choice not saved" == n.title for n in app._notifications)
    assert (folder / "config.json").read_text() == '{"theme": "solarized-dark",}'
