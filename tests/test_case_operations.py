"""A suite's case operations without a screen (workbench/session/cases.py): each is the edit it makes and
where the editor goes next; applied through the session, each is one unsaved change, undone in its file.
The Pilot flows (tests/tui/test_flows.py, test_drafts_accept.py) drive the same operations by keys."""

from __future__ import annotations

import json

import pytest

from workbench.formats.drafts import drafts_path
from workbench.session import SkillSession, cases


def ids(skill_file) -> list:
    return [case.get("id") for case in skill_file.document.data["evals"]]


def apply(session: SkillSession, change: cases.Change | None) -> None:
    assert change is not None
    session.apply(change.file, change.operation)


@pytest.fixture
def suite(demo_copy):
    session = SkillSession(demo_copy)
    return session, session.file("evals/evals.json")


def test_a_new_case_goes_after_the_selected_one_with_a_fresh_id(suite):
    session, skill_file = suite
    before = ids(skill_file)
    change = cases.new_case(skill_file, "/evals/1")
    assert change.then == "/evals/2"
    apply(session, change)
    assert ids(skill_file) == [*before[:2], "new-case-1", *before[2:]]
    apply(session, cases.new_case(skill_file, None))  # nothing selected: at the end
    assert ids(skill_file)[-1] == "new-case-2" and len(set(ids(skill_file))) == len(ids(skill_file))


def test_duplicate_delete_and_move_each_say_where_the_editor_goes(suite):
    session, skill_file = suite
    first = ids(skill_file)
    copy = cases.duplicate(cases.selected(skill_file, "/evals/0"))
    assert copy.then == "/evals/1"
    apply(session, copy)
    assert ids(skill_file)[1] not in first and len(set(ids(skill_file))) == len(first) + 1  # an id of its own

    moved = cases.move(cases.selected(skill_file, "/evals/0"), 2)
    assert moved is not None and moved.then == "/evals/2"
    apply(session, moved)
    assert ids(skill_file)[2] == first[0]
    assert cases.move(cases.selected(skill_file, "/evals/0"), -1) is None  # past the top: nothing

    last = len(ids(skill_file)) - 1
    gone = cases.delete(cases.selected(skill_file, f"/evals/{last}"))
    assert gone.then == f"/evals/{last - 1}"  # the last case deleted: the one before it
    apply(session, gone)
    assert len(ids(skill_file)) == last
    session.undo(skill_file)
    assert len(ids(skill_file)) == last + 1  # one unsaved change, undone in its file


def test_nothing_is_selected_where_no_case_is(suite):
    _session, skill_file = suite
    assert cases.selected(skill_file, "") is None
    assert cases.selected(skill_file, "/evals/999") is None
    assert cases.selected(skill_file, "/evals/0/expectations/x") is None
    assert cases.selected(None, "/evals/0") is None


def test_a_suite_whose_case_list_is_not_a_list_refuses_a_new_case(demo_copy):
    path = demo_copy / "evals" / "evals.json"
    data = json.loads(path.read_text())
    data["evals"] = {"not": "a list"}
    path.write_text(json.dumps(data))
    session = SkillSession(demo_copy)
    with pytest.raises(cases.CaseRefused, match="no case list to add to"):
        cases.new_case(session.file("evals/evals.json"), None)


def test_a_drafted_case_is_accepted_with_an_id_of_its_own_and_leaves_the_drafts(demo_copy):
    suite_path = demo_copy / "evals" / "evals.json"
    taken = json.loads(suite_path.read_text())["evals"][0]["id"]
    drafted = [{"id": taken, "prompt": "again", "expected_output": "x"}, {"id": "brand-new", "prompt": "p"}]
    drafts_path(suite_path).write_text(json.dumps({"skill_name": "changelog-entry", "evals": drafted}))
    session = SkillSession(demo_copy)
    suite, drafts = session.file("evals/evals.json"), session.file("evals/evals.drafts.json")
    count = len(ids(suite))

    with pytest.raises(cases.CaseRefused, match="Select a drafted case first"):
        cases.accept_draft(session, cases.selected(suite, "/evals/0"))  # a case of the suite, not a draft

    accepted = cases.accept_draft(session, cases.selected(drafts, "/evals/0"))
    assert accepted.renamed is not None and accepted.renamed[0] == taken and accepted.renamed[1] != taken
    apply(session, accepted.into_suite)
    apply(session, accepted.out_of_drafts)
    assert ids(suite)[-1] == accepted.renamed[1] and len(ids(suite)) == count + 1
    assert ids(drafts) == ["brand-new"]

    second = cases.accept_draft(session, cases.selected(drafts, "/evals/0"))
    assert second.renamed is None and second.into_suite.then == f"/evals/{count + 1}"
