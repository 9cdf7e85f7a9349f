"""What each dispatch costs the workbench beyond the agent (issue 26), as work done, not time: a plan walks
its skill folder once, not once per dispatch; a run that changed nothing is measured without a git process.
The answers stay the same as the full work gives."""

from __future__ import annotations

import asyncio
import json

from agents import answer_skill
from conftest import DEMO

from workbench.grading import diff_scope
from workbench.runs import executors, runner
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.runner import DONE, RunOptions
from workbench.workspace import safe_git

RESULT = """echo '{"type":"result","result":"ok","session_id":"s","usage":{"input_tokens":1}}'"""


def test_a_plan_walks_its_skill_folder_once_and_gets_the_same_keys(tmp_path, monkeypatch):
    skill = answer_skill(tmp_path, DEMO, turns=None, runs=20)
    executor = executors.make("command", RESULT)
    walks = []
    real = runner._tree_digest
    monkeypatch.setattr(runner, "_tree_digest", lambda folder: walks.append(folder) or real(folder))
    launch = prepare_launch(skill, executor, RunOptions(jobs=1, timeout=30), write=False)
    assert len(launch.dispatches) == 40
    assert len(walks) <= 2, f"the skill folder was walked {len(walks)} times for one plan"
    assert [d.key for d in launch.dispatches] == [runner.dispatch_key(d, executor) for d in launch.dispatches]


def test_a_run_that_changed_nothing_is_measured_without_git(tmp_path, monkeypatch):
    skill = answer_skill(tmp_path, DEMO, turns=None)
    executor = executors.make("command", RESULT)
    options = RunOptions(jobs=1, timeout=30, baseline="none")
    launch = prepare_launch(skill, executor, options)
    asyncio.run(run_launch(launch, executor, options))
    [dispatch] = launch.dispatches
    assert dispatch.status == DONE
    record = json.loads((dispatch.folder / "run.json").read_text())
    started = []
    real = safe_git.run_bytes
    monkeypatch.setattr(safe_git, "run_bytes", lambda *a, **k: started.append(a) or real(*a, **k))
    measured = diff_scope.changes(dispatch.folder / "repo", record["baseline_commit"], record["final_tree"])
    assert measured == ([], 0, "\n")
    assert not started, "a git process measured a run that changed nothing"
