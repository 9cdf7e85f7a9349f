"""A trigger eval set opens like a suite: each query a case, named by its query,
edited in its form, checked as it is edited, saved as the person left it."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Switch

from tui.helpers import SIZE, field_at, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.navigator import Navigator, Place

QUERIES = [
    {"query": "turn sales.xlsx into a [bold]pivot[/] summary by region", "should_trigger": True},
    {"query": "what's the capital of France?", "should_trigger": False},
    {"query": "What's the capital of  France?", "should_trigger": False},
]


def _skill(tmp_path):
    skill = tmp_path / "xlsx-pivots"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: xlsx-pivots\ndescription: Pivot tables from spreadsheets.\n---\nBody\n")
    (skill / "evals/trigger-evals.json").write_text(json.dumps(QUERIES, indent=2) + "\n")
    return skill


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_trigger_set_is_edited_in_its_form(tmp_path):
    skill = _skill(tmp_path)
    rel = "evals/trigger-evals.json"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        trigger_set = screen.session.file(rel)
        assert trigger_set.format.name == "trigger-set"
        assert [p for p, _ in trigger_set.cases()] == ["/0", "/1", "/2"]
        # cases are named by their query, shown as text (not markup), shortened to fit
        labels = [str(leaf.label) for leaf in screen.query_one(Navigator).root.children[1].children]
        assert any(label.endswith("turn sales.xlsx into a [bold]…") for label in labels)
        # the repeated query is an error at its line
        (duplicate,) = [d for d in trigger_set.diagnostics if d.severity == "error"]
        assert duplicate.path == "/2/query" and duplicate.line == 11
        screen.open_place(Place(rel, "/2"))
        await settle(pilot)
        query = field_at(app, Input, "/2/query")
        query.focus()
        query.value = ""
        await pilot.press(*"cheap flights".replace(" ", "_"))
        await settle(pilot)
        assert trigger_set.document.data[2]["query"] == "cheap_flights"
        assert [d for d in trigger_set.diagnostics if d.severity == "error"] == []
        switch = field_at(app, Switch, "/2/should_trigger")
        switch.focus()
        await pilot.press("space")
        await settle(pilot)
        assert trigger_set.document.data[2]["should_trigger"] is True
        await pilot.press("ctrl+n")  # a new query after this one
        await settle(pilot)
        assert len(trigger_set.document.data) == 4 and set(trigger_set.document.data[3]) <= {"query", "should_trigger"}
        await pilot.press("ctrl+z")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
    saved = json.loads((skill / rel).read_text())
    assert saved[2] == {"query": "cheap_flights", "should_trigger": True} and len(saved) == 3
    assert saved[:2] == QUERIES[:2]
