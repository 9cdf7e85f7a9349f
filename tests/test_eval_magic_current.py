"""eval-magic as it is today: its current evals.schema.json (files_root, codebase,
responder) and the rules its loader adds. The examples are eval-magic's own, from
docs/guides/codebase.md and conversations.md of the reference copy."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from conftest import SHARED

from workbench.validate.validator import validate_file

REFERENCE = SHARED / "reference" / "eval-magic"
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason="eval-magic's reference copy is not there")

CASE = {"id": "add-a-feature", "prompt": "Implement what docs/TASK.md describes.", "expected_output": "the feature"}

# eval-magic's own examples (docs/guides/*.md), as whole files.
RESPONDER = {
    "id": "add-request-caching",
    "prompt": "Requests to the pricing API are slow. Can you add caching?",
    "expected_output": "A working cache with the pricing endpoint under 100ms.",
    "responder": {"type": "llm", "max_turns": 8},
}
SCRIPTED = {
    "id": "clarify-before-editing",
    "prompt": "The due date is wrong. Fix it.",
    "expected_output": "Asks which timezone before editing.",
    "turns": [
        {
            "prompt": "The affected users are all in US timezones.",
            "deliver_when": "agent_asks",
            "agent_response_matches": "(?i)time ?zone",
        },
        {"prompt": "It is a date-only field.", "deliver_when": "always"},
    ],
}
GIT_CODEBASE = {
    "skill_name": "working-with-tdd",
    "codebase": {"url": "https://github.com/slowdini/example-project", "ref": "v1.4.0"},
    "evals": [{"id": "add-a-feature", "prompt": "...", "expected_output": "..."}],
}


def write(tmp_path: Path, data: dict, text: str | None = None) -> Path:
    suite = tmp_path / "skill" / "evals" / "evals.json"
    suite.parent.mkdir(parents=True, exist_ok=True)
    suite.write_text(text or json.dumps(data, indent=2))
    return suite


def suite_of(*cases: dict, **top) -> dict:
    return {"skill_name": "skill", **top, "evals": list(cases)}


def diagnostics(suite: Path):
    report = validate_file(suite)
    assert report.dialect == "slow-powers"  # current eval-magic files keep the dialect name
    return report.diagnostics


def errors(suite: Path):
    return [d for d in diagnostics(suite) if d.severity == "error"]


def line_of(suite: Path, needle: str) -> int:
    return next(n for n, line in enumerate(suite.read_text().splitlines(), 1) if needle in line)


@needs_reference
@pytest.mark.parametrize(
    "data", [suite_of(RESPONDER), suite_of(SCRIPTED), GIT_CODEBASE], ids=["responder", "turns", "git"]
)
def test_eval_magic_examples_are_clean_as_eval_magic_finds_them(tmp_path, data):
    schema = json.loads((REFERENCE / "schema" / "evals.schema.json").read_text())
    assert jsonschema.Draft7Validator(schema).is_valid(data)
    assert errors(write(tmp_path, data)) == []


@needs_reference
def test_turns_and_responder_together_is_refused_at_the_eval(tmp_path):
    both = {**SCRIPTED, "responder": {"type": "llm"}}
    schema = json.loads((REFERENCE / "schema" / "evals.schema.json").read_text())
    assert not jsonschema.Draft7Validator(schema).is_valid(suite_of(both))
    suite = write(tmp_path, suite_of(both))
    [d] = errors(suite)
    assert d.path == "/evals/0" and d.line == line_of(suite, '"id": "clarify-before-editing"') - 1


@pytest.mark.parametrize(
    "responder,where",
    [({"type": "human"}, "/evals/0/responder/type"), ({"type": "llm", "max_turns": 0}, "/evals/0/responder/max_turns")],
)
def test_a_bad_responder_is_refused_at_its_field(tmp_path, responder, where):
    [d] = errors(write(tmp_path, suite_of({**RESPONDER, "responder": responder})))
    assert d.path == where


def test_a_git_codebase_needs_a_ref(tmp_path):
    data = {**GIT_CODEBASE, "codebase": {"url": "https://example.com/x.git"}}
    [d] = errors(write(tmp_path, data))
    assert d.path == "/codebase" and d.line == 3


# ---------------------------------------------------------------- the four rules eval-magic adds


def test_assistant_message_matches_needs_turns(tmp_path):
    check = {"id": "says", "type": "transcript_check", "check": "assistant_message_matches", "pattern": "x"}
    suite = write(tmp_path, suite_of({**CASE, "assertions": [check]}))
    [d] = errors(suite)
    assert d.path == "/evals/0/assertions/0/check" and "turns" in d.message
    assert d.line == line_of(suite, "assistant_message_matches")
    assert errors(write(tmp_path, suite_of({**SCRIPTED, "assertions": [check]}))) == []


@pytest.mark.parametrize("field", ["env", "matrix"])
def test_env_names_with_equals_are_refused(tmp_path, field):
    value = "1" if field == "env" else ["1", "2"]
    check = {"id": "c", "type": "command_check", "command": "true", field: {"A=B": value, "OK": value}}
    suite = write(tmp_path, suite_of({**CASE, "assertions": [check]}))
    [d] = errors(suite)
    assert d.path == f"/evals/0/assertions/0/{field}/A=B" and '"="' in d.message
    assert d.line == line_of(suite, '"A=B"')


def test_blank_turn_prompt_is_refused(tmp_path):
    turns = [{"prompt": " \t\n ", "deliver_when": "always"}, {"prompt": "fine", "deliver_when": "always"}]
    suite = write(tmp_path, suite_of({**CASE, "turns": turns}))
    [d] = errors(suite)
    assert d.path == "/evals/0/turns/0/prompt" and "blanks" in d.message
    assert d.line == line_of(suite, '" \\t\\n "')


def test_setup_files_may_not_overlap_visible_files(tmp_path):
    suite = write(tmp_path, {})
    (suite.parent / "fixtures" / "sub").mkdir(parents=True)
    (suite.parent / "fixtures" / "sub" / "a.txt").write_text("a")
    (suite.parent / "checks").mkdir()
    (suite.parent / "checks" / "t.sh").write_text("true")
    check = {"id": "c", "type": "command_check", "command": "true", "setup_files": ["checks/t.sh", "fixtures/sub"]}
    suite = write(tmp_path, suite_of({**CASE, "files": ["fixtures/sub/a.txt"], "assertions": [check]}))
    [d] = errors(suite)
    assert d.path == "/evals/0/assertions/0/setup_files/1" and "overlaps" in d.message


# ---------------------------------------------------------------- files_root and codebase: where files come from


def test_files_root_is_where_fixtures_are_read_from(tmp_path):
    suite = write(tmp_path, {})
    (suite.parent / "fixtures" / "app" / "docs").mkdir(parents=True)
    (suite.parent / "fixtures" / "app" / "docs" / "TASK.md").write_text("task")
    case = {**CASE, "files_root": "fixtures/app", "files": ["docs/TASK.md"]}
    assert errors(write(tmp_path, suite_of(case))) == []
    [d] = errors(write(tmp_path, suite_of({**case, "files": ["docs/MISSING.md"]})))
    assert d.path == "/evals/0/files/0" and "not found" in d.message


@pytest.mark.parametrize("root", ["../outside", "/etc", "fixtures/../../outside", "~/x", ".git"])
def test_files_root_that_escapes_is_refused(tmp_path, root):
    (tmp_path / "skill" / "outside").mkdir(parents=True)
    (tmp_path / "skill" / "outside" / "secret").write_text("s")
    suite = write(tmp_path, suite_of({**CASE, "files_root": root, "files": ["secret"]}))
    [d] = errors(suite)
    assert d.path == "/evals/0/files_root" and d.line == line_of(suite, '"files_root"')


def test_files_root_that_is_a_link_out_is_refused(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s")
    suite = write(tmp_path, {})
    os.symlink(tmp_path / "outside", suite.parent / "fixtures")
    [d] = errors(write(tmp_path, suite_of({**CASE, "files_root": "fixtures", "files": ["secret"]})))
    assert d.path == "/evals/0/files_root" and "link" in d.message


@pytest.mark.parametrize("path", ["../../fixtures/legacy-service", "/srv/projects/monolith"])
def test_codebase_path_outside_the_evals_folder_validates_as_in_eval_magic(tmp_path, path):
    """eval-magic's own examples (docs/guides/codebase.md): a codebase may be any folder of the
    machine. Valid; where it is not a folder here, a warning says a run of it fails."""
    for where, base in (("suite", ("codebase", "path")), ("case", ("evals", "0", "codebase", "path"))):
        data = (
            suite_of({**CASE, "codebase": {"path": path}})
            if where == "case"
            else suite_of(CASE, codebase={"path": path})
        )
        suite = write(tmp_path, data)
        assert errors(suite) == []
        [d] = [d for d in diagnostics(suite) if d.path == "/" + "/".join(base)]
        assert d.severity == "warning" and "not a folder here" in d.message and d.line == line_of(suite, '"path"')
    (tmp_path / "fixtures" / "legacy-service").mkdir(parents=True)
    suite = write(tmp_path, suite_of(CASE, codebase={"path": "../../fixtures/legacy-service"}))
    assert [d for d in diagnostics(suite) if "codebase" in d.path] == []


def test_a_codebase_naming_git_is_refused(tmp_path):
    suite = write(tmp_path, suite_of(CASE, codebase={"path": "app/.git"}))
    [d] = errors(suite)
    assert d.path == "/codebase/path" and ".git" in d.message


def test_codebase_path_inside_evals_is_clean_and_a_link_out_is_refused(tmp_path):
    suite = write(tmp_path, {})
    repo = suite.parent / "codebases" / "app"
    repo.mkdir(parents=True)
    (repo / "main.py").write_text("print(1)\n")
    data = suite_of(CASE, codebase={"path": "codebases/app"})
    assert errors(write(tmp_path, data)) == []
    os.symlink("/etc/passwd", repo / "passwd")
    [d] = errors(write(tmp_path, data))
    assert d.path == "/codebase/path" and "link" in d.message
