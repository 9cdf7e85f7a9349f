"""Edits at JSON Pointers, their inverses, and undo/redo."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.formats.edits import Batch, EditError, History, Insert, Move, Remove, Set

DOC = {"skill_name": "s", "evals": [{"id": "a", "prompt": "p"}, {"id": "b", "prompt": "q", "runs": 2}]}


def test_set_replace_and_add_and_their_inverses():
    data = copy.deepcopy(DOC)
    inverse = Set("/evals/0/prompt", "new").apply(data)
    assert data["evals"][0]["prompt"] == "new"
    inverse.apply(data)
    assert data == DOC
    inverse = Set("/evals/0/runs", 3).apply(data)
    assert list(data["evals"][0]) == ["id", "prompt", "runs"]
    inverse.apply(data)
    assert data == DOC


def test_remove_restores_key_position():
    data = copy.deepcopy(DOC)
    inverse = Remove("/evals/1/prompt").apply(data)
    assert list(data["evals"][1]) == ["id", "runs"]
    inverse.apply(data)
    assert list(data["evals"][1]) == ["id", "prompt", "runs"]


def test_insert_append_and_move():
    data = copy.deepcopy(DOC)
    Insert("/evals/-", {"id": "c", "prompt": "r"}).apply(data)
    assert [e["id"] for e in data["evals"]] == ["a", "b", "c"]
    inverse = Move("/evals/2", 0).apply(data)
    assert [e["id"] for e in data["evals"]] == ["c", "a", "b"]
    inverse.apply(data)
    assert [e["id"] for e in data["evals"]] == ["a", "b", "c"]


def test_batch_is_all_or_nothing():
    data = copy.deepcopy(DOC)
    with pytest.raises(EditError):
        Batch([Set("/evals/0/prompt", "x"), Remove("/evals/9")]).apply(data)
    assert data == DOC


@pytest.mark.parametrize(
    "operation",
    [
        Set("/nope/x", 1),
        Remove("/evals/0/missing"),
        Insert("/evals/0/id", 1),
        Move("/skill_name", 0),
        Set("/evals/7", {}),
        Insert("/evals/x", 1),
    ],
)
def test_impossible_edits_raise_edit_error(operation):
    data = copy.deepcopy(DOC)
    with pytest.raises(EditError):
        operation.apply(data)
    assert data == DOC


def test_history_undo_redo_and_typing_coalesces():
    history = History(copy.deepcopy(DOC))
    for text in ("n", "ne", "new"):
        history.apply(Set("/evals/0/prompt", text), coalesce=True)
    history.apply(Remove("/evals/1"))
    assert history.undo().pointer == "/evals/1"
    assert len(history.data["evals"]) == 2
    history.undo()  # the whole word, in one step
    assert history.data == DOC and not history.can_undo
    history.redo()
    assert history.data["evals"][0]["prompt"] == "new"
    history.redo()
    assert len(history.data["evals"]) == 1 and not history.can_redo


def test_a_new_edit_clears_redo():
    history = History(copy.deepcopy(DOC))
    history.apply(Set("/skill_name", "t"))
    history.undo()
    history.apply(Set("/skill_name", "u"))
    assert not history.can_redo and history.data["skill_name"] == "u"


OPS = st.sampled_from(
    [
        Set("/evals/0/prompt", "x"),
        Set("/evals/1/runs", 5),
        Set("/skill_name", "z"),
        Remove("/evals/1/runs"),
        Remove("/evals/0"),
        Insert("/evals/0", {"id": "n"}),
        Insert("/evals/-", {"id": "m"}),
        Move("/evals/1", 0),
        Set("/evals/0/new", [1]),
        Batch([Set("/evals/0/id", "q"), Remove("/evals/0/prompt")]),
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(OPS, max_size=8))
def test_any_sequence_undoes_to_the_start_and_redoes_to_the_end(operations):
    history = History(copy.deepcopy(DOC))
    for operation in operations:
        try:
            history.apply(operation)
        except EditError:
            pass
    end = copy.deepcopy(history.data)
    while history.undo():
        pass
    assert history.data == DOC
    while history.redo():
        pass
    assert history.data == end
