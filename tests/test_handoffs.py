"""A dispatch's work is handed to a thread and back to the event loop as few times as it needs (issue 26): each
hand-off is a future, a wake-up of the loop and a context copy. A dispatch with nothing to grade handed off 7
times (its workspace, its private home made, the turn, the record, its home removed, run.json, the cache entry),
a sandboxed one 8 (its disk measured too); the workspace and home are now made in one, run.json and the cache
entry are written in one, and the home is removed in the record's. Counted at the loop's run_in_executor, which
asyncio.to_thread goes through."""

from __future__ import annotations

import asyncio
import signal

import pytest
from agents import answer_skill
from conftest import DEMO

from workbench.runs import executors, sandbox
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.runner import DONE, RunOptions

RESULT = """echo '{"type":"result","result":"ok","session_id":"s","usage":{"input_tokens":1}}'"""
needs_bwrap = pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()}")


def _hand_offs(tmp_path, sandboxed: str) -> int:
    skill = answer_skill(tmp_path, DEMO, turns=None)
    executor = executors.make("command", RESULT)
    options = RunOptions(jobs=1, timeout=30, baseline="none", sandbox=sandboxed)
    launch = prepare_launch(skill, executor, options)
    loop = asyncio.new_event_loop()
    counted = 0
    hand_off = loop.run_in_executor

    def counting(*args):
        nonlocal counted
        counted += 1
        return hand_off(*args)

    loop.run_in_executor = counting  # type: ignore[method-assign]
    try:
        loop.run_until_complete(run_launch(launch, executor, options))
    finally:
        loop.close()
    [dispatch] = launch.dispatches
    assert dispatch.status == DONE, dispatch.detail
    return counted


@pytest.mark.parametrize("sandboxed", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_dispatch_hands_its_work_to_a_thread_four_times(tmp_path, sandboxed):
    assert _hand_offs(tmp_path, sandboxed) <= 4


def test_a_cluster_dispatch_is_made_into_its_task_on_the_loop_once_its_trees_are_packed(tmp_path, monkeypatch):
    """Each dispatch sent to a cluster was made into its task in a thread (cluster.task_of), a hand-off for
    every dispatch, though reading the disk is needed only to pack a tree the run has not packed yet (its
    first dispatches). Now only those hand off: 4 dispatches, with and without the skill, which one of them packs."""
    from workbench.runs import cluster
    from workbench.runs.runner import Runner

    skill = answer_skill(tmp_path, DEMO, turns=None)
    executor = executors.make("command", RESULT)
    options = RunOptions(jobs=1, timeout=30, sandbox="none", runs=2)
    launch = prepare_launch(skill, executor, options)
    sent: list[cluster.Task] = []

    async def execute(self, dispatch, task, work, freed=None):
        sent.append(task)
        return {"status": DONE}

    monkeypatch.setattr(cluster.Cluster, "execute", execute)
    runner = Runner(executor, launch.workspace, "changelog-entry", options)
    runner.cluster = cluster.Cluster("tcp://127.0.0.1:1")  # never connected: execute is the stand-in above
    loop = asyncio.new_event_loop()
    made: list[object] = []
    hand_off = loop.run_in_executor
    loop.run_in_executor = lambda pool, call, *args: made.append(call) or hand_off(pool, call, *args)  # type: ignore[method-assign]
    try:
        for dispatch in launch.dispatches:
            assert loop.run_until_complete(runner._on_cluster(dispatch)) == {"status": DONE}
    finally:
        loop.close()
    assert len(sent) == len(launch.dispatches) == 4
    assert all(isinstance(task.skill, str | None) for task in sent) and any(task.skill for task in sent)
    assert len(made) == 1, made  # the first with the skill packs it (by its digest); the others name it


class _Loud:
    """A result whose repr is counted: writing out the results of a whole run is not free."""

    shown = 0

    def __repr__(self) -> str:
        _Loud.shown += 1
        return "Loud()"


@pytest.mark.skipif(
    signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
    reason="asyncio.run puts its own Ctrl-C handler in place only over Python's default one",
)
def test_the_run_loop_never_writes_out_its_result():
    """asyncio.run ends by putting Ctrl-C's handler back; signal.signal then formats an error text holding the
    repr of the main task, whose repr holds its result (an Outcome of every dispatch). run_loop hands the result
    back without it."""
    from workbench.app.pipeline import run_loop

    async def work() -> _Loud:
        return _Loud()

    _Loud.shown = 0
    assert isinstance(run_loop(work()), _Loud)
    assert _Loud.shown == 0
    asyncio.run(work())  # what it replaces: the result written out once, unseen
    assert _Loud.shown >= 1
