"""The transcript_check and diff_scope graders, on constructed transcripts and on
real demo runs."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import git
import pytest
from conftest import DEMO

from workbench.grading import diff_scope, transcript_check
from workbench.runs import executors
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.runner import RunOptions
from workbench.runs.transcript import ASSISTANT, TOOL_USE, Event

EVENTS = [
    Event("user", 1, text="Add the flag to the changelog."),
    Event(TOOL_USE, 1, name="Read", input={"file_path": "/w/CHANGELOG.md"}),
    Event(ASSISTANT, 1, text="Is this a fix?"),
    Event(TOOL_USE, 2, name="Edit", input={"file_path": "/w/CHANGELOG.md"}),
    Event(TOOL_USE, 2, name="Bash", input={"command": "bun test"}),
    Event(ASSISTANT, 2, text="Done: tests pass."),
]


def _check(check, pattern, where="any", events=EVENTS):
    return transcript_check.grade(
        {"id": "x", "type": "transcript_check", "check": check, "pattern": pattern, "must_precede": where}, events
    )


@pytest.mark.parametrize(
    "check,pattern,where,passed,words",
    [
        ("tool_invocation_matches", r"^Read \{.*CHANGELOG", "first_write", True, "matched event 2"),
        ("tool_invocation_matches", r"^Bash .*bun test", "first_write", False, "matched only at event 5"),
        ("tool_invocation_matches", r"^Bash .*bun test", "completion_claim", True, "before the final assistant"),
        ("tool_invocation_matches", r"^Bash .*bun test", "any", True, "anywhere"),
        ("assistant_message_matches", r"\?", "first_write", True, "Is this a fix?"),
        ("assistant_message_matches", r"tests pass", "completion_claim", False, "matched only at event 6"),
        ("tool_invocation_matches", r"^Write ", "any", False, "no tool invocation of 3 matched"),
    ],
)
def test_transcript_check(check, pattern, where, passed, words):
    verdict = _check(check, pattern, where)
    assert verdict.passed is passed and words in verdict.evidence


def test_first_write_passes_when_nothing_is_written():
    verdict = _check("tool_invocation_matches", r"^Read ", "first_write", EVENTS[:3] + EVENTS[5:])
    assert verdict.passed and "no write happened" in verdict.evidence


def test_rendering_is_the_compact_json_the_patterns_expect():
    assert EVENTS[1].rendered == 'Read {"file_path":"/w/CHANGELOG.md"}'


def test_diff_scope_counts_renames_binaries_and_leaves_out_the_staged_skill(tmp_path):
    repo_dir = tmp_path / "repo"
    (repo_dir / ".claude" / "skills" / "s").mkdir(parents=True)
    (repo_dir / "a.txt").write_text("one\ntwo\n")
    (repo_dir / "b.txt").write_text("move me\n")
    (repo_dir / ".claude" / "skills" / "s" / "SKILL.md").write_text("skill\n")
    repo = git.Repo.init(repo_dir)
    repo.git.add(A=True)
    repo.git.commit(
        "-q",
        "-m",
        "base",
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )
    baseline = repo.head.commit.hexsha
    (repo_dir / "a.txt").write_text("one\nTWO\nthree\n")  # 1 removed + 2 added
    (repo_dir / "b.txt").rename(repo_dir / "c.txt")  # a delete plus an add: 2 lines
    (repo_dir / "image.bin").write_bytes(b"\x00\x01\x02")  # binary: 0 lines
    (repo_dir / ".claude" / "skills" / "s" / "SKILL.md").write_text("changed\n")  # not counted
    patch = tmp_path / "diff.patch"
    files, lines = diff_scope.measure(repo_dir, baseline, patch)
    assert sorted(files) == ["a.txt", "b.txt", "c.txt", "image.bin"] and lines == 5
    assert "+TWO" in patch.read_text() and "SKILL.md" not in patch.read_text()
    assert not diff_scope.grade({"max_files_touched": 3}, files, lines).passed
    verdict = diff_scope.grade({"max_files_touched": 4, "max_lines_changed": 5}, files, lines)
    assert verdict.passed and "4 file(s) touched" in verdict.evidence


def test_graders_on_real_demo_runs_tell_with_from_without(tmp_path):
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    executor, options = executors.make("demo"), RunOptions(only={"export-json-flag"})
    launch = prepare_launch(skill, executor, options)
    asyncio.run(run_launch(launch, executor, options))
    case = json.loads((skill / "evals" / "evals.json").read_text())["evals"][0]
    read_first = case["assertions"][0]
    scope = case["assertions"][2]
    results = {}
    for dispatch in launch.dispatches:
        events = [
            Event(**{k: v for k, v in json.loads(line).items() if k != "rendered"})
            for line in (dispatch.folder / "transcript.jsonl").read_text().splitlines()
        ]
        record = json.loads((dispatch.folder / "run.json").read_text())
        files, lines = diff_scope.measure(dispatch.folder / "repo", record["baseline_commit"])
        results[dispatch.configuration] = (
            transcript_check.grade(read_first, events).passed,
            diff_scope.grade(scope, files, lines).passed,
        )
    assert results == {"with_skill": (True, True), "without_skill": (False, False)}


def test_graders_on_stream_json_captured_from_claude_code():
    """Two turns of Claude Code 2.1.332 (print mode, stream-json, --resume) against
    the scripted server, captured as printed: Write, Bash, a question, the answer."""
    from workbench.runs.transcript import parse_stream_json

    lines = (Path(__file__).parent / "golden" / "claude-code-2.1.332.stream.jsonl").read_text().splitlines()
    end = next(i for i, line in enumerate(lines) if '"type":"result"' in line) + 1  # the first turn's end
    first, second = parse_stream_json("\n".join(lines[:end]), 1), parse_stream_json("\n".join(lines[end:]), 2)
    assert first.session_id and first.session_id == second.session_id and first.tokens > 0
    events = first.events + second.events
    assert [e.rendered for e in events if e.kind == TOOL_USE] == [
        'Write {"file_path":"./answer.txt","content":"42\\n"}',
        'Bash {"command":"cat answer.txt","description":"Show the answer"}',
    ]
    assert first.last_assistant_text == "Which format do you want?"
    assert _check("tool_invocation_matches", r"^Write .*answer\.txt", "completion_claim", events).passed
    late = _check("tool_invocation_matches", r"^Bash ", "first_write", events)
    assert not late.passed and "matched only at event" in late.evidence
    assert _check("assistant_message_matches", r"(?i)which format", "any", events).passed
    assert _check("assistant_message_matches", r"^Done: ", "completion_claim", events).passed is False
