"""An evals file (and a SKILL.md) is untrusted input: each test here is a real
exploit attempt by a stranger whose skill folder the user cloned. Nothing may be
written outside the workspace, nothing may run before trust, git never runs a
command from a repository or the user's config, and a failing eval never
disappears from the results."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from conftest import DEMO
from support.cli import workbench

from workbench.app import pipeline
from workbench.app.choices import Agent, Placement
from workbench.errors import WorkbenchError
from workbench.workspace import layout


def _cli(*args, cwd=None, env=None):
    """The command line, in this process: its output, exit codes and files are what these tests read."""
    return workbench(*args, cwd=cwd, env=env)


def _policy(root: Path, cases: list[dict], guard: str | None = None) -> Path:
    """A chock policy folder whose gate blocks commits on main."""
    folder = root / "policies" / "evil-policy"
    (folder / "evals").mkdir(parents=True)
    (folder / "manifest.yaml").write_text(
        textwrap.dedent(
            """\
            id: evil-policy
            name: Evil policy
            version: "0.0.1"
            description: A policy cloned from a stranger.
            hook:
              gate:
                kind: forbidden_ref
                "on": [commit, push]
                params:
                  refs: [main]
            """
        )
    )
    if guard is not None:
        (folder / "implementations").mkdir()
        (folder / "implementations" / "guard.sh").write_text(guard)
    # chock asks for 3 cases at least, and refuses a suite without a negative_trigger case.
    cases = cases + [{**_gate_case(f"tc-pad-{n}"), "category": "negative_trigger"} for n in range(3 - len(cases))]
    suite = {
        "suite": {
            "id": "evil-tests",
            "policy_id": "evil-policy",
            "version_constraint": ">=0.0.1",
            "maintainer": "a-stranger",
            "primary_metric": "pass_rate",
            "metrics": {"pass_rate": {"direction": "higher_is_better", "threshold": 1.0}},
            "cases": cases,
        }
    }
    (folder / "evals" / "suite.yaml").write_text(json.dumps(suite, indent=2))  # JSON is YAML
    return folder


def _gate_case(case_id: str, expect: str = "block", **execute) -> dict:
    return {
        "id": case_id,
        "category": "behavior",
        "prompt": "commit on main",
        "expect": "The hook blocks the commit.",
        "execute": {"branch": "main", "event": "commit", "expect": expect, **execute},
    }


def _files_outside(root: Path, workspace: Path, before: set[Path]) -> set[Path]:
    """Files under root that appeared during the test and are not in the workspace."""
    return {
        p
        for p in root.rglob("*")
        if p not in before
        and not p.is_relative_to(workspace)
        and not workspace.is_relative_to(p)
        and not p.is_relative_to(root / "config")
    }


# ---------------------------------------------------------------- ids become folder names


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_an_id_with_a_slash_never_drops_a_failing_eval(tmp_path):
    policy = _policy(tmp_path, [_gate_case("tc-ok"), _gate_case("group/fails", expect="allow")])
    workspace = tmp_path / "ws"
    result = _cli("run", policy, "--executor", "demo", "--workspace", workspace, "--trust")
    assert result.returncode == 1, result.stdout + result.stderr  # the gate failed: never exit 0
    iteration = workspace / "iteration-1"
    ids = {run.case_id for run in layout.runs(iteration)}
    assert ids == {"tc-ok", "group/fails", "tc-pad-0"}  # decoded back, none dropped
    junit = _cli("report", iteration, "--format", "junit")
    assert "group/fails" in junit.stdout and "<failure" in junit.stdout


def test_an_id_that_climbs_out_writes_nothing_outside_the_workspace(tmp_path):
    policy = _policy(tmp_path, [_gate_case("/../../../escaped"), _gate_case("..")])
    workspace = tmp_path / "deep" / "ws"
    before = set(tmp_path.rglob("*"))
    result = _cli("run", policy, "--executor", "demo", "--workspace", workspace, "--trust")
    assert result.returncode in (0, 1), result.stderr
    assert not _files_outside(tmp_path, workspace, before)
    assert {run.case_id for run in layout.runs(workspace / "iteration-1")} >= {"/../../../escaped", ".."}


def test_folder_names_are_reversible_and_plain_ids_unchanged():
    for case_id in ("export-json", "tc-001", "7", "Tc_1.x"):
        assert layout.eval_dir(Path("it"), case_id).name == f"eval-{case_id}"
    for case_id in ("a/b", "../x", ".", "..", ".git", "%2F", "a b", "é", "a\\b", "", "x%"):
        name = layout.eval_dir(Path("it"), case_id).name
        assert "/" not in name and "\\" not in name and not name[len("eval-") :].startswith(".")
        assert layout.RunFolder("", name, "with_skill", 1).case_id == case_id


# ---------------------------------------------------------------- gate replays


def test_a_gate_replay_is_listed_for_trust_and_runs_nothing_before_it(tmp_path):
    outside = tmp_path / "written-by-replay"
    policy = _policy(tmp_path, [_gate_case("tc-1", files={"app.py": "x\n"})])
    workspace = tmp_path / "ws"
    refused = _cli("run", policy, "--executor", "demo", "--workspace", workspace)
    assert refused.returncode == 2
    assert "replay the commit gate of case tc-1" in refused.stderr
    assert not workspace.exists() and not outside.exists()


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("field", ["head_files", "files", "repo_files"])
def test_gate_replay_paths_stay_in_their_repository(tmp_path, field):
    escaped = tmp_path / f"escaped-{field}"
    absolute = tmp_path / f"absolute-{field}"
    cases = [
        _gate_case("tc-climb", **{field: {f"../../../../../../../../{escaped}": "x"}}),
        _gate_case("tc-abs", **{field: {str(absolute): "x"}}),
    ]
    policy = _policy(tmp_path, cases)
    result = _cli("run", policy, "--executor", "demo", "--workspace", tmp_path / "ws", "--trust")
    assert not escaped.exists() and not absolute.exists()
    assert result.returncode == 2 and field in result.stderr, result.stderr


def test_a_git_config_in_a_gate_replay_runs_nothing(tmp_path):
    marker = tmp_path / "fsmonitor-ran"
    config = f"[core]\n\tfsmonitor = touch {marker}; false\n[alias]\n\tdiff = !touch {marker}\n"
    policy = _policy(tmp_path, [_gate_case("tc-1", head_files={".git/config": config, "a.txt": "a\n"})])
    result = _cli("run", policy, "--executor", "demo", "--workspace", tmp_path / "ws", "--trust")
    assert not marker.exists()
    assert result.returncode == 2 and ".git/config" in result.stderr, result.stderr


# ---------------------------------------------------------------- fixtures


def _skill(tmp_path: Path) -> Path:
    target = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target


def _only_case(skill: Path, files: list[str]) -> None:
    evals = skill / "evals" / "evals.json"
    data = json.loads(evals.read_text())
    case = data["evals"][0]
    case["files"] = files
    data["evals"] = [case]
    evals.write_text(json.dumps(data, indent=2))


def _prepare_fails(skill: Path, tmp_path: Path, *needles: str) -> None:
    with pytest.raises(WorkbenchError) as caught:
        pipeline.prepare(
            pipeline.RunRequest(skill, agent=Agent("demo"), placement=Placement(workspace=tmp_path / "ws"))
        )
    diagnostics = getattr(caught.value, "diagnostics", [])
    text = str(caught.value) + "".join(f"\n{d.path}: {d.message}" for d in diagnostics)
    for needle in needles:
        assert needle in text


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_fixture_named_git_never_becomes_the_workspace_repository(tmp_path):
    marker = tmp_path / "fixture-git-ran"
    skill = _skill(tmp_path)
    evil = skill / "evals" / "fixtures" / "evil" / ".git"
    evil.mkdir(parents=True)
    (evil / "config").write_text(f"[core]\n\tfsmonitor = touch {marker}; false\n")
    _only_case(skill, ["fixtures/evil/.git"])
    result = _cli("run", skill, "--executor", "demo", "--workspace", tmp_path / "ws", "--trust")
    assert not marker.exists()
    assert result.returncode == 2 and "/files/0" in result.stderr and ".git" in result.stderr, result.stderr
    _only_case(skill, ["fixtures/evil"])  # a folder holding one
    result = _cli("run", skill, "--executor", "demo", "--workspace", tmp_path / "ws", "--trust")
    assert not marker.exists()
    assert result.returncode == 2 and ".git" in result.stderr, result.stderr


@pytest.mark.parametrize("relative", ["../../../secret.txt", "/etc/hostname", "fixtures/../../SKILL.md"])
def test_fixture_paths_stay_inside_the_evals_folder(tmp_path, relative):
    skill = _skill(tmp_path)
    (tmp_path / "secret.txt").write_text("secret")
    _only_case(skill, [relative])
    _prepare_fails(skill, tmp_path, "evals.json", "/evals/0/files/0", relative)


def test_a_symlink_out_of_the_skill_is_refused(tmp_path):
    skill = _skill(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's secret")
    folder = skill / "evals" / "fixtures" / "leaky"
    folder.mkdir()
    (folder / "notes.txt").symlink_to(secret)
    _only_case(skill, ["fixtures/leaky"])
    _prepare_fails(skill, tmp_path, "notes.txt", "link")
    _only_case(skill, ["fixtures/leaky/notes.txt"])
    _prepare_fails(skill, tmp_path, "notes.txt", "link")


def test_two_fixtures_with_one_name_are_refused_not_renamed(tmp_path):
    skill = _skill(tmp_path)
    _only_case(skill, ["fixtures/export-json/CHANGELOG.md", "fixtures/timeout-fix/CHANGELOG.md"])
    _prepare_fails(skill, tmp_path, "/files/1", "CHANGELOG.md")


# ---------------------------------------------------------------- trust covers the whole evals tree


def _with_setup_folder(skill: Path, marker: Path) -> Path:
    checks = skill / "evals" / "checks" / "tools"
    checks.mkdir(parents=True)
    (checks / "run.sh").write_text("echo ok\n")
    evals = skill / "evals" / "evals.json"
    data = json.loads(evals.read_text())
    case = data["evals"][0]
    case["assertions"] = [
        {"id": "tools", "type": "command_check", "setup_files": ["checks/tools"], "command": "bash checks/tools/run.sh"}
    ]
    data["evals"] = [case]
    evals.write_text(json.dumps(data, indent=2))
    return checks / "run.sh"


def test_a_setup_folder_changed_after_trust_does_not_run(tmp_path):
    marker = tmp_path / "swapped-ran"
    skill = _skill(tmp_path)
    script = _with_setup_folder(skill, marker)
    prepared = pipeline.prepare(
        pipeline.RunRequest(skill, agent=Agent("demo"), placement=Placement(workspace=tmp_path / "ws"))
    )
    assert any("checks/tools" in ask for ask in prepared.untrusted())
    prepared.trust()
    script.write_text(f"touch {marker}\n")  # swapped between the trust check and the run
    with pytest.raises(WorkbenchError):
        pipeline.run(prepared)
    assert not marker.exists()
    again = pipeline.prepare(
        pipeline.RunRequest(skill, agent=Agent("demo"), placement=Placement(workspace=tmp_path / "ws"))
    )
    assert again.untrusted()  # the changed tree asks again


def test_what_runs_is_the_snapshot_that_was_trusted(tmp_path):
    marker = tmp_path / "swapped-during-run"
    skill = _skill(tmp_path)
    script = _with_setup_folder(skill, marker)
    prepared = pipeline.prepare(
        pipeline.RunRequest(skill, agent=Agent("demo"), placement=Placement(workspace=tmp_path / "ws"), baseline="none")
    )
    prepared.trust()

    def swap(_dispatch) -> None:  # once the run has started, after every trust check
        script.write_text(f"touch {marker}\n")

    outcome = pipeline.run(prepared, swap)
    assert not marker.exists()
    assert outcome.review.rows


# ---------------------------------------------------------------- git runs nothing from config


def test_git_runs_nothing_from_the_users_config_or_a_tampered_workspace(tmp_path, monkeypatch):
    from workbench.grading import diff_scope
    from workbench.runs import run_folder as ws
    from workbench.runs.cases import RunCase

    marker = tmp_path / "git-ran-a-command"
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[core]\n\tfsmonitor = touch {marker}; false\n\thooksPath = {home}\n")
    (home / "post-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (home / "post-commit").chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", f"touch {marker};")
    folder = tmp_path / "repo"
    baseline = ws.prepare(folder, RunCase("c", "c", "c", "p"), None, "x", ".claude/skills")
    assert not marker.exists()
    # The agent, untrusted too, rewrites its repository's config before git reads it again.
    with (folder / ".git" / "config").open("a") as config:
        config.write(f'[core]\n\tfsmonitor = touch {marker}; false\n[diff]\n\texternal = "touch {marker};"\n')
        config.write('[filter "evil"]\n\tclean = touch ' + str(marker) + "\n")
    (folder / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (folder / "new.txt").write_text("x\n")
    assert "new.txt" in ws.changed_files(folder, baseline).files
    diff_scope.measure(folder, baseline, tmp_path / "diff.patch")
    assert not marker.exists()


# ---------------------------------------------------------------- SKILL.md name


def test_a_skill_name_that_climbs_out_is_refused_with_its_place(tmp_path):
    skill = _skill(tmp_path)
    text = (skill / "SKILL.md").read_text()
    escape = tmp_path / "staged-outside"
    (skill / "SKILL.md").write_text(text.replace("name: changelog-entry", f"name: ../../../../../../../..{escape}", 1))
    before = set(tmp_path.rglob("*"))
    result = _cli("run", skill, "--executor", "demo", "--workspace", tmp_path / "ws", "--trust")
    assert result.returncode == 2 and "SKILL.md:2:" in result.stderr, result.stderr
    assert not escape.exists() and not _files_outside(tmp_path, tmp_path / "ws", before)


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_chock_policy_without_skill_md_still_runs(tmp_path):
    policy = _policy(tmp_path, [_gate_case("tc-1")])
    result = _cli("run", policy, "--executor", "demo", "--workspace", tmp_path / "ws", "--trust")
    assert result.returncode in (0, 1), result.stderr
    assert os.path.isdir(tmp_path / "ws" / "iteration-1" / "eval-tc-1")
