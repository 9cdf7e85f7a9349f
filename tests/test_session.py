"""The open skill without a screen: files found, edits validated incrementally,
and every kind of change on disk decided."""

from __future__ import annotations

import json

from workbench.formats.edits import Insert, Set
from workbench.session import CONFLICT, ECHO, GONE, RELOADED, SkillSession
from workbench.validate.validator import validate_document


def test_files_are_found_and_the_evals_file_comes_first(demo_copy):
    session = SkillSession(demo_copy)
    assert [f.rel for f in session.files] == [
        "SKILL.md",
        "evals/evals.json",
        "evals/skill-creator.evals.json",
        "evals/suite.yaml",
        "evals/trigger-evals.json",
    ]
    assert session.primary().rel == "evals/evals.json" and session.counts() == (0, 0)


def test_incremental_diagnostics_equal_a_full_validation(demo_copy):
    session = SkillSession(demo_copy)
    skill_file = session.file("evals/evals.json")
    session.apply(skill_file, Set("/evals/1/turns/0/deliver_when", "always"))
    session.apply(skill_file, Set("/evals/2/id", "export-json-flag"))
    session.apply(skill_file, Insert("/evals/-", {"id": "Bad"}))
    full = validate_document(skill_file.document.current(), skill_file.format, locate_all=False)
    key = lambda d: (d.severity, d.path, d.message)  # noqa: E731
    assert sorted(map(key, skill_file.diagnostics)) == sorted(map(key, full))
    assert skill_file.case_problems("/evals/2") == (1, 0) and skill_file.counts()[0] >= 4


def test_disk_changes_are_told_apart(demo_copy):
    session = SkillSession(demo_copy)
    skill_file = session.file("evals/evals.json")
    path = skill_file.path
    session.apply(skill_file, Set("/evals/0/runs", 2))
    session.save(skill_file)
    assert session.disk_changed(path) == (skill_file, ECHO)  # our own write
    data = json.loads(path.read_text())
    data["evals"][0]["runs"] = 0
    path.write_text(json.dumps(data, indent=2))
    assert session.disk_changed(path) == (skill_file, RELOADED)
    assert [d.path for d in skill_file.diagnostics] == ["/evals/0/runs"] and skill_file.diagnostics[0].line
    session.apply(skill_file, Set("/evals/0/runs", 1))
    path.write_text(path.read_text().replace('"runs": 0', '"runs": 5'))
    assert session.disk_changed(path) == (skill_file, CONFLICT)
    assert skill_file.document.data["evals"][0]["runs"] == 1  # nothing dropped while undecided
    session.take_theirs(skill_file)
    assert skill_file.document.data["evals"][0]["runs"] == 5 and not skill_file.dirty
    path.unlink()
    assert session.disk_changed(path) == (skill_file, GONE)
    new = demo_copy / "evals" / "more.evals.json"
    new.write_text(json.dumps({"skill_name": "changelog-entry", "evals": [{"id": 1, "prompt": "p"}]}))
    found, what = session.disk_changed(new)
    assert what == RELOADED and found.rel == "evals/more.evals.json" and found.format.name == "skill-creator"


def test_a_file_that_does_not_parse_is_held_as_text(demo_copy):
    path = demo_copy / "evals" / "suite.yaml"
    path.write_text("eval_suite: [unclosed\n")
    session = SkillSession(demo_copy)
    skill_file = session.file("evals/suite.yaml")
    assert skill_file.document is None and skill_file.problem.line == 2
    assert skill_file.counts() == (1, 0) and skill_file.format.name == "chock"
