"""Other runners' files at our suites' places are skipped with a reason, never
reported as broken suites; the workbench's own workspace files are read as ours."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.cli import workbench

from workbench.validate.tree import validate_paths
from workbench.validate.validator import validate_file

FOREIGN = Path(__file__).parent / "foreign"
FOREIGN_FILES = sorted(p for p in FOREIGN.rglob("*") if p.suffix in (".json", ".yaml"))


def test_the_foreign_corpus_covers_each_place():
    names = {p.relative_to(FOREIGN).as_posix().split("/", 1)[1] for p in FOREIGN_FILES}
    assert {"evals/evals.json", "evals/suite.yaml", "evals/suite.json", "plan.json"} <= names
    assert len(FOREIGN_FILES) >= 12


@pytest.mark.parametrize("path", FOREIGN_FILES, ids=lambda p: p.relative_to(FOREIGN).as_posix())
@pytest.mark.parametrize("explicit", [False, True], ids=["walk", "named"])
def test_foreign_file_is_skipped_with_a_reason(path, explicit):
    report = validate_file(path, explicit=explicit)
    assert report.diagnostics == [] and report.dialect is None
    assert report.skipped and report.skipped.startswith("not a format the workbench reads")


def test_a_foreign_file_at_a_suite_place_says_what_it_lacks():
    report = validate_file(FOREIGN / "generic-suite-name/evals/suite.yaml")
    assert "policy_id" in report.skipped  # a `suite: smoke` key is not a chock suite
    report = validate_file(FOREIGN / "generic-evals-list/evals/evals.json")
    assert "prompt" in report.skipped


def test_cli_on_the_foreign_corpus_exits_zero_with_every_file_skipped():
    result = workbench("validate", FOREIGN, "--format", "json")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    files = json.loads(result.stdout)
    assert len(files) == len(FOREIGN_FILES)
    assert all(f["skipped"] and not f["diagnostics"] for f in files)


def test_a_foreign_suite_place_is_not_opened_as_a_suite(tmp_path):
    from workbench.session import SkillSession

    skill = tmp_path / "skill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: d\n---\nbody\n")
    (skill / "evals/suite.yaml").write_text((FOREIGN / "promptfoo-config/evals/suite.yaml").read_text())
    (skill / "evals/evals.json").write_text('{"skill_name": "skill", "evals": []}')
    assert [f.rel for f in SkillSession(skill).files] == ["SKILL.md", "evals/evals.json"]


PLAN = {
    "skill": "changelog-entry",
    "skill_path": "/skills/changelog-entry",
    "suite_file": "/skills/changelog-entry/evals/evals.json",
    "executor": "demo agent",
    "sandbox": "none",
    "warnings": [],
    "dispatches": [{"eval_id": "export", "configuration": "with_skill", "run_number": 1, "key": "6313"}],
}
RUN = {
    "key": "6313",
    "eval_id": "export",
    "configuration": "with_skill",
    "run_number": 1,
    "reused": False,
    "status": "done",
    "error": None,
    "turns": 1,
    "changed_files": ["CHANGELOG.md"],
}


def test_workspace_plan_and_run_are_ours(tmp_path):
    run_dir = tmp_path / "iteration-1/eval-export/with_skill/run-1"
    run_dir.mkdir(parents=True)
    (tmp_path / "iteration-1/plan.json").write_text(json.dumps(PLAN, indent=2))
    (run_dir / "run.json").write_text(json.dumps(RUN, indent=2))
    reports = {Path(r.file).name: r for r in validate_paths([tmp_path])}
    assert reports["plan.json"].dialect == "workbench-plan" and not reports["plan.json"].skipped
    assert reports["run.json"].dialect == "workbench-run" and not reports["run.json"].skipped
    assert all(not r.diagnostics for r in reports.values())
    # and checked, not just named: a plan with a broken dispatch is an error at its line
    broken = dict(PLAN, dispatches=[{"eval_id": "export", "configuration": "with_skill", "run_number": 0}])
    (tmp_path / "iteration-1/plan.json").write_text(json.dumps(broken, indent=2))
    errors = validate_file(tmp_path / "iteration-1/plan.json").diagnostics
    assert {d.path for d in errors} == {"/dispatches/0", "/dispatches/0/run_number"}
    assert all(d.line and d.line > 1 for d in errors)


@pytest.mark.slow  # 14 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_real_demo_run_leaves_nothing_skipped_or_wrong(tmp_path):
    """The files a real (offline demo) run writes are all read as ours."""
    from conftest import DEMO

    skill = tmp_path / "changelog-entry"
    shutil.copytree(DEMO, skill)
    result = workbench("run", skill, "--sandbox", "none", "--trust", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    reports = validate_paths([tmp_path / "changelog-entry-workspace"])
    names = {Path(r.file).name for r in reports}
    assert {"plan.json", "run.json", "grading.json", "benchmark.json"} <= names
    assert [r.file for r in reports if r.skipped and Path(r.file).name in ("plan.json", "run.json")] == []
    assert [(r.file, d.message) for r in reports for d in r.diagnostics if d.severity == "error"] == []
