"""Evaluating a version, the Improve-mode half of it: what to run (the version's
snapshot, not the working folder; the current best too, as old_skill, when it
has no comparable runs because the suite or the executor changed since it was
measured) and, once the pipeline has run and graded it, what it means: the
version's expectation_pass_rate and won/lost/tie against the best on the same
evals. v0's result is `baseline`. The running itself is the pipeline's."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.formats.regular import read_object
from workbench.grading.judges import Judge
from workbench.grading.review import Review
from workbench.grading.suite import GradingSuite
from workbench.improve.compare import compare
from workbench.improve.decide import DEFAULT_MARGIN, Decision, decide
from workbench.improve.history import EVALUATIONS, FILE, History, load_history, read_evaluations
from workbench.runs.executors import Executor
from workbench.runs.runner import OLD, WITH
from workbench.workspace import journal, layout
from workbench.workspace.layout import iteration_dir
from workbench.workspace.versions import VersionError, VersionStore


@dataclass
class Evaluation:
    version: str
    best: str
    iteration: Path
    passed: int
    total: int
    rate: float | None  # the version's pass rate: the mean of its with-skill runs' pass rates
    result: str  # baseline | won | lost | tie
    decision: Decision | None
    best_ran_here: bool
    evidence: str = ""  # how the result was decided
    promoted: bool = False
    recorded: bool = False  # written to evaluations.json and history.json


@dataclass
class EvaluationPlan:
    """What the pipeline runs for `evaluate VERSION`."""

    version: str
    workspace: Path
    store: VersionStore
    history: History
    snapshot: Path  # the version's files, exported
    best: str
    run_best: bool  # the best runs too, as old_skill
    best_snapshot: Path | None
    earlier: dict  # the best's own evaluation record
    digest: str
    executor_identity: str


def _identity(executor: Executor) -> str:
    return json.dumps(executor.identity(), sort_keys=True)


def _prompts(iteration: Path) -> dict[str, str]:
    return {
        name: str(read_object(iteration / name / layout.EVAL_METADATA).get("prompt", ""))
        for name in layout.eval_folders(iteration)
    }


def plan_evaluation(
    skill_dir: Path, version: str, workspace: Path, executor: Executor, suite: GradingSuite, judge: Judge
) -> EvaluationPlan:
    journal.recover_now(workspace, skill_dir)  # a legacy workspace is imported first (legacy.py)
    store = VersionStore(workspace)
    history = load_history(workspace, store)
    if history is None:
        raise VersionError(f"{workspace} has no versions yet; make v0 with `workbench version new {skill_dir}`")
    store.commit_of(version)  # an unknown version is refused before anything runs
    best = history.current_best
    digest = hashlib.sha256(suite.trust_content()).hexdigest()
    earlier = read_evaluations(workspace).get(best, {})
    # Runs recorded without per-eval rates (by an older workbench) cannot be paired by eval: they run again;
    # so do runs whose iteration is not recorded (the comparator reads them from there), and runs another
    # judge graded (a stricter judge is not a worse skill).
    comparable = (
        earlier.get("suite_digest") == digest
        and earlier.get("executor") == _identity(executor)
        and earlier.get("judge") == judge.label
        and isinstance(earlier.get("evals"), dict)
        and isinstance(earlier.get("iteration"), int)
    )
    run_best = version != best and version != "v0" and not comparable
    return EvaluationPlan(
        version,
        workspace,
        store,
        history,
        store.export(version),
        best,
        run_best,
        store.export(best) if run_best else None,
        earlier,
        digest,
        _identity(executor),
    )


def record_evaluation(
    plan: EvaluationPlan,
    review: Review,
    iteration: Path,
    number: int,
    executor: Executor,
    judge: Judge,
    margin: float = DEFAULT_MARGIN,
    auto_promote: bool = False,
    decide_by: str = "rule",
    record_it: bool = True,
    adaptive: dict | None = None,
) -> Evaluation:
    """Decide and record: evaluations.json and history.json, in one change
    (journal.py). With record_it False (a part of the suite, or runs with
    errors), decide only: a partial or broken measurement never replaces a whole
    one. Call it holding the workspace's lock (the pipeline does)."""
    version, best, workspace = plan.version, plan.best, plan.workspace
    # Read again under the lock: another writer may have promoted since the plan was made.
    history = load_history(workspace, plan.store) or plan.history
    passed, total = review.totals(WITH)
    rate = review.rate(WITH)
    evaluations = read_evaluations(workspace)
    record: dict[str, Any] = {
        "iteration": number,
        "suite_digest": plan.digest,
        "executor": plan.executor_identity,
        "executor_label": executor.label,
        "judge": judge.label,
        "passed": passed,
        "total": total,
        "pass_rate": rate,
        "evals": review.eval_rates(WITH),
        **({"adaptive": adaptive} if adaptive is not None else {}),
    }
    decision = None
    if version == "v0":
        result = "baseline"
    elif version == best:
        result = (history.entry(version) or {}).get("grading_result", "tie")  # re-measured, not re-decided
    else:
        if plan.run_best:
            best_numbers = review.totals(OLD)
            best_evals, best_rate = review.eval_rates(OLD), review.rate(OLD)
            evaluations[best] = {
                **record,
                "passed": best_numbers[0],
                "total": best_numbers[1],
                "pass_rate": best_rate,
                "evals": best_evals,
                "measured_as": OLD,
            }
        else:
            best_evals, best_rate = plan.earlier.get("evals") or {}, plan.earlier.get("pass_rate")
        both = (rate, best_rate) if rate is not None and isinstance(best_rate, (int, float)) else None
        if adaptive is not None:
            both = None  # evals have unequal numbers of runs: each counts once (docs/improve.md)
        decision = decide(record["evals"], best_evals, margin, both)
        result = decision.result
        record["decision"] = {**decision.as_json(), "against": best}
        settled = (adaptive or {}).get("decision")
        if settled:  # --runs auto: the rule settled it after these runs, for this reason
            result = settled["result"]
            record["decision"].update(result=result, settled=settled)
        if decide_by == "comparator":
            # Without run_best, the best's runs are comparable: plan_evaluation saw their iteration number.
            best_iteration = iteration if plan.run_best else iteration_dir(workspace, plan.earlier["iteration"])
            comparison = compare(
                judge, iteration, version, best, best_iteration, OLD if plan.run_best else WITH, _prompts(iteration)
            )
            result = comparison.result
            record["decision"] = {
                "result": result,
                "decided_by": "comparator",
                "against": best,
                "evidence": comparison.evidence(judge.label, version, best),
                "comparisons": [str(f.relative_to(workspace)) for f in comparison.files],
                "rule": decision.as_json(),
            }
    evaluation = Evaluation(
        version,
        best,
        iteration,
        passed,
        total,
        rate,
        result,
        decision,
        plan.run_best,
        (record.get("decision") or {}).get("evidence", result),
    )
    if not record_it:
        return evaluation
    evaluations[version] = record
    history.record(version, plan.store.parent_of(version), round(rate, 4) if rate is not None else None, result)
    if auto_promote and result == "won":
        history.promote(version)
        evaluation.promoted = True
    journal.commit(workspace, {EVALUATIONS: json.dumps(evaluations, indent=2) + "\n", FILE: history.text()})
    evaluation.recorded = True
    return evaluation
