"""Grading one run folder into grading.json, and a whole iteration.

grading.json has seed 003's shape: expectations [{text, passed, evidence}] with
each assertion's id and kind added, summary, execution_metrics, timing, and the
skill-triggering result for runs that had the skill staged."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from workbench.formats import artifacts, chock, skill_creator, slow_powers
from workbench.grading import chock_replay, command_check, diff_scope, transcript_check, triggering
from workbench.grading.artifact import ArtifactInvalid, read_object, write_artifact
from workbench.grading.judges import Judge, JudgeCase
from workbench.grading.suite import GradingSuite
from workbench.grading.verdict import Verdict
from workbench.runs.cases import RunCase
from workbench.runs.runner import iso
from workbench.runs.transcript import Event, read_jsonl
from workbench.validate import rust_regex

STAGED = ("with_skill", "old_skill")  # configurations that had a skill to invoke
OUTPUT_TEXT_LIMIT = 200_000


@dataclass
class GradeOptions:
    judge: Judge
    trusted: bool = False  # the evals file's commands may run
    timeout: float = command_check.DEFAULT_TIMEOUT


@dataclass
class Expectation:
    id: str
    kind: str
    text: str
    verdict: Verdict | None = None  # None until graded
    source: Any = None  # what it grades from: the assertion, the execute block, the text or pattern to find

    def as_json(self) -> dict:
        out = {"text": self.text, "passed": self.verdict.passed, "evidence": self.verdict.evidence,
               "id": self.id, "kind": self.kind}
        if self.verdict.error:
            out["error"] = True
        return out


def describe(assertion: dict) -> str:
    """A person's one-line reading of a typed assertion."""
    kind = assertion.get("type")
    if kind == "transcript_check":
        where = assertion.get("must_precede", "any")
        return (f"{assertion.get('check')} /{assertion.get('pattern')}/"
                + ("" if where == "any" else f" before {where.replace('_', ' ')}"))
    if kind == "command_check":
        text = f"`{assertion.get('command')}` exits {assertion.get('expect_exit_code', 0)}"
        if assertion.get("expect_stdout"):
            text += f" and prints /{assertion['expect_stdout']}/"
        if assertion.get("matrix"):
            text += f" in all {len(command_check.cells(assertion))} matrix cells"
        return text
    if kind == "diff_scope":
        limits = []
        if assertion.get("max_files_touched") is not None:
            limits.append(f"at most {assertion['max_files_touched']} file(s) touched")
        if assertion.get("max_lines_changed") is not None:
            limits.append(f"at most {assertion['max_lines_changed']} line(s) changed")
        return ", ".join(limits) or "diff scope"
    if kind == "llm_judge":
        return str(assertion.get("rubric", ""))
    return json.dumps(assertion)


class RunGrader:
    """Grades the runs of one suite; shared by every run of an iteration."""

    def __init__(self, suite: GradingSuite, options: GradeOptions) -> None:
        self.suite = suite
        self.options = options

    def grade(self, folder: Path, case: RunCase, configuration: str) -> dict | None:
        """Write <run>/grading.json and diff.patch; None when the run has not finished."""
        record = read_object(folder / "run.json")
        if not record:
            return None
        started = time.time()
        events = read_events(folder / "transcript.jsonl")
        repo = folder / "repo"
        files, lines, diff = [], 0, ""
        if record.get("baseline_commit") and (repo / ".git").exists():
            files, lines = diff_scope.measure(repo, record["baseline_commit"], folder / "diff.patch")
            diff = (folder / "diff.patch").read_text(encoding="utf-8", errors="replace")
        context = JudgeCase("", events, diff, read_outputs(folder / "outputs"))
        expectations = self._planned(case)
        failed = f"not graded: the agent's run failed ({record.get('error')})"
        for expectation in expectations:
            expectation.verdict = Verdict(False, failed) if record.get("status") == "failed" else \
                self._grade_one(expectation, case, events, repo, files, lines, context)
        data = _grading(expectations, folder, started)
        data.update(eval_id=record.get("eval_id"), configuration=configuration,
                    run_number=record.get("run_number"), judge=self.options.judge.label)
        data["run_key"] = record.get("key")
        if record.get("status") == "failed":
            data["run_error"] = record.get("error")
        if configuration in STAGED and self.suite.skill_name:
            data["triggering"] = triggering.check(events, self.suite.skill_name, case.skill_should_trigger).as_json()
        write_artifact(folder / "grading.json", artifacts.GRADING, data)
        return data

    def _planned(self, case: RunCase) -> list[Expectation]:
        """Every expectation of the case, not yet graded."""
        out = []
        if self.suite.dialect == slow_powers.NAME:
            for index, assertion in enumerate(case.assertions):
                out.append(Expectation(str(assertion.get("id") or f"assertion-{index + 1}"),
                                       str(assertion.get("type")), describe(assertion), source=assertion))
        elif self.suite.dialect == skill_creator.NAME:
            for index, text in enumerate(case.assertions):
                out.append(Expectation(f"expectation-{index + 1}", "expectation", str(text)))
        elif self.suite.dialect == chock.NAME:
            raw = case.raw
            if case.expected_output:
                out.append(Expectation("expect", "expect", case.expected_output))
            execute = raw.get("execute")
            if isinstance(execute, dict):
                what = execute.get("command") or f"{execute.get('event', 'commit')} gate"
                out.append(Expectation("execute", "execute", f"replay `{what}` -> {execute.get('expect')}",
                                       source=execute))
            for index, text in enumerate(raw.get("structural_checks") or []):
                out.append(Expectation(f"structural-{index + 1}", "structural_check",
                                       f"the output contains {text!r}", source=text))
            if raw.get("expected_error_pattern"):
                pattern = raw["expected_error_pattern"]
                out.append(Expectation("error-pattern", "expected_error_pattern",
                                       f"the final reply matches /{pattern}/", source=pattern))
        return out

    def _grade_one(self, planned: Expectation, case: RunCase, events: list[Event], repo: Path,
                   files: list[str], lines: int, context: JudgeCase) -> Verdict:
        kind = planned.kind
        assertion = planned.source if isinstance(planned.source, dict) else {}
        if kind == "transcript_check":
            verdict = transcript_check.grade(assertion, events)
        elif kind == "diff_scope":
            verdict = diff_scope.grade(assertion, files, lines)
        elif kind == "command_check":
            if not self.options.trusted:
                verdict = Verdict(False, "not run: the evals file's commands are not trusted "
                                         "(review them, then grade with --trust)", error=True)
            else:
                verdict = command_check.grade(assertion, repo, self.suite.evals_dir, self.options.timeout)
        elif kind == "execute":
            verdict = self._replay(case.id, planned.source)
        elif kind == "structural_check":
            wanted = planned.source
            seen = context.final_message + "\n" + "\n".join(context.outputs.values())
            verdict = Verdict(wanted in seen, f"{'found' if wanted in seen else 'not found'} in the final reply "
                                              f"and the output files")
        elif kind == "expected_error_pattern":
            found = rust_regex.compile(planned.source).search(context.final_message)
            verdict = Verdict(found is not None, f"matched {found.group(0)!r} in the final reply" if found
                              else f"the final reply does not match: {context.final_message[:200]!r}")
        else:  # llm_judge, skill-creator expectations, chock expect: a judge reads the run
            model = assertion.get("model") if kind == "llm_judge" else None
            verdict = self.options.judge.decide(JudgeCase(planned.text, context.events, context.diff,
                                                          context.outputs, model))
        return verdict

    def _replay(self, case_id: str, execute: dict) -> Verdict:
        """A chock replay does not depend on the agent: once per case per grading."""
        if case_id not in self.suite.replays:
            if isinstance(execute.get("command"), str) and not self.options.trusted:
                return Verdict(False, "not run: the policy's guard script is not trusted "
                                      "(review it, then grade with --trust)", error=True)
            self.suite.replays[case_id] = chock_replay.replay(self.suite.policy, execute, self.options.timeout)
        return self.suite.replays[case_id]


def read_events(path: Path) -> list[Event]:
    try:
        return read_jsonl(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError):
        return []


def read_outputs(folder: Path) -> dict[str, str]:
    out, budget = {}, OUTPUT_TEXT_LIMIT
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if path.is_file() and budget > 0:
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # binary output: the judge gets the text files
            out[path.relative_to(folder).as_posix()] = text[:budget]
            budget -= len(text)
    return out


def _grading(expectations: list[Expectation], folder: Path, started: float) -> dict:
    passed = sum(e.verdict.passed for e in expectations)
    total = len(expectations)
    ended = time.time()
    timing = read_object(folder / "timing.json")
    timing.update({"grader_start": iso(started), "grader_end": iso(ended),
                   "grader_duration_seconds": round(ended - started, 3)})
    if "executor_duration_seconds" in timing:
        timing["total_duration_seconds"] = round(timing["executor_duration_seconds"]
                                                 + timing["grader_duration_seconds"], 3)
    data = {
        "expectations": [e.as_json() for e in expectations],
        "summary": {"passed": passed, "failed": total - passed, "total": total,
                    "pass_rate": round(passed / total, 4) if total else 0.0},
        "execution_metrics": read_object(folder / "metrics.json"),
        "timing": timing,
    }
    errors = sum(e.verdict.error for e in expectations)
    if errors:
        data["grading_errors"] = errors
    return data


def run_folders(iteration: Path) -> list[tuple[Path, str, str]]:
    """(run folder, eval folder id, configuration) of every finished run."""
    out = []
    for record in sorted(iteration.glob("eval-*/*/run-*/run.json")):
        run = record.parent
        out.append((run, run.parent.parent.name.removeprefix("eval-"), run.parent.name))
    return out


def grade_iteration(iteration: Path, suite: GradingSuite, options: GradeOptions, jobs: int = 4) -> list[str]:
    """Grade every finished run of an iteration; returns notes on runs left ungraded."""
    grader = RunGrader(suite, options)
    notes = []
    work = []
    for folder, case_id, configuration in run_folders(iteration):
        case = suite.cases.get(case_id)
        if case is None:
            notes.append(f"eval {case_id} is no longer in {suite.suite.name}; its runs were not graded")
            continue
        work.append((folder, case, configuration))

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(lambda item: grader.grade(*item), work))
    return notes


def needs_grading(folder: Path, judge: Judge) -> bool:
    """A run whose grading.json is missing, from another judge, or of another run."""
    grading = read_object(folder / "grading.json")
    record = read_object(folder / "run.json")
    return not grading or grading.get("judge") != judge.label or grading.get("run_key") != record.get("key")


def grade_as_it_goes(suite: GradingSuite, options: GradeOptions) -> Callable[[object], str | None]:
    """The runner's after-dispatch hook: grade each finished run that needs it."""
    grader = RunGrader(suite, options)

    def after(dispatch) -> str | None:
        if not needs_grading(dispatch.folder, options.judge):
            return None
        try:
            data = grader.grade(dispatch.folder, dispatch.case, dispatch.configuration)
        except (ArtifactInvalid, OSError, git.GitCommandError) as exc:
            return f"grading failed: {exc}"
        if data is None:
            return None
        summary = data["summary"]
        return f"graded {summary['passed']}/{summary['total']}"

    return after
