"""`workbench validate`: its output formats and exit codes are a contract."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from conftest import DEMO, MISTAKES
from support import process
from support.cli import workbench


def run(*args, cwd=None):
    """`workbench validate`, in this process: its output and exit code are what these tests read."""
    return workbench("validate", *args, cwd=cwd)


@pytest.mark.e2e  # the contract as a shell meets it: a real process, its exit status and its output
def test_clean_skill_exits_zero_with_a_summary():
    result = process.run("validate", DEMO)
    assert result.returncode == 0
    assert result.stdout.strip().splitlines()[-1] == "5 files checked: 0 errors · 0 warnings"


@pytest.mark.e2e
def test_errors_exit_one_with_compiler_style_lines():
    result = process.run("validate", MISTAKES / "evals" / "evals.json")
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    pattern = re.compile(
        r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning): .+ \[(?P<ptr>/[^\]]*)\]$"
    )
    diagnostics = [pattern.match(line) for line in lines[:-1]]
    assert all(diagnostics), lines
    assert {m["ptr"] for m in diagnostics} >= {"/evals/1/turns/1/deliver_when", "/evals/2/id"}
    assert re.fullmatch(r"1 file checked: \d+ errors · 1 warning", lines[-1])


def test_json_format_lists_every_file_with_its_diagnostics():
    result = run(MISTAKES, "--format", "json")
    assert result.returncode == 1
    files = json.loads(result.stdout)
    assert {f["dialect"] for f in files} == {"skill-md", "slow-powers", "skill-creator", "chock"}
    for entry in files:
        assert set(entry) >= {"file", "dialect", "diagnostics"}
        for d in entry["diagnostics"]:
            assert set(d) == {"severity", "path", "line", "column", "message"}
            assert d["severity"] in ("error", "warning") and d["line"] >= 1 and d["column"] >= 1


def test_warnings_alone_exit_zero(tmp_path):
    suite = tmp_path / "evals" / "suite.yaml"
    suite.parent.mkdir()
    suite.write_text(
        "suite:\n  id: s\n  policy_id: p\n  metrics: {}\n  cases:\n"
        + "".join(f"  - {{id: c{i}, category: {c}, prompt: p, expect: e}}\n" for i, c in enumerate(CATEGORIES))
    )
    result = run(suite)
    assert result.returncode == 0
    assert "warning: no trigger case" in result.stdout


CATEGORIES = ("negative_trigger", "behavior", "edge")


def test_chock_category_rule_is_an_error_as_in_chock(tmp_path):
    """chock refuses a suite without a negative_trigger or behavior case: so do we (exit 1)."""
    suite = tmp_path / "evals" / "suite.yaml"
    suite.parent.mkdir()
    suite.write_text(
        "suite:\n  id: s\n  policy_id: p\n  metrics: {}\n  cases:\n"
        + "".join(f"  - {{id: c{i}, category: edge, prompt: p, expect: e}}\n" for i in range(3))
    )
    result = run(suite)
    assert result.returncode == 1
    assert "suite.yaml:5:3: error: no trigger or negative_trigger or behavior case" in result.stdout


def test_missing_path_is_a_usage_problem(tmp_path):
    result = run(tmp_path / "nope")
    assert result.returncode == 2
    assert "nope" in result.stderr and "Traceback" not in result.stderr


def test_unknown_dialect_is_a_usage_problem():
    result = run(DEMO, "--dialect", "yaml-magic")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_dialect_overrides_detection(tmp_path):
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "evals.json").write_text(
        json.dumps({"skill_name": "x", "evals": [{"id": "a", "prompt": "p", "expected_output": "e"}]})
    )
    assert run(evals / "evals.json").returncode == 0
    forced = run(evals / "evals.json", "--dialect", "skill-creator", "--format", "json")
    assert forced.returncode == 1
    [entry] = json.loads(forced.stdout)
    assert entry["dialect"] == "skill-creator"
    assert [d["path"] for d in entry["diagnostics"] if d["severity"] == "error"] == ["/evals/0/id"]


def test_unknown_files_are_listed_as_skipped(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "x"}')
    (tmp_path / "notes.yaml").write_text("a: [1,\n")  # broken, but not ours to judge
    result = run(tmp_path)
    assert result.returncode == 0
    assert "package.json: skipped: not a format the workbench reads" in result.stdout
    assert "notes.yaml: skipped" in result.stdout
    assert "0 files checked: 0 errors · 0 warnings · 2 skipped" in result.stdout


def test_default_path_is_the_current_folder():
    result = run(cwd=DEMO)
    assert result.returncode == 0
    assert "5 files checked" in result.stdout


def test_walk_skips_git_and_node_modules(tmp_path):
    for folder in (".git", "node_modules"):
        (tmp_path / folder / "evals").mkdir(parents=True)
        (tmp_path / folder / "evals" / "evals.json").write_text("{broken")
    result = run(tmp_path)
    assert result.returncode == 0 and "0 files checked" in result.stdout


def test_an_unreadable_file_is_reported_and_the_walk_goes_on(tmp_path):
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "evals.json").symlink_to(tmp_path / "gone.json")  # dangling: listed, but unreadable
    (evals / "suite.yaml").write_text("evals: [\n")
    result = run(tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "evals/evals.json:1:1: error: cannot be read: a broken link to" in result.stdout
    assert "evals/suite.yaml:2:1: error: invalid YAML" in result.stdout


def test_grade_and_report_of_an_iteration_named_relative_to_here(tmp_path, monkeypatch):
    """`workbench grade ws/iteration-1` typed where the workspace is: every run is graded (the run's changes
    were measured by git in a folder of its own, where the relative path named nothing: all "not graded"); and
    a folder whose name is not UTF-8 beside them is written escaped in the JSON report, not a traceback."""
    skill = tmp_path / "changelog-entry"
    shutil.copytree(DEMO, skill)
    monkeypatch.chdir(tmp_path)
    ran = workbench("run", "changelog-entry", "--only", "export-json-flag", "--trust", "--yes")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    graded = workbench("grade", "changelog-entry-workspace/iteration-1")
    assert graded.returncode == 0 and "not graded" not in graded.stdout, graded.stdout[-2000:]
    iteration = tmp_path / "changelog-entry-workspace" / "iteration-1"
    os.rename(iteration / "eval-export-json-flag", os.fsencode(iteration) + b"/eval-\xff")
    said = workbench("report", "changelog-entry-workspace/iteration-1", "--format", "json")
    assert "Traceback" not in said.stderr and "eval-\\\\xff" in said.stdout, said.stderr[-2000:]
    json.loads(said.stdout)
