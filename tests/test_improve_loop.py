"""workbench improve: a proposer rewrites the best's files from a brief, the
result is a version evaluated against the best by the rule, analysis.json says
which assertions flipped; refusals for proposals that cannot be versions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DEMO
from support.cli import workbench

from workbench.improve.proposal import SKILL_MD_LINES, make_proposer, propose
from workbench.workspace.layout import default_workspace
from workbench.workspace.versions import VersionStore

# Round 1 fixes the draft's first step; round 2 writes the finished SKILL.md (FINAL): two known edits.
PROPOSER = r"""
import json, os, pathlib, sys
brief = sys.stdin.read()
assert pathlib.Path(os.environ["WORKBENCH_BRIEF"]).read_text() == brief
assert brief.startswith("# Improve the skill `changelog-entry`") and "## What failed" in brief
skill = pathlib.Path("SKILL.md")
text = skill.read_text()
if "**Look at the changelog.**" in text:
    skill.write_text(text.replace("**Look at the changelog.**", "**Read `CHANGELOG.md` first.**"))
    said = "Step 1 now says to read CHANGELOG.md first."
else:
    skill.write_text(pathlib.Path(os.environ["FINAL"]).read_text())
    said = "Ask one short question; touch nothing else."
print(json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": said}]}}))
print(json.dumps({"type": "result", "result": said, "session_id": "p", "cost_usd": 0.02}))
"""


@pytest.fixture
def draft(tmp_path) -> Path:
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    shutil.copy(DEMO.parent / "draft" / "changelog-entry" / "SKILL.md", skill / "SKILL.md")
    return skill


def _improve(skill: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    proposer = tmp_path / "proposer.py"
    proposer.write_text(PROPOSER)
    command = f"FINAL={DEMO / 'SKILL.md'} {sys.executable} {proposer}"
    args = ["improve", skill, "--proposer", "command", "--proposer-command", command, "--sandbox", "none"]
    return workbench(*args, *extra)  # in this process: its output, exit codes and files are what is read


@pytest.mark.slow  # 25 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_scripted_proposer_takes_the_draft_to_a_promoted_better_version_in_two_rounds(draft, tmp_path):
    refused = _improve(draft, tmp_path)
    assert refused.returncode == 2 and "the proposer" in refused.stderr and "--trust" in refused.stderr
    done = _improve(draft, tmp_path, "--trust", "--auto-promote")
    assert done.returncode == 0, done.stderr
    assert "stopped: v2 won and passes every expectation" in done.stdout
    workspace = default_workspace(draft)
    history = json.loads((workspace / "history.json").read_text())
    assert history["current_best"] == "v2"
    assert [(i["version"], i["parent"], i["grading_result"]) for i in history["iterations"]] == [
        ("v0", None, "baseline"),
        ("v1", "v0", "won"),
        ("v2", "v1", "won"),
    ]
    rounds = json.loads((workspace / "improve.json").read_text())["rounds"]
    assert [(r["from"], r["version"], r["outcome"], r["promoted"]) for r in rounds] == [
        ("v0", "v1", "won", True),
        ("v1", "v2", "won", True),
    ]
    # 11 with-skill runs a round: the without-skill baseline is reused, never run again
    assert [r["dispatches"] for r in rounds] == [11, 11]
    assert rounds[0]["said"] == "Step 1 now says to read CHANGELOG.md first."
    store = VersionStore(workspace)
    assert b"**Read `CHANGELOG.md` first.**" in store.files("v1")["SKILL.md"]
    assert not any(name.startswith("evals/") for name in store.files("v2"))
    # why v1 won: the assertions that flipped, by id and text, with evidence
    analysis = json.loads((workspace / rounds[0]["iteration"] / "analysis.json").read_text())
    assert analysis["comparison_summary"]["winner"] == "v1" and analysis["comparison_summary"]["loser_skill"] == "v0"
    strengths = analysis["winner_strengths"]
    assert any(
        s.startswith("eval export-json-flag, assertion read-changelog-first (") and "fail → pass, 0/1 → 1/1" in s
        for s in strengths
    ), strengths
    flipped = analysis["transcript_insights"]["flipped"]
    assert flipped and all(f["direction"] == "fail_to_pass" for f in flipped)
    assert analysis["transcript_insights"]["judge_reading"]["judge"].startswith("demo judge")
    # the second brief told the proposer what the first round tried and how it scored
    assert (workspace / rounds[1]["iteration"] / "analysis.json").exists()


@pytest.mark.slow  # 19 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_without_auto_promote_it_stops_at_the_first_win_and_promotes_nothing(draft, tmp_path):
    done = _improve(draft, tmp_path, "--trust")
    assert done.returncode == 0, done.stderr
    assert f"stopped: v1 won: promote it with `workbench promote {draft} v1`" in done.stdout
    history = json.loads((default_workspace(draft) / "history.json").read_text())
    assert history["current_best"] == "v0"


def _proposal(tmp_path: Path, script: str):
    folder = tmp_path / "copy" / "changelog-entry"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes((DEMO / "SKILL.md").read_bytes())
    before = {"SKILL.md": (DEMO / "SKILL.md").read_bytes()}
    agent = tmp_path / "proposer.py"
    agent.write_text(
        "import json, os, pathlib, sys\nsys.stdin.read()\n"
        + script
        + '\nprint(json.dumps({"type": "result", "result": "done", "session_id": "p"}))\n'
    )
    return propose(make_proposer("command", f"{sys.executable} {agent}"), folder, "# Improve", before, "none")


@pytest.mark.parametrize(
    "script,reason",
    [
        ("pass", "it changed nothing"),
        (
            "pathlib.Path('evals').mkdir(); pathlib.Path('evals/evals.json').write_text('{}')",
            "it touched evals/: the evals test the skill, and are not the skill's to change",
        ),
        (
            f"pathlib.Path('SKILL.md').write_text(pathlib.Path('SKILL.md').read_text() + 'x\\n' * {SKILL_MD_LINES})",
            "SKILL.md grew to",
        ),
        ("os.symlink('/etc/passwd', 'notes.md')", "notes.md is a link out of the skill, to /etc/passwd"),
        ("pathlib.Path('.git').mkdir()", "it made .git: a version holds the skill's files, no repository"),
        ("os.remove('SKILL.md')", "it removed SKILL.md"),
        (
            "pathlib.Path('EVALS').mkdir(); pathlib.Path('EVALS/evals.json').write_text('{}')",
            "it touched evals/",  # a case-blind file system would write it over the real evals/
        ),
        (
            "f = open('big.bin', 'wb'); f.truncate(70 * 1024 * 1024); f.close()",
            "big.bin is 73,400,320 bytes; the skill's limit is 1,000,000",
        ),
        (
            "pathlib.Path('m').mkdir()\nfor i in range(1200): pathlib.Path(f'm/{i}').write_text('')",
            "the skill grew past 1,000 files and folders",
        ),
        ("sys.exit(3)", "the proposer exited with status 3"),
    ],
    ids=["nothing", "evals", "too-large", "link-out", "git", "no-skill-md", "EVALS", "huge-file", "many", "crash"],
)
def test_a_proposal_that_cannot_be_a_version_is_refused_with_the_reason(tmp_path, script, reason):
    proposal = _proposal(tmp_path, script)
    assert proposal.refused is not None and proposal.refused.startswith(reason), proposal.refused


def test_an_edit_is_taken_with_the_files_it_changed(tmp_path):
    proposal = _proposal(tmp_path, "pathlib.Path('reference.md').write_text('More.\\n')")
    assert proposal.refused is None and proposal.changed == ["reference.md"]
    assert os.path.exists(tmp_path / "copy" / "changelog-entry" / "reference.md")


def test_a_broken_improve_json_is_an_error_and_is_never_overwritten(draft, tmp_path):
    """Found by an attacker: a cut improve.json was read as empty and overwritten, its rounds lost."""
    workspace = default_workspace(draft)
    workspace.mkdir(parents=True)
    broken = '{"rounds": [ {"round": 1, "from": "v0", '
    (workspace / "improve.json").write_text(broken)
    done = _improve(draft, tmp_path, "--trust")
    assert done.returncode == 2 and "improve.json: cannot be read" in done.stderr, done.stderr
    assert (workspace / "improve.json").read_text() == broken
