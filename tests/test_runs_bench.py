"""bench/runs_bench.py measures the workbench, not a cost of its own making (issue 26, round 3).

It gave its private bytecode cache to the measured workbench as PYTHONPYCACHEPREFIX, and the workbench passes
its environment to its agents: inside the sandbox that folder is not shown, so a sandboxed agent's Python
compiled every module it imported from source at every turn (~75 ms of CPU a dispatch, the bwrap row's
+25 -> +85 ms in one day, on every checkout alike). The bare loop's commands never paid it. Counted here: the
modules a measured run's agent compiles from source (python -v says `# code object from <file>.py`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DEMO

from workbench.runs import sandbox

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import runs_bench  # noqa: E402

needs_bwrap = pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()}")
# The bench's instant agent, run with -v: what its Python imported, and from where, goes to verbose.txt (an output).
AGENT = runs_bench.INSTANT.replace(" -S -c ", " -v -S -c ", 1) + " 2> verbose.txt"


def _skill(tmp_path: Path) -> Path:
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    case = {"id": "only", "prompt": "case", "expected_output": "ok", "files": [runs_bench.FIXTURE]}
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "changelog-entry", "evals": [case]}))
    return skill


@pytest.mark.slow  # 14 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("mode", [pytest.param("open", marks=needs_bwrap), "none"])
def test_a_measured_runs_agent_compiles_nothing_from_source(tmp_path, mode):
    workspace = tmp_path / "workspace"
    argv, env, cwd = runs_bench.workbench_run(ROOT, _skill(tmp_path), tmp_path, mode, workspace, AGENT)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    said = sorted(workspace.glob("iteration-1/*/*/run-*/outputs/verbose.txt"))
    assert len(said) == 2, done.stderr[-3000:]
    for verbose in said:
        lines = verbose.read_text().splitlines()
        imported = [line for line in lines if line.startswith("# code object from ")]
        compiled = [line for line in imported if line.endswith(".py")]
        assert any("json" in line for line in imported), lines[-20:]
        assert compiled == [], f"{len(compiled)} of {len(imported)} modules compiled from source: {compiled[:3]}"
    # The workbench itself kept its compiled modules in the sitting's cache, as an installed one has them.
    assert list((tmp_path / "bytecode").rglob("workbench/cli/run.cpython-*.pyc"))
