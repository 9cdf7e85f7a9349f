"""Assertion kinds: one registration each, with what grading needs to know of it.

A kind says how a person reads one of its assertions (describe) and how a run
is graded against it (grade). The grader and the docs' list come from here:
adding a kind is a module with its grade function and one register() call
below. Kinds are named as the formats name them: slow-powers' assertion types,
skill-creator's expectations, chock's expect, execute replays, structural
checks and error patterns."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from workbench.grading import chock_replay, command_check, diff_scope, transcript_check
from workbench.grading.judges import Judge, JudgeCase
from workbench.grading.verdict import Verdict, written
from workbench.runs.cases import RunCase
from workbench.runs.transcript import Event
from workbench.validate import rust_regex


class GradingSuite(Protocol):
    """What a kind reads of the suite it grades (grading.suite.GradingSuite; named here, not imported,
    because the suite asks the kinds which of them the judge grades)."""

    policy: chock_replay.Policy | None
    replays: dict

    @property
    def evals_dir(self) -> Path: ...


@dataclass
class RunEvidence:
    """What one finished run offers its graders."""

    case: RunCase
    events: list[Event]
    repo: Path
    files: list[str]  # changed since the baseline commit
    lines: int  # lines added plus removed
    context: JudgeCase  # transcript, diff and outputs, as a judge reads them
    baseline: str | None = None  # the run's baseline commit in its own store (TREES); None for skill-creator's runs


@dataclass
class Grading:
    """The grading session a kind grades within: the suite, the judge, trust, limits."""

    suite: GradingSuite
    judge: Judge
    trusted: bool
    timeout: float
    sandboxed: bool = False  # command checks run in the sandbox too


@dataclass(frozen=True)
class AssertionKind:
    name: str
    grade: Callable[[Any, str, RunEvidence, Grading], Verdict]  # (source, text, run, grading)
    describe: Callable[[dict], str] | None = None  # a typed assertion read out (slow-powers)
    help: str = ""
    judged: bool = False  # graded by the judge: grading it needs a judge that can run


KINDS: dict[str, AssertionKind] = {}


def register(kind: AssertionKind) -> None:
    if kind.name in KINDS:
        raise ValueError(f"assertion kind {kind.name!r} is already registered")
    KINDS[kind.name] = kind


def kind(name: str) -> AssertionKind:
    """The registered kind; anything else a judge reads (llm_judge, expectations, expect texts)."""
    return KINDS.get(name, KINDS["llm_judge"])


def judged(name: str) -> bool:
    """Whether the judge grades assertions of this kind (anything unregistered is read by the judge)."""
    return kind(name).judged


def describe(assertion: dict) -> str:
    """A person's one-line reading of a typed assertion."""
    found = KINDS.get(str(assertion.get("type")))
    return found.describe(assertion) if found and found.describe else json.dumps(assertion)


# ---------------------------------------------------------------- the kinds


def _not_trusted(what: str) -> Verdict:
    return Verdict(False, f"not run: {what} not trusted (review it, then grade with --trust)", error=True)


def _command_check(assertion: dict, _text: str, run: RunEvidence, grading: Grading) -> Verdict:
    if not grading.trusted:
        return _not_trusted("the evals file's commands are")
    return command_check.grade(
        assertion, run.repo, grading.suite.evals_dir, grading.timeout, grading.sandboxed, run.baseline
    )


def _given(assertion: dict, field: str) -> str:
    """A field as written, or what its absence means: never Python's None in a report."""
    value = assertion.get(field)
    return value if isinstance(value, str) and value else f"(no {field})"


def _describe_command_check(assertion: dict) -> str:
    text = f"`{_given(assertion, 'command')}` exits {assertion.get('expect_exit_code', 0)}"
    if assertion.get("expect_stdout"):
        text += f" and prints /{assertion['expect_stdout']}/"
    if assertion.get("matrix"):
        text += f" in all {len(command_check.cells(assertion))} matrix cells"
    return text


def _describe_transcript_check(assertion: dict) -> str:
    where = assertion.get("must_precede", "any")
    pattern = assertion.get("pattern")
    matched = f"/{pattern}/" if isinstance(pattern, str) else "(any, no pattern)"
    return f"{_given(assertion, 'check')} {matched}" + ("" if where == "any" else f" before {where.replace('_', ' ')}")


def _describe_diff_scope(assertion: dict) -> str:
    limits = []
    if assertion.get("max_files_touched") is not None:
        limits.append(f"at most {assertion['max_files_touched']} file(s) touched")
    if assertion.get("max_lines_changed") is not None:
        limits.append(f"at most {assertion['max_lines_changed']} line(s) changed")
    return ", ".join(limits) or "diff scope"


def _replay(execute: dict, _text: str, run: RunEvidence, grading: Grading) -> Verdict:
    """A chock replay does not depend on the agent: once per case per grading."""
    replays = grading.suite.replays
    if run.case.id not in replays:
        if isinstance(execute.get("command"), str) and not grading.trusted:
            return _not_trusted("the policy's guard script is")
        replays[run.case.id] = chock_replay.replay(grading.suite.policy, execute, grading.timeout)
    return replays[run.case.id]


def _structural(wanted: str, _text: str, run: RunEvidence, _grading: Grading) -> Verdict:
    seen = run.context.final_message + "\n" + "\n".join(run.context.outputs.values())
    return Verdict(
        wanted in seen, f"{'found' if wanted in seen else 'not found'} in the final reply and the output files"
    )


def _error_pattern(pattern: str, _text: str, run: RunEvidence, _grading: Grading) -> Verdict:
    found = rust_regex.compile(pattern).search(run.context.final_message)
    return Verdict(
        found is not None,
        f"matched {written(found.group(0))} in the final reply"
        if found
        else f"the final reply does not match: {written(run.context.final_message[:200])}",
    )


def _judged(source: Any, text: str, run: RunEvidence, grading: Grading) -> Verdict:
    model = source.get("model") if isinstance(source, dict) else None
    c = run.context
    return grading.judge.decide(JudgeCase(text, c.events, c.diff, c.outputs, model))


register(
    AssertionKind(
        "transcript_check",
        lambda a, _t, run, _g: transcript_check.grade(a, run.events),
        _describe_transcript_check,
        help="a regex over the transcript's messages or tool calls",
    )
)
register(
    AssertionKind(
        "diff_scope",
        lambda a, _t, run, _g: diff_scope.grade(a, run.files, run.lines),
        _describe_diff_scope,
        help="how many files and lines the run changed",
    )
)
register(
    AssertionKind(
        "command_check",
        _command_check,
        _describe_command_check,
        help="a command's exit code and output in a copy of the run's workspace",
    )
)
register(
    AssertionKind(
        "llm_judge",
        _judged,
        lambda a: str(a.get("rubric", "")),
        help="a rubric a judge reads against the run",
        judged=True,
    )
)
register(AssertionKind("expectation", _judged, help="a skill-creator expectation, read by the judge", judged=True))
register(AssertionKind("expect", _judged, help="chock's expected output, read by the judge", judged=True))
register(
    AssertionKind(
        "execute",
        _replay,
        help="chock's deterministic replay: a guard command or a gate, block or allow",
    )
)
register(AssertionKind("structural_check", _structural, help="a text the reply or the outputs contain"))
register(AssertionKind("expected_error_pattern", _error_pattern, help="a regex the final reply matches"))
