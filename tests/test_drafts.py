"""Drafting eval cases: an agent drafts them into <suite>.drafts.json, never into
the suite; the drafts are validated like any suite; one joins the suite only
when a person accepts it in the editor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import workbench

from workbench.errors import Refused
from workbench.formats.drafts import drafts_path
from workbench.improve.drafts import parse

CASE = {
    "id": "draft-security-fix",
    "prompt": "I fixed the path traversal in upload.py. Changelog please.",
    "expected_output": "One line under Unreleased / Security.",
    "files": ["fixtures/export-json/CHANGELOG.md"],
    "assertions": [
        {
            "id": "read-changelog-first",
            "type": "transcript_check",
            "check": "tool_invocation_matches",
            "pattern": "^Read \\\\{.*CHANGELOG\\\\.md",
            "must_precede": "first_write",
        }
    ],
}

DRAFTER = r"""
import json, re, sys
brief = sys.stdin.read()
assert brief.startswith("# Draft eval cases") and "Ids already taken: export-json-flag" in brief
assert "- a user who only asks a question" in brief  # the person's example prompt
cases = [CASE, dict(CASE, id="draft-deprecation", prompt="We deprecated --csv. Note it?")]
token = re.findall(r'"token": "([0-9a-f]+)"', brief)[-1]
said = json.dumps({"token": token, "cases": cases})
print(json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": said}]}}))
print(json.dumps({"type": "result", "result": "", "session_id": "d", "cost_usd": 0.01}))
"""


def _draft(skill: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    drafter = tmp_path / "drafter.py"
    drafter.write_text(f"CASE = {json.dumps(CASE)!r}\nimport json as _j\nCASE = _j.loads(CASE)\n" + DRAFTER)
    args = ["draft-cases", skill, "--count", "2", "--example", "a user who only asks a question"]
    args += ["--proposer", "command", "--proposer-command", f"{sys.executable} {drafter}", "--sandbox", "none"]
    return workbench(*args, *extra)  # in this process: its output, exit codes and files are what is read


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_drafted_cases_go_to_a_drafts_file_beside_the_suite_and_validate(demo_copy, tmp_path):
    suite = demo_copy / "evals" / "evals.json"
    before = suite.read_bytes()
    refused = _draft(demo_copy, tmp_path)
    assert refused.returncode == 2 and "--trust" in refused.stderr and not drafts_path(suite).exists()
    done = _draft(demo_copy, tmp_path, "--trust")
    assert done.returncode == 0, done.stderr
    assert "2 case(s) drafted into" in done.stdout and "draft-security-fix" in done.stdout
    assert suite.read_bytes() == before  # never into the suite
    drafts = json.loads(drafts_path(suite).read_text())
    assert drafts["skill_name"] == "changelog-entry"
    assert [c["id"] for c in drafts["evals"]] == ["draft-security-fix", "draft-deprecation"]
    checked = workbench("validate", drafts_path(suite))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    again = _draft(demo_copy, tmp_path, "--trust")  # more drafts are added to the same file
    assert again.returncode == 0 and len(json.loads(drafts_path(suite).read_text())["evals"]) == 4


def test_an_answer_without_cases_is_an_error():
    with pytest.raises(Refused, match='no {"token": <the brief\'s>, "cases": \\[...\\]}'):
        parse("I could not think of any.", "5f0c" * 8)


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("content", ["{}", "[]", '"str"', "null", "LINK"])
def test_a_drafts_file_of_another_shape_or_a_link_is_refused_cleanly(demo_copy, tmp_path, content):
    """Found by an attacker: these gave tracebacks, and a linked drafts file was read through its link."""
    target = drafts_path(demo_copy / "evals" / "evals.json")
    outside = tmp_path / "outside.json"
    outside.write_text('{"skill_name": "x", "evals": []}')
    if content == "LINK":
        target.symlink_to(outside)
    else:
        target.write_text(content)
    done = _draft(demo_copy, tmp_path, "--trust")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert outside.read_text() == '{"skill_name": "x", "evals": []}'
