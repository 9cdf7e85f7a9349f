"""From a skill folder to finished dispatches: load and check the suite, plan,
pick the iteration (the same plan again resumes it), and run."""

from __future__ import annotations

import functools
import hashlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.formats import detect, skill_md
from workbench.formats.dialect import EVALS, Format
from workbench.formats.document import SyntaxProblem, load
from workbench.formats.regular import read_json
from workbench.formats.save import atomic_write, durable_point
from workbench.runs import run_folder as ws
from workbench.runs.budget import Budget, Stop
from workbench.runs.cases import eval_metadata, run_cases
from workbench.runs.executors import Executor
from workbench.runs.responder import SimulatedUser
from workbench.runs.runner import WITHOUT, Dispatch, Runner, RunOptions, dispatch_keys, failures, finished_record, plan
from workbench.validate.diagnostic import Diagnostic, FileProblems
from workbench.validate.validator import syntax_diagnostic, validate_document
from workbench.workspace import layout


class RunRefused(FileProblems):
    """The suite cannot be run as it is; diagnostics say why."""


@dataclass
class Launch:
    skill_dir: Path
    suite: Path
    workspace: Path
    iteration: int
    dispatches: list[Dispatch]
    skill_name: str = ""
    executor_label: str = ""
    sandbox: str = "none"  # how the agents run: bwrap | none
    network: str = "open"  # what their network reaches: model (the model API only) | open
    warnings: tuple[str, ...] = ()  # said on the run, and in benchmark.md's notes
    requested: int | None = None  # the iteration asked for (--iteration), else None: chosen
    sample: str = ""  # the fresh samples' salt (--fresh, --failed), kept in plan.json so a re-run resumes them
    stopped: Stop | None = None  # why the run stopped before every dispatch started (the budget), in plan.json
    potential: list[Dispatch] | None = None  # --runs auto: every dispatch up to --max-runs (dispatches: so far)
    adaptive: Any = None  # --runs auto: what its rounds did so far (workbench/app/rounds.py), in plan.json

    @property
    def adaptive_max(self) -> int | None:
        return max(d.run_number for d in self.potential) if self.potential else None

    @property
    def potential_digest(self) -> str:
        return adaptive_digest({d.key for d in self.potential or []})

    def settle(self, executor: Executor) -> None:
        """Choose the iteration again, holding the workspace's lock just before writing: the plan was
        made before, and another writer may have made an iteration meanwhile. The dispatches keep their
        identity (the screens hold them); only their folders move."""
        every = self.potential or self.dispatches
        # The skill may have changed (a promotion) too.
        for dispatch, key in zip(every, dispatch_keys(every, executor), strict=True):
            dispatch.key = key
        chosen = choose_iteration(self.workspace, {d.key for d in every}, self.requested, self.potential is not None)
        if chosen != self.iteration:
            self.iteration = chosen
            for d in every:
                d.folder = ws.run_dir(self.workspace, chosen, d.case, d.configuration, d.run_number)

    @property
    def folder(self) -> Path:
        """<workspace>/iteration-N, where this launch writes."""
        return layout.iteration_dir(self.workspace, self.iteration)

    def _adaptive(self) -> dict:
        if self.adaptive is not None:
            return self.adaptive.as_json()
        return {"max_runs": self.adaptive_max, "potential": self.potential_digest}

    def write_plan(self) -> None:
        """plan.json (its keys make a re-run resume) and each eval's eval_metadata.json:
        the first things a launch writes, once it is going to run. Written unsynced, then made durable all at
        once: a sync per file and per folder made a 200-dispatch run wait for the disk 202 times before it
        began."""
        folder = self.folder
        folder.mkdir(parents=True, exist_ok=True)
        written = [folder / layout.PLAN]
        atomic_write(
            folder / layout.PLAN,
            json.dumps(
                {
                    "skill": self.skill_name,
                    "skill_path": str(self.skill_dir),
                    "suite_file": str(self.suite),
                    "executor": self.executor_label,
                    "sandbox": self.sandbox,
                    "network": self.network,
                    "warnings": list(self.warnings),
                    **({"sample": self.sample} if self.sample else {}),
                    **({"stopped": self.stopped.as_json()} if self.stopped else {}),
                    **({"adaptive": self._adaptive()} if self.potential is not None else {}),
                    "dispatches": [
                        {
                            "eval_id": d.case.eval_id,
                            "configuration": d.configuration,
                            "run_number": d.run_number,
                            "key": d.key,
                        }
                        for d in self.dispatches
                    ],
                },
                indent=2,
                default=str,
            )
            + "\n",
            durable=False,
        )
        for case in {d.case.id: d.case for d in self.dispatches}.values():
            written.append(layout.eval_dir(folder, case.id) / layout.EVAL_METADATA)
            atomic_write(
                written[-1],
                json.dumps(
                    eval_metadata(case),
                    indent=2,
                    ensure_ascii=False,
                    default=str,
                )
                + "\n",
                durable=False,
            )
        durable_point(folder, written)


def default_suite(skill_dir: Path) -> Path:
    for name in ("evals/evals.json", "evals/suite.yaml", "evals/suite.yml", "evals/suite.json"):
        if (skill_dir / name).is_file():
            return skill_dir / name
    raise FileNotFoundError(f"{skill_dir}: no evals/evals.json or evals/suite.yaml (give one with --evals)")


def checked_suite(suite: Path) -> tuple[Format, Any]:
    """The suite's dialect and data, or RunRefused with the errors that stop a run.
    Starting a run reads the suite for trust, for the plan and for grading: it is
    parsed and validated once per version of the file. The data is shared: read it,
    never change it."""
    stat = suite.stat()
    return _checked(suite, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _checked(suite: Path, _mtime: int, _size: int) -> tuple[Format, Any]:
    parsed = load(suite)
    if isinstance(parsed, SyntaxProblem):
        raise RunRefused(suite, [syntax_diagnostic(parsed)])
    fmt = detect.refine(detect.by_place(suite), parsed.data)
    if fmt is None or not fmt.cases or fmt.family != EVALS:
        # A trigger set's queries test the description, not the skill's work: not run as evals.
        raise RunRefused(suite, [Diagnostic("error", "", "not an eval suite the workbench can run", 1, 1)])
    errors = [d for d in validate_document(parsed, fmt) if d.severity == "error"]
    if errors:
        raise RunRefused(suite, errors)
    return fmt, parsed.data


def prepare_launch(
    skill_dir: Path,
    executor: Executor,
    options: RunOptions,
    suite: Path | None = None,
    workspace: Path | None = None,
    iteration: int | None = None,
    old_skill: Path | None = None,
    write: bool = True,
) -> Launch:
    """Check the suite and plan the dispatches; write the plan too unless write is
    False (the pipeline writes it only once the run is trusted and starts)."""
    skill_dir = skill_dir.resolve()
    suite = (suite or default_suite(skill_dir)).resolve()
    fmt, data = checked_suite(suite)
    cases = run_cases(fmt, data, suite)
    workspace = (workspace or layout.default_workspace(skill_dir)).resolve()
    name = skill_md.read_name(skill_dir / "SKILL.md") or skill_dir.name
    latest = layout.next_iteration(workspace) - 1
    previous = failures(workspace, latest) if options.failed and latest > 0 else None
    dispatches = plan(cases, skill_dir, old_skill, workspace, iteration or latest or 1, options, previous)
    sample = _fresh_samples(dispatches, options, executor, workspace, latest)
    for dispatch, key in zip(dispatches, dispatch_keys(dispatches, executor), strict=True):
        dispatch.key = key
    chosen = choose_iteration(workspace, {d.key for d in dispatches}, iteration, options.adaptive)
    for d in dispatches:
        d.folder = ws.run_dir(workspace, chosen, d.case, d.configuration, d.run_number)
    launch = Launch(
        skill_dir, suite, workspace, chosen, dispatches, name, executor.label, requested=iteration, sample=sample
    )
    if options.adaptive:  # planned up to --max-runs; the rounds start with every eval's first run
        launch.potential = dispatches
        launch.dispatches = [d for d in dispatches if d.run_number == 1]
    if write:
        launch.write_plan()
    return launch


def _fresh_samples(
    dispatches: list[Dispatch], options: RunOptions, executor: Executor, workspace: Path, latest: int
) -> str:
    """Salt the dispatches that must be drawn again: all of them with --fresh; with --failed (fresh by
    default) those that stage a skill, the without-skill baseline being the same dispatch as before and
    reused. The salt of the latest iteration when it is this same fresh plan, unfinished (a re-run
    resumes it); else a new one. Returns the salt ('' for none)."""
    fresh = options.fresh if options.fresh is not None else options.failed
    if not fresh:
        return ""
    salted = [d for d in dispatches if options.fresh or d.configuration != WITHOUT]
    earlier = _plan(workspace, latest).get("sample") if latest > 0 else None
    if isinstance(earlier, str) and earlier:
        for d in salted:
            d.sample = earlier
        each = dispatch_keys(dispatches, executor)
        keys = set(each)
        finished = all(
            finished_record(ws.run_dir(workspace, latest, d.case, d.configuration, d.run_number) / layout.RUN_RECORD, k)
            for d, k in zip(dispatches, each, strict=True)
        )
        if keys == _plan_keys(workspace, latest) and not finished:
            return earlier
    sample = secrets.token_hex(6)
    for d in salted:
        d.sample = sample
    return sample


def choose_iteration(workspace: Path, keys: set[str], requested: int | None, adaptive: bool = False) -> int:
    """The one asked for; else the latest when its plan is the same (resume), else a new one. An adaptive
    plan (--runs auto) is named by every dispatch it may make, as plan.json's adaptive.potential."""
    if requested:
        return requested
    latest = layout.next_iteration(workspace) - 1
    if latest <= 0:
        return 1
    if adaptive:
        recorded = _plan(workspace, latest).get("adaptive")
        same = isinstance(recorded, dict) and recorded.get("potential") == adaptive_digest(keys)
    else:
        same = _plan_keys(workspace, latest) == keys
    return latest if same else latest + 1  # a different plan (the skill or the suite changed): a new iteration


def adaptive_digest(keys: set[str]) -> str:
    """What names an adaptive plan: every dispatch it may make, up to --max-runs."""
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()


def _plan(workspace: Path, iteration: int) -> dict:
    try:
        data = read_json(layout.iteration_dir(workspace, iteration) / layout.PLAN)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _plan_keys(workspace: Path, iteration: int) -> set[str]:
    listed = _plan(workspace, iteration).get("dispatches")
    return {str(d.get("key")) for d in listed if isinstance(d, dict)} if isinstance(listed, list) else set()


async def run_launch(
    launch: Launch,
    executor: Executor,
    options: RunOptions,
    on_change: Callable[[Dispatch], None] | None = None,
    after: Callable[[Dispatch], str | None] | None = None,
    responder: SimulatedUser | None = None,
    budget: Budget | None = None,
    only: list[Dispatch] | None = None,
) -> list[Dispatch]:
    """Run the launch's dispatches (or `only` those: a round of --runs auto)."""
    runner = Runner(executor, launch.workspace, launch.skill_name, options, on_change, after, responder, budget)
    return await runner.run(launch.dispatches if only is None else only)
