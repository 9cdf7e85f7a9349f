"""The limits are one type (workbench/app/choices.py: Limits) and one option group (workbench/cli/options.py:
limits_options): every field reaches run, evaluate, improve, trigger and optimize-description, and the
Runs and Triggers screens, whose limit fields are built from the type and read back into it."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import click
import pytest
from textual.widgets import Input

from tui.helpers import SIZE, opened, settle
from workbench.app.choices import Limits
from workbench.cli.main import cli
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.runs import RunsScreen
from workbench.tui.screens.triggers import TriggersScreen
from workbench.tui.widgets.limits_form import limit_fields, read_limits

RUN_COMMANDS = ("run", "evaluate", "improve")
TRIGGER_COMMANDS = ("trigger", "optimize-description")


def _options(command: str) -> set[str]:
    found = cli.get_command(click.Context(cli), command)
    assert found is not None, command
    return {p.name for p in found.params if p.name}


@pytest.mark.parametrize("command", RUN_COMMANDS + TRIGGER_COMMANDS)
def test_every_limit_is_an_option_of_every_flow_that_takes_limits(command):
    flow = "run" if command in RUN_COMMANDS else "trigger"
    shown = {f.name for f in limit_fields(flow)}
    # adaptive has no option of its own: --runs auto sets it
    assert shown | {"adaptive"} <= {f.name for f in dataclasses.fields(Limits)}
    assert shown <= _options(command), shown - _options(command)


def test_a_form_reads_back_what_was_typed_and_says_which_field_is_wrong():
    class Form:
        def __init__(self, values):
            self.values = values

        def query_one(self, selector, kind):  # what read_limits reads of a widget: its value
            return SimpleNamespace(value=self.values[selector.lstrip("#")])

    blank = {f.widget_id: "" for f in limit_fields("run")} | {"fresh": False}
    assert read_limits(Form(blank), Limits(), "run") == Limits()
    typed = blank | {"runs": "auto", "max-runs": "5", "max-cost": "2.5", "jobs": "2", "timeout": "30", "fresh": True}
    assert read_limits(Form(typed), Limits(), "run") == Limits(
        adaptive=True, max_runs=5, max_cost=2.5, jobs=2, timeout=30.0, fresh=True
    )
    assert read_limits(Form(blank | {"runs": "3"}), Limits(adaptive=True), "run") == Limits(runs=3)
    with pytest.raises(ValueError, match=r"At once: 0 is below 1"):
        read_limits(Form(blank | {"jobs": "0"}), Limits(), "run")
    with pytest.raises(ValueError, match=r"Max cost \(\$\): 'lots' is not a number"):
        read_limits(Form(blank | {"max-cost": "lots"}), Limits(), "run")
    # what a person types is kept and named, never trimmed into another number ("1.5" as 15, "abc" as auto)
    with pytest.raises(ValueError, match=r"At once: '1.5' is not a whole number$"):
        read_limits(Form(blank | {"jobs": "1.5"}), Limits(), "run")
    with pytest.raises(ValueError, match=r"Runs each: 'abc' is not a whole number nor auto"):
        read_limits(Form(blank | {"runs": "abc"}), Limits(), "run")
    with pytest.raises(ValueError, match=r"Runs each: -1 is below 1"):
        read_limits(Form(blank | {"runs": "-1"}), Limits(), "run")
    trigger = {f.widget_id: "" for f in limit_fields("trigger", "trigger-")} | {"trigger-fresh": False}
    assert read_limits(Form(trigger), Limits.for_triggers(), "trigger", "trigger-") == Limits.for_triggers()


async def test_the_runs_and_triggers_screens_show_every_limit_and_hand_it_to_their_request(demo_copy):
    app = WorkbenchApp([demo_copy], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        for each in limit_fields("run"):
            assert runs.query_one(f"#{each.widget_id}")  # every limit is on the form
        runs.query_one("#max-cost", Input).value = "1.5"
        runs.query_one("#jobs", Input).value = "2"
        assert runs.request().limits == Limits(max_cost=1.5, jobs=2)
        await pilot.press("escape")
        triggers = await opened(pilot, "ctrl+l", TriggersScreen)
        for each in limit_fields("trigger", "trigger-"):
            assert triggers.query_one(f"#{each.widget_id}")
        emptied = triggers.query_one("#trigger-runs", Input)
        assert emptied.placeholder == "3"  # blank, it means trigger's default, and says so
        assert triggers.query_one("#trigger-jobs", Input).placeholder == "4"
        triggers.query_one("#trigger-runs", Input).value = "auto"
        triggers.query_one("#trigger-timeout", Input).value = "60"
        assert triggers.request().limits == dataclasses.replace(Limits.for_triggers(), adaptive=True, timeout=60.0)
