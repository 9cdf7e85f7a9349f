"""Dispatches run on a Dask cluster (`--cluster tcp://host:8786`) instead of the local pool.

What is sent is plain data: the executor, the case with its fixtures, codebase and
staged skill as bytes ({relative path: entry}), the run options and the skill's
name. A worker builds the private workspace in a temporary folder from them and
runs the very conversation a local run runs (Runner.execute); the run folder comes
back as bytes and is written into the iteration whole, and the Runner writes
run.json last, as for a local run. Trust, the budget, the cache, grading and
run.json stay on the submitting machine (docs/cluster.md).

What comes back is data: a reply of the wrong shape, or a run folder with a link
leading out of it, fails its dispatch and writes nothing (runs/shipped.py). A worker
whose dispatch fails in any way fails it: the function a worker runs is guarded, so
whatever it raises travels back as plain text, and a worker that stops giving signs
of progress (each dispatch says when it starts, and each turn) is given up on at its
turn timeout plus GRACE.

`distributed` is the optional extra `skill-workbench[cluster]`: imported only here,
only when a cluster is asked for."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import gc
import hashlib
import importlib.util
import logging
import math
import os
import pickle
import queue
import re
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench.config import where
from workbench.errors import Refused, WorkbenchError
from workbench.formats import paths
from workbench.runs import sandbox
from workbench.runs.run_folder import skill_ignore
from workbench.runs.shipped import Tree, pack, place_run, unpack, without_git

# The runner's Dispatch and RunOptions are Any here: the runner imports this module (no circle).

NEEDS_EXTRA = "the cluster needs the optional extra: pip install 'skill-workbench[cluster]'"
SCHEMES = ("tcp://", "tls://")
CONNECT_TIMEOUT = 10.0  # seconds to reach the scheduler before the run is refused
RETRIES = 1  # a dispatch whose worker function raised runs once more (a worker that dies: distributed's
# allowed-failures, 3 by default, reschedules it elsewhere)
WATCH = 0.5  # seconds between a worker's looks at whether its task was cancelled
# Times a dispatch is sent again when the scheduler, still there, cancels it because no live worker holds a
# tree it needs any more (every worker that had it was replaced): the trees are scattered afresh. distributed's
# reasons: "lost dependencies" for a dispatch sent after; "already forgotten" for one on a worker that died
# with them (its task forgotten with its lost dependency).
RESENDS = 2
LOST_TREES = ("lost dependencies", "already forgotten")
# Seconds beyond a turn's timeout that a dispatch may go without a sign of progress from its worker (the
# work between turns: building the workspace, git, packing the run folder) before it is given up on.
GRACE = 30.0
SAID = 2000  # characters of what a worker function raised, sent back
# Seconds: a sign of progress sooner than this after the last one sent, giving the same allowance, is left
# out. Each sign travels worker -> scheduler -> the submitting machine; a quick dispatch made four (started,
# each turn, sending back) for a deadline that moves by at most this much, far inside GRACE.
SIGNS_APART = 1.0
TOPIC = "workbench-dispatch-progress"


class ClusterUnavailable(Refused):
    """The scheduler cannot be reached, or the extra is not installed: nothing was sent."""


class ClusterLost(WorkbenchError):
    """The scheduler went away during the run: unfinished dispatches have no run.json, so they resume."""


def address_problem(address: str) -> str | None:
    """Why `address` is not a scheduler's address, or None."""
    host, _, port = address.partition("://")[2].rpartition(":")
    if (
        not address.startswith(SCHEMES)
        or not host
        or not (port.isascii() and port.isdigit())
        or not 0 < int(port) < 65536
    ):
        return f"{address!r}: expected a Dask scheduler address such as tcp://host:8786"
    return None


LOCAL = "local"  # --cluster local: the local pool, whatever the config says


def chosen(requested: str | None, configured: str | None) -> str | None:
    """The scheduler a command uses: the flag's (`local`: none), else the config's, else none (the local
    pool). A config value that is not an address is refused, naming its file, line and column."""
    if requested == LOCAL:
        return None
    if requested:
        return requested
    if configured and address_problem(configured):
        raise Refused(f"{where('cluster')}: {address_problem(configured)} in the config file")
    return configured or None


def check_address(address: str) -> None:
    """Refuse a malformed address and a missing extra before anything is planned or sent."""
    problem = address_problem(address)
    if problem:
        raise Refused(f"--cluster {problem}")
    if importlib.util.find_spec("distributed") is None:
        raise ClusterUnavailable(f"--cluster {address}: {NEEDS_EXTRA}")


async def probe(address: str) -> None:
    """Refuse a scheduler that does not answer, before the run takes its workspace or writes anything
    (a refused connection is said at once; distributed itself would retry until its timeout)."""
    host, _, port = address.split("://", 1)[1].rpartition(":")
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(host.strip("[]"), int(port)), CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError, OverflowError) as exc:
        raise ClusterUnavailable(unreachable(address, exc)) from None
    writer.close()
    # Something listens: that it is a Dask scheduler is known only once it answers as one (an HTTP server
    # there would leave the client waiting for ever).
    _load()
    from distributed.comm import connect

    try:
        comm = await asyncio.wait_for(connect(address, timeout=CONNECT_TIMEOUT), CONNECT_TIMEOUT + 1)
        try:
            await asyncio.wait_for(comm.write({"op": "identity"}), CONNECT_TIMEOUT)
            answer = await asyncio.wait_for(comm.read(), CONNECT_TIMEOUT)
        finally:
            comm.abort()
    except Exception as exc:  # noqa: BLE001 - whatever the other end does, it is not a scheduler answering
        raise ClusterUnavailable(
            unreachable(address, f"no Dask scheduler answers there: {type(exc).__name__}")
        ) from None
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        raise ClusterUnavailable(unreachable(address, "what answers there is not a Dask scheduler"))


def _load() -> None:
    """Import distributed, then leave what it built out of the cyclic collector's work (gc.freeze): its
    ~50,000 objects live as long as the process, yet every full collection during the run walked them, and
    the interpreter's teardown at exit walked them again (~0.2 s of CPU a process). Objects made before this
    are left out too: a cycle among them that becomes garbage is not collected (a run's process ends)."""
    if "distributed" in sys.modules:
        return
    import distributed  # noqa: F401

    gc.freeze()


def unreachable(address: str, why: object) -> str:
    return (
        f"--cluster {address}: the Dask scheduler cannot be reached ({why}); start it with `dask scheduler` "
        "(docs/cluster.md), or run without --cluster"
    )


# ------------------------------------------------------------------ the task, and what a worker does with it


@dataclass
class Task:
    """One dispatch's execution, as plain picklable data."""

    executor: Any  # an Executor: plain attributes only
    options: Any  # RunOptions, with cluster cleared (a worker runs it here)
    skill_name: str
    case: Any  # RunCase with its paths cleared: its files travel in `fixtures` and `codebase`
    fixtures: list[tuple[str, Tree | str]]  # (place in the repository, the fixture or its digest)
    codebase: Tree | str | None  # the codebase or its digest
    skill: Tree | str | None  # the staged skill or its digest, or None (without_skill)
    configuration: str
    run_number: int
    key: str
    responder: Any = None  # the run's judge as the simulated user, only for responder evals
    # On a worker: digest -> tree, for the trees named above by their digest (sent once per run, beside
    # the task, not in it: Cluster.execute).
    trees: dict[str, Tree] = field(default_factory=dict)


Shelf = Callable[[tuple[str, Path], Callable[[], Tree]], "Tree | str"]  # (what, path), how to pack -> ref


class Unpacked(LookupError):
    """A tree the run has not packed yet (Cluster.known)."""


def _inline(_what: tuple[str, Path], make: Callable[[], Tree]) -> Tree:
    return make()


def task_of(
    dispatch: Any,
    executor: Any,
    options: Any,
    skill_name: str,
    responder: Any,
    shelf: Shelf = _inline,
) -> Task:
    """Read what the dispatch needs on the submitting machine, from the trusted copy (never a shared disk).
    What the worker's copy would leave out (a .git, the skill's evals/ and caches) is not sent. shelf
    packs a tree, or names one it packed before in this run by its digest (Cluster.shelve)."""
    case = dispatch.case
    skill = None
    if dispatch.skill_dir is not None:
        skill_dir = dispatch.skill_dir

        def staged() -> Tree:
            top = skill_ignore(str(skill_dir), [p.name for p in skill_dir.iterdir()])
            return {
                relative: entry
                for relative, entry in without_git(pack(skill_dir)).items()
                if relative.split("/")[0] not in top
                and not any(part == "__pycache__" or part.endswith("-workspace") for part in relative.split("/"))
            }

        skill = shelf(("skill", skill_dir), staged)
    codebase = None
    if case.codebase is not None:
        codebase = shelf(("codebase", case.codebase), functools.partial(_packed, case.codebase))
    fixtures = [
        (place, shelf(("fixture", source), functools.partial(_packed, source)))
        for source, place in case.files
        if not paths.is_git_name(source.name)
    ]
    return Task(
        executor,
        replace(options, cluster=None),
        skill_name,
        replace(case, files=[], codebase=None),
        fixtures,
        codebase,
        skill,
        dispatch.configuration,
        dispatch.run_number,
        dispatch.key,
        responder if case.responder is not None else None,
    )


def _packed(path: Path) -> Tree:
    return without_git(pack(path))


def digest(tree: Tree) -> str:
    """A tree's name by its content: the same files, modes and links give the same digest."""
    hashed = hashlib.sha256()
    for relative in sorted(tree):
        kind, mode, content = tree[relative]
        data = content if isinstance(content, bytes) else content.encode()
        for part in (relative.encode(), kind.encode(), str(mode).encode(), str(len(data)).encode()):
            hashed.update(part + b"\0")
        hashed.update(data)
    return hashed.hexdigest()


def materialise(task: Task, root: Path) -> tuple[Any, Path | None]:
    """On a worker: the fixtures, codebase and skill written from the shipped bytes; the case pointing
    at them, and where the skill is (None without it). A tree named by its digest is written once per
    worker, into the worker's own folder (shelved()), and read from there by every dispatch that names it
    (the workspace copies it: nothing writes to it); one sent whole is written under root."""
    shelf = _worker_shelf()

    def placed(ref: Tree | str, name: str) -> Path:
        if isinstance(ref, str):
            if shelf is not None:
                return shelved(shelf, ref, task.trees[ref])
            ref = task.trees[ref]
        unpack(ref, root / name)
        return root / name

    files = [(placed(tree, f"fixtures/{number}"), place) for number, (place, tree) in enumerate(task.fixtures)]
    codebase = placed(task.codebase, "codebase") if task.codebase is not None else None
    skill_dir = placed(task.skill, "skill") if task.skill is not None else None
    return replace(task.case, files=files, codebase=codebase), skill_dir


def shelved(shelf: Path, name: str, tree: Tree) -> Path:
    """The tree written once under shelf/<its digest>: beside it, then renamed into place, so a dispatch
    never reads half of one (two writing it at once: the first rename wins, the other is discarded)."""
    if not re.fullmatch(r"[0-9a-f]{64}", name):
        raise ValueError(f"{name[:80]!r} is not a shipped tree's digest")
    target = shelf / name
    if os.path.lexists(target):
        return target
    shelf.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=f".{name[:16]}.", dir=shelf)) / "tree"
    try:
        unpack(tree, aside)
        try:
            os.rename(aside, target)
        except OSError:
            if not os.path.lexists(target):
                raise
    finally:
        shutil.rmtree(aside.parent, ignore_errors=True)
    return target


def _worker_shelf() -> Path | None:
    """Where this worker keeps the trees it was sent (its own folder, removed with it), or None outside a
    worker."""
    try:
        from distributed import get_worker

        return Path(get_worker().local_directory) / "workbench-shipped"
    except (ImportError, ValueError, AttributeError):
        return None


_discarding: queue.SimpleQueue[Path] = queue.SimpleQueue()
_discarder: list[threading.Thread] = []
_discarder_lock = threading.Lock()


def discard_later(folder: Path) -> None:
    """A dispatch's private folder removed after its reply has gone, not before: removing a run's
    repository costs a dispatch's slot tens of milliseconds on some disks (ext4 with discard: ~3 ms a
    folder), and the reply does not need to wait for it. One thread of the worker removes them in turn."""
    with _discarder_lock:
        if not _discarder or not _discarder[0].is_alive():
            _discarder[:] = [threading.Thread(target=_discard, daemon=True, name="workbench-discard")]
            _discarder[0].start()
    _discarding.put(folder)


def _discard() -> None:
    while True:
        shutil.rmtree(_discarding.get(), ignore_errors=True)


def sandbox_problem(options: Any) -> str | None:
    """Why this worker cannot hold the agent as asked (the submitting machine chose bwrap), or None."""
    if options.sandbox == sandbox.BWRAP and sandbox.unavailable():
        return f"the worker cannot sandbox: {sandbox.unavailable()} (install bubblewrap there, or --sandbox none)"
    return None


_lane = threading.local()  # a worker thread's event loop and turn pool, kept from one dispatch to the next


def turns() -> ThreadPoolExecutor:
    """The turn pool of this worker thread's dispatches (Runner.pool), started with its first. Two threads:
    a cancelled turn still killing its agent's process tree never holds up the next dispatch's turn."""
    if getattr(_lane, "turns", None) is None:
        _lane.turns = ThreadPoolExecutor(2, thread_name_prefix="workbench-turn")
    return _lane.turns


def cancellable(work: Callable[[], Coroutine[Any, Any, dict]]) -> dict:
    """Run the conversation on a worker; when the cluster cancels this task, it is cancelled here too,
    and cancelling a turn kills the agent's whole process tree (workbench/runs/processes.py).
    Each worker thread keeps one event loop for all its dispatches: a new one for each started its own
    pool of threads, and a thread to watch for the cancellation (5 threads a dispatch). What a dispatch
    leaves running is cancelled and run to its end before the next, as a loop of its own did at its close."""
    cancelled = _cancel_check()

    async def watched() -> dict:
        job = asyncio.ensure_future(work())

        async def watch() -> None:
            while not job.done():
                await asyncio.sleep(WATCH)
                if cancelled():
                    job.cancel()
                    return

        watcher = asyncio.ensure_future(watch())
        try:
            return await job
        finally:
            watcher.cancel()

    if getattr(_lane, "loop", None) is None:
        _lane.loop = asyncio.Runner()
        # The dispatch's file work (asyncio.to_thread), one step at a time: one thread. The default pool grows
        # a thread whenever a step is handed over before the last one's thread has said it is idle again
        # (concurrent.futures marks it idle after the result is set), a thread started mid-dispatch at random.
        _lane.loop.get_loop().set_default_executor(ThreadPoolExecutor(1, thread_name_prefix="workbench-files"))
    try:
        # In this dispatch's context (its sign of progress): a Runner's own is the first dispatch's.
        return _lane.loop.run(watched(), context=contextvars.copy_context())
    finally:
        if asyncio.all_tasks(_lane.loop.get_loop()):
            _lane.loop.run(_settled(), context=contextvars.copy_context())


async def _settled() -> None:
    """Every other task of this loop cancelled and run to its end (what asyncio.run does at its close)."""
    left = asyncio.all_tasks() - {asyncio.current_task()}
    for task in left:
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)


def _cancel_check() -> Callable[[], bool]:
    """Whether the scheduler has let go of this task (cancelled, or its client gone)."""
    try:
        from distributed import get_worker
        from distributed.worker import thread_state

        worker, key = get_worker(), thread_state.key
    except (ImportError, ValueError, AttributeError):
        return lambda: False

    def cancelled() -> bool:
        state = worker.state.tasks.get(key)
        return state is None or state.state in ("cancelled", "released", "forgotten")

    return cancelled


class DispatchRaised(Exception):
    """What a worker function raised, as text only: whatever it was (a RecursionError, an exception
    that cannot be pickled), it travels back."""


_progress: contextvars.ContextVar[Callable[[str, float | None], None] | None] = contextvars.ContextVar(
    "workbench_progress", default=None
)


def guarded(topic: str, work: Callable[[Task], dict], task: Task, trees: dict[str, Tree] | None = None) -> dict:
    """What the cluster runs: `work(task)`, saying when it starts (and, through mark(), each turn) under
    topic; whatever it raises is raised again as DispatchRaised with its text, and a reply that could not
    be sent back is a failed dispatch's reply. trees: the trees the task names by digest (the cluster
    hands each worker its copy, sent once per run)."""
    said = ""
    token = _progress.set(_sender(topic))
    try:
        mark("started on a worker")
        reply = work(replace(task, trees=trees) if trees else task)
        problem = _unsendable(reply)
        if problem is None:
            return reply
        return {"result": {"status": "failed", "error": f"its result cannot be sent back: {problem}"}, "files": {}}
    except BaseException as exc:  # noqa: BLE001 - everything a worker function can do goes back as text
        said = _said(exc)
    finally:
        _progress.reset(token)
    raise DispatchRaised(said)  # outside the handler: nothing of the original (its frames) goes along


def mark(phase: str, allow: float | None = None) -> None:
    """On a worker, in a dispatch: tell the submitting machine it moved on. It gives the dispatch `allow`
    seconds (None: a turn's timeout) plus GRACE for its next sign."""
    send = _progress.get()
    if send is not None:
        send(phase, allow)


def consulting(user: Any) -> Any:
    """The simulated user of a responder eval, marking its consultations (a judge may take longer than
    a turn), or None."""
    return None if user is None else _Consulting(user)


class _Consulting:
    def __init__(self, user: Any) -> None:
        self.user = user
        self.label = user.label
        # A judge call is bounded by the judge's own timeout, attempted twice at most (and the client's retries).
        self.allow = float(getattr(user, "timeout", 300.0)) * (2 + int(getattr(user, "max_retries", 0) or 0))

    def simulate_user(self, *args: Any) -> str:
        mark("the simulated user answers", self.allow)
        try:
            return self.user.simulate_user(*args)
        finally:
            mark("the simulated user answered")


def _sender(topic: str) -> Callable[[str, float | None], None]:
    try:
        from distributed import get_worker
        from distributed.worker import thread_state

        worker, key = get_worker(), thread_state.key
    except (ImportError, ValueError, AttributeError):
        return lambda phase, allow: None

    last: list[Any] = []  # (when, allow) of the last sign sent for this dispatch

    def send(phase: str, allow: float | None) -> None:
        now = time.monotonic()
        if last and last[1] == allow and now - last[0] < SIGNS_APART:
            return
        last[:] = [now, allow]
        try:
            worker.log_event(topic, {"key": key, "phase": phase, "allow": allow, "worker": worker.address})
        except Exception:  # noqa: BLE001 - a sign that cannot be sent is only a sign missed
            pass

    return send


def _said(exc: BaseException) -> str:
    try:
        text = f"{type(exc).__name__}: {exc}"
    except Exception:  # noqa: BLE001 - its own __str__ failed
        text = type(exc).__name__
    return text if len(text) <= SAID else text[:SAID] + " …"


def _unsendable(reply: Any) -> str | None:
    """Why a worker function's reply cannot travel back as plain data, or None."""
    problem = reply_problem(reply)
    if problem is not None:
        return problem
    try:
        pickle.dumps(reply["result"])
    except Exception as exc:  # noqa: BLE001 - whatever pickling raises, the reply cannot go
        return _said(exc)
    return None


def reply_problem(reply: Any) -> str | None:
    """Why a worker's reply is not a dispatch's reply ({"result": {...}, "files": {...}}), or None. The
    files are checked as they are written (shipped.unpack)."""
    if not (isinstance(reply, dict) and isinstance(reply.get("result"), dict) and isinstance(reply.get("files"), dict)):
        return "it is not a dispatch's reply (a result and a run folder)"
    result = reply["result"]
    if result.get("status") not in ("done", "failed"):
        return f"its status is {str(result.get('status'))[:80]!r}, not done or failed"
    cost = result.get("cost_usd")
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost)):
        return f"its cost is {str(cost)[:80]!r}, not a number of dollars"
    for name in ("error", "stop_reason"):
        if result.get(name) is not None and not isinstance(result.get(name), str):
            return f"its {name} is not text"
    return None


# ------------------------------------------------------------------ the submitting side


@dataclass
class _Watch:
    """What the submitting machine knows of one dispatch on the cluster."""

    done: asyncio.Event
    news: asyncio.Event
    timeout: float  # a turn's
    at: float | None = None  # when its last sign of progress arrived (monotonic), None before it started
    allow: float = 0.0  # seconds it may take to its next sign, beyond GRACE
    phase: str = ""
    worker: str = ""


class Cluster:
    """A connection to the scheduler for one run: submits dispatches, cancels what is left at the end."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.client: Any = None
        self.futures: set[Any] = set()
        # Where workers say how their dispatches go: one topic for every run (the scheduler keeps a bounded
        # log per topic), each sign naming its task's key, unique to this run.
        self.topic = TOPIC
        self.watches: dict[str, _Watch] = {}
        # Each tree (the staged skill, a fixture, a codebase) packed once per run, and sent to the workers
        # once: the dispatches name it by its digest.
        self.packed: dict[tuple[str, Path], str] = {}
        self.trees: dict[str, Tree] = {}
        self.sending: dict[str, asyncio.Future] = {}
        self.packing = threading.Lock()

    def shelve(self, what: tuple[str, Path], make: Callable[[], Tree]) -> str:
        """task_of's shelf (called from its threads): the tree's digest, packing it the first time."""
        with self.packing:  # held while packing: dispatches starting together pack a tree once, not each
            if what not in self.packed:
                tree = make()
                name = digest(tree)
                self.trees.setdefault(name, tree)
                self.packed[what] = name
            return self.packed[what]

    def known(self, what: tuple[str, Path], _make: Callable[[], Tree]) -> str:
        """task_of's shelf on the event loop: the digest of a tree this run packed already; Unpacked when it has
        not (then task_of runs again in a thread, with shelve: packing reads the disk)."""
        name = self.packed.get(what)
        if name is None:
            raise Unpacked(what)
        return name

    async def _sent(self, name: str) -> Any:
        """The cluster's handle on a tree, scattered to every worker the first time a dispatch needs it
        (a worker that joins later is given it by the others)."""
        if name not in self.sending:
            # In a list: a dict given alone would be scattered as one piece of data per entry, by its name.
            self.sending[name] = asyncio.ensure_future(
                self.client.scatter([self.trees[name]], hash=False, broadcast=True)
            )
        return (await asyncio.shield(self.sending[name]))[0]

    async def __aenter__(self) -> Cluster:
        check_address(self.address)
        from distributed import Client

        # A scheduler going away is said once, as ClusterLost, not as the library's own tracebacks.
        for name in ("distributed.client", "distributed.comm", "distributed.core"):
            logging.getLogger(name).setLevel(logging.CRITICAL)

        try:
            self.client = await asyncio.wait_for(
                Client(self.address, asynchronous=True, timeout=CONNECT_TIMEOUT, name="workbench"), CONNECT_TIMEOUT * 2
            )
        except (OSError, TimeoutError) as exc:
            raise ClusterUnavailable(unreachable(self.address, exc)) from None
        self.client.subscribe_topic(self.topic, self._heard)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        try:
            if self.futures:  # cancelled or stopped: the cluster drops what this run had sent
                await asyncio.wait_for(self.client.cancel(list(self.futures), force=True), CONNECT_TIMEOUT)
        except (OSError, TimeoutError, asyncio.CancelledError):
            pass
        finally:
            try:
                await asyncio.wait_for(self.client.close(), CONNECT_TIMEOUT)
            except (OSError, TimeoutError):
                pass

    def _heard(self, event: tuple[float, Any]) -> None:
        """A worker's sign of progress (on this event loop, from the client)."""
        message = event[1] if isinstance(event, tuple | list) and len(event) == 2 else None
        watch = self.watches.get(str(message.get("key"))) if isinstance(message, dict) else None
        if watch is None or not isinstance(message, dict):
            return
        allow = message.get("allow")
        watch.at = time.monotonic()
        watch.allow = float(allow) if isinstance(allow, int | float) and math.isfinite(allow) else watch.timeout
        watch.phase, watch.worker = str(message.get("phase", ""))[:200], str(message.get("worker", ""))
        watch.news.set()

    async def execute(
        self, dispatch: Any, task: Task, work: Callable[[Task], dict], freed: Callable[[], None] | None = None
    ) -> dict:
        """Run the task on a worker; its run folder written into dispatch.folder whole. The result, as
        Runner.execute returns it (run.json is the Runner's to write, last). freed() is called once the
        worker has finished with the dispatch (its thread is free for the next), before its reply is fetched
        and written here: the Runner's slot, -j, counts the dispatches on the cluster's workers."""
        names = [
            ref for ref in (task.skill, task.codebase, *(tree for _, tree in task.fixtures)) if isinstance(ref, str)
        ]
        for _ in range(RESENDS):
            try:
                return await self._execute(dispatch, task, work, names, freed)
            except _TreesLost as lost:
                for name, sent in lost.sent.items():  # scattered again at the next try, to the workers there now
                    if self.sending.get(name) is sent:  # (not one another dispatch has sent again meanwhile)
                        del self.sending[name]
        try:
            return await self._execute(dispatch, task, work, names, freed)
        except _TreesLost as exc:
            raise self.lost(exc.reason) from None

    async def _execute(
        self,
        dispatch: Any,
        task: Task,
        work: Callable[[Task], dict],
        names: list[str],
        freed: Callable[[], None] | None,
    ) -> dict:
        """execute(), once; _TreesLost when the scheduler cancelled it for want of a tree no worker holds."""
        from distributed.scheduler import KilledWorker

        try:
            trees = {name: await self._sent(name) for name in names}
        except (OSError, TimeoutError) as exc:  # the scheduler went away while the trees were sent
            raise self.lost() from exc
        future = self.client.submit(
            functools.partial(guarded, self.topic, work),
            task,
            trees,
            key=f"workbench-dispatch-{dispatch.key[:16]}-{uuid.uuid4().hex[:12]}",
            retries=RETRIES,
            pure=False,
        )
        self.futures.add(future)
        loop = asyncio.get_running_loop()
        watch = self.watches[future.key] = _Watch(asyncio.Event(), asyncio.Event(), task.options.timeout)
        future.add_done_callback(functools.partial(_tell, loop, watch.done))
        try:
            stuck = await self._watch(future, watch)
            if stuck is not None:
                await self._drop(future)
                return _failed(stuck)
            if freed is not None and future.status in ("finished", "error"):  # no longer on a worker
                freed()
            reply = await future
        except asyncio.CancelledError:
            raise  # this run was cancelled (Ctrl-C, Cancel): the future stays listed, __aexit__ cancels it there
        except KilledWorker as exc:  # distributed's allowed-failures spent: a recorded failure, not a crash
            self.futures.discard(future)
            return _failed(f"the cluster lost this dispatch's worker too often: {exc}")
        except ClusterLost:
            raise
        except Exception as exc:
            self.futures.discard(future)
            if future.status == "error":  # the worker function itself raised, after its retries
                return _failed(f"the dispatch raised on the cluster's worker: {_said(exc)}")
            if future.status == "finished":  # it ended there, but what it sent cannot be read here
                return _failed(f"the worker's reply could not be read here: {_said(exc)}")
            reason = str(getattr(exc, "reason", "") or "")  # distributed's, for a cancelled future
            if reason in LOST_TREES:
                raise _TreesLost(reason, {name: self.sending.get(name) for name in names}) from None
            raise self.lost(reason) from None  # cancelled by the scheduler: it went away (or was told to drop it)
        finally:
            self.watches.pop(future.key, None)
        self.futures.discard(future)
        return await self._placed(reply, dispatch.folder)

    async def _placed(self, reply: Any, folder: Path) -> dict:
        """The reply's run folder written into folder, and its result; or, when the reply or its folder is
        refused, a failed dispatch (nothing written), its cost still counted."""
        problem = reply_problem(reply)
        if problem is not None:
            return _failed(f"what the worker sent back was refused: {problem}")
        try:
            await asyncio.to_thread(place_run, reply["files"], folder)
        except (ValueError, OSError) as exc:
            cost = reply["result"].get("cost_usd")
            return {**_failed(f"the run folder the worker sent back was refused: {exc}"), "cost_usd": cost}
        return reply["result"]

    async def _watch(self, future: Any, watch: _Watch) -> str | None:
        """Wait for the future; why it was given up on (its worker gave no sign of progress in time), or
        None once it is done. Before its first sign it waits in the scheduler's queue: no deadline."""
        while not watch.done.is_set():
            watch.news.clear()
            left = None if watch.at is None else watch.at + watch.allow + GRACE - time.monotonic()
            if left is not None and left <= 0:
                if await self._still_on(watch.worker, future.key):
                    return (
                        f"the cluster's worker {watch.worker} gave no sign of progress for {watch.allow + GRACE:g} s "
                        f"(last: {watch.phase}; a turn may take {watch.timeout:g} s): the dispatch was stopped"
                    )
                watch.at = None  # its worker is gone: the scheduler runs it again elsewhere
                continue
            waits = [asyncio.ensure_future(watch.done.wait()), asyncio.ensure_future(watch.news.wait())]
            try:
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()
        return None

    async def _still_on(self, worker: str, key: str) -> bool:
        """Whether the scheduler still has the dispatch running on that worker."""
        try:
            processing = await asyncio.wait_for(self.client.processing(), CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise self.lost() from exc
        return key in processing.get(worker, ())

    async def _drop(self, future: Any) -> None:
        self.futures.discard(future)
        try:
            await asyncio.wait_for(self.client.cancel([future], force=True), CONNECT_TIMEOUT)
        except (OSError, TimeoutError):
            pass

    def lost(self, reason: str = "") -> ClusterLost:
        """The run's end when the scheduler went away, or cancelled a dispatch for a reason it gave."""
        if reason and reason not in GONE:
            what = f"the scheduler cancelled a dispatch ({reason[:200]})"
        else:
            what = "the scheduler went away during the run"
        return ClusterLost(
            f"--cluster {self.address}: {what}; the dispatches that had not finished were not recorded: run the "
            "same command again to resume them"
        )


GONE = ("unknown", "scheduler-connection-lost", "scheduler-restart")  # distributed's reasons: the scheduler is gone


class _TreesLost(Exception):
    """A dispatch cancelled by the scheduler because no live worker holds a tree it needs (LOST_TREES)."""

    def __init__(self, reason: str, sent: dict[str, asyncio.Future | None]) -> None:
        super().__init__(reason)
        self.reason, self.sent = reason, sent  # the scatters the dispatch used, by tree


def _tell(loop: asyncio.AbstractEventLoop, event: asyncio.Event, _future: Any) -> None:
    """A future's done-callback (in distributed's callback thread): the event set on the run's loop."""
    try:
        loop.call_soon_threadsafe(event.set)
    except RuntimeError:  # the run's loop has closed: nobody waits any more
        pass


def _failed(error: str) -> dict:
    return {"status": "failed", "error": error}
