"""The Runs screen: launch, live table, transcript tail, trust, cancel."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widgets import DataTable, Input, Label, Log, Select, Static
from textual.widgets.data_table import ColumnKey

from tui.helpers import SIZE, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.dialogs import TrustDialog
from workbench.tui.screens.runs import RunsScreen

AGENT = Path(__file__).resolve().parent.parent / "agents" / "scripted_agent.py"


async def _wait_until(pilot, condition, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        await pilot.pause(0.1)
    return condition()


@pytest.mark.slow  # 15 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_demo_run_fills_the_table_and_the_tail(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        screen = app.screen
        await pilot.click("#start")
        await pilot.pause()
        # the suite's command_check commands need trust first, listed exactly
        assert isinstance(app.screen, TrustDialog)
        listed = "\n".join(str(s.render()) for s in app.screen.query(".const"))
        assert "CHECK=entry SECTION=Fixed python3 checks/check_changelog.py CHANGELOG.md" in listed
        await pilot.click("#yes")
        assert await _wait_until(pilot, lambda: screen.dispatches and not screen.running)
        table = screen.query_one(DataTable)
        statuses = [table.get_row_at(i)[3] for i in range(table.row_count)]
        assert table.row_count == 22 and set(statuses) == {"done"}
        assert table.get_row_at(0)[5] == "graded 4/4"  # graded as it goes
        assert table.get_row_at(0)[4] == "$0.00"  # the demo agent reports its cost: nothing, not a model
        shown = table.columns[ColumnKey("cost")].get_render_width(table) - 2 * table.cell_padding
        assert shown >= len("$0.00"), shown  # the whole figure on screen, not "$0.0"
        assert "spent $0.00" in str(screen.query_one("#run-status", Static).render())
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("enter")  # the first dispatch's transcript
        await pilot.pause()
        tail = "\n".join(screen.query_one(Log).lines)
        assert '[tool_use] Skill {"skill":"changelog-entry"}' in tail and "[tool_use] Read " in tail
    assert (skill.parent.parent / "changelog-entry-workspace" / "iteration-1").is_dir()  # outside skills/


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_command_runs_only_after_trust_and_cancel_stops_it(skill, tmp_path):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#executor", Select).value = "command"
        pid_file = tmp_path / "child.pid"
        screen.query_one(
            "#agent-command", Input
        ).value = f"AGENT_MODE=hang AGENT_CHILD_PID={pid_file} {sys.executable} {AGENT}"
        screen.query_one("#only", Input).value = "question-not-a-request"
        screen.query_one("#baseline", Select).value = "none"
        # the agent writes its child's pid outside its workspace, as seen from the machine: no sandbox
        screen.query_one("#sandbox", Select).value = "none"
        await pilot.pause()
        screen.query_one("#judge", Select).value = "demo"  # its rubric needs a judge, and no Claude Code is here
        await pilot.pause()
        await pilot.click("#start")
        await pilot.pause()
        assert isinstance(app.screen, TrustDialog), [n.message for n in app._notifications]
        assert "AGENT_MODE=hang" in "\n".join(str(s.render()) for s in app.screen.query(".const"))
        await pilot.click("#yes")
        assert await _wait_until(pilot, pid_file.exists, 30)
        await pilot.click("#cancel")
        assert await _wait_until(pilot, lambda: not screen.running, 30)
        await settle(pilot)
        table = screen.query_one(DataTable)
        assert [table.get_row_at(i)[3] for i in range(table.row_count)] == ["cancelled"]  # not "running"
        said = [n.message for n in app._notifications]
        assert "Run cancelled, its agents stopped: 1 cancelled. Start again to resume." in said, said
        assert not any(m.startswith("Run finished") for m in said), said
        child = int(pid_file.read_text())
        await pilot.pause(0.3)
        state = Path(f"/proc/{child}/stat")
        assert not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def _judge_command(marker: Path) -> str:
    """A judge that leaves a mark when it runs, and passes everything."""
    return f'touch {marker}; echo "{{\\"token\\": \\"$WORKBENCH_JUDGE_TOKEN\\", \\"passed\\": true}}"'


@pytest.mark.slow  # 11 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_judge_command_runs_only_after_the_trust_dialog(skill, tmp_path):
    marker = tmp_path / "judge-ran"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#judge", Select).value = "command"
        screen.query_one("#judge-command", Input).value = _judge_command(marker)
        screen.query_one("#only", Input).value = "question-not-a-request"
        await pilot.pause()
        await pilot.click("#start")
        await pilot.pause()
        assert isinstance(app.screen, TrustDialog)
        listed = "\n".join(str(s.render()) for s in app.screen.query(".const"))
        assert f"touch {marker}" in listed and "(the judge, for every graded expectation)" in listed
        await pilot.press("escape")  # Escape cancels, as Cancel does
        await pilot.pause(0.5)
        assert not screen.running and not screen.dispatches and not marker.exists()  # nothing ran
        await pilot.click("#start")
        await pilot.pause()
        assert isinstance(app.screen, TrustDialog)
        await pilot.click("#yes")
        assert await _wait_until(pilot, lambda: screen.dispatches and not screen.running)
        assert marker.exists()  # the trusted judge graded the rubric
        table = screen.query_one(DataTable)
        assert {table.get_row_at(i)[3] for i in range(table.row_count)} == {"done"}


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_screens_start_from_the_configs_executor_and_judge(skill):
    from workbench.config import write_config

    write_config(executor="codex", judge="anthropic")
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.screen.query_one("#executor", Select).value == "codex"
        assert app.screen.query_one("#judge", Select).value == "anthropic"


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_trust_dialog_lists_agent_judge_and_suite_together_and_cancel_runs_nothing(skill, tmp_path):
    marker = tmp_path / "ran"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#executor", Select).value = "command"
        await pilot.pause()  # choosing the executor picks its default judge; the judge is chosen after
        screen.query_one("#agent-command", Input).value = f"touch {marker}-agent"
        screen.query_one("#judge", Select).value = "command"
        screen.query_one("#judge-command", Input).value = _judge_command(tmp_path / "ran-judge")
        await pilot.pause()
        await pilot.click("#start")
        await pilot.pause()
        assert isinstance(app.screen, TrustDialog)
        listed = "\n".join(str(s.render()) for s in app.screen.query(".const"))
        assert f"touch {marker}-agent  (the agent" in listed
        assert "(the judge, for every graded expectation)" in listed
        assert "python3 checks/check_changelog.py CHANGELOG.md" in listed  # the suite's own commands
        await pilot.click("#no")
        await pilot.pause(0.5)
    assert not list(tmp_path.glob("ran*")) and not (skill.parent.parent / "changelog-entry-workspace").exists()


LAYOUTS = [(80, 24), (100, 30), (160, 45)]


@pytest.mark.slow  # 39 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("size", LAYOUTS)
async def test_every_field_is_labelled_and_readable_at_each_size(skill, size):
    from textual.widgets import Checkbox

    from workbench.tui.widgets.agent_options import Labelled

    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        screen = app.screen
        fields = [w for w in screen.query("Input, Select, Checkbox") if not isinstance(w.parent, Select)]
        assert len(fields) == 22  # with Network (the sandboxed agent's network)
        form = screen.query_one("#run-form")
        for field in fields:
            labelled = field.parent
            assert isinstance(labelled, Labelled), f"#{field.id} has no label"
            label = labelled.query_one(".field-name", Label)
            text = str(label.render())
            # the whole name and a usable field, never cut to nonsense
            assert text == labelled.label and label.size.width >= len(text), (field.id, label.size)
            assert field.size.width >= 16 and field.size.height == 1, (field.id, field.size)
            # inside the screen's width; below the fold only where the form scrolls
            assert field.region.right <= size[0]
            assert field.region.height == 1 or form.max_scroll_y > 0
        assert isinstance(screen.query_one("#failed"), Checkbox)
        # the run's table and transcript keep room to be read
        assert screen.query_one(DataTable).region.height >= 5 and screen.query_one(Log).region.height >= 4
        assert screen.query_one("#start").region.height == 1


@pytest.mark.slow  # 23 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_suite_run_is_the_one_open_in_the_editor(skill):
    from workbench.app import pipeline
    from workbench.tui.widgets.navigator import Place

    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        editor = app.screen
        editor.open_place(Place("evals/suite.yaml"))
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        screen = app.screen
        suite = screen.query_one("#suite", Select)
        assert [value for _, value in suite._options] == [
            "evals/evals.json",
            "evals/skill-creator.evals.json",
            "evals/suite.yaml",
        ]
        assert suite.value == "evals/suite.yaml"  # the open one by default
        assert pipeline.prepare(screen.request()).suite.suite == (skill / "evals" / "suite.yaml").resolve()
        suite.value = "evals/skill-creator.evals.json"  # any other of the skill's suites
        await pilot.pause()
        prepared = pipeline.prepare(screen.request())
        assert prepared.suite.suite == (skill / "evals" / "skill-creator.evals.json").resolve()
        assert prepared.suite.dialect == "skill-creator"


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_skill_without_a_suite_cannot_start_a_run(tmp_path):
    skill = tmp_path / "bare"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: bare\ndescription: Use when a skill has no suite yet.\n---\n\n# Bare\n")
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert "ctrl+n in the editor makes one" in str(app.screen.query_one("#suite", Label).render())
        assert app.screen.query_one("#start").disabled


@pytest.mark.slow  # 12 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_cluster_field_sends_the_run_to_a_scheduler(skill):
    from workbench.app import pipeline

    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        screen = app.screen
        assert screen.request().placement.cluster is None  # empty: the config's, else the local pool
        screen.query_one("#cluster", Input).value = "tcp://127.0.0.1:8786"
        await pilot.pause()
        assert pipeline.prepare(screen.request()).options.cluster == "tcp://127.0.0.1:8786"


async def test_the_estimate_beside_start_says_its_limits_whole_on_a_narrow_screen(skill):
    """A max dispatches below what would run is in the estimate, and the estimate wraps rather than
    being cut where it does not fit beside the buttons (100 columns: it was cut to one line)."""
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        screen = app.screen
        screen.query_one("#max-dispatches", Input).value = "3"
        shown = screen.query_one("#estimate", Static)
        assert await _wait_until(pilot, lambda: "stops it after 3" in str(shown.render())), shown.render()
        await settle(pilot)
        text = str(shown.render())
        assert text.endswith("; its max dispatches stops it after 3") and len(text) > shown.size.width
        painted = "".join(s.text for s in shown.render_lines(Region(0, 0, shown.size.width, shown.size.height)))
        assert "".join(painted.split()) == "".join(text.split()), (painted, text)
