"""Bad state is an error, never a pass: a grading.json that is truncated, empty,
`[]`, of the wrong types, or whose summary disagrees with its expectations makes
its run an error in benchmark.json, `report` (exit 2), JUnit (an error element)
and the review the Results screen shows; a missing one too."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import DEMO
from support import process
from support.cli import workbench
from test_kills import RUN_ARGS, small_demo

from workbench.errors import EXIT_USAGE
from workbench.grading.benchmark import aggregate, read_results
from workbench.grading.review import build, outcome
from workbench.workspace import layout

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def iteration(tmp_path_factory) -> Path:
    """One iteration of the small demo (three evals, both configurations: six runs; offline demo agent
    and judge), run once for this file; tests copy it. Most tests here damage one run and grade or
    report the whole iteration again: the demo's 22 runs made each grade several times as long, for
    siblings that only stand beside the damaged one."""
    base = tmp_path_factory.mktemp("small-run")
    skill = small_demo(base)
    done = workbench("run", skill, *RUN_ARGS, cwd=base, env=_environment(base))
    assert done.returncode == 0, done.stdout + done.stderr
    return base / "changelog-entry-workspace" / "iteration-1"


CORRUPT = {
    "truncated": lambda text: text[: len(text) // 2],
    "empty": lambda text: "",
    "an empty array": lambda text: "[]",
    "wrong types": lambda text: json.dumps({**json.loads(text), "expectations": "all passed"}),
    "a summary that lies": lambda text: json.dumps(
        {**json.loads(text), "summary": {"passed": 99, "failed": 0, "total": 99, "pass_rate": 1.0}}
    ),
    "a timing that is not a number": lambda text: json.dumps(
        {**json.loads(text), "timing": {"executor_duration_seconds": "slow"}}
    ),
    "missing": None,
}


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("how", list(CORRUPT))
def test_a_corrupt_grading_is_an_error_everywhere_never_a_pass(iteration, tmp_path, how):
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy)
    (copy / layout.BENCHMARK).unlink()  # as after a crash between grading and aggregating
    # Every with-skill run passed: the iteration is green until one grading is damaged.
    assert _workbench(tmp_path, "report", str(copy)).returncode == 0
    target = next(Path(r.path) / layout.GRADING for r in layout.runs(copy) if r.configuration == "with_skill")
    corrupt = CORRUPT[how]
    if corrupt is None:
        target.unlink()
    else:
        target.write_text(corrupt(target.read_text()))

    results = read_results(copy)
    assert len(results) == len(layout.runs(copy))  # no run skipped
    [bad] = [r for r in results if r.grading.get("unusable")]
    assert str(target) in bad.grading["run_error"]
    benchmark = aggregate(results, {})
    assert sum(1 for run in benchmark["runs"] if run.get("grading_unusable")) == 1
    assert outcome(build(results)) == EXIT_USAGE

    report = _workbench(tmp_path, "report", str(copy))
    assert report.returncode == 2, report.stdout
    assert "Traceback" not in report.stderr
    assert "error (no usable grading)" in report.stdout or "+1 error" in report.stdout
    junit = _workbench(tmp_path, "report", str(copy), "--format", "junit")
    assert junit.returncode == 2
    errors = ET.fromstring(junit.stdout).findall(".//testcase[@name='grading']/error")
    assert len(errors) == 1 and str(target) in (errors[0].text or "")


def test_a_truncated_grading_says_where(iteration, tmp_path):
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy)
    target = Path(layout.runs(copy)[0].path) / layout.GRADING
    target.write_text('{"expectations": [\n  {"text": "x", "passed": tr')
    [bad] = [r for r in read_results(copy) if r.grading.get("unusable")]
    assert f"{target}:2:27: invalid JSON" in bad.grading["run_error"]


def _environment(cwd: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "WORKBENCH_CONFIG_DIR": str(cwd / "config")}


def _workbench(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The command line, in this process (what these tests check is its output, exit code and files)."""
    return workbench(*args, cwd=cwd, env=_environment(cwd))


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"v0": {"iteration": 1,\n  "rates": {', ":2:13: error: invalid JSON"),
        ('{"v0": 3}', ":1:2: error"),
        # The figures a decision is made from: once a traceback after a whole evaluation, or taken as they were.
        ('{"v0": {"iteration": 1, "evals": {"export-json-flag": "x"}}}', ":1:35: error: expected a pass rate"),
        ('{"v0": {"iteration": 1, "evals": {"export-json-flag": 1e308}}}', ":1:35: error: expected a pass rate"),
        ('{"v0": {"iteration": 1, "evals": {"export-json-flag": -5}}}', ":1:35: error: expected a pass rate"),
        ('{"v0": {"iteration": "abc"}}', ":1:9: error: expected the number of an iteration"),
    ],
)
def test_a_broken_evaluations_json_is_said_and_never_overwritten(tmp_path, text, where):
    skill = tmp_path / "changelog-entry"
    shutil.copytree(DEMO, skill)
    assert _workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    evaluations = tmp_path / "changelog-entry-workspace" / "evaluations.json"
    evaluations.write_text(text)
    for command in (("history", str(skill)), ("evaluate", str(skill), "v0", "--sandbox", "none", "--trust")):
        result = _workbench(tmp_path, *command)
        assert result.returncode == 2, result.stdout + result.stderr
        assert f"{evaluations}{where}" in result.stderr and "Traceback" not in result.stderr
    assert evaluations.read_text() == text  # read as empty, the evaluation would have replaced it
    assert not (tmp_path / "changelog-entry-workspace" / "iteration-1").exists()  # nothing ran


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_truncated_transcript_is_an_error_when_grading(iteration, tmp_path):
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy)
    run = next(Path(r.path) for r in layout.runs(copy) if r.configuration == "with_skill")
    transcript = run / layout.TRANSCRIPT
    lines = transcript.read_text().splitlines(keepends=True)
    assert len(lines) > 2
    transcript.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2])  # a kill mid-write
    result = _workbench(tmp_path, "grade", str(copy), "--trust")
    assert result.returncode == 2, result.stdout + result.stderr
    grading = json.loads((run / layout.GRADING).read_text())
    assert f"{transcript}:3:" in grading["run_error"] and "cut short" in grading["run_error"]
    assert grading["summary"]["passed"] == 0  # nothing passed on half the evidence


def _damage(store: Path, how: str) -> None:
    if how == "HEAD":
        (store / "HEAD").write_text("garbage\n")
    elif how == "an object":
        victim = next(p for p in sorted((store / "objects").rglob("*")) if p.is_file() and len(p.parent.name) == 2)
        victim.chmod(0o644)
        victim.write_bytes(b"")
    elif how == "a FIFO for a tag":  # found by an attacker: git blocked on it, and every command with it
        (store / "refs" / "tags" / "v1").unlink()
        os.mkfifo(store / "refs" / "tags" / "v1")
    else:
        (store / "refs" / "tags" / "v0").write_text("0" * 40 + "\n")


@pytest.mark.parametrize("how", ["HEAD", "an object", "a tag", "a FIFO for a tag"])
def test_a_damaged_versions_repository_is_one_clear_error_everywhere(tmp_path, how):
    skill = tmp_path / "changelog-entry"
    shutil.copytree(DEMO, skill)
    assert _workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nOne more line.\n")
    assert _workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    store = tmp_path / "changelog-entry-workspace" / "versions.git"
    _damage(store, how)
    for command in (
        ("history", str(skill)),
        ("version", "new", str(skill)),
        ("evaluate", str(skill), "v1", "--sandbox", "none", "--trust"),
        ("promote", str(skill), "v1"),
    ):
        result = _workbench(tmp_path, *command)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
        assert f"{store}:1:1: error: the versions repository is damaged" in result.stderr, result.stderr


# Found by an attacker: each of these once let `report` exit 0 or gave a traceback.
TAMPERED = {
    "a grading deleted after benchmark.json": lambda run, it: (run / layout.GRADING).unlink(),
    "a grading replaced by a folder": lambda run, it: ((run / layout.GRADING).unlink(), (run / layout.GRADING).mkdir()),
    "a grading with no expectations": lambda run, it: (run / layout.GRADING).write_text(
        json.dumps({"expectations": [], "summary": {"passed": 0, "failed": 0, "total": 0, "pass_rate": 0.0}})
    ),
    "a grading whose run_number is text": lambda run, it: (run / layout.GRADING).write_text(
        json.dumps({**json.loads((run / layout.GRADING).read_text()), "run_number": "abc"})
    ),
    "a grading whose triggering is a number": lambda run, it: (run / layout.GRADING).write_text(
        json.dumps({**json.loads((run / layout.GRADING).read_text()), "triggering": 5})
    ),
    "plan.json cut short": lambda run, it: (it / layout.PLAN).write_text((it / layout.PLAN).read_text()[:50]),
}


@pytest.mark.parametrize("how", list(TAMPERED))
def test_tampered_run_state_is_an_error_never_a_pass(iteration, tmp_path, how):
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy)
    assert _workbench(tmp_path, "report", str(copy)).returncode == 0
    run = next(Path(r.path) for r in layout.runs(copy) if r.configuration == "with_skill")
    TAMPERED[how](run, copy)
    for fmt in ("text", "json", "junit"):
        result = _workbench(tmp_path, "report", str(copy), "--format", fmt)
        assert result.returncode == 2, (fmt, result.stdout[-2000:], result.stderr)
        assert "Traceback" not in result.stderr


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_an_empty_or_missing_transcript_of_a_finished_run_is_an_error(iteration, tmp_path):
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy)
    runs = [Path(r.path) for r in layout.runs(copy) if r.configuration == "without_skill"][:2]
    (runs[0] / layout.TRANSCRIPT).write_text("")
    (runs[1] / layout.TRANSCRIPT).unlink()
    result = _workbench(tmp_path, "grade", str(copy), "--trust")
    assert result.returncode == 2, result.stdout + result.stderr
    for run in runs:
        grading = json.loads((run / layout.GRADING).read_text())
        assert "missing or empty" in grading["run_error"] and grading["summary"]["passed"] == 0


def test_a_versions_repository_with_a_broken_config_or_no_head_is_one_clear_error(tmp_path):
    skill = tmp_path / "changelog-entry"
    shutil.copytree(DEMO, skill)
    assert _workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    store = tmp_path / "changelog-entry-workspace" / "versions.git"
    config = (store / "config").read_text()
    for damage in ("config", "HEAD"):
        if damage == "config":
            (store / "config").write_text("[[[\n")
        else:
            (store / "config").write_text(config)
            (store / "HEAD").unlink()
        result = _workbench(tmp_path, "history", str(skill))
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert f"{store}:1:1: error: the versions repository is damaged" in result.stderr, result.stderr


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("name", [layout.DIFF, layout.GRADING, layout.BENCHMARK, layout.BENCHMARK_MD])
def test_a_folder_where_grade_writes_a_file_is_a_message_not_a_traceback(iteration, tmp_path, name):
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy)
    run = next(Path(r.path) for r in layout.runs(copy) if r.configuration == "with_skill")
    where = (copy if name.startswith("benchmark") else run) / name
    where.unlink(missing_ok=True)
    (where / "planted").mkdir(parents=True)
    result = _workbench(tmp_path, "grade", str(copy), "--trust")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert f"workbench grade: {where}" in result.stderr and "a folder where a file belongs" in result.stderr
    assert (where / "planted").is_dir()  # nothing of the person's is removed to make room


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_grading_cut_after_benchmark_json_with_its_time_set_back_is_still_an_error(iteration, tmp_path):
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy)
    assert _workbench(tmp_path, "grade", str(copy), "--trust").returncode == 0
    assert _workbench(tmp_path, "report", str(copy)).returncode == 0
    run = next(Path(r.path) for r in layout.runs(copy) if r.configuration == "with_skill")
    grading = run / layout.GRADING
    before = grading.stat()
    time.sleep(0.01)  # the cut comes later than benchmark.json, whatever its stamps say
    grading.write_text(grading.read_text()[:40])
    os.utime(grading, ns=(before.st_atime_ns, before.st_mtime_ns))
    result = _workbench(tmp_path, "report", str(copy))
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr


def test_a_run_killed_before_its_run_json_is_named_by_its_folder(demo_run_made, tmp_path):
    # The demo's iteration: its first with-skill run has a sibling in its cell (its `+1 error`).
    copy = tmp_path / "iteration-1"
    shutil.copytree(demo_run_made, copy)
    run = next(r for r in layout.runs(copy) if r.configuration == "with_skill")
    (Path(run.path) / layout.RUN_RECORD).unlink()
    (Path(run.path) / layout.GRADING).unlink()
    result = _workbench(tmp_path, "report", str(copy), "--format", "json")
    assert result.returncode == 2, result.stderr
    assert "None" not in result.stdout
    report = json.loads(result.stdout)
    assert report["errors"] == 1 and run.case_id in [e["eval_id"] for e in report["evals"]]
    text = _workbench(tmp_path, "report", str(copy)).stdout
    assert "None" not in text, text
    assert any(line.startswith(f"{run.case_id} ") and "+1 error" in line for line in text.splitlines()), text


# A FIFO where an artifact goes: (report's exit code, grade's). An error where the file is
# evidence; 0 where grade writes the file anew (its atomic write replaces the FIFO).
FIFO_AT = {
    layout.GRADING: (2, 0),
    layout.RUN_RECORD: (2, 2),
    layout.TRANSCRIPT: (0, 2),
    layout.DIFF: (0, 0),
    layout.PLAN: (2, 2),
    layout.BENCHMARK: (0, 0),
}


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("name", list(FIFO_AT))
def test_a_fifo_among_the_artifacts_is_an_error_never_a_hang(iteration, tmp_path, name):
    # Found by a fault injector: `report` and `grade` blocked forever opening a FIFO named like an artifact.
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy)
    run = next(Path(r.path) for r in layout.runs(copy) if r.configuration == "with_skill")
    where = (copy if name in (layout.PLAN, layout.BENCHMARK) else run) / name
    where.unlink(missing_ok=True)
    os.mkfifo(where)
    for command, code in zip((("report", str(copy)), ("grade", str(copy), "--trust")), FIFO_AT[name], strict=True):
        try:
            # A real process: a hang is its timeout, where this process would wait forever.
            result = process.run(*command, cwd=tmp_path, env=_environment(tmp_path), timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`workbench {command[0]}` hung on a FIFO named {name}")
        assert result.returncode == code, (command, result.stdout[-1500:], result.stderr)
        assert "Traceback" not in result.stderr, result.stderr


@pytest.mark.slow  # 20 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_run_whose_repository_lost_its_git_is_measured_from_its_own_baseline(iteration, tmp_path):
    # Found by an attacker, once: without repo/.git, diff_scope measured "0 files touched" and a failed eval
    # passed. The run keeps its own baseline beside the repository (<run>/trees): the .git is the agent's.
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy, symlinks=True)
    run = next(
        Path(r.path)
        for r in layout.runs(copy)
        if r.configuration == "without_skill" and (Path(r.path) / "repo").is_dir()
    )
    assert _workbench(tmp_path, "grade", str(copy), "--trust").returncode in (0, 1)
    before = json.loads((run / layout.GRADING).read_text())["expectations"]
    shutil.rmtree(run / "repo" / ".git")
    (run / layout.GRADING).unlink()
    _workbench(tmp_path, "grade", str(copy), "--trust")
    after = json.loads((run / layout.GRADING).read_text())["expectations"]
    assert [(e["passed"], e["evidence"]) for e in after] == [(e["passed"], e["evidence"]) for e in before]


@pytest.mark.slow  # 12 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_run_that_lost_its_baseline_is_an_error_not_zero_changes(iteration, tmp_path):
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy, symlinks=True)
    run = next(
        Path(r.path)
        for r in layout.runs(copy)
        if r.configuration == "without_skill" and (Path(r.path) / "repo").is_dir()
    )
    shutil.rmtree(run / "repo" / ".git")
    shutil.rmtree(run / layout.TREES)
    result = _workbench(tmp_path, "grade", str(copy), "--trust")
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr
    grading = json.loads((run / layout.GRADING).read_text())
    assert ".git: missing" in grading["run_error"] and grading["summary"]["passed"] == 0


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_grade_never_follows_a_run_repository_that_is_a_link(iteration, tmp_path):
    # Found by an attacker: a run's repo linked to another repository had its .git/config rewritten.
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy, symlinks=True)
    run = next(Path(r.path) for r in layout.runs(copy) if (Path(r.path) / "repo").is_dir())
    victim = tmp_path / "victim"
    shutil.move(str(run / "repo"), victim)
    config = (victim / ".git" / "config").read_text() + "[custom]\n\tkeep = yes\n"
    (victim / ".git" / "config").write_text(config)
    (victim / "untracked.txt").write_text("mine\n")
    (run / "repo").symlink_to(victim)
    result = _workbench(tmp_path, "grade", str(copy), "--trust")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert (victim / ".git" / "config").read_text() == config
    status = subprocess.run(["git", "status", "--porcelain"], cwd=victim, capture_output=True, text=True).stdout
    assert "?? untracked.txt" in status  # not staged by us


# A planned run's run.json that is not the record of a finished run, beside an intact grading.json
# (found: reported as a normal finished run, 100 %, exit 0).
RECORD_DAMAGE = {
    "missing": lambda record: record.unlink(),
    "cut short": lambda record: record.write_text(record.read_text()[:40]),
    "empty": lambda record: record.write_text(""),
    "not an object": lambda record: record.write_text("[]"),
    "of a run not finished": lambda record: record.write_text(
        json.dumps({**json.loads(record.read_text()), "status": "running"})
    ),
    "of another run": lambda record: record.write_text(json.dumps({**json.loads(record.read_text()), "key": "0" * 64})),
    "a folder": lambda record: (record.unlink(), record.mkdir()),
}


@pytest.mark.parametrize("how", list(RECORD_DAMAGE))
def test_a_planned_run_without_a_readable_run_json_is_an_error_whatever_its_grading_says(demo_run_made, tmp_path, how):
    from conftest import copy_prepared

    copy_prepared(demo_run_made.parent.parent, tmp_path / "made")  # benchmark.json up to date, as `run` left it
    copy = tmp_path / "made" / "changelog-entry-workspace" / "iteration-1"
    assert _workbench(tmp_path, "report", str(copy)).returncode == 0
    run = next(Path(r.path) for r in layout.runs(copy) if r.configuration == "with_skill")
    grading = (run / layout.GRADING).read_bytes()
    RECORD_DAMAGE[how](run / layout.RUN_RECORD)
    for fmt in ("text", "json", "junit"):
        result = _workbench(tmp_path, "report", str(copy), "--format", fmt)
        assert result.returncode == 2, (fmt, result.stdout[-2000:], result.stderr)
        assert "Traceback" not in result.stderr
        if fmt == "junit":
            errors = [e for e in ET.fromstring(result.stdout).iter("error") if str(run) in (e.text or "")]
            assert errors and "cannot be used" in errors[0].get("message", ""), result.stdout[-2000:]
        if fmt == "json":
            report = json.loads(result.stdout)
            assert report["errors"] >= 1
            assert any(str(run) in f["evidence"] for f in report["failures"] if f["id"] == "grading")
    review = build(read_results(copy))  # what the Results screen shows (tests/tui: the screen itself)
    assert review.errors >= 1 and outcome(review) == EXIT_USAGE
    assert (run / layout.GRADING).read_bytes() == grading  # the grading is intact: the record decides


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_git_lock_left_in_a_runs_repository_does_not_stop_grading(iteration, tmp_path):
    """Found by the kill test, once: a grading killed during its `git add` left .git/index.lock, and every later
    grade of that run failed. No git runs in the agent's repository any more: its .git is the agent's."""
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy)
    run = next(Path(r.path) for r in layout.runs(copy) if r.configuration == "with_skill")
    (run / layout.GRADING).unlink()
    (run / layout.REPO / ".git" / "index.lock").write_text("")  # as git leaves it when killed
    (run / layout.REPO / ".git" / "index").write_text("not an index")
    result = _workbench(tmp_path, "grade", str(copy), "--trust")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads((run / layout.GRADING).read_text())["summary"]["total"] > 0


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_run_whose_own_store_is_damaged_is_said_for_that_run_not_a_traceback(iteration, tmp_path):
    copy = tmp_path / "iteration-1"
    shutil.copytree(iteration, copy)
    run = next(Path(r.path) for r in layout.runs(copy) if r.configuration == "with_skill")
    (run / layout.GRADING).unlink()
    for loose in (run / layout.TREES / "objects").rglob("*"):
        if loose.is_file():
            loose.chmod(0o644)
            loose.write_bytes(b"damaged")
    result = _workbench(tmp_path, "grade", str(copy), "--trust")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stdout + result.stderr
    grading = json.loads((run / layout.GRADING).read_text())
    assert "the run's changes cannot be measured" in grading["run_error"], grading["run_error"]


def test_the_plans_run_folders_are_named_as_the_runs_are(tmp_path):
    """benchmark.py names a planned run's folder without Paths (10,000 of them per report): as run_dir does."""
    from workbench.grading.benchmark import _planned

    ids = ["export-json-flag", "a b", "x/y", "Ünïcode", "..", "50%", 7]
    dispatches = [{"eval_id": i, "configuration": c, "run_number": 2} for i in ids for c in ("with_skill", "odd/one")]
    (tmp_path / layout.PLAN).write_text(json.dumps({"dispatches": dispatches}))
    planned, problem = _planned(tmp_path)
    assert problem is None
    assert sorted(planned) == sorted(
        layout.run_dir(Path(), str(d["eval_id"]), d["configuration"], 2).as_posix() for d in dispatches
    )
