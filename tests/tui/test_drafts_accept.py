"""A drafted case joins its suite only when a person accepts it: ctrl+b on a case
of <suite>.drafts.json moves it, as unsaved edits of both files."""

from __future__ import annotations

import json

import pytest

from tui.helpers import SIZE, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.navigator import Navigator, Place

DRAFT = {
    "id": "export-json-flag",  # taken in the suite: it gets an id of its own there
    "prompt": "We deprecated --csv. Note it in the changelog?",
    "expected_output": "One line under Unreleased / Deprecated.",
    "assertions": [
        {
            "id": "read-changelog-first",
            "type": "transcript_check",
            "check": "tool_invocation_matches",
            "pattern": "^Read \\{.*CHANGELOG\\.md",
            "must_precede": "first_write",
        }
    ],
}


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_accepting_a_draft_moves_it_into_the_suite_as_an_unsaved_edit(skill):
    suite = skill / "evals" / "evals.json"
    drafts = skill / "evals" / "evals.drafts.json"
    drafts.write_text(json.dumps({"skill_name": "changelog-entry", "evals": [DRAFT]}, indent=2) + "\n")
    count = len(json.loads(suite.read_text())["evals"])
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        editor = app.screen
        labels = [str(node.label) for node in editor.query_one(Navigator).root.children]
        assert any("evals/evals.drafts.json" in label and "drafts" in label.split("json", 1)[1] for label in labels)
        editor.open_place(Place("evals/evals.drafts.json", "/evals/0"))
        await settle(pilot)
        await pilot.press("ctrl+b")
        await settle(pilot)
        session = editor.session
        in_suite = session.file("evals/evals.json")
        in_drafts = session.file("evals/evals.drafts.json")
        assert in_suite is not None and in_drafts is not None and in_suite.dirty and in_drafts.dirty
        cases = in_suite.document.data["evals"]
        assert len(cases) == count + 1 and cases[-1]["prompt"] == DRAFT["prompt"]
        assert cases[-1]["id"] != "export-json-flag"  # a unique id, never a duplicate
        assert in_drafts.document.data["evals"] == []
        assert editor.place == Place("evals/evals.json", f"/evals/{count}")  # the accepted case is shown
        assert len(json.loads(suite.read_text())["evals"]) == count  # nothing on disk until saved
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert json.loads(suite.read_text())["evals"][-1]["prompt"] == DRAFT["prompt"]


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_draft_whose_id_is_an_object_is_accepted_without_a_crash(skill):
    """Found by an attacker: a draft whose id is an object crashed the app (the suite then says the id is
    wrong, as for any case)."""
    suite = skill / "evals" / "evals.json"
    drafts = skill / "evals" / "evals.drafts.json"
    odd = dict(DRAFT, id={"x": 1})
    drafts.write_text(json.dumps({"skill_name": "changelog-entry", "evals": [odd]}, indent=2) + "\n")
    before = suite.read_text()
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        editor = app.screen
        editor.open_place(Place("evals/evals.drafts.json", "/evals/0"))
        await settle(pilot)
        await pilot.press("ctrl+b")
        await settle(pilot)
        assert editor.session.file("evals/evals.json").document.data["evals"][-1]["id"] == {"x": 1}
    assert suite.read_text() == before
