"""`workbench improve`: from failed expectations to a better version, measured,
in one loop (docs/improve.md, "workbench improve").

Each round: a brief from the current best (workbench/improve/brief.py), a
proposer rewriting a private copy of its files (workbench/improve/proposal.py),
the changed files as a new version whose parent is the best, evaluated against
the best by the one pipeline with the same rule as `evaluate`, and
analysis.json saying which assertions flipped (workbench/improve/analysis.py).
It stops on --rounds, on --patience rounds without a win, on --max-cost, or on
a win: without --auto-promote a person chooses what to promote; with it, the
winner becomes the best and the loop goes on from it until nothing fails.
Every round is kept in <workspace>/improve.json."""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from workbench.app import pipeline, preflight
from workbench.app import trust as app_trust
from workbench.app.choices import Proposer
from workbench.app.placement import hold
from workbench.errors import Refused
from workbench.formats import skill_md
from workbench.formats.regular import read_json
from workbench.formats.save import atomic_write
from workbench.improve import brief
from workbench.improve.history import load_history, new_version, read_evaluations
from workbench.improve.proposal import Proposal, check, propose
from workbench.runs import sandbox
from workbench.runs.executors import Executor
from workbench.workspace import journal
from workbench.workspace.layout import default_workspace
from workbench.workspace.versions import VersionStore

# What the History screen's proposing holds, named at the application layer (with Executor and Proposal above).
Holding = sandbox.Holding

LOG = "improve.json"


@dataclass(frozen=True)
class ImproveRequest:
    run: pipeline.RunRequest  # the evaluation's options (executor, judge, runs, limits); version is set per round
    proposer: Proposer = field(default_factory=Proposer)
    rounds: int = 3
    patience: int = 2  # rounds without a win before it stops
    max_cost: float | None = None  # dollars for the whole loop: proposers and evaluations
    auto_promote: bool = False


@dataclass
class Round:
    round: int
    base: str  # the best it started from
    version: str | None = None
    outcome: str = ""  # won / lost / tie / refused: ... / not recorded
    proposal: str = ""  # what the proposer changed, or why it was refused
    said: str = ""  # the proposer's own account
    cost_usd: float | None = None  # proposer and evaluation together (None: a part unknown)
    dispatches: int = 0
    iteration: str | None = None
    promoted: bool = False
    proposer_failed: bool = False  # the proposer did not run to its end: nothing was proposed, nothing measured

    def as_json(self) -> dict:
        return {
            "round": self.round,
            "from": self.base,
            "version": self.version,
            "outcome": self.outcome,
            "proposal": self.proposal,
            "said": self.said[:2000],
            "cost_usd": self.cost_usd,
            "dispatches": self.dispatches,
            "iteration": self.iteration,
            "promoted": self.promoted,
        }


@dataclass
class Improvement:
    rounds: list[Round] = field(default_factory=list)
    stopped: str = ""  # why the loop ended
    spent: float = 0.0  # dollars known


def proposer_program(proposer: Executor, mode: str | sandbox.Holding) -> None:
    """The proposer starts, as it will run (sandboxed when the agents are): before anything is spent."""
    preflight.check(preflight.of_executor(proposer, "proposer", mode if isinstance(mode, str) else mode.sandbox))


def ready(request: ImproveRequest) -> tuple[Executor, sandbox.Holding, pipeline.Prepared]:
    """The proposer, the sandbox it runs in, and an evaluation of the skill as it is, prepared: each
    program the loop starts (proposer, agent, judge) is there and starts, and the suite can run, before
    anything is snapshot, measured or spent. Raises WorkbenchError."""
    proposer = request.proposer.executor()
    mode = hold(request.run.placement.sandbox, request.run.placement.network, proposer)
    proposer_program(proposer, mode)
    return proposer, mode, pipeline.prepare(replace(request.run, version=None))


def untrusted(request: ImproveRequest) -> list[str]:
    """The proposer command, when untrusted (the evaluations ask for theirs)."""
    return app_trust.asks([_proposer(request)])


def trust_proposer(request: ImproveRequest) -> None:
    app_trust.trust([_proposer(request)])


def _proposer(request: ImproveRequest) -> app_trust.Program:
    return request.proposer.program("a copy of the best version's files")


def improve(
    request: ImproveRequest,
    say: Callable[[str], None],
    trusted: Callable[[list[str]], bool],
) -> Improvement:
    """Run the loop. `trusted(commands)` is asked before anything not trusted runs (the evaluations'
    agent, judge and suite commands); False stops the loop."""
    skill_dir = request.run.skill_dir.resolve()
    workspace = (request.run.placement.workspace or default_workspace(skill_dir)).resolve()
    name = skill_md.read_name(skill_dir / "SKILL.md") or skill_dir.name
    proposer, mode, _each = ready(request)  # before the baseline is snapshot or measured
    asks = untrusted(request)
    if asks and not trusted(asks):
        raise Refused("the proposer command is not trusted")
    trust_proposer(request)
    journal.recover_now(workspace, skill_dir)
    store = VersionStore(workspace)
    done = Improvement()
    log = _log(workspace)
    if load_history(workspace, store) is None:
        version, _ = new_version(workspace, store, skill_dir, name, None, request.run.placement.wait, say)
        say(f"{version}: the baseline, a snapshot of {skill_dir}")
    history = load_history(workspace, store)
    assert history is not None
    if history.current_best not in read_evaluations(workspace):
        say(f"measuring {history.current_best}, the best, first: its failures are what the proposer works from")
        outcome = _evaluate(request, history.current_best, done, trusted)
        if outcome is None:
            done.stopped = "the best could not be measured"
            return done
    without_win = 0
    for _ in range(request.rounds):
        if request.max_cost is not None and done.spent >= request.max_cost:
            done.stopped = f"the cost limit: spent ${done.spent:.2f} of ${request.max_cost:.2f}"
            break
        history = load_history(workspace, store)
        assert history is not None
        best = history.current_best
        this = Round(len(log) + 1, best)
        say(f"round {this.round}: proposing from {best} with the {proposer.label}")
        text = brief.build(workspace, store, best, name, read_log(workspace))
        proposal, this.version = propose_version(
            workspace,
            store,
            best,
            name,
            proposer,
            text,
            mode,
            request.proposer.timeout,
            request.run.placement.wait,
            say,
        )
        this.proposal, this.said, this.cost_usd = proposal.summary, proposal.said, proposal.cost_usd
        done.spent += proposal.cost_usd or 0.0
        if proposal.refused is not None:
            this.outcome = f"refused: {proposal.refused}"
            this.proposer_failed = proposal.failed
            say(f"round {this.round}: the proposal is refused: {proposal.refused} (the round counts as spent)")
        else:
            assert this.version is not None
            say(f"round {this.round}: {this.version} from {best}: {proposal.summary}; evaluating it")
            outcome = _evaluate(request, this.version, done, trusted, this)
            if outcome is None:
                this.outcome = "not evaluated"
            else:
                _analyse(outcome, this)
        log.append(this.as_json())
        done.rounds.append(this)
        _save_log(workspace, log)
        if this.outcome == "won":
            without_win = 0
            if not request.auto_promote:
                done.stopped = f"{this.version} won: promote it with `workbench promote {skill_dir} {this.version}`"
                break
            if this.promoted and this.version and not _failures_left(workspace, this.version):
                done.stopped = f"{this.version} won and passes every expectation"
                break
        else:
            without_win += 1
            if without_win >= request.patience:
                done.stopped = f"--patience {request.patience}: {without_win} round(s) without a win"
                break
    else:
        done.stopped = done.stopped or f"all {request.rounds} round(s) done"
    return done


def propose_version(
    workspace: Path,
    store: VersionStore,
    base: str,
    name: str,
    proposer: Executor,
    text: str,
    mode: str | sandbox.Holding,
    timeout: float = 900.0,
    wait: bool = False,
    say: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> tuple[Proposal, str | None]:
    """The proposer on a private copy of `base`'s files; what it left becomes the next version, whose
    parent is `base`, unless it is refused. (The proposal, the new version or None.) The loop and the
    History screen both propose through this."""
    proposer_program(proposer, mode)  # the History screen proposes through here too: it refuses alike
    before = store.files(base)
    with tempfile.TemporaryDirectory(prefix="workbench-proposal-") as private:
        folder = Path(private) / name  # named as the skill: its SKILL.md's name must match its folder
        folder.mkdir()
        store.materialize(base, folder)
        proposal = propose(proposer, folder, text, before, mode, timeout, cancel)
        if proposal.refused is not None:
            return proposal, None
        version, _parent = new_version(workspace, store, folder, name, base, wait, say)
        return proposal, version


def _evaluate(
    request: ImproveRequest,
    version: str,
    done: Improvement,
    trusted: Callable[[list[str]], bool],
    this: Round | None = None,
) -> pipeline.Outcome | None:
    left = None if request.max_cost is None else max(0.0, request.max_cost - done.spent)
    limits = replace(request.run.limits, max_cost=left)
    run = replace(request.run, version=version, auto_promote=request.auto_promote, limits=limits)
    prepared = pipeline.prepare(run)
    asks = prepared.untrusted()
    if asks:
        if not trusted(asks):
            raise Refused("the evaluation's commands are not trusted")
        prepared.trust()
    outcome = pipeline.run(prepared)
    spent = outcome.review.cost()
    done.spent += spent["total"]
    if this is not None:
        this.dispatches = sum(d.status in ("done", "failed") for d in prepared.dispatches)
        this.iteration = outcome.iteration.name
        if this.cost_usd is not None:
            this.cost_usd = (
                None if spent["agents_unknown"] or spent["judge_unknown"] else this.cost_usd + spent["total"]
            )
    return outcome


def _analyse(outcome: pipeline.Outcome, this: Round) -> None:
    """The round's outcome (the pipeline wrote analysis.json beside its results)."""
    evaluation = outcome.evaluation
    if evaluation is None:
        this.outcome = "not evaluated"
        return
    this.outcome = evaluation.result if evaluation.recorded else f"{evaluation.result} (not recorded: errors)"
    this.promoted = evaluation.promoted


def _failures_left(workspace: Path, version: str) -> bool:
    return bool(brief.failures_of(workspace, version)[2])


def brief_for(
    workspace: Path, store: VersionStore, version: str, skill_name: str, measured: tuple[Path, str] | None = None
) -> str:
    """The proposer's brief for the next version from `version` (the History screen shows it to edit): the
    earlier rounds of improve.json, and the failures of `measured` (iteration, configuration) when given.
    Raises WorkbenchError or OSError."""
    return brief.build(workspace, store, version, skill_name, read_log(workspace), measured)


def read_log(workspace: Path) -> list:
    """The rounds improve.json has, for the next brief's "earlier rounds"."""
    return [r for r in _log(workspace) if isinstance(r, dict) and "round" in r and "from" in r]


def _log(workspace: Path) -> list:
    """improve.json's rounds; a file that is there but broken is an error (rewritten, its rounds would be lost)."""
    path = workspace / LOG
    try:
        data = read_json(path)
    except FileNotFoundError:
        return []
    except (OSError, ValueError, RecursionError) as exc:
        raise Refused(f"{path}: cannot be read ({exc}); fix or remove it: improve keeps its rounds there") from None
    if not isinstance(data, dict) or not isinstance(data.get("rounds"), list):
        raise Refused(f'{path}: expected an object {{"rounds": [...]}}; fix or remove it')
    return data["rounds"]


def _save_log(workspace: Path, log: list) -> None:
    atomic_write(workspace / LOG, json.dumps({"rounds": log}, indent=2, ensure_ascii=False) + "\n")


__all__ = ["ImproveRequest", "Improvement", "Proposal", "Round", "check", "improve"]
