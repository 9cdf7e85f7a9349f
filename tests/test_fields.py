"""Forms are compiled from the schemas: schema -> field specs, no widgets involved."""

from __future__ import annotations

from workbench.formats import chock, skill_creator, slow_powers
from workbench.formats.fields import (
    BOOL,
    ENUM,
    INTEGER,
    KEY_VALUE,
    KINDS,
    LONG_TEXT,
    OBJECT,
    OBJECT_LIST,
    STRING_LIST,
    TEXT,
    case_spec,
    document_spec,
    switch_kind,
)

CASE = case_spec(slow_powers.FORMAT, "/evals")


def test_slow_powers_case_fields_and_widgets():
    kinds = {f.name: f.kind for f in CASE.fields}
    assert kinds == {
        "id": TEXT,
        "prompt": LONG_TEXT,
        "turns": OBJECT_LIST,
        "responder": OBJECT,  # eval-magic's simulated user, instead of scripted turns
        "expected_output": LONG_TEXT,
        "files": STRING_LIST,
        "files_root": TEXT,
        "runs": INTEGER,
        "codebase": KINDS,  # a folder or a git repository
        "isolation": ENUM,
        "skill_should_trigger": BOOL,
        "assertions": OBJECT_LIST,
    }
    assert [f.name for f in CASE.fields if f.required] == ["id", "prompt", "expected_output"]
    assert CASE.field("runs").minimum == 1
    assert CASE.field("isolation").options == ("shared", "isolated")
    assert CASE.field("id").help.startswith("Kebab-case case id")


def test_assertions_are_a_kind_picker_over_the_four_kinds():
    item = CASE.field("assertions").item
    assert item.kind == KINDS
    assert [k.label for k in item.kinds] == ["transcript_check", "llm_judge", "command_check", "diff_scope"]
    command = item.kinds[2].spec
    assert command.field("env").kind == KEY_VALUE and command.field("env").item.kind == TEXT
    assert command.field("matrix").item.kind == STRING_LIST
    assert (command.field("expect_exit_code").minimum, command.field("expect_exit_code").maximum) == (
        -(2**31),
        2**31 - 1,
    )
    assert item.kinds[1].spec.field("rubric").kind == LONG_TEXT
    assert item.kinds[3].spec.notes == ("needs at least one of: max_files_touched, max_lines_changed",)
    assert item.kind_for({"type": "diff_scope"}).label == "diff_scope"


def test_conditional_turn_field_is_marked():
    turn = CASE.field("turns").item
    matches = turn.field("agent_response_matches")
    assert matches.hidden_when == ("deliver_when", "always")
    assert matches.notes == ("only when deliver_when is agent_asks",)


def test_switching_kind_keeps_the_shared_id_and_blanks_required_fields():
    kinds = {k.label: k for k in CASE.field("assertions").item.kinds}
    judge = {"id": "quoted", "type": "llm_judge", "rubric": "Did it quote?"}
    assert switch_kind(judge, kinds["command_check"]) == {"id": "quoted", "type": "command_check", "command": ""}
    assert switch_kind(judge, kinds["transcript_check"]) == {"id": "quoted", "type": "transcript_check", "check": ""}


def test_skill_creator_case():
    spec = case_spec(skill_creator.FORMAT, "/evals")
    assert {f.name: f.kind for f in spec.fields} == {
        "id": INTEGER,
        "prompt": LONG_TEXT,
        "expected_output": LONG_TEXT,
        "files": STRING_LIST,
        "expectations": STRING_LIST,
        "assertions": STRING_LIST,
    }


def test_chock_forms():
    legacy = case_spec(chock.FORMAT, "/suite/cases")
    execute = legacy.field("execute")
    assert execute.kind == OBJECT
    assert {f.name: f.kind for f in execute.fields}["files"] == KEY_VALUE
    assert execute.field("push_refs").kind == STRING_LIST
    assert legacy.field("expect").kind == LONG_TEXT and legacy.field("category").kind == ENUM
    modern = case_spec(chock.FORMAT, "/eval_suite/test_cases")
    assert modern.field("structural_checks").kind == STRING_LIST
    assert modern.field("reference_summary").kind == LONG_TEXT
    assert modern.field("input").kind == KEY_VALUE
    document = document_spec(chock.FORMAT)
    assert document.notes == ("needs exactly one of: suite, eval_suite",)
    assert "test_cases" not in [f.name for f in document.field("eval_suite").fields]
    assert document.field("eval_suite").field("metrics").item.field("direction").options == (
        "higher_is_better",
        "lower_is_better",
    )


def test_blank_values_fit_the_schema():
    from workbench.validate import schema_check

    case = CASE.blank()
    assert set(case) == {"id", "prompt", "expected_output"}
    case.update(id="new-case", prompt="p", expected_output="e")
    for kind in CASE.field("assertions").item.kinds:
        blank = kind.spec.blank()
        assert blank["type"] == kind.value
    doc = {"skill_name": "s", "evals": [case]}
    assert schema_check.check(slow_powers.FORMAT, doc) == []
