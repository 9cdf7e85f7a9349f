"""Nothing graded is ever lost: `grade` checks that its judge can run (its
program is there and starts, its key is set) before it touches anything, and a
judge that fails midway leaves every grading it could not redo as it was, byte
for byte, with benchmark.json and benchmark.md; the command says why and exits
2. skill-creator's own gradings (their claims, their verdicts) are never
rewritten by a judge that failed."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, copy_prepared
from support.cli import workbench

from workbench.workspace import layout

FIXTURE = Path(__file__).parent / "skill_creator_made"


def _workbench(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The command line, in this process: its output, exit codes and files are what these tests read."""
    environment = {**os.environ, "PYTHONPATH": str(REPO), "WORKBENCH_CONFIG_DIR": str(cwd / "config"), **(env or {})}
    return workbench(*args, cwd=cwd, env=environment)


def _state(iteration: Path) -> dict[str, str]:
    """Every file of the iteration's gradings and benchmark, by its bytes."""
    names = {layout.GRADING, layout.BENCHMARK, layout.BENCHMARK_MD}
    return {
        str(p.relative_to(iteration)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(iteration.rglob("*"))
        if p.name in names
    }


@pytest.fixture
def theirs(tmp_path) -> Path:
    """skill-creator's iteration (run-k folders, grader.md's gradings with claims), in a private copy."""
    import shutil

    shutil.copytree(FIXTURE, tmp_path / "made")
    return tmp_path / "made" / "changelog-entry-workspace" / "iteration-1"


@pytest.fixture
def ours(demo_run_made, tmp_path) -> Path:
    """The demo's iteration (demo agent and judge), with its skill, in a private copy."""
    copy_prepared(demo_run_made.parent.parent, tmp_path / "ours")
    return tmp_path / "ours" / "changelog-entry-workspace" / "iteration-1"


# Judges that cannot run at all, and what `grade` says of each.
UNREACHABLE = {
    "Claude Code missing": (["--judge", "claude"], {"WORKBENCH_CLAUDE": "/nonexistent/claude"}, "cannot start"),
    "Claude Code that does not start": (["--judge", "claude"], {"WORKBENCH_CLAUDE": "/bin/false"}, "did not start"),
    "no API key": (["--judge", "anthropic"], {"ANTHROPIC_API_KEY": ""}, "ANTHROPIC_API_KEY is not set"),
    "a judge command's program missing": (
        ["--judge", "command", "--judge-command", "no-such-judge-program --rubric"],
        {},
        "'no-such-judge-program' is not found",
    ),
    "a judge command that is not bash": (
        ["--judge", "command", "--judge-command", "if then"],
        {},
        "is not valid bash",
    ),
}


@pytest.mark.parametrize("which", ["theirs", "ours"])
@pytest.mark.parametrize("judge", list(UNREACHABLE))
def test_a_judge_that_cannot_run_changes_nothing_and_says_why(request, which, judge):
    iteration = request.getfixturevalue(which)
    options, env, said = UNREACHABLE[judge]
    before = _state(iteration)
    assert len(before) > 4 and (which == "theirs" or layout.BENCHMARK in before)  # theirs has none: none is made
    result = _workbench(iteration.parent.parent, "grade", iteration, *options, "--trust", env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert said in result.stderr and "cannot start" in result.stderr and "Traceback" not in result.stderr
    assert "Nothing was graded: every grading.json and benchmark.json" in result.stderr
    assert _state(iteration) == before


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_suite_with_nothing_for_a_judge_is_graded_without_one(ours):
    suite = ours.parent.parent / "changelog-entry" / "evals" / "evals.json"
    data = json.loads(suite.read_text())
    for case in data["evals"]:
        case["assertions"] = [a for a in case["assertions"] if a["type"] != "llm_judge"]
    suite.write_text(json.dumps(data))
    result = _workbench(ours.parent.parent, "grade", ours, "--trust", env={"WORKBENCH_CLAUDE": "/nonexistent/claude"})
    assert "cannot start" not in result.stderr and result.returncode in (0, 1), result.stdout + result.stderr


def _failing_after(tmp_path: Path, answers: int) -> str:
    """A judge command that gives `answers` verdicts (passed, with the question's token), then fails."""
    count = tmp_path / "calls"
    return (
        f"n=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )); echo $n > {count}; "
        f'if [ $n -le {answers} ]; then echo "{{\\"token\\": \\"$WORKBENCH_JUDGE_TOKEN\\", \\"passed\\": true}}"; '
        "else echo 'the model is overloaded' >&2; exit 3; fi"
    )


def test_a_judge_that_fails_on_skill_creator_gradings_never_rewrites_them(theirs, tmp_path):
    before = _state(theirs)
    claims = {p: json.loads(p.read_text()).get("claims") for p in theirs.glob("eval-*/*/run-*/grading.json")}
    assert any(claims.values())
    judge = ["--judge", "command", "--judge-command", _failing_after(tmp_path, 0)]
    result = _workbench(theirs.parent.parent, "grade", theirs, *judge, "--trust")
    assert result.returncode == 2, result.stdout + result.stderr
    assert _state(theirs) == before  # their verdicts, claims and benchmark, byte for byte
    assert "8 run(s) kept their earlier grading" in result.stderr
    assert "exited with status 3" in result.stderr and "benchmark.json and benchmark.md" in result.stderr


@pytest.mark.slow  # 26 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_judge_failing_midway_keeps_every_grading_it_could_not_redo(ours, tmp_path):
    before = _state(ours)
    judge = ["--judge", "command", "--judge-command", _failing_after(tmp_path, 3)]
    result = _workbench(ours.parent.parent, "grade", ours, "-j", "1", *judge, "--trust")
    assert result.returncode == 2, result.stdout + result.stderr
    after = _state(ours)
    kept = [name for name in before if after[name] == before[name]]
    redone = [name for name in before if after[name] != before[name]]
    assert layout.BENCHMARK in kept and layout.BENCHMARK_MD in kept  # it would aggregate a mix
    assert redone and all(name.endswith(layout.GRADING) for name in redone)
    for name in redone:  # what was written is whole: every expectation decided, by the new judge
        grading = json.loads((ours / name).read_text())
        assert "judge command" in grading["judge"] and not any(e.get("error") for e in grading["expectations"])
    gradings = [name for name in kept if name.endswith(layout.GRADING)]
    assert gradings and f"{len(gradings)} run(s) kept their earlier grading" in result.stderr
    assert "could not be decided now" in result.stderr and "exited with status 3" in result.stderr


@pytest.mark.slow  # 15 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_run_again_with_a_judge_that_fails_keeps_every_grading_and_says_so(ours, tmp_path):
    """The same run again, with another judge that fails: its runs are resumed and graded again, and
    every grading of the demo judge stays as it was, with benchmark.json; run exits 2 and says why."""
    before = _state(ours)
    base = ours.parent.parent
    judge = ["--judge", "command", "--judge-command", _failing_after(tmp_path, 0)]
    result = _workbench(base, "run", base / "changelog-entry", *judge, "--sandbox", "none", "--trust")
    assert result.returncode == 2, result.stdout + result.stderr
    after = _state(ours)
    assert (
        after[layout.BENCHMARK] == before[layout.BENCHMARK]
        and after[layout.BENCHMARK_MD] == before[layout.BENCHMARK_MD]
    )
    kept = [name for name in before if name.endswith(layout.GRADING) and after[name] == before[name]]
    for name in before:  # a run with nothing for the judge is graded whole again; every other one is kept
        grading = json.loads((ours / name).read_text()) if name.endswith(layout.GRADING) else None
        assert grading is None or name in kept or not any(e.get("error") for e in grading["expectations"])
    said = " ".join(result.stderr.split())
    assert f"{len(kept)} run(s) kept their earlier grading" in said and "exited with status 3" in said
    assert f"benchmark.json and benchmark.md of {ours} are as they were" in said


def test_what_a_new_grading_would_lose(tmp_path):
    """Kept: an earlier grading that decided what the new one could not. Written: anything else."""
    from workbench.grading.grade import would_lose

    def grading(errors: list[bool], key: str | None = "k") -> dict:
        expectations = [
            {"text": f"t{i}", "passed": False, "evidence": "e", "id": f"a{i}", **({"error": True} if err else {})}
            for i, err in enumerate(errors)
        ]
        total = len(expectations)
        summary = {"passed": 0, "failed": total, "total": total, "pass_rate": 0.0}
        return {"expectations": expectations, "summary": summary, "run_key": key}

    path = tmp_path / "grading.json"
    assert would_lose(path, grading([True]), foreign=False) is None  # nothing there
    path.write_text(json.dumps(grading([False, False])))
    assert would_lose(path, grading([False, False]), foreign=False) is None  # complete
    assert "1 expectation(s) it decided" in (would_lose(path, grading([False, True]), foreign=False) or "")
    assert would_lose(path, grading([True], key="other run"), foreign=False) is None  # not this run's verdicts
    path.write_text(json.dumps(grading([True, False])))
    assert would_lose(path, grading([True, False]), foreign=False) is None  # undecided there too: nothing lost
    path.write_text(json.dumps(grading([False], key=None)))
    assert would_lose(path, grading([True], key=None), foreign=True) is not None  # skill-creator's: kept
    path.write_text("{cut")
    assert would_lose(path, grading([True]), foreign=False) is None  # unusable: nothing to lose
