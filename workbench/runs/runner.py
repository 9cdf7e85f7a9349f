"""Running a suite: every eval x condition x repeat, in private workspaces, with
bounded concurrency, timeouts that kill the whole process group, scripted turns,
resume (a finished dispatch is never run twice) and a content-addressed cache
(an identical dispatch, e.g. the without_skill baseline, is reused)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from workbench.formats import paths
from workbench.formats.regular import read_json, read_regular
from workbench.formats.save import atomic_write, durable_point, mark
from workbench.runs import (
    agent_files,
    bounds,
    cluster,
    cost,
    network,
    responder,
    sandbox,
    skill_use,
    viewer_files,
)
from workbench.runs import run_folder as ws
from workbench.runs.budget import Budget
from workbench.runs.cases import RunCase, eval_metadata
from workbench.runs.executors import Executor
from workbench.runs.executors.base import TurnCommand
from workbench.runs.processes import OUTPUT_LIMIT, run_bounded_async
from workbench.runs.responder import SimulatedUser
from workbench.runs.transcript import ASSISTANT, TOOL_USE, Event, TurnOutcome, jsonl, metrics
from workbench.validate import rust_regex
from workbench.workspace import layout

WITH, WITHOUT, OLD = "with_skill", "without_skill", "old_skill"
QUEUED, RUNNING, DONE, FAILED, REUSED, SKIPPED = "queued", "running", "done", "failed", "reused", "skipped"
STOPPED = "stopped"  # never started: the budget stopped the run (workbench/runs/budget.py)
STDERR_TAIL = 4000
# Said beside a failure in the sandbox: a program that works outside may not inside (a pyenv shim, a write outside).
SANDBOX_HINT = "it ran in the bubblewrap sandbox: read-only system, private home; --sandbox none runs it outside"
AGENT_HOME = "home"  # <run folder>/home: the dispatch's private home and agent config, removed when it ends


@dataclass
class Dispatch:
    case: RunCase
    configuration: str  # with_skill | without_skill | old_skill
    run_number: int
    skill_dir: Path | None  # the skill staged for this dispatch, or None
    folder: Path  # <workspace>/iteration-N/eval-<id>/<configuration>/run-<k>
    key: str = ""
    sample: str = ""  # a fresh sample's salt (--fresh): the same dispatch, drawn again
    status: str = QUEUED
    turn: int = 0
    detail: str = ""


@dataclass
class RunOptions:
    runs: int | None = None  # overrides every eval's own `runs` when set
    jobs: int = 4
    timeout: float = 600.0
    baseline: str = WITHOUT  # without_skill | old_skill | none
    sandbox: str = "none"  # bwrap | none, as resolved (workbench/runs/sandbox.py)
    network: str = network.MODEL  # a sandboxed agent's network: its model API only, or open
    network_allow: tuple[str, ...] = ()  # endpoints beside the executor's model API (the config's network_allow)
    limits: bounds.Limits = field(default_factory=bounds.Limits)  # a sandboxed turn's bounds
    show: tuple[str, ...] = ()  # shown read-only beside what the turn needs (the config's sandbox_show)
    only: set[str] | None = None
    failed: bool = False
    fresh: bool | None = None  # new samples, not cached ones; None: only for --failed's reruns
    adaptive: bool = False  # --runs auto: `runs` is --max-runs, run in rounds (workbench/app/rounds.py)
    # A trigger evaluation: the skill whose use is watched; the agent is stopped once it is decided
    # (workbench/runs/skill_use.py), so a query costs one short turn, not a task.
    watch_skill: str | None = None
    cluster: str | None = None  # a Dask scheduler's address: dispatches execute there (workbench/runs/cluster.py)


def plan(
    cases: list[RunCase],
    skill_dir: Path,
    old_skill: Path | None,
    workspace: Path,
    iteration: int,
    options: RunOptions,
    previous_failures: set[str] | None = None,
) -> list[Dispatch]:
    conditions: list[tuple[str, Path | None]] = [(WITH, skill_dir)]
    if options.baseline == WITHOUT:
        conditions.append((WITHOUT, None))
    elif options.baseline == OLD:
        if old_skill is None:
            raise ValueError("--baseline old_skill needs a current best version to compare with")
        conditions.append((OLD, old_skill))
    layout.check_ids([case.id for case in cases])
    dispatches = []
    for case in cases:
        if options.only and case.id not in options.only:
            continue
        if options.failed and previous_failures is not None and case.id not in previous_failures:
            continue
        repeats = options.runs or case.runs or 1
        for configuration, staged in conditions:
            for number in range(1, repeats + 1):
                folder = ws.run_dir(workspace, iteration, case, configuration, number)
                dispatches.append(Dispatch(case, configuration, number, staged, folder))
    return dispatches


def dispatch_key(
    dispatch: Dispatch, executor: Executor, skill_digest: bytes | None = None, memo: dict | None = None
) -> str:
    """What determines a dispatch: executor, the case as written, the bytes of its
    fixtures and of the staged skill (or none), and which repeat it is. memo: digests already taken for
    other dispatches of the same plan (dispatch_keys), so each file and folder is read once."""
    memo = {} if memo is None else memo
    digest = hashlib.sha256()
    if "executor" not in memo:
        memo["executor"] = json.dumps(executor.identity(), sort_keys=True).encode()
    digest.update(memo["executor"])
    digest.update(json.dumps(dispatch.case.raw, sort_keys=True, default=str).encode())
    for source, place in dispatch.case.files:
        digest.update(place.encode())
        if ("file", source) not in memo:
            memo[("file", source)] = _bytes_of(source)
        digest.update(memo[("file", source)])
    if dispatch.case.codebase is not None:
        if ("tree", dispatch.case.codebase) not in memo:
            memo[("tree", dispatch.case.codebase)] = _tree_digest(dispatch.case.codebase)
        digest.update(b"codebase:" + memo[("tree", dispatch.case.codebase)])
    # skill_digest: the staged skill's digest taken once for many dispatches (it walks the skill's files).
    staged = skill_digest
    if staged is None and dispatch.skill_dir is not None:
        if ("tree", dispatch.skill_dir) not in memo:
            memo[("tree", dispatch.skill_dir)] = _tree_digest(dispatch.skill_dir)
        staged = memo[("tree", dispatch.skill_dir)]
    digest.update(b"skill:" + (staged if staged is not None else b"none"))
    digest.update(f"repeat:{dispatch.run_number}".encode())
    if dispatch.sample:
        digest.update(f"sample:{dispatch.sample}".encode())
    return digest.hexdigest()


def dispatch_keys(dispatches: list[Dispatch], executor: Executor) -> list[str]:
    """dispatch_key of each of a plan's dispatches, each fixture and skill folder digested once (a plan of
    200 dispatches walked the skill folder 200 times)."""
    memo: dict = {}
    return [dispatch_key(d, executor, memo=memo) for d in dispatches]


def _bytes_of(path: Path) -> bytes:
    if path.is_dir():
        return _tree_digest(path)
    try:
        return hashlib.sha256(read_regular(path)).digest()
    except OSError:  # missing, or a FIFO or device (never read: it would block)
        return b"missing"


@functools.lru_cache(maxsize=64)
def _tree_digest_at(folder: Path, stamp: tuple) -> bytes:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and ".git" not in path.parts and "evals" not in path.relative_to(folder).parts[:1]:
            digest.update(path.relative_to(folder).as_posix().encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.digest()


def skill_digest(folder: Path) -> bytes:
    """The digest dispatch_key takes of a staged skill, to take once for many dispatches."""
    return _tree_digest(folder)


def _tree_digest(folder: Path) -> bytes:
    """A folder's content digest, memoised on its files' sizes and times (a run
    hashes the same skill for every dispatch)."""
    stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file())
    return _tree_digest_at(folder, stamp)


class Runner:
    def __init__(
        self,
        executor: Executor,
        workspace: Path,
        skill_name: str,
        options: RunOptions,
        on_change: Callable[[Dispatch], None] | None = None,
        after: Callable[[Dispatch], str | None] | None = None,
        responder: SimulatedUser | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.executor = executor
        self.budget = budget
        self.responder = responder  # plays the simulated user of `responder` evals (the run's judge)
        self.after = after  # runs in a thread once a dispatch is finished (grading); returns a detail
        self.workspace = workspace
        self.skill_name = skill_name
        self.options = options
        self.on_change = on_change or (lambda dispatch: None)
        self.cache = workspace / ".cache" / "dispatches"  # <key>.json -> the folder of a finished dispatch
        self.pool: ThreadPoolExecutor | None = None
        self.cluster: cluster.Cluster | None = None  # set while a run sends its dispatches to a cluster
        self.relay: network.Relay | None = None  # a sandboxed run's way to its model API, while it runs
        self.places: dict[tuple, list[tuple[str, str]]] = {}  # what its sandboxed turns are shown (shown_places)

    def _moved(self, dispatch: Dispatch, status: str | None = None, detail: str | None = None) -> None:
        if status:
            dispatch.status = status
        if detail is not None:
            dispatch.detail = detail
        self.on_change(dispatch)

    async def run(self, dispatches: list[Dispatch]) -> list[Dispatch]:
        limit = asyncio.Semaphore(max(1, self.options.jobs))
        # One thread per running turn: run_bounded waits in it (reading, with its deadline).
        self.pool = ThreadPoolExecutor(max(1, self.options.jobs), thread_name_prefix="workbench-turn")

        async def one(dispatch: Dispatch) -> None:
            await limit.acquire()
            held = [True]

            def free() -> None:
                if held[0]:
                    held[0] = False
                    limit.release()

            token = _free_slot.set(free)  # each dispatch's task has its own context
            try:
                await self.dispatch(dispatch)
            finally:
                _free_slot.reset(token)
                free()

        memo: dict = {}
        for dispatch in dispatches:
            dispatch.key = dispatch.key or dispatch_key(dispatch, self.executor, memo=memo)
        try:
            if self.options.cluster:  # each worker reaches the model through a relay of its own (run_task)
                async with cluster.Cluster(self.options.cluster) as self.cluster:
                    await _all_or_stop([one(d) for d in dispatches])
            else:
                with self.network():
                    await asyncio.gather(*(one(d) for d in dispatches))
        finally:
            self.cluster = None
            self.pool.shutdown(wait=False)
        return dispatches

    @contextlib.contextmanager
    def network(self) -> Iterator[None]:
        """The run's relay to its model API, from its first dispatch to its last: only for sandboxed agents
        whose network is confined and have an endpoint to reach (the demo agent has none)."""
        confined = self.options.sandbox == sandbox.BWRAP and self.options.network == network.MODEL
        allowed = allowed_endpoints(self.executor, self.options.network_allow) if confined else ()
        if not allowed:
            yield
            return
        with network.Relay(allowed) as self.relay:
            try:
                yield
            finally:
                self.relay = None

    async def dispatch(self, dispatch: Dispatch) -> None:
        written = await self._dispatch(dispatch)
        if self.after is not None and dispatch.status in (DONE, FAILED, REUSED, SKIPPED):
            detail = await asyncio.to_thread(self._graded, dispatch, written)
            if detail:
                self._moved(dispatch, detail=detail)

    def _graded(self, dispatch: Dispatch, written: int | None) -> str | None:
        """after (grading), then run.json made durable, when this dispatch wrote it: by the grading's own durable
        point most often (a sync begun after run.json was written covers it), so it is not waited for twice."""
        assert self.after is not None
        try:
            return self.after(dispatch)
        finally:
            if written is not None:
                durable_point(dispatch.folder, since=written)

    async def _dispatch(self, dispatch: Dispatch) -> int | None:
        """The dispatch run (or found done, or reused); when it wrote run.json and its grading follows, the
        mark (formats/save.py) after which a sync makes run.json durable (Runner._graded), else None."""
        record = dispatch.folder / layout.RUN_RECORD
        if finished_record(record, dispatch.key):  # resume: this one is already done
            previous = read_json(record)
            self._moved(dispatch, SKIPPED, f"already {previous['status']}")
            return None
        earlier = self._cached(dispatch.key)
        if earlier is not None and earlier != dispatch.folder:
            await asyncio.to_thread(_restore, earlier, dispatch.folder)
            self._mark_reused(dispatch)
            return None
        if self.budget is not None and not await self.budget.admit():
            self._moved(dispatch, STOPPED, f"not started: {self.budget.stopped.said() if self.budget.stopped else ''}")
            return None
        result: dict | None = None
        try:
            self._moved(dispatch, RUNNING)
            result = await (self.execute(dispatch) if self.cluster is None else self._on_cluster(dispatch))
        finally:
            if self.budget is not None:
                await self.budget.finished(result.get("cost_usd") if result else None)
        written = await asyncio.to_thread(self._written, dispatch, result)  # one hand-off for both files
        self._moved(dispatch, result["status"], result.get("stop_reason") or result.get("error", ""))
        return written

    def _written(self, dispatch: Dispatch, result: dict) -> int | None:
        """run.json (_write_run), then for a finished dispatch its cache entry. With a grading to follow,
        run.json is made durable after it (Runner._graded): the mark to give it; else here, and None."""
        written = _write_run(dispatch, result, settled=self.after is None)
        if result["status"] == DONE:
            # The cache names where the finished dispatch lives; nothing is copied until it is reused. Not synced:
            # lost or torn, it is unreadable and the dispatch runs again (its run.json is checked when reused).
            atomic_write(
                self.cache / f"{dispatch.key}.json",
                json.dumps({"folder": str(dispatch.folder.relative_to(self.workspace))}) + "\n",
                durable=False,
            )
        return written

    def _cached(self, key: str) -> Path | None:
        try:
            named = read_json(self.cache / f"{key}.json")["folder"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        # The cache names a folder of this workspace, never one elsewhere (an absolute or ../ value).
        if not isinstance(named, str) or paths.relative_problem(named, "folder") is not None:
            return None
        folder = self.workspace / named
        if not paths.inside(os.path.realpath(folder), os.path.realpath(self.workspace)):
            return None
        return folder if finished_record(folder / layout.RUN_RECORD, key) else None

    def _mark_reused(self, dispatch: Dispatch) -> None:
        record = dispatch.folder / layout.RUN_RECORD
        data = read_json(record)
        data["reused"] = True
        # Its cost was paid where it was made: here it cost nothing (the figures it was made with are kept).
        if data.get("cost_usd"):
            data["cost_usd_when_made"], data["cost_usd"] = data["cost_usd"], 0.0
        _zero_costs(dispatch.folder)
        atomic_write(record, json.dumps(data, indent=2) + "\n")
        self._moved(dispatch, REUSED, "identical dispatch reused")

    async def _on_cluster(self, dispatch: Dispatch) -> dict:
        """The same execution on a worker: what it needs is read here and shipped as bytes."""
        assert self.cluster is not None
        self._moved(dispatch, detail="on the cluster")
        needs = (dispatch, self.executor, self.options, self.skill_name, self.responder)
        try:
            try:  # every tree it names packed already (all but a run's first dispatches): nothing to read, no hand-off
                task = cluster.task_of(*needs, self.cluster.known)
            except cluster.Unpacked:
                task = await asyncio.to_thread(cluster.task_of, *needs, self.cluster.shelve)
        except OSError as exc:  # a file of the dispatch too big to send, or unreadable: nothing was sent
            said = f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else str(exc)
            return {"status": FAILED, "error": f"the dispatch's files cannot be sent to the cluster: {said}"}
        return await self.cluster.execute(dispatch, task, run_task, freed=_free_slot.get())

    async def execute(self, dispatch: Dispatch) -> dict:
        repo = dispatch.folder / layout.REPO
        started = time.time()
        home = dispatch.folder / AGENT_HOME
        try:
            # One hand-off to a thread makes the workspace, the private home and, sandboxed, the measure of both.
            baseline, private, disk = await asyncio.to_thread(self._prepared, dispatch, repo, home)
            return await self._conversation(dispatch, repo, started, baseline, private, disk)
        finally:  # credentials were copied in: nothing of it stays once the dispatch is over
            if os.path.lexists(home):  # most often gone already: removed by _record, in its hand-off
                await asyncio.to_thread(shutil.rmtree, home, True)

    def _prepared(self, dispatch: Dispatch, repo: Path, home: Path) -> tuple[str, dict[str, str], bounds.Disk | None]:
        """The dispatch's repository at its baseline (its commit), its private home holding the agent's private
        config (and the environment that points the agent at it), and, for a sandboxed agent, what the two hold
        now: what it may grow on disk is measured from the workspace and home as the workbench made them."""
        baseline = ws.prepare(repo, dispatch.case, dispatch.skill_dir, self.skill_name, self.executor.skills_folder)
        shutil.rmtree(home, True)
        home.mkdir(mode=0o700)
        private = self.executor.private_config(home)
        boxed = self.options.sandbox == sandbox.BWRAP
        return baseline, private, bounds.Disk.measured([repo, home]) if boxed else None

    def _confinement(self, dispatch: Dispatch, disk: bounds.Disk | None) -> sandbox.Confinement:
        """One turn's network, bounds and hidden places; its channel to the relay is closed after the turn."""
        hidden = tuple(p for p in (self.workspace, dispatch.skill_dir) if p is not None)
        return sandbox.Confinement(
            self.relay.channel() if self.relay is not None else None,
            self.options.network == network.OPEN,
            self.options.limits,
            disk,
            hidden,
            self.options.show,
            self.places,
        )

    async def _conversation(
        self, dispatch: Dispatch, repo: Path, started: float, baseline: str, private: dict, disk: bounds.Disk | None
    ) -> dict:
        home = dispatch.folder / AGENT_HOME
        boxed = self.options.sandbox == sandbox.BWRAP
        refused: list[str] = []  # endpoints its confined network was refused
        hit: str | None = None
        events: list[Event] = []
        tokens, session = 0, None
        spent: float | None = 0.0  # the agent's cost over its turns; None once a turn's is unknown
        prompts = [dispatch.case.prompt]
        stop_reason, error, stderr_tail = None, None, ""
        responder_outcome: dict | None = None
        killed: list[str] = []  # processes killed at the end of a turn (daemons, timeouts), output cut
        cost_basis = ""
        turn = 0
        while True:
            turn += 1
            dispatch.turn = turn
            self._moved(dispatch, detail=f"turn {turn}")
            events.append(Event("user", turn, text=prompts[-1]))
            command = self.executor.turn(prompts[-1], session)
            command.env = {**command.env, **private}
            held = self._confinement(dispatch, disk) if boxed else None
            try:
                ran: tuple[TurnOutcome | str, str, list[str], str | None]
                try:
                    if held is not None:
                        command = sandbox.wrap(command, repo, home, held)
                except sandbox.LedOut as exc:
                    ran = f"the turn was not started: {exc}", "", [], None
                else:
                    ran = await self._turn(command, repo, turn)
                outcome_or_error, stderr, evidence, hit = ran
            finally:
                if held is not None and held.channel is not None:
                    held.channel.close()
                    refused += [e for e in held.channel.refused if e not in refused]
            killed += evidence
            if isinstance(outcome_or_error, str):
                error, stderr_tail = outcome_or_error, stderr
                spent = None  # the turn ran, and said nothing of what it cost
                break
            outcome = outcome_or_error
            events.extend(outcome.events)
            tokens += outcome.tokens
            if outcome.cost_usd is None and self.options.watch_skill and outcome.usage_cost_usd is not None:
                # Stopped before its result event said the cost: priced from the calls' stated usage, a lower
                # bound (docs/triggers.md), said in run.json.
                outcome.cost_usd, cost_basis = outcome.usage_cost_usd, "usage before the stop, priced (at least)"
            spent = cost.add(spent, outcome.cost_usd)
            session = outcome.session_id or session
            if outcome.garbage and not outcome.events:
                error = f"the agent printed no stream-json events ({len(outcome.garbage)} other lines)"
                stderr_tail = "\n".join(outcome.garbage)[-STDERR_TAIL:]
                break
            if self.options.watch_skill:  # one turn: whether the skill is used is decided in it
                stop_reason = "triggering decided" if outcome.decided else None
                error = None if outcome.decided else undecided(outcome)
                break
            if dispatch.case.responder is not None:
                said, stop_reason, ending = await self._responder_turn(dispatch, prompts, outcome, turn, events)
                if said is None:
                    responder_outcome = ending
                    break
                prompts.append(said)
                continue
            scripted = dispatch.case.turns
            if turn > len(scripted):
                break
            nxt = scripted[turn - 1]
            reason = deliver_reason(nxt, outcome.last_assistant_text)
            if reason:
                stop_reason = reason
                break
            events.append(Event("turn", turn, text=f"scripted turn {turn} delivered"))
            prompts.append(nxt["prompt"])
        ended = time.time()
        timing = {
            "total_tokens": tokens,
            "duration_ms": round((ended - started) * 1000),
            "total_duration_seconds": round(ended - started, 3),
            "executor_start": iso(started),
            "executor_end": iso(ended),
            "executor_duration_seconds": round(ended - started, 3),
        }
        # Off the event loop: file syncs would otherwise hold up every other dispatch.
        try:
            spent = round(spent, 6) if spent is not None else None
            changes = await asyncio.to_thread(self._record, dispatch, repo, baseline, events, timing, spent)
        except RepositoryBroken as exc:
            atomic_write(dispatch.folder / layout.TRANSCRIPT, jsonl(events), durable=False)
            changes, error = ws.Changes([], "", []), str(exc)
        return {
            "status": FAILED if error else DONE,
            "error": error,
            "stderr_tail": stderr_tail,
            "stop_reason": stop_reason,
            "turns": turn,
            "session_id": session,
            "baseline_commit": baseline,
            "changed_files": changes.files,
            **({"final_tree": changes.final_tree} if changes.final_tree else {}),
            **({"workspace_notes": changes.notes} if changes.notes else {}),
            "killed": killed,
            "sandbox": self.options.sandbox,
            "network": network.MODEL if boxed and self.options.network == network.MODEL else network.OPEN,
            **({"network_refused": refused} if refused else {}),
            **({"bound": hit} if hit else {}),
            "cost_usd": spent,
            **({"cost_basis": cost_basis} if cost_basis and spent is not None else {}),
            **({"responder_outcome": responder_outcome} if responder_outcome else {}),
        }

    async def _responder_turn(
        self, dispatch: Dispatch, prompts: list[str], outcome: TurnOutcome, turn: int, events: list[Event]
    ) -> tuple[str | None, str | None, dict | None]:
        """The simulated user's next words, or None with the stop reason and how it
        ended. Every consultation is kept under <run>/responder/turn-<n>/, outside the
        repository the agent works in."""
        if self.responder is None:
            return (
                None,
                responder.CANNOT_ANSWER,
                {
                    "ending": responder.CANNOT,
                    "cause": "dispatch_failed",
                    "rationale": "no judge was given to play the simulated user",
                },
            )
        seen = responder.Seen(prompts[0], prompts[1:], outcome.last_assistant_text)
        found = await asyncio.to_thread(responder.consult, self.responder, seen)
        folder = dispatch.folder / "responder" / f"turn-{turn}"
        await asyncio.to_thread(_keep_consultation, folder, found, self.responder.label)
        if found.verdict == responder.ANSWER and turn > responder.max_turns(dispatch.case.responder):
            # Still asking at the bound: the runner's stop, not a verdict, so no responder_outcome.
            events.append(Event("turn", turn, text="responder stopped: max_turns reached"))
            return None, responder.MAX_TURNS_REACHED, None
        if found.verdict == responder.ANSWER:
            why = f": {found.rationale}" if found.rationale else ""
            events.append(Event("turn", turn, text=f"responder turn {turn} delivered ({self.responder.label}){why}"))
            return found.reply, None, None
        ending = {"ending": found.verdict, **({"cause": found.cause} if found.cause else {})}
        if found.rationale:
            ending["rationale"] = found.rationale
        events.append(Event("turn", turn, text=f"responder ended the conversation: {found.verdict}"))
        return None, (None if found.verdict == responder.DONE else responder.CANNOT_ANSWER), ending

    @staticmethod
    def _record(
        dispatch: Dispatch, repo: Path, baseline: str, events: list[Event], timing: dict, spent: float | None
    ) -> ws.Changes:
        """The private home removed (its last turn is over), then outputs, transcript.jsonl, metrics.json and
        timing.json; run.json comes after. One hand-off for both: the home's removal was one of its own."""
        shutil.rmtree(dispatch.folder / AGENT_HOME, True)
        try:
            changes = ws.changed_files(repo, baseline)
        except (OSError, ValueError) as exc:
            # The workspace is no longer a folder, or the run's own store cannot be read: recorded, as failed.
            raise RepositoryBroken(f"the agent's workspace can no longer be read: {exc}") from None
        changed = changes.files
        output_chars = ws.copy_outputs(repo, dispatch.folder / layout.OUTPUTS, changed)
        created = [name for name in changed if not any(name == place for _, place in dispatch.case.files)]
        folder = dispatch.folder
        # Not synced one by one: run.json's durable point (_write_run) makes them all durable before it.
        atomic_write(folder / layout.TRANSCRIPT, jsonl(events), durable=False)
        run_metrics = metrics(events, created, output_chars)
        run_metrics["cost_usd"] = spent  # the agent's, in dollars; null: it did not say (docs/cost.md)
        atomic_write(folder / layout.METRICS, json.dumps(run_metrics, indent=2) + "\n", durable=False)
        atomic_write(folder / layout.TIMING, json.dumps(timing, indent=2) + "\n", durable=False)
        viewer_files.write(folder, eval_metadata(dispatch.case), events, run_metrics, changed)
        return changes

    async def _turn(
        self, command: TurnCommand, cwd: Path, turn: int
    ) -> tuple[TurnOutcome | str, str, list[str], str | None]:
        """Run one turn, bounded like every child (workbench/runs/processes.py): its
        whole tree is killed when it ends, at the timeout, on cancel or at a bound of its sandbox.
        (outcome, stderr tail, what was killed or cut, None), or (why it failed, stderr tail, the same,
        the bound it hit or None)."""
        if command.call is not None:
            return await self._called(command.call, cwd, turn)
        argv = ["/bin/sh", "-c", command.shell] if command.shell is not None else list(command.argv or ())
        watched = self.options.watch_skill
        decided = functools.partial(_decided, self.executor, turn, watched) if watched else None

        try:
            finished = await run_bounded_async(
                argv,
                self.pool,
                stdin=command.stdin,
                timeout=self.options.timeout,
                cwd=cwd,
                env=command.env,
                contained=self.options.sandbox == sandbox.BWRAP,  # its pid namespace dies whole
                decided=decided,
                bounds=command.bounds,
            )
        except OSError as exc:
            return f"could not start the agent: {exc.strerror or exc}", "", [], None
        tail = finished.stderr[-STDERR_TAIL:]
        evidence = [f"turn {turn}: {line}" for line in finished.killed + finished.cut]
        if finished.bound:  # first: a bound hit explains whatever else went wrong after it
            return f"the agent {finished.bound} (its process tree was killed)", tail, evidence, finished.bound
        if self.options.watch_skill and finished.cut and not finished.decided:
            # What was cut may have held the skill's use: not a "did not trigger".
            return f"its output passed {OUTPUT_LIMIT:,} bytes before triggering was decided", tail, evidence, None
        if finished.decided:  # stopped on purpose: what it printed up to there is the turn
            outcome = self.executor.parse(finished.stdout, turn)
            outcome.decided = True
            return outcome, tail, evidence, None
        if finished.timed_out:
            why = f"timed out after {self.options.timeout:g} s (the agent's process tree was killed)"
            return why, tail, evidence, None
        if finished.code != 0:
            hint = f" ({SANDBOX_HINT})" if self.options.sandbox == sandbox.BWRAP else ""
            said = first_line(finished.stderr)  # most often the reason; the tail stays in run.json
            return (
                f"the agent exited with status {finished.code}{hint}" + (f": {said}" if said else ""),
                tail,
                evidence,
                None,
            )
        return self.executor.parse(finished.stdout, turn), tail, evidence, None

    async def _called(
        self, call: Callable[[Path], str], cwd: Path, turn: int
    ) -> tuple[TurnOutcome | str, str, list[str], None]:
        """A turn of an agent that runs in this process (TurnCommand.call), in a thread, within the timeout."""
        try:
            stdout = await asyncio.wait_for(asyncio.to_thread(call, cwd), self.options.timeout)
        except TimeoutError:
            return f"timed out after {self.options.timeout:g} s", "", [], None
        except Exception as exc:  # noqa: BLE001 - the agent's own failure: the turn's, said in run.json
            return f"the agent failed: {exc}", "", [], None
        return self.executor.parse(stdout, turn), "", [], None


def allowed_endpoints(executor: Executor, extra: tuple[str, ...] | list[str]) -> tuple[network.Endpoint, ...]:
    """What a sandboxed agent's confined network reaches: its executor's model API, as this machine's
    environment and config say, and `extra` (the config's network_allow). ValueError names a malformed one."""
    found = []
    for text in [*executor.model_endpoints(), *extra]:
        try:
            found.append(network.endpoint(text))
        except ValueError as exc:
            raise ValueError(f"the agent's model API: {exc}") from None
    return tuple(sorted(set(found)))


def first_line(stderr: str, most: int = 300) -> str:
    """The first line a failing program printed on stderr, which most often says why (an interpreter
    not found, a missing key), cut at `most` characters."""
    line = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
    return line if len(line) <= most else line[: most - 1] + "…"


def undecided(outcome: TurnOutcome) -> str | None:
    """Why a trigger run's turn that ended by itself says nothing of triggering (None: it does): an error
    result, or no message and no result at all. Never read as "did not trigger"."""
    if outcome.is_error:
        return f"the agent's turn ended in an error: {(outcome.result_text or '')[:300]}"
    if outcome.result_text is None and not any(e.kind in (ASSISTANT, TOOL_USE) for e in outcome.events):
        return "the agent printed no message and no result: nothing says whether it used the skill"
    return None


def _decided(executor: Executor, turn: int, skill_name: str, lines: str) -> bool:
    """Whether the new lines of a trigger run's stdout decide if the watched skill is used. Each run of lines
    is parsed once, as it comes; the lines before it decided nothing, and the first deciding event wins
    (workbench/runs/skill_use.py), so only the new events need looking at."""
    return skill_use.decide(executor.parse(lines, turn).events, skill_name) is not None


# Runner.run's slot of the running dispatch, given back at once. On a cluster the slot is the worker thread:
# it is free as soon as the worker has finished the dispatch, while this machine fetches its reply, writes its
# run folder and grades it (Cluster.execute); locally the slot is held to the end, as the work is all here.
_free_slot: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("free_slot", default=None)


async def _all_or_stop(work: list) -> None:
    """Every dispatch, or on the first error (the scheduler went away) the others stopped: what had not
    finished has no run.json, and the same command resumes it."""
    tasks = [asyncio.ensure_future(one) for one in work]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def run_task(task: cluster.Task) -> dict:
    """What a cluster's worker runs for one dispatch: the private workspace built from the shipped bytes
    in a temporary folder (removed once the reply has gone), the same execution as a local run
    (Runner.execute), the run folder back as bytes.
    Each move of the dispatch (its turns, its simulated user's answers) is a sign of progress sent to the
    submitting machine (cluster.mark)."""
    root = Path(tempfile.mkdtemp(prefix="workbench-dispatch-"))
    try:
        case, skill_dir = cluster.materialise(task, root)
        folder = root / "run"
        refused = cluster.sandbox_problem(task.options)
        if refused:
            return {"result": {"status": FAILED, "error": refused, "sandbox": task.options.sandbox}, "files": {}}
        dispatch = Dispatch(case, task.configuration, task.run_number, skill_dir, folder, key=task.key)
        runner = Runner(
            task.executor,
            root,
            task.skill_name,
            task.options,
            on_change=lambda moved: cluster.mark(moved.detail or moved.status),
            responder=cluster.consulting(task.responder),
        )
        runner.pool = cluster.turns()  # the worker thread's own, kept from one dispatch to the next
        with runner.network():  # the worker's own relay to the model, for this dispatch
            result = cluster.cancellable(lambda: runner.execute(dispatch))
        cluster.mark("sending the run folder back")
        try:
            files = cluster.pack(folder) if folder.exists() else {}
        except (OSError, ValueError) as exc:  # a run folder too big to send, or unreadable: the run failed
            error = f"the run folder cannot be sent back: {getattr(exc, 'strerror', None) or exc}"
            return {"result": {**result, "status": FAILED, "error": error}, "files": {}}
        return {"result": result, "files": files}
    finally:
        cluster.discard_later(root)  # after the reply: its slot does not wait for the removal


def _keep_consultation(folder: Path, found: responder.Consultation, label: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / "prompt.txt", found.prompt, sync_dir=False)
    atomic_write(
        folder / "verdict.json", json.dumps({"responder": label, **found.record()}, indent=2) + "\n", sync_dir=False
    )


def _zero_costs(folder: Path) -> None:
    """A reused run's metrics and grading say $0: the iteration that reuses it paid nothing for it."""
    for name, keys in ((layout.METRICS, ("cost_usd",)), (layout.GRADING, ("judge_cost_usd",))):
        try:
            data = read_json(folder / name)
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        for key in keys:
            if data.get(key):
                data[key] = 0.0
        if name == layout.GRADING and isinstance(data.get("execution_metrics"), dict):
            if data["execution_metrics"].get("cost_usd"):
                data["execution_metrics"]["cost_usd"] = 0.0
        atomic_write(folder / name, json.dumps(data, indent=2) + "\n", sync_dir=False)


def deliver_reason(turn: dict, last_reply: str) -> str | None:
    """None when a scripted turn is delivered; else why the conversation stops."""
    if turn.get("deliver_when") == "always":
        return None
    if "?" not in last_reply:
        return "agent_did_not_ask"
    pattern = turn.get("agent_response_matches")
    if pattern and rust_regex.compile(pattern).search(last_reply) is None:
        return "agent_response_mismatch"
    return None


def iso(stamp: float) -> str:
    """A Unix time as the artifacts write it: UTC, seconds, Z."""
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class RepositoryBroken(Exception):
    """The agent's workspace cannot be measured any more (it is not a folder, or the run's store is broken)."""


def finished_record(record: Path, key: str) -> bool:
    try:
        data = read_json(record)
    except (OSError, ValueError):
        return False
    return data.get("key") == key and data.get("status") in (DONE, FAILED)


def _write_run(dispatch: Dispatch, result: dict, settled: bool = True) -> int | None:
    """run.json is written last: its presence means every other file is complete,
    so a run killed midway is simply run again. One durable point before it (everything the dispatch wrote
    reaches the disk, shared with the dispatches ending at the same time) and one after it, instead of a
    sync per file: a power cut never leaves a run.json vouching for files the disk does not hold.
    settled=False: the one after it is the caller's, from the mark returned (durable_point's since), so that
    the grading's durable point that follows serves it too; a power cut before it loses run.json, and the
    dispatch runs again."""
    record = {
        "key": dispatch.key,
        "eval_id": dispatch.case.eval_id,
        "configuration": dispatch.configuration,
        "run_number": dispatch.run_number,
        "reused": False,
        **result,
    }
    dispatch.folder.mkdir(parents=True, exist_ok=True)
    durable_point(dispatch.folder)
    atomic_write(dispatch.folder / layout.RUN_RECORD, json.dumps(record, indent=2, default=str) + "\n", durable=False)
    if not settled:
        return mark(dispatch.folder)
    durable_point(dispatch.folder)
    return None


def _restore(earlier: Path, folder: Path) -> None:
    """A finished dispatch's folder copied whole, then renamed into place: a copy
    killed midway never leaves a run.json beside half of the files it vouches for.
    What the agent left there is copied without following a link (runs/agent_files.py)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        agent_files.copy(earlier, aside)  # as it is: links as links, never followed; pipes left out
        if folder.exists():
            shutil.rmtree(folder)
        os.rename(aside, folder)
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def failures(workspace: Path, iteration: int) -> set[str]:
    """Eval ids that failed in an iteration (for --failed): a dispatch that failed,
    or a with-skill run with a failed expectation (the baseline is expected to fail)."""
    out = set()
    for run in layout.runs(layout.iteration_dir(workspace, iteration)):
        try:
            data = read_json(Path(run.path, layout.RUN_RECORD))
        except (OSError, ValueError):
            continue
        grading = Path(run.path, layout.GRADING)
        graded_fail = False
        if grading.exists() and run.configuration == WITH:
            try:
                graded_fail = read_json(grading).get("summary", {}).get("failed", 0) > 0
            except (OSError, ValueError):
                graded_fail = True
        if data.get("status") == FAILED or graded_fail:
            out.add(run.case_id)
    return out
