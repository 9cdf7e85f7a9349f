"""Why a proposal won or lost: analysis.json beside its evaluation's results, in
skill-creator's shape (comparison_summary, winner_strengths, loser_weaknesses,
instruction_following, improvement_suggestions, transcript_insights).

Facts first: which assertions flipped from fail to pass and back, per eval,
each by its id and text with its evidence, counted over the runs of each side.
Then the judge's reading of two conversations of an eval that flipped (the
blind comparison, its reasoning quoted as the judge's, never as a fact)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workbench.formats import artifacts
from workbench.grading.artifact import write_artifact
from workbench.grading.benchmark import read_results
from workbench.grading.judges import Judge
from workbench.improve.compare import _case, _runs
from workbench.improve.evaluate import Evaluation, EvaluationPlan
from workbench.runs.runner import OLD, WITH
from workbench.workspace import layout

ANALYSIS = "analysis.json"
EVIDENCE = 300


@dataclass
class Tally:
    text: str
    passed: int = 0
    runs: int = 0
    evidence_pass: str = ""
    evidence_fail: str = ""

    @property
    def rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0

    def shown(self) -> str:
        return f"{self.passed}/{self.runs}"


@dataclass
class Flip:
    eval_id: str
    assertion: str
    text: str
    before: Tally
    after: Tally

    @property
    def fixed(self) -> bool:
        return self.after.rate > self.before.rate

    def sentence(self) -> str:
        way = "fail → pass" if self.fixed else "pass → fail"
        evidence = self.after.evidence_pass if self.fixed else self.after.evidence_fail
        return (
            f"eval {self.eval_id}, assertion {self.assertion} ({self.text}): {way}, "
            f"{self.before.shown()} → {self.after.shown()} runs passed; "
            f"evidence: {' '.join(evidence.split())[:EVIDENCE]}"
        )

    def as_json(self) -> dict:
        return {
            "eval_id": self.eval_id,
            "assertion": self.assertion,
            "text": self.text,
            "direction": "fail_to_pass" if self.fixed else "pass_to_fail",
            "before": {"passed": self.before.passed, "runs": self.before.runs, "evidence": self.before.evidence_fail},
            "after": {
                "passed": self.after.passed,
                "runs": self.after.runs,
                "evidence": self.after.evidence_pass if self.fixed else self.after.evidence_fail,
            },
        }


def tallies(iteration: Path, configuration: str) -> dict[tuple[str, str], Tally]:
    """(eval id, assertion id) -> how often it passed over the configuration's runs, with evidence of each way."""
    out: dict[tuple[str, str], Tally] = {}
    for result in read_results(iteration):
        if result.configuration != configuration:
            continue
        for index, e in enumerate(result.expectations):
            key = (str(result.eval_id), str(e.get("id") or index))
            tally = out.setdefault(key, Tally(str(e.get("text", ""))))
            tally.runs += 1
            if e.get("passed"):
                tally.passed += 1
                tally.evidence_pass = tally.evidence_pass or str(e.get("evidence", ""))
            else:
                tally.evidence_fail = tally.evidence_fail or str(e.get("evidence", ""))
    return out


def flips(before: dict[tuple[str, str], Tally], after: dict[tuple[str, str], Tally]) -> list[Flip]:
    """The assertions both sides graded whose pass rate moved: the fixed ones first."""
    out = [
        Flip(key[0], key[1], after[key].text or before[key].text, before[key], after[key])
        for key in sorted(set(before) & set(after))
        if abs(after[key].rate - before[key].rate) > 1e-9
    ]
    return sorted(out, key=lambda f: not f.fixed)


def write_analysis(
    iteration: Path,
    new: str,
    best: str,
    result: str,
    evidence: str,
    before: tuple[Path, str],
    after: tuple[Path, str],
    judge: Judge | None,
) -> dict:
    """analysis.json in the evaluation's iteration: `before` and `after` are (iteration, configuration)
    of the best's runs and the new version's."""
    old_tallies, new_tallies = tallies(*before), tallies(*after)
    moved = flips(old_tallies, new_tallies)
    fixed = [f for f in moved if f.fixed]
    broken = [f for f in moved if not f.fixed]
    winner, loser = (new, best) if result == "won" else (best, new) if result == "lost" else ("tie", "")
    reading = _reading(judge, fixed or broken, before, after, new, best)
    still = sorted(key for key, tally in new_tallies.items() if tally.passed < tally.runs)
    data = {
        "comparison_summary": {
            "winner": winner,
            "winner_skill": new if result != "lost" else best,
            "loser_skill": loser or best,
            "comparator_reasoning": evidence,
        },
        # From the winner's side: what it fixed (won) or kept (lost); the loser's: what it broke or missed.
        "winner_strengths": [f.sentence() for f in (fixed if result != "lost" else broken)],
        "loser_weaknesses": [f.sentence() for f in (broken if result != "lost" else fixed)],
        "instruction_following": {
            version: {"score": round(_rate(tallies_of), 4), "issues": [f"{k[0]}/{k[1]}" for k in _failing(tallies_of)]}
            for version, tallies_of in ((new, new_tallies), (best, old_tallies))
        },
        "improvement_suggestions": [
            {
                "priority": "high",
                "category": "failed assertion",
                "suggestion": f"eval {k[0]}, assertion {k[1]} ({new_tallies[k].text}) still fails in "
                f"{new_tallies[k].runs - new_tallies[k].passed}/{new_tallies[k].runs} run(s) of {new}: "
                + " ".join(new_tallies[k].evidence_fail.split())[:EVIDENCE],
                "expected_impact": "one more assertion passing",
            }
            for k in still[:20]
        ],
        "transcript_insights": {
            "flipped": [f.as_json() for f in moved],
            "fixed": len(fixed),
            "broken": len(broken),
            "judge_reading": reading,
        },
    }
    write_artifact(iteration / ANALYSIS, artifacts.ANALYSIS, data)
    return data


def _rate(tallies_of: dict[tuple[str, str], Tally]) -> float:
    runs = sum(t.runs for t in tallies_of.values())
    return sum(t.passed for t in tallies_of.values()) / runs if runs else 0.0


def _failing(tallies_of: dict[tuple[str, str], Tally]) -> list[tuple[str, str]]:
    return sorted(k for k, t in tallies_of.items() if t.passed < t.runs)


def _reading(
    judge: Judge | None,
    moved: list[Flip],
    before: tuple[Path, str],
    after: tuple[Path, str],
    plan_new: str = "",
    plan_best: str = "",
) -> dict:
    """The judge's blind reading of one run of each side of the first eval that flipped."""
    if judge is None or not moved:
        return {}
    eval_id = moved[0].eval_id
    folder = layout.eval_dir(Path(), eval_id).name
    old_runs, new_runs = _runs(before[0], folder, before[1]), _runs(after[0], folder, after[1])
    if not old_runs or not new_runs:
        return {}
    verdict = judge.compare(f"eval {eval_id}", _case(new_runs[0]), _case(old_runs[0]))
    return {
        "eval_id": eval_id,
        "judge": judge.label,
        "preferred": {"A": "the new version", "B": "the best", "TIE": "neither"}.get(str(verdict.get("winner")), "?"),
        "reasoning": f"(A: {plan_new}, the new version; B: {plan_best}, the best) " + str(verdict.get("reasoning", "")),
    }


def analyse_evaluation(plan: EvaluationPlan, evaluation: Evaluation, judge: Judge | None) -> dict | None:
    """analysis.json for an evaluation that was decided against the best (not v0's, not the best's own)."""
    if evaluation.decision is None:
        return None
    iteration = evaluation.iteration
    if plan.run_best:
        before = (iteration, OLD)
    elif isinstance(plan.earlier.get("iteration"), int):
        before = (
            layout.iteration_dir(plan.workspace, plan.earlier["iteration"]),
            str(plan.earlier.get("measured_as") or WITH),
        )
    else:
        return None  # the best's runs are not on record: nothing to tell the flips from
    return write_analysis(
        iteration, plan.version, plan.best, evaluation.result, evaluation.evidence, before, (iteration, WITH), judge
    )
