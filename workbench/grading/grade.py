"""Grading one run folder into grading.json, and a whole iteration.

grading.json has seed 003's shape: expectations [{text, passed, evidence}] with
each assertion's id and kind added, summary, execution_metrics, timing, and the
skill-triggering result for runs that had the skill staged.

Nothing graded is lost: a new grading that could not decide an expectation
(the judge failed) never replaces a grading.json that had decided it; the
earlier one stays, byte for byte, and the iteration says which runs kept
theirs (so `grade` leaves benchmark.json as it was, and says why)."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.formats import artifacts, chock, skill_creator, slow_powers
from workbench.formats.regular import read_object, read_regular_text
from workbench.formats.save import atomic_write, durable_point
from workbench.grading import command_check, diff_scope, judge_bill, run_files, triggering
from workbench.grading.artifact import ArtifactInvalid, write_artifact
from workbench.grading.grading_file import read_grading
from workbench.grading.judges import Judge, JudgeCase
from workbench.grading.kinds import Grading, RunEvidence, describe, kind
from workbench.grading.suite import GradingSuite
from workbench.grading.verdict import Verdict, written
from workbench.runs.cases import RunCase
from workbench.runs.runner import Dispatch, iso
from workbench.runs.transcript import Event, read_jsonl
from workbench.workspace import layout, safe_git

STAGED = ("with_skill", "old_skill")  # configurations that had a skill to invoke
OUTPUT_TEXT_LIMIT = 200_000


@dataclass
class GradeOptions:
    judge: Judge
    trusted: bool = False  # the evals file's commands may run
    timeout: float = command_check.DEFAULT_TIMEOUT
    sandboxed: bool = False  # checks run in the agents' sandbox: they run what the agent wrote


@dataclass
class Expectation:
    id: str
    kind: str
    text: str
    verdict: Verdict | None = None  # None until graded
    source: Any = None  # what it grades from: the assertion, the execute block, the text or pattern to find

    @property
    def graded(self) -> Verdict:
        """The verdict, which the summary and as_json need: they come after grading."""
        if self.verdict is None:
            raise ValueError(f"expectation {self.id} has not been graded")
        return self.verdict

    def as_json(self) -> dict:
        verdict = self.graded
        out = {
            "text": self.text,
            "passed": verdict.passed,
            "evidence": verdict.evidence,
            "id": self.id,
            "kind": self.kind,
        }
        if verdict.error:
            out["error"] = True
        return out


# Parts of a skill-creator grading.json (agents/grader.md) that our grading does not make.
KEPT_FROM_THEIRS = ("claims", "user_notes_summary", "eval_feedback", "execution_metrics")


@dataclass
class Graded:
    """One run graded: its new grading, and whether it was written."""

    data: dict
    kept: str | None = None  # why the run's earlier grading.json was kept instead of this one

    @property
    def undecided(self) -> int:
        """Expectations the grading could not decide (a judge error, a replay error)."""
        return sum(bool(e.get("error")) for e in self.data["expectations"])


@dataclass
class IterationGraded:
    """What grading an iteration did."""

    notes: list[str] = field(default_factory=list)  # runs left ungraded, and why
    kept: list[tuple[Path, str]] = field(default_factory=list)  # runs whose earlier grading stayed, and why
    undecided: list[Path] = field(default_factory=list)  # runs written with expectations left undecided

    @property
    def complete(self) -> bool:
        """Every run graded now has a grading that decided everything: a benchmark of them may be written."""
        return not self.kept and not self.undecided


class RunGrader:
    """Grades the runs of one suite; shared by every run of an iteration."""

    def __init__(self, suite: GradingSuite, options: GradeOptions) -> None:
        self.suite = suite
        self.options = options
        self.grading = Grading(suite, options.judge, options.trusted, options.timeout, options.sandboxed)

    def grade(self, folder: Path, case: RunCase, configuration: str, foreign: bool = False) -> Graded | None:
        """Write <run>/grading.json and diff.patch; None when the run has not finished.
        The grading is not written when it would lose verdicts the run's grading.json has
        (Graded.kept says why). foreign: a run skill-creator made (no run.json, no
        transcript.jsonl): graded from its output files and transcript.md, as its own grader does."""
        record = read_object(folder / layout.RUN_RECORD)
        if not record and not foreign:
            return None
        started = time.time()
        events, broken = read_transcript(folder / layout.TRANSCRIPT)
        if broken is None and not events and record and record.get("status") != "failed":
            # Our runs record their prompt at least: no event at all is a conversation lost, and
            # graded as it stands it would pass every "nothing happened before ..." check.
            broken = f"{folder / layout.TRANSCRIPT}: missing or empty, but the run finished"
        repo = folder / layout.REPO
        written: list[Path] = []  # made durable together at the end (a sync each made a dispatch wait 3 times)
        files: list[str] = []
        lines, diff = 0, ""
        if record.get("baseline_commit") and broken is None:
            # The repository the run changed: a real folder of this run, never one a link leads to; its
            # baseline is the run's own (TREES), or for an older run, its repository's .git.
            linked = next((p for p in (folder, repo, folder / layout.TREES, repo / ".git") if p.is_symlink()), None)
            if linked is not None:
                broken = f"{linked}: a link; the run's repository must be its own folder, not followed"
            elif not (folder / layout.TREES).is_dir() and not (repo / ".git").is_dir():
                broken = f"{repo / '.git'}: missing; the run's changes cannot be measured against its baseline"
            else:
                try:
                    files, lines, diff = diff_scope.changes(repo, record["baseline_commit"], record.get("final_tree"))
                except (OSError, ValueError) + safe_git.errors() as exc:
                    broken = f"the run's changes cannot be measured: {exc}"
                else:
                    atomic_write(folder / layout.DIFF, diff, durable=False)
                    written.append(folder / layout.DIFF)
        outputs = read_outputs(folder / layout.OUTPUTS)
        if foreign and os.path.isfile(folder / layout.TRANSCRIPT_MD):
            outputs.setdefault(layout.TRANSCRIPT_MD, read_regular_text(folder / layout.TRANSCRIPT_MD, errors="replace"))
        context = JudgeCase("", events, diff, outputs)
        run = RunEvidence(case, events, repo, files, lines, context, record.get("baseline_commit") or None)
        expectations = self._planned(case)
        error = record.get("error") if record.get("status") == "failed" else None
        failed = f"not graded: the agent's run failed ({error})"
        if error is None and broken:
            error, failed = f"the run's evidence is unusable: {broken}", f"not graded: {broken}"
        with judge_bill.metered() as bill:  # what this run's judge calls cost, apart from the agent's
            for expectation in expectations:
                expectation.verdict = Verdict(False, failed) if error is not None else self._grade_one(expectation, run)
        data = _grading(expectations, folder, started)
        data["judge_cost_usd"] = bill.cost
        data.update(
            eval_id=record.get("eval_id", case.eval_id),
            configuration=configuration,
            run_number=record.get("run_number", layout.run_number(folder.name) or 1),
            judge=self.options.judge.label,
        )
        data["run_key"] = record.get("key")
        if error is not None:
            data["run_error"] = error
        # Triggering is read from our transcript: a foreign run has none to tell it by.
        if configuration in STAGED and self.suite.skill_name and not foreign:
            data["triggering"] = triggering.check(events, self.suite.skill_name, case.skill_should_trigger).as_json()
        if foreign:  # what skill-creator's grader wrote and ours does not make is kept, not lost
            earlier = read_object(folder / layout.GRADING)
            for key in KEPT_FROM_THEIRS:
                if earlier.get(key) and not data.get(key):
                    data[key] = earlier[key]
        kept = would_lose(folder / layout.GRADING, data, foreign)
        if kept is None:
            write_artifact(folder / layout.GRADING, artifacts.GRADING, data, durable=False)
            written.append(folder / layout.GRADING)
        if written:  # one durable point, shared with the dispatches graded beside it; the renames included
            durable_point(folder, written)
        return Graded(data, kept)

    def _planned(self, case: RunCase) -> list[Expectation]:
        return planned(self.suite, case)

    def _grade_one(self, planned: Expectation, run: RunEvidence) -> Verdict:
        return kind(planned.kind).grade(planned.source, planned.text, run, self.grading)


def would_lose(path: Path, new: dict, foreign: bool) -> str | None:
    """Why the new grading must not replace the grading.json at path: it could not decide
    expectations that one decided (a judge that failed); None when nothing would be lost (every
    expectation decided, or nothing usable there, or a grading of another run, or nothing of it
    undecided now). A grading skill-creator's grader wrote is never replaced by one that decided
    less than everything."""
    undecided = [e for e in new["expectations"] if e.get("error")]
    if not undecided:
        return None
    earlier = read_grading(str(path))
    decided = [e for e in earlier["expectations"] if not e.get("error")]
    if earlier.get("unusable") or not decided:
        return None
    if earlier.get("run_key") is not None and earlier.get("run_key") != new.get("run_key"):
        return None  # the grading of an earlier run in this folder: its verdicts are not this run's
    if not foreign:  # ours name each expectation: only those decided there and not now are a loss
        ids = {e["id"] for e in decided if e.get("id")}
        texts = {e["text"] for e in decided}
        undecided = [e for e in undecided if e.get("id") in ids or e["text"] in texts]
        if not undecided:
            return None
    return (
        f"{path} kept as it was: {len(undecided)} expectation(s) it decided could not be decided now "
        f"({undecided[0]['evidence']})"
    )


def planned(suite: GradingSuite, case: RunCase) -> list[Expectation]:
    """Every expectation of the case, not yet graded."""
    out = []
    if suite.dialect == slow_powers.NAME:
        for index, assertion in enumerate(case.assertions):
            out.append(
                Expectation(
                    str(assertion.get("id") or f"assertion-{index + 1}"),
                    str(assertion.get("type")),
                    describe(assertion),
                    source=assertion,
                )
            )
    elif suite.dialect == skill_creator.NAME:
        for index, text in enumerate(case.assertions):
            out.append(Expectation(f"expectation-{index + 1}", "expectation", str(text)))
    elif suite.dialect == chock.NAME:
        raw = case.raw
        if case.expected_output:
            out.append(Expectation("expect", "expect", case.expected_output))
        execute = raw.get("execute")
        if isinstance(execute, dict):
            what = execute.get("command") or f"{execute.get('event', 'commit')} gate"
            out.append(Expectation("execute", "execute", f"replay `{what}` -> {execute.get('expect')}", source=execute))
        for index, text in enumerate(raw.get("structural_checks") or []):
            out.append(
                Expectation(
                    f"structural-{index + 1}",
                    "structural_check",
                    f"the output contains {written(text)}",
                    source=text,
                )
            )
        if raw.get("expected_error_pattern"):
            pattern = raw["expected_error_pattern"]
            out.append(
                Expectation(
                    "error-pattern",
                    "expected_error_pattern",
                    f"the final reply matches /{pattern}/",
                    source=pattern,
                )
            )
    return out


def read_events(path: Path) -> list[Event]:
    return read_transcript(path)[0]


def read_transcript(path: Path) -> tuple[list[Event], str | None]:
    """The run's events, and what is wrong with its transcript if anything. A
    missing transcript is no error (skill-creator's iterations have none); one
    cut short or corrupt is, at its line: graded as it stands it would look like
    a shorter conversation, and an expectation could pass on half the evidence."""
    try:
        text = read_regular_text(path)
    except FileNotFoundError:
        return [], None
    except (OSError, UnicodeDecodeError) as exc:
        return [], f"{path}: cannot be read: {getattr(exc, 'strerror', None) or exc}"
    events: list[Event] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            events += read_jsonl(line)
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            where = f":{number}:{exc.colno}" if isinstance(exc, json.JSONDecodeError) else f":{number}:1"
            cut = " (cut short: the file ends mid-event)" if number == len(text.splitlines()) else ""
            return events, f"{path}{where}: not a transcript event{cut}: {exc}"
    return events, None


def read_outputs(folder: Path) -> dict[str, str]:
    """The text of what the agent produced, as the judge reads it: never through a link
    (grading/run_files.py), less the files the workbench added for skill-creator's tools."""
    return run_files.outputs_text(folder, OUTPUT_TEXT_LIMIT)


def _grading(expectations: list[Expectation], folder: Path, started: float) -> dict:
    passed = sum(e.graded.passed for e in expectations)
    total = len(expectations)
    ended = time.time()
    timing = read_object(folder / layout.TIMING)
    timing.update(
        {"grader_start": iso(started), "grader_end": iso(ended), "grader_duration_seconds": round(ended - started, 3)}
    )
    if "executor_duration_seconds" in timing:
        timing["total_duration_seconds"] = round(
            timing["executor_duration_seconds"] + timing["grader_duration_seconds"], 3
        )
    data: dict[str, Any] = {
        "expectations": [e.as_json() for e in expectations],
        "summary": {
            "passed": passed,
            "failed": total - passed,
            "total": total,
            "pass_rate": round(passed / total, 4) if total else 0.0,
        },
        # ours in the run folder; skill-creator's executor writes it in outputs/
        "execution_metrics": read_object(folder / layout.METRICS)
        or run_files.output_object(folder / layout.OUTPUTS, layout.METRICS),
        "timing": timing,
    }
    errors = sum(e.graded.error for e in expectations)
    if errors:
        data["grading_errors"] = errors
    return data


def run_folders(iteration: Path) -> list[tuple[Path, str, str, bool]]:
    """(run folder, eval id, configuration, foreign) of every finished run. An
    iteration without plan.json was made by skill-creator: its runs (those with
    outputs/) have no run.json, and their eval ids are in eval_metadata.json."""
    foreign = not os.path.lexists(iteration / layout.PLAN)
    out = []
    ids: dict[str, str] = {}
    for run in layout.runs(iteration):
        if os.path.exists(os.path.join(run.path, layout.RUN_RECORD)):
            out.append((Path(run.path), run.case_id, run.configuration, False))
        elif foreign and os.path.isdir(os.path.join(run.path, layout.OUTPUTS)):
            if run.eval_folder not in ids:
                given = read_object(os.path.join(iteration, run.eval_folder, layout.EVAL_METADATA)).get("eval_id")
                ids[run.eval_folder] = run.case_id if given is None or isinstance(given, bool) else str(given)
            out.append((Path(run.path), ids[run.eval_folder], run.configuration, True))
    return out


def grade_iteration(iteration: Path, suite: GradingSuite, options: GradeOptions, jobs: int = 4) -> IterationGraded:
    """Grade every finished run of an iteration: what was written, what was kept, what was left."""
    grader = RunGrader(suite, options)
    done = IterationGraded()
    notes = done.notes
    work = []
    for folder, case_id, configuration, foreign in run_folders(iteration):
        case = suite.cases.get(case_id)
        if case is None:
            notes.append(f"eval {case_id} is no longer in {suite.suite.name}; its runs were not graded")
            continue
        work.append((folder, case, configuration, foreign))

    def attempt(item: tuple[Path, RunCase, str, bool]) -> Graded | str | None:
        try:
            return grader.grade(*item)
        except safe_git.errors() as exc:  # the run's repository: said for that run, the others graded
            said = " ".join(str(exc.stderr or exc).split())[:300]
            return f"{item[0] / layout.GRADING} as it was: git failed in the run's repository ({said})"

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for (folder, *_rest), graded in zip(work, pool.map(attempt, work), strict=True):
            if isinstance(graded, str):
                done.kept.append((folder, graded))
                continue
            if graded is None:
                continue
            if graded.kept is not None:
                done.kept.append((folder, graded.kept))
            elif graded.undecided:
                done.undecided.append(folder)
    return done


def needs_grading(folder: Path, judge: Judge) -> bool:
    """A run whose grading.json is missing, from another judge, or of another run."""
    grading = read_object(folder / layout.GRADING)
    record = read_object(folder / layout.RUN_RECORD)
    return not grading or grading.get("judge") != judge.label or grading.get("run_key") != record.get("key")


class GradeAsItGoes:
    """The runner's after-dispatch hook: grade each finished run that needs it. The runs whose
    earlier grading it kept (the new one would lose verdicts) are listed: the iteration is then
    not graded whole, and its benchmark is not written."""

    def __init__(self, suite: GradingSuite, options: GradeOptions) -> None:
        self.grader = RunGrader(suite, options)
        self.judge = options.judge
        self.kept: list[tuple[Path, str]] = []

    def __call__(self, dispatch: Dispatch) -> str | None:
        if not needs_grading(dispatch.folder, self.judge):
            return None
        try:
            graded = self.grader.grade(dispatch.folder, dispatch.case, dispatch.configuration)
        except (ArtifactInvalid, OSError) + safe_git.errors() as exc:
            return f"grading failed: {exc}"
        if graded is None:
            return None
        if graded.kept is not None:
            self.kept.append((dispatch.folder, graded.kept))
            return f"grading failed: {graded.kept}"
        summary = graded.data["summary"]
        return f"graded {summary['passed']}/{summary['total']}"


def grade_as_it_goes(suite: GradingSuite, options: GradeOptions) -> GradeAsItGoes:
    return GradeAsItGoes(suite, options)
