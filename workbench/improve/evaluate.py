"""Evaluate a version: run its snapshot (not the working folder) through runs and
grading into an iteration of its own, record expectation_pass_rate (the
with-skill pass rate over all assertions) and decide won/lost/tie against the
current best on the same evals and executor. When the best has no comparable
runs (the suite or the executor changed since it was measured), it runs too, as
old_skill, in the same iteration. v0's result is `baseline`."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from workbench.formats import skill_md
from workbench.formats.save import atomic_write
from workbench.grading.artifact import read_object
from workbench.grading.benchmark import write_benchmark
from workbench.grading.grade import GradeOptions, grade_as_it_goes
from workbench.grading.judges import Judge
from workbench.grading.review import load_review
from workbench.grading.suite import load_suite
from workbench.improve.compare import compare
from workbench.improve.decide import DEFAULT_MARGIN, Decision, decide
from workbench.improve.history import EVALUATIONS, load_history
from workbench.improve.versions import VersionError, VersionStore
from workbench.runs.executors import Executor
from workbench.runs.launch import default_suite, prepare_launch, run_launch
from workbench.runs.runner import OLD, WITH, Dispatch, RunOptions
from workbench.runs.workspace import iteration_dir



@dataclass
class Evaluation:
    version: str
    best: str
    iteration: Path
    passed: int
    total: int
    result: str  # baseline | won | lost | tie
    decision: Decision | None
    best_ran_here: bool
    evidence: str = ""  # how the result was decided
    promoted: bool = False

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


def _identity(executor: Executor) -> str:
    return json.dumps(executor.identity(), sort_keys=True)


def _prompts(iteration: Path) -> dict[str, str]:
    return {metadata.parent.name: str(read_object(metadata).get("prompt", ""))
            for metadata in iteration.glob("eval-*/eval_metadata.json")}


def evaluate(skill_dir: Path, version: str, workspace: Path, executor: Executor, judge: Judge,
             options: RunOptions, check_timeout: float = 120.0, margin: float = DEFAULT_MARGIN,
             auto_promote: bool = False, on_change: Callable[[Dispatch], None] | None = None,
             decide_by: str = "rule") -> Evaluation:
    store = VersionStore(workspace)
    history = load_history(workspace, store)
    if history is None:
        raise VersionError(f"{workspace} has no versions yet; make v0 with `workbench version new {skill_dir}`")
    snapshot = store.export(version)
    best = history.current_best
    suite_file = default_suite(skill_dir)
    name = skill_md.read_name(skill_dir / "SKILL.md") or skill_dir.name
    grading = load_suite(suite_file, name, executor.label)
    digest = hashlib.sha256(grading.trust_content()).hexdigest()
    evaluations = read_object(workspace / EVALUATIONS)
    earlier = evaluations.get(best, {})
    comparable = earlier.get("suite_digest") == digest and earlier.get("executor") == _identity(executor)
    run_best = version != best and version != "v0" and not comparable
    options = replace(options, baseline=OLD if run_best else options.baseline)
    launch = prepare_launch(snapshot, executor, options, suite_file, workspace,
                            old_skill=store.export(best) if run_best else None)
    after = grade_as_it_goes(grading, GradeOptions(judge, trusted=True, timeout=check_timeout))
    asyncio.run(run_launch(launch, executor, options, on_change, after))
    iteration = launch.folder
    write_benchmark(iteration)
    review = load_review(iteration)
    passed, total = review.totals(WITH)
    record = {"iteration": launch.iteration, "suite_digest": digest, "executor": _identity(executor),
              "executor_label": executor.label, "judge": judge.label, "passed": passed, "total": total}
    decision = None
    if version == "v0":
        result = "baseline"
    elif version == best:
        result = (history.entry(version) or {}).get("grading_result", "tie")  # re-measured, not re-decided
    else:
        best_numbers = review.totals(OLD) if run_best else (earlier.get("passed", 0), earlier.get("total", 0))
        if run_best:
            evaluations[best] = {**record, "passed": best_numbers[0], "total": best_numbers[1], "measured_as": OLD}
        decision = decide((passed, total), best_numbers, margin)
        result = decision.result
        record["decision"] = {**decision.as_json(), "against": best}
        if decide_by == "comparator":
            best_iteration = iteration if run_best else iteration_dir(workspace, earlier.get("iteration"))
            comparison = compare(judge, iteration, version, best, best_iteration, OLD if run_best else WITH,
                                 _prompts(iteration))
            result = comparison.result
            record["decision"] = {"result": result, "decided_by": "comparator", "against": best,
                                  "evidence": comparison.evidence(judge.label, version, best),
                                  "comparisons": [str(f.relative_to(workspace)) for f in comparison.files],
                                  "rule": decision.as_json()}
    evaluations[version] = record
    atomic_write(workspace / EVALUATIONS, json.dumps(evaluations, indent=2) + "\n")
    history.record(version, store.parent_of(version), round(passed / total, 4) if total else None, result)
    evaluation = Evaluation(version, best, iteration, passed, total, result, decision, run_best,
                            (record.get("decision") or {}).get("evidence", result))
    if auto_promote and result == "won":
        history.promote(version)
        evaluation.promoted = True
    history.save()
    return evaluation

