"""`workbench init`: a skill from nothing, valid as written, in each dialect."""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML
from support import process
from support.cli import workbench

from workbench.validate.tree import validate_paths


def _init(*args, cwd):
    """`workbench init`, in this process: what it writes and says are what these tests read."""
    return workbench("init", *args, cwd=cwd)


@pytest.mark.parametrize("dialect", ["slow-powers", "skill-creator", "chock"])
def test_init_writes_a_skill_that_validates_clean(tmp_path, dialect):
    done = _init(tmp_path / "skills", "--name", "tidy-imports", "--dialect", dialect, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    skill = tmp_path / "skills" / "tidy-imports"
    assert "name: tidy-imports" in (skill / "SKILL.md").read_text()
    reports = validate_paths([skill], None)
    assert len(reports) == 2 and not [d for r in reports for d in r.diagnostics], [
        d.compiler_line(r.file) for r in reports for d in r.diagnostics
    ]


def test_the_first_suites_hold_an_example_of_each_kind(tmp_path):
    _init(tmp_path / "a", "--name", "a-skill", cwd=tmp_path)
    suite = json.loads((tmp_path / "a" / "a-skill" / "evals" / "evals.json").read_text())
    kinds = {a["type"] for case in suite["evals"] for a in case["assertions"]}
    assert kinds == {"transcript_check", "command_check", "diff_scope", "llm_judge"}  # the slow-powers kinds
    assert any(case.get("skill_should_trigger") is False for case in suite["evals"])
    _init(tmp_path / "c", "--name", "c-skill", "--dialect", "chock", cwd=tmp_path)
    cases = YAML().load((tmp_path / "c" / "c-skill" / "evals" / "suite.yaml").read_text())["eval_suite"]["test_cases"]
    assert {case["category"] for case in cases} == {"trigger", "negative_trigger", "behavior"}


@pytest.mark.e2e  # its exit codes as a shell meets them: a real process
def test_init_never_overwrites_and_names_are_the_specs(tmp_path):
    skill = tmp_path / "my-skill"
    assert process.run("init", skill, cwd=tmp_path).returncode == 0
    (skill / "SKILL.md").write_text("mine\n")
    again = process.run("init", skill, cwd=tmp_path)
    assert again.returncode == 2 and "already there" in again.stderr
    assert (skill / "SKILL.md").read_text() == "mine\n"
    bad = _init(tmp_path / "My_Skill", cwd=tmp_path)
    assert bad.returncode == 2 and "try --name my-skill" in bad.stderr and not (tmp_path / "My_Skill").exists()
