"""Improve mode: versions in git, history.json and its invariants, the decision
rule, evaluate against the best, promote (and --write's refusals), history."""

from __future__ import annotations

import json
import shutil

import git
import pytest
from conftest import DEMO
from support.cli import workbench

from workbench.grading.difference import difference, t95
from workbench.improve.decide import decide
from workbench.improve.history import HistoryBroken, load_history
from workbench.workspace.versions import VersionError, VersionStore

DRAFT = DEMO.parent / "draft" / "changelog-entry" / "SKILL.md"  # the demo skill before three of its steps were right


def _edit(skill, changes):
    text = (skill / "SKILL.md").read_text()
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new)
    (skill / "SKILL.md").write_text(text)


@pytest.fixture()
def weak_skill(tmp_path):
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    shutil.copy(DRAFT, skill / "SKILL.md")
    return skill


@pytest.mark.slow  # 27 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_demo_path_v0_v1_v2_ends_in_a_known_history(weak_v0):
    # weak_v0: `version new` and `evaluate v0 --trust` of the weak skill, each exit 0
    skill, workspace = weak_v0, weak_v0.parent.parent / "changelog-entry-workspace"
    same = workbench("version", "new", skill)
    assert same.returncode == 2 and "identical to v0" in same.stderr
    # v1 asks when the kind is unclear: better in the two ambiguous evals only, a tie
    _edit(skill, {"guess (": "ask one short question ("})
    assert workbench("version", "new", skill).returncode == 0
    v1 = workbench("evaluate", skill, "v1")
    assert v1.returncode == 0 and "v1: pass rate 38% (12/33 with-skill assertions passed)" in v1.stdout, v1.stdout
    assert "v1 against v0: " in v1.stdout and "-> tie" in v1.stdout, v1.stdout
    shutil.copy(DEMO / "SKILL.md", skill / "SKILL.md")
    assert workbench("version", "new", skill, "--from", "v1").returncode == 0
    v2 = workbench("evaluate", skill, "v2", "--auto-promote")
    assert "v2: pass rate 100% (33/33 with-skill assertions passed)" in v2.stdout, v2.stdout
    assert "v2 against v0: " in v2.stdout and "-> won" in v2.stdout, v2.stdout  # v0: 7/33
    assert "now the current best" in v2.stdout
    data = json.loads((workspace / "history.json").read_text())
    del data["started_at"]
    assert data == {
        "skill_name": "changelog-entry",
        "current_best": "v2",
        "iterations": [
            {
                "version": "v0",
                "parent": None,
                "expectation_pass_rate": 0.2273,
                "grading_result": "baseline",
                "is_current_best": False,
            },
            {
                "version": "v1",
                "parent": "v0",
                "expectation_pass_rate": 0.3788,
                "grading_result": "tie",
                "is_current_best": False,
            },
            {
                "version": "v2",
                "parent": "v1",
                "expectation_pass_rate": 1.0,
                "grading_result": "won",
                "is_current_best": True,
            },
        ],
    }
    # the git tags and the iterations agree with it
    store = VersionStore(workspace)
    assert store.versions() == ["v0", "v1", "v2"]
    assert [store.parent_of(v) for v in store.versions()] == [None, "v0", "v1"]
    assert "-5. **Be tidy.**" in store.diff("v1", "v2") and "+5. **Touch nothing else.**" in store.diff("v1", "v2")
    evaluations = json.loads((workspace / "evaluations.json").read_text())
    assert [evaluations[v]["iteration"] for v in ("v0", "v1", "v2")] == [1, 2, 3]
    for version, iteration in (("v0", 1), ("v1", 2), ("v2", 3)):
        plan = json.loads((workspace / f"iteration-{iteration}" / "plan.json").read_text())
        assert plan["skill_path"].endswith(f".snapshots/{version}")  # the snapshot ran, not the folder
    shown = workbench("history", skill)
    assert shown.returncode == 0
    assert "└─ v1  tie      38% (12/33) iteration-2" in shown.stdout
    assert "   └─ v2  won      100% (33/33) iteration-3  ★ best" in shown.stdout
    as_json = json.loads(workbench("history", skill, "--format", "json").stdout)
    assert [v["version"] for v in as_json["versions"]] == ["v0", "v1", "v2"] and as_json["current_best"] == "v2"


def test_history_json_reads_plainly_as_seed_003_says(weak_skill):
    workbench("version", "new", weak_skill)
    data = json.loads((weak_skill.parent.parent / "changelog-entry-workspace" / "history.json").read_text())
    assert set(data) == {"started_at", "skill_name", "current_best", "iterations"}
    assert isinstance(data["started_at"], str) and data["started_at"].endswith("Z")
    [v0] = data["iterations"]
    assert set(v0) == {"version", "parent", "expectation_pass_rate", "grading_result", "is_current_best"}
    assert v0["grading_result"] in ("baseline", "won", "lost", "tie") and v0["is_current_best"] is True


@pytest.mark.slow  # 16 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_changed_suite_makes_the_best_run_again_as_old_skill(weak_skill):
    skill, workspace = weak_skill, weak_skill.parent.parent / "changelog-entry-workspace"
    workbench("version", "new", skill)
    workbench("evaluate", skill, "v0", "--trust", "--only", "question-not-a-request")
    shutil.copy(DEMO / "SKILL.md", skill / "SKILL.md")
    workbench("version", "new", skill)
    suite = skill / "evals" / "evals.json"
    data = json.loads(suite.read_text())
    data["evals"] = data["evals"][2:3]  # the evals changed since v0 was measured: the question alone
    suite.write_text(json.dumps(data, indent=2))
    result = workbench("evaluate", skill, "v1", "--trust")
    assert result.returncode == 0 and "ran here as old_skill" in result.stdout, result.stdout + result.stderr
    iteration = workspace / "iteration-2"
    assert sorted(p.name for p in (iteration / "eval-question-not-a-request").iterdir() if p.is_dir()) == [
        "old_skill",
        "with_skill",
    ]
    assert "-> tie" in result.stdout  # the same 2/2 each: a tie


def _evals(*rates):
    return {f"eval-{i}": rate for i, rate in enumerate(rates)}


@pytest.mark.parametrize(
    "new,best,result",
    [
        (_evals(*[1.0] * 8), _evals(*[0.0] * 8), "won"),  # every one of 8 evals moved from failing to passing
        (_evals(1.0, 1.0, 1.0), _evals(0.0, 0.0, 0.0), "tie"),  # three evals can never show a win
        (_evals(*[0.0] * 8), _evals(*[1.0] * 8), "lost"),
        (_evals(*[1.0] * 6, 0.5, 0.5), _evals(*[0.5] * 8), "won"),
        (_evals(*[0.54] * 10), _evals(*[0.5] * 10), "tie"),  # +0.04 everywhere: inside the margin
        (_evals(*[0.5] * 10), _evals(*[0.5] * 10), "tie"),
        (_evals(1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0), _evals(0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0), "tie"),
    ],
)
def test_the_decision_rule_pairs_by_eval(new, best, result):
    decision = decide(new, best)
    assert decision.result == result, decision.evidence
    assert f"{len(new)} paired eval(s)" in decision.evidence and "95% interval over" in decision.evidence
    assert decision.difference.low <= decision.delta <= decision.difference.high


def test_only_the_evals_both_sides_ran_are_paired():
    decision = decide({"a": 1.0, "b": 1.0, "c": 0.0}, {"b": 0.0, "c": 0.0, "d": 1.0})
    assert decision.difference.evals == 2 and decision.delta == pytest.approx(0.5)
    with pytest.raises(ValueError):
        decide({"a": 1.0}, {"b": 1.0})


def test_the_interval_over_evals_at_its_edges():
    assert t95(7) == 2.365 and abs(t95(31) - 2.0395) < 0.001 and abs(t95(1000) - 1.9623) < 0.001
    few = difference({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 0.0, "b": 0.0, "c": 0.0})
    assert few.delta == 1.0 and few.low < 0  # three evals that agree are not certainty
    one = difference({"a": 1.0}, {"a": 0.0})
    assert (one.low, one.high) == (-1.0, 1.0)
    assert difference({"a": 1.0}, {"b": 1.0}) is None


def _history(tmp_path, iterations, best="v0"):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "history.json").write_text(
        json.dumps(
            {"started_at": "2026-11-30T00:00:00Z", "skill_name": "s", "current_best": best, "iterations": iterations},
            indent=2,
        )
    )
    return workspace


def _entry(version, parent, best=False, result="won"):
    return {
        "version": version,
        "parent": parent,
        "expectation_pass_rate": 0.5,
        "grading_result": "baseline" if parent is None else result,
        "is_current_best": best,
    }


@pytest.mark.parametrize(
    "iterations,words,line",
    [
        ([_entry("v0", None, True), _entry("v1", "v0", True)], "2 iterations are marked is_current_best", 18),
        ([_entry("v0", None, True), _entry("v1", "v7")], 'parent "v7" of "v1" does not exist', 15),
        ([_entry("v0", None, True), _entry("v1", "v2"), _entry("v2", "v1")], "comes later in iterations", 15),
    ],
)
def test_broken_history_files_give_diagnostics_with_lines(tmp_path, iterations, words, line):
    workspace = _history(tmp_path, iterations)
    with pytest.raises(HistoryBroken) as caught:
        load_history(workspace)
    problem = next(d for d in caught.value.diagnostics if words in d.message)
    assert problem.line == line and problem.column
    shown = workbench("history", tmp_path, "--workspace", workspace)
    assert shown.returncode == 2 and f"history.json:{line}:" in shown.stderr and "Traceback" not in shown.stderr


def test_history_must_agree_with_the_tags(weak_skill, tmp_path):
    workspace = tmp_path / "ws"
    workbench("version", "new", weak_skill, "--workspace", workspace)
    data = json.loads((workspace / "history.json").read_text())
    data["iterations"].append(_entry("v1", "v0"))
    (workspace / "history.json").write_text(json.dumps(data, indent=2))
    with pytest.raises(HistoryBroken) as caught:
        load_history(workspace, VersionStore(workspace))
    assert any('"v1" has no git tag' in d.message and d.line for d in caught.value.diagnostics)


@pytest.mark.slow  # 31 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_promote_write_refuses_over_uncommitted_work_and_writes_a_clean_folder(weak_skill):
    skill, workspace = weak_skill, weak_skill.parent.parent / "changelog-entry-workspace"
    repo = git.Repo.init(skill.parent.parent)
    repo.git.add(A=True)
    repo.git.commit("-m", "skills", author="t <t@t>")
    workbench("version", "new", skill)
    workbench("evaluate", skill, "v0", "--trust", "--only", "question-not-a-request")
    shutil.copy(DEMO / "SKILL.md", skill / "SKILL.md")
    workbench("version", "new", skill)
    workbench("evaluate", skill, "v1")  # a whole evaluation: one with --only is not recorded
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nmy unsaved thought\n")
    refused = workbench("promote", skill, "v0", "--write", "--yes")
    assert refused.returncode == 2 and "uncommitted changes" in refused.stderr and "SKILL.md" in refused.stderr
    assert "my unsaved thought" in (skill / "SKILL.md").read_text()
    assert json.loads((workspace / "history.json").read_text())["current_best"] == "v0"  # changed nothing
    repo.git.checkout("--", ".")  # back to the committed (weak) skill: clean
    written = workbench("promote", skill, "v1", "--write", "--yes")
    assert written.returncode == 0, written.stderr
    assert "+5. **Touch nothing else.**" in written.stdout  # the diff is shown first
    assert (skill / "SKILL.md").read_text() == (DEMO / "SKILL.md").read_text()
    assert json.loads((workspace / "history.json").read_text())["current_best"] == "v1"
    assert (skill / "evals" / "evals.json").read_text() == (DEMO / "evals" / "evals.json").read_text()


@pytest.mark.slow  # 20 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_run_compares_with_the_current_best_as_old_skill(weak_skill):
    skill = weak_skill
    refused = workbench("run", skill, "--baseline", "old_skill", "--trust")
    assert refused.returncode == 2 and "no versions yet" in refused.stderr
    workbench("version", "new", skill)
    shutil.copy(DEMO / "SKILL.md", skill / "SKILL.md")
    ran = workbench("run", skill, "--baseline", "old_skill", "--trust")
    assert ran.returncode == 0, ran.stderr
    # the means of the runs: 33/33 against the draft's 2.5 of 11 runs (7/33 assertions)
    assert "with_skill 100%  old_skill 23%  delta +0.77" in ran.stdout


def test_versions_refuse_what_does_not_exist(tmp_path, weak_skill):
    store = VersionStore(tmp_path / "ws")
    assert store.snapshot(weak_skill, None) == "v0"
    with pytest.raises(VersionError, match="there is no version v4"):
        store.commit_of("v4")
    with pytest.raises(VersionError, match="identical to v0"):
        store.snapshot(weak_skill, "v0")


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_blind_comparator_decides_by_majority_and_records_each_comparison(weak_v0):
    skill, workspace = weak_v0, weak_v0.parent.parent / "changelog-entry-workspace"
    shutil.copy(DEMO / "SKILL.md", skill / "SKILL.md")
    workbench("version", "new", skill)
    result = workbench("evaluate", skill, "v1", "--decide", "comparator")
    assert result.returncode == 0, result.stderr
    # v1 changes fewer files (or names no code) in every eval but the question, where the two look alike
    assert (
        "blind comparator (demo judge (offline heuristic, not a model)), majority of 3 per eval: v1 preferred "
        "on 9 eval(s), v0 on 0, 1 undecided -> won" in result.stdout
    ), result.stdout
    comparisons = sorted((workspace / "iteration-2").glob("eval-*/comparison-*.json"))
    assert len(comparisons) == 30  # 3 for each of the 10 evals
    for path in comparisons:
        data = json.loads(path.read_text())
        assert data["winner"] in ("A", "B", "TIE") and data["reasoning"].startswith("[demo judge")
        assert sorted(data["assignment"].values()) == ["v0", "v1"]
        winner = data["assignment"].get(data["winner"])
        if path.parent.name == "eval-export-json-flag":
            assert winner == "v1"
    evaluations = json.loads((workspace / "evaluations.json").read_text())
    assert evaluations["v1"]["decision"]["decided_by"] == "comparator"
    assert evaluations["v1"]["decision"]["rule"]["result"] == "won"  # the rule's view is kept beside it


def test_the_draft_demo_is_the_demo_with_its_first_draft(monkeypatch, tmp_path):
    from workbench.app.skills import copy_demo

    skill = copy_demo(draft=True)
    try:
        assert (skill / "SKILL.md").read_text() == DRAFT.read_text() != (DEMO / "SKILL.md").read_text()
        assert (skill / "evals" / "evals.json").read_text() == (DEMO / "evals" / "evals.json").read_text()
    finally:
        shutil.rmtree(skill.parent)


@pytest.mark.slow  # 16 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_skill_creator_legacy_history_is_adopted_and_continued(tmp_path):
    from legacy_fixture import HISTORY, legacy_workspace, snapshot

    skill, workspace = legacy_workspace(tmp_path)
    theirs = snapshot(workspace)
    shown = workbench("history", skill)
    assert shown.returncode == 0, shown.stderr
    assert "imported skill-creator's versions v0, v1, v2" in shown.stderr, shown.stderr
    assert str(workspace) in shown.stdout  # their workspace beside the skill, not ours beside skills/
    lines = shown.stdout.splitlines()[1:]
    assert lines[0].split() == ["v0", "baseline", "65%"], shown.stdout
    assert lines[1].split() == ["└─", "v1", "won", "75%"], shown.stdout
    assert lines[2].split() == ["└─", "v2", "won", "85%", "★", "best"], shown.stdout
    # each folder is its version, parents as history.json says, evals/ left out as for any version
    store = VersionStore(workspace)
    assert store.versions() == ["v0", "v1", "v2"]
    assert [store.parent_of(v) for v in ("v0", "v1", "v2")] == [None, "v0", "v1"]
    for version in ("v0", "v1", "v2"):
        files = store.files(version)
        assert files["SKILL.md"] == (workspace / version / "skill" / "SKILL.md").read_bytes()
        assert not any(name.startswith("evals/") for name in files)
    assert snapshot(workspace) == theirs  # nothing of theirs rewritten
    assert workbench("history", skill).stderr == ""  # imported once
    # version new continues from the best, evaluate records beside their entries
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nKeep the entry to one line.\n")
    made = workbench("version", "new", skill)
    assert made.returncode == 0 and made.stdout.startswith("v3: from v2"), made.stdout + made.stderr
    evaluated = workbench("evaluate", skill, "v3", "--trust")
    assert evaluated.returncode in (0, 1), evaluated.stdout + evaluated.stderr
    assert "The best, v2, had no runs on these evals" in evaluated.stdout, evaluated.stdout
    data = json.loads((workspace / "history.json").read_text())
    assert data["iterations"][:3] == HISTORY["iterations"] and data["started_at"] == HISTORY["started_at"]
    assert data["iterations"][3]["version"] == "v3" and data["iterations"][3]["parent"] == "v2"
    assert load_history(workspace, store) is not None
    after = snapshot(workspace)
    assert {k: v for k, v in after.items() if k != "history.json"} == {
        k: v for k, v in theirs.items() if k != "history.json"
    }


def test_run_with_old_skill_takes_the_legacy_best(tmp_path):
    from legacy_fixture import legacy_workspace

    skill, workspace = legacy_workspace(tmp_path)
    done = workbench("run", skill, "--baseline", "old_skill", "--trust", "--only", "export-json-flag")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "old_skill" in done.stdout
    exported = workspace / ".snapshots" / "v2" / "SKILL.md"
    assert exported.read_bytes() == (workspace / "v2" / "skill" / "SKILL.md").read_bytes()


def test_a_legacy_history_waits_for_the_workspace_lock_to_be_imported(tmp_path):
    from legacy_fixture import legacy_workspace

    from workbench.workspace import lock

    skill, workspace = legacy_workspace(tmp_path)
    with lock.hold(workspace, "test"):
        busy = workbench("history", skill)
    assert busy.returncode == 2 and "not imported into versions.git yet: another writer holds" in busy.stderr
    assert f"{workspace / 'history.json'}:7:" in busy.stderr, busy.stderr
    assert not VersionStore(workspace).versions()
    assert workbench("history", skill).returncode == 0
    assert VersionStore(workspace).versions() == ["v0", "v1", "v2"]
