"""The in-process fake agent (tests/support/fake_agent.py) the pipeline-logic tests run instead of a
demo agent process per turn: it must do exactly what the demo agent does, start no process, and refuse
a sandbox rather than run unconfined where one was asked for."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess

import pytest
from conftest import DEMO

from workbench.runs import executors
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.runner import RunOptions


def _transcripts(skill, executor_name, sandbox="none"):
    executor = executors.make(executor_name)
    options = RunOptions(jobs=2, timeout=30, baseline="none", sandbox=sandbox)
    launch = prepare_launch(skill, executor, options)
    asyncio.run(run_launch(launch, executor, options))
    iteration = launch.workspace / f"iteration-{launch.iteration}"
    found = {}
    for run in sorted(iteration.glob("eval-*/*/run-*")):
        record = json.loads((run / "run.json").read_text())
        said = (run / "transcript.md").read_text().replace(str(skill.parent), "<here>")
        outputs = {
            p.relative_to(run / "outputs").as_posix(): p.read_bytes()
            for p in (run / "outputs").rglob("*")
            if p.is_file()
        }
        found[run.relative_to(iteration).as_posix()] = (
            record["error"],
            (record["status"], record["changed_files"], record["turns"]),
            said,
            outputs,
        )
    return found


def test_the_fake_does_what_the_demo_agent_does_without_a_process(tmp_path, monkeypatch, fake_agent):
    for name in ("demo", "fake"):
        shutil.copytree(DEMO, tmp_path / name / "changelog-entry")
    demo = _transcripts(tmp_path / "demo" / "changelog-entry", "demo")
    started = []
    real_popen = subprocess.Popen.__init__

    def popen(self, *args, **kwargs):
        started.append(args[0] if args else kwargs.get("args"))
        real_popen(self, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", popen)
    fake = _transcripts(tmp_path / "fake" / "changelog-entry", fake_agent)
    assert fake == demo and len(fake) >= 4
    assert all(error is None for error, *_ in fake.values())
    assert not any("demo_agent" in str(argv) for argv in started)


def test_a_sandbox_asked_for_is_refused_not_skipped(tmp_path, fake_agent):
    skill = tmp_path / "changelog-entry"
    shutil.copytree(DEMO, skill)
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed here")
    found = _transcripts(skill, fake_agent, sandbox="bwrap")
    assert found and all(error and "cannot be sandboxed" in error for error, *_ in found.values()), found
