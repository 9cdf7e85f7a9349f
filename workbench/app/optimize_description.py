"""`workbench optimize-description` (docs/triggers.md): a better description,
selected on queries the proposer never saw.

The trigger set is split once into train and held-out queries (stratified,
seeded, saved in <workspace>/triggers/optimize/<set>/split.json; the same set and share
reuse it). The starting description (the current best version's) is measured
on both. Each round the proposer (the improve loop's) rewrites the description
from the train queries it got wrong; the candidate is checked against the
Agent Skills spec's limits before anything is measured, then measured on train
(for the next brief) and on held-out. It is kept, as a new version whose parent
is the one it came from, only when its held-out accuracy beats the best so far:
the train score is never the result. Every round is logged in
<workspace>/triggers/optimize/<set>/optimize.json."""

from __future__ import annotations

import hashlib
import json
import secrets
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from workbench.app import preflight, triggers
from workbench.app import trust as app_trust
from workbench.app.choices import Proposer
from workbench.app.pipeline import Untrusted
from workbench.app.placement import hold
from workbench.errors import Refused
from workbench.formats.regular import read_json
from workbench.formats.save import atomic_write
from workbench.grading.trigger_results import QueryResult, Scores
from workbench.improve import description
from workbench.improve.history import load_history, new_version
from workbench.improve.proposal import propose
from workbench.runs import sandbox
from workbench.runs.executors import Executor
from workbench.workspace import journal
from workbench.workspace.layout import default_workspace
from workbench.workspace.versions import VersionStore

SPLIT = "split.json"
LOG = "optimize.json"
SCORE = "accuracy"  # what selects: the held-out share of runs that did as their query says
SURE = 3  # held-out queries of each class below which a kept description is said to rest on few


@dataclass(frozen=True)
class OptimizeRequest:
    trigger: triggers.TriggerRequest  # the measurements' options (executor, runs, limits)
    rounds: int = 3
    holdout: float = description.DEFAULT_HOLDOUT
    seed: int | None = None  # None: a new split draws one (and saves it)
    proposer: Proposer = field(default_factory=Proposer)


@dataclass
class Measured:
    description: str
    train: Scores
    held_out: Scores
    train_queries: list[QueryResult]
    cost_usd: float = 0.0

    def score(self) -> float:
        return self.held_out.value(SCORE) or 0.0


@dataclass
class Optimization:
    split: dict
    start: Measured | None = None
    best: Measured | None = None
    best_version: str = ""
    start_version: str = ""
    executor: str = ""  # the agent the descriptions were measured with
    rounds: list[dict] = field(default_factory=list)  # this command's (optimize.json keeps every one)
    spent: float = 0.0
    stopped: str = ""


def optimize_folder(workspace: Path, queries_file: Path) -> Path:
    """<workspace>/triggers/optimize/<set>-<8 hex>: each trigger set keeps its own split and log."""
    tag = hashlib.sha256(str(queries_file.resolve()).encode()).hexdigest()[:8]
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in queries_file.stem)[:40] or "set"
    return workspace / triggers.FOLDER / "optimize" / f"{stem}-{tag}"


def _digest(queries: list[triggers.Query]) -> str:
    return hashlib.sha256(json.dumps([[q.query, q.should_trigger] for q in queries]).encode()).hexdigest()


def load_split(folder: Path, queries: list[triggers.Query], holdout: float, seed: int | None) -> dict:
    """The saved split when it is of this set, share and seed; else a new one, saved (atomically). A
    split.json that cannot be read, or whose indices are not the set's, is an error: never replaced silently."""
    digest = _digest(queries)
    path = folder / SPLIT
    saved = None
    if path.exists():
        try:
            saved = read_json(path)
        except (OSError, ValueError) as exc:
            raise Refused(f"{path} cannot be read ({exc}); move it aside to draw a new split") from None
        if not isinstance(saved, dict):
            raise Refused(f"{path} is not a split (an object); move it aside to draw a new split")
    if (
        saved is not None
        and saved.get("queries") == digest
        and saved.get("holdout") == holdout
        and (seed is None or saved.get("seed") == seed)
    ):
        if not _indices(saved, len(queries)) or not _both_classes(saved, queries):
            raise Refused(f"{path} does not split this set's queries in two; move it aside to draw a new split")
        return saved
    # Another set, share or seed: a new split (the old one named other queries, or was asked otherwise).
    seed = seed if seed is not None else secrets.randbelow(2**31)
    train, held = description.split([q.should_trigger for q in queries], holdout, seed)
    made = {"queries": digest, "holdout": holdout, "seed": seed, "train": train, "held_out": held}
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(made, indent=2) + "\n")
    return made


def _both_classes(saved: dict, queries: list[triggers.Query]) -> bool:
    return all({queries[i].should_trigger for i in saved[part]} == {True, False} for part in ("train", "held_out"))


def _indices(saved: dict, count: int) -> bool:
    """train and held_out are disjoint lists of query indices, both non-empty (a split of `count` queries)."""
    parts = [saved.get("train"), saved.get("held_out")]
    if not all(isinstance(p, list) and p and all(type(i) is int and 0 <= i < count for i in p) for p in parts):
        return False
    train, held = parts
    assert isinstance(train, list) and isinstance(held, list)
    # Disjoint, together the whole set, with both classes on each side (a forged split could hold out one query).
    return not set(train) & set(held) and len(set(train) | set(held)) == count and len(train) + len(held) == count


@dataclass
class Asks:
    """What an optimization would run that is not trusted yet: the proposer command, and the agent its
    measurements use as `trigger` resolves it (the config's executor included). Raises WorkbenchError when
    the measurements cannot be prepared."""

    request: OptimizeRequest

    def untrusted(self) -> list[str]:
        return app_trust.asks([self._proposer()]) + triggers.prepare(self.request.trigger).untrusted()

    def trust(self) -> None:
        app_trust.trust([self._proposer()])
        triggers.prepare(self.request.trigger).trust()

    def _proposer(self) -> app_trust.Program:
        return self.request.proposer.program("a copy of the skill's files")


def ready(request: OptimizeRequest) -> tuple[Executor, sandbox.Holding]:
    """The proposer and the sandbox it runs in, once it is known to start as it will run. Raises
    WorkbenchError."""
    proposer = request.proposer.executor()
    mode = hold(request.trigger.placement.sandbox, request.trigger.placement.network, proposer)
    preflight.check(preflight.of_executor(proposer, "proposer", mode.sandbox))
    return proposer, mode


def optimize(
    request: OptimizeRequest, say: Callable[[str], None], cancel: threading.Event | None = None
) -> Optimization:
    """The loop. Raises WorkbenchError when it cannot start (untrusted commands are the caller's to ask)."""
    base = request.trigger
    skill_dir = base.skill_dir.resolve()
    workspace = (base.placement.workspace or default_workspace(skill_dir)).resolve()
    base = replace(base, skill_dir=skill_dir, placement=replace(base.placement, workspace=workspace))
    queries = triggers.read_queries((base.queries or triggers.default_queries(skill_dir)).resolve())
    if sum(q.should_trigger for q in queries) < 2 or sum(not q.should_trigger for q in queries) < 2:
        raise Refused(
            "the set needs at least 2 queries that should trigger and 2 that should not: each side is split "
            "into train and held-out queries"
        )
    asks = Asks(request).untrusted()
    if asks:
        raise Untrusted(asks)
    proposer, mode = ready(request)  # before the split is drawn and saved
    queries_file = (base.queries or triggers.default_queries(skill_dir)).resolve()
    folder = optimize_folder(workspace, queries_file)
    chosen = load_split(folder, queries, request.holdout, request.seed)
    train, held = tuple(chosen["train"]), tuple(chosen["held_out"])
    done = Optimization(chosen)
    say(
        f"split (seed {chosen['seed']}): {len(train)} train queries, {len(held)} held-out, kept in {folder / SPLIT}; "
        "the proposer sees only the train ones"
    )
    held_classes = [queries[i].should_trigger for i in held]
    if min(sum(held_classes), len(held_classes) - sum(held_classes)) < SURE:
        say(
            f"warning: {len(held)} held-out queries ({sum(held_classes)} that should trigger, "
            f"{len(held_classes) - sum(held_classes)} that should not): a kept description rests on few queries; "
            "more queries in the set make the choice surer"
        )
    journal.recover_now(workspace, skill_dir)
    store = VersionStore(workspace)
    first = triggers.prepare(replace(base, subset=train))
    name, done.executor = first.skill_name, first.executor.label
    for warning in first.warnings:
        say(f"warning: {warning}")
    if load_history(workspace, store) is None:
        version, _ = new_version(workspace, store, skill_dir, name, None, base.placement.wait, say)
        say(f"{version}: the baseline, a snapshot of {skill_dir}")
    history = load_history(workspace, store)
    assert history is not None
    current = history.current_best
    log = _log(folder)
    with tempfile.TemporaryDirectory(prefix="workbench-describe-") as private:
        start = Path(private) / "start" / name
        start.parent.mkdir()
        store.materialize(current, start)
        try:
            done.start = done.best = _measure(base, start, train, held, "start", say, cancel)
        except triggers.Cancelled:
            done.stopped = "stopped by you, while the start was measured"
            return done
        done.best_version = done.start_version = current
        done.spent += done.start.cost_usd
        say(
            f"{current}: held-out {done.start.held_out.line(SCORE)} (the score that selects); "
            f"train {done.start.train.line(SCORE)}"
        )
        tried: list[str] = []
        for number in range(1, request.rounds + 1):
            if cancel is not None and cancel.is_set():
                done.stopped = "stopped by you"
                break
            if base.limits.max_cost is not None and done.spent >= base.limits.max_cost:
                done.stopped = f"the cost limit: spent ${done.spent:.2f} of ${base.limits.max_cost:.2f}"
                break
            assert done.best is not None
            entry = {
                "round": len(log) + 1,
                "from": done.best_version,
                "queries_file": str(queries_file),
                "executor": done.executor,
                "seed": chosen["seed"],
                "best_held_out": done.best.held_out.value(SCORE),  # the score to beat
                "best_train": done.best.train.value(SCORE),
            }
            candidate = Path(private) / f"round-{number}" / name
            candidate.parent.mkdir()
            store.materialize(done.best_version, candidate)
            before = store.files(done.best_version)
            text = description.brief(name, done.best.description, done.best.train_queries, tried)
            say(f"round {entry['round']}: proposing a description from {done.best_version}'s train misses")
            proposal = propose(proposer, candidate, text, before, mode, request.proposer.timeout, cancel)
            done.spent += proposal.cost_usd or 0.0
            new, refused = (None, proposal.refused)
            if refused is None:
                new, refused = description.description_only(
                    before.get("SKILL.md", b""), description.read_skill_md(candidate), proposal.changed
                )
            if refused is not None or new is None:
                entry.update(outcome=f"refused: {refused}", said=proposal.said[:500])
                say(f"round {entry['round']}: the proposal is refused: {refused}")
                log.append(entry)
                done.rounds.append(entry)
                _save_log(folder, log)
                continue
            try:
                measured = _measure(base, candidate, train, held, f"round {entry['round']}", say, cancel)
            except triggers.Cancelled:
                done.stopped = "stopped by you"
                break
            done.spent += measured.cost_usd
            entry.update(
                description=new,
                held_out={SCORE: measured.held_out.value(SCORE), **measured.held_out.as_json()},
                train={SCORE: measured.train.value(SCORE), **measured.train.as_json()},
            )
            verdict = f"held-out {measured.held_out.line(SCORE)} against the best's {done.best.held_out.line(SCORE)}"
            if measured.score() > done.best.score() + 1e-12:
                version, _parent = new_version(
                    workspace, store, candidate, name, done.best_version, base.placement.wait, say
                )
                entry.update(outcome="kept", version=version)
                say(f"round {entry['round']}: kept as {version}: {verdict}")
                done.best, done.best_version = measured, version
            else:
                entry.update(outcome="rejected")
                tried.append(new)
                train_note = (
                    f" (its train {SCORE} rose to {measured.train.value(SCORE):.2f}: fitted to the train queries)"
                    if (measured.train.value(SCORE) or 0) > (done.best.train.value(SCORE) or 0)
                    else ""
                )
                say(f"round {entry['round']}: rejected: {verdict}{train_note}")
            log.append(entry)
            done.rounds.append(entry)
            _save_log(folder, log)
        else:
            done.stopped = f"all {request.rounds} round(s) done"
    return done


def _measure(
    base: triggers.TriggerRequest,
    source: Path,
    train: tuple[int, ...],
    held: tuple[int, ...],
    what: str,
    say: Callable[[str], None],
    cancel: threading.Event | None = None,
) -> Measured:
    """The description in `source` measured on the train queries and on the held-out ones."""
    scores = {}
    spent = 0.0
    kept: list[QueryResult] = []
    for label, subset in (("train", train), ("held-out", held)):
        prepared = triggers.prepare(replace(base, subset=subset, source=source, label=f"{what}: {label}"))
        results = triggers.run(prepared, say=say, cancel=cancel)
        if results.errors or results.stopped:
            raise Refused(
                f"{what}: the {label} measurement did not finish ({results.stopped or f'{results.errors} error(s)'}): "
                f"see {results.iteration}"
            )
        scores[label] = results.scores
        spent += results.cost_usd
        if label == "train":
            kept = results.queries
    return Measured(triggers.read_description(source), scores["train"], scores["held-out"], kept, spent)


def _log(folder: Path) -> list:
    try:
        data = read_json(folder / LOG)
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise Refused(f"{folder / LOG} cannot be read ({exc}); move it aside to start a new log") from None
    if not isinstance(data, list):
        raise Refused(f"{folder / LOG} is not a list of rounds; move it aside to start a new log")
    return data


def _save_log(folder: Path, log: list) -> None:
    atomic_write(folder / LOG, json.dumps(log, indent=2, ensure_ascii=False) + "\n")


def progress(workspace: Path, queries_file: Path) -> str:
    """One line on this set's saved split and its last optimization's rounds, for the Triggers screen."""
    folder = optimize_folder(workspace, queries_file)
    try:
        chosen = read_json(folder / SPLIT)
        said = (
            f"split (seed {chosen['seed']}): {len(chosen['train'])} train, {len(chosen['held_out'])} held-out queries"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    try:
        log = _log(folder)
    except Refused as exc:
        return f"{said}; {exc}"
    kept = [e for e in log if isinstance(e, dict) and e.get("outcome") == "kept"]
    if not log:
        return said
    if not kept:
        return f"{said}; {len(log)} round(s), none kept"
    best = kept[-1]
    held = best.get("held_out", {}).get(SCORE) if isinstance(best.get("held_out"), dict) else None
    shown = f"{held:.2f}" if isinstance(held, (int, float)) else "?"
    return f"{said}; {len(log)} round(s); last kept: {best.get('version')}, held-out {SCORE} {shown}"
