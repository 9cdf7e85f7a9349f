"""A cluster worker that does not play fair, for tests/test_returned_trees.py. Loaded with
`dask worker --preload`, it replaces the function a worker runs for a dispatch
(workbench.runs.runner.run_task) with one that does what the plan file named by
HOSTILE_PLAN says, read at every dispatch:

- {"add": {path: [kind, mode, content]}}: the honest run, with these entries added to the run
  folder it sends back (a link to a secret of the submitting machine, a FIFO, ...);
- {"mode": "recursion" | "memory" | "unpicklable-exception" | "unpicklable-result"}: fails so;
- {"mode": "hang"}: never returns; {"mode": "freeze"}: the whole worker process stops (SIGSTOP)
  a moment after the dispatch started, as a machine that froze. Either writes the time (time.time())
  its dispatch started on the worker beside the plan, in <plan>.started."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

from workbench.runs import runner

# Dask may import a preload twice (from its path, and from its copy in the worker's folder): the honest
# function is taken once, never the replacement.
honest = getattr(runner.run_task, "honest", runner.run_task)


class Unpicklable(Exception):
    def __reduce__(self):
        raise TypeError("this exception cannot be pickled")


def _deeper(depth: int) -> int:
    return _deeper(depth + 1) + 1


def hostile(task):
    with open(os.environ["HOSTILE_PLAN"]) as handle:
        plan = json.load(handle)
    mode = plan.get("mode", "honest")
    if mode == "recursion":
        _deeper(0)
    if mode == "memory":
        raise MemoryError("the worker ran out of memory")
    if mode == "unpicklable-exception":
        raise Unpicklable("an exception that cannot travel")
    if mode in ("hang", "freeze"):
        # When the worker began: a test times the promise (given up on at the turn's timeout plus a grace
        # after the last sign) from here, not from the run's start, which waits for a busy machine's worker.
        with open(os.environ["HOSTILE_PLAN"] + ".started", "w") as handle:
            handle.write(repr(time.time()))
    if mode == "hang":
        threading.Event().wait()
    if mode == "freeze":
        time.sleep(1.0)  # what the worker says about the dispatch having started reaches the scheduler first
        os.kill(os.getpid(), signal.SIGSTOP)
    reply = honest(task)
    if mode == "unpicklable-result":
        reply["result"]["lock"] = threading.Lock()
    for relative, (kind, bits, content) in plan.get("add", {}).items():
        reply["files"][relative] = (kind, bits, content.encode() if kind == "file" else content)
    return reply


hostile.honest = honest  # type: ignore[attr-defined]
runner.run_task = hostile
