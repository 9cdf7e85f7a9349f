"""Hostile and corrupt files: each is a diagnostic at its line, never a traceback,
a hang or unbounded memory. The exploits come first; the bounds in
formats/document.py close their class (size, depth, numbers, aliases, file kinds)."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import process
from support.cli import workbench
from support.process import command as workbench_command

from workbench.formats.document import MAX_BYTES, MAX_DEPTH, SyntaxProblem, load, parse_json, parse_yaml

ROOT = Path(__file__).resolve().parents[1]


def _laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nevals: *a{levels - 1}\n"


def _suite(extra: str) -> str:
    return '{"skill_name": "demo", "evals": [{"id": 1, "prompt": "p", "expected_output": "o"' + extra + "}]}\n"


def _at(extra: str, literal: str) -> tuple[int, int]:
    """Line 1 and the column where literal starts within _suite(extra)."""
    text = _suite(extra)
    return 1, text.index(literal, text.index(extra)) + 1


# name, suite file, content, (line, column), words of the message
HOSTILE = [
    ("billion laughs", "suite.yaml", _laughs(), (2, 10), "aliases expand"),
    ("deep JSON", "evals.json", '{"evals": ' + "[" * 900 + "]" * 900 + "}", None, "nested"),
    ("deep JSON within the bound of the parser", "evals.json", '{"evals": ' + "[" * 300 + "]" * 300 + "}", None, "64"),
    ("deep YAML", "suite.yaml", "evals: " + "[" * 300 + "]" * 300 + "\n", None, "nested"),
    (
        "5,000-digit integer",
        "evals.json",
        _suite(', "runs": ' + "9" * 5000),
        _at(', "runs": 9', "9"),
        "number out of range",
    ),
    ("5,000-digit integer in YAML", "suite.yaml", "evals:\n  - id: a\n    n: " + "9" * 5000 + "\n", (3, 8), "range"),
    ("1e999", "evals.json", _suite(', "x": 1e999'), _at(', "x": 1e999', "1e999"), "number out of range"),
    ("-1e999", "evals.json", _suite(', "x": -1e999'), _at(', "x": -1e999', "-1e999"), "number out of range"),
    ("YAML .inf inside", "suite.yaml", "evals:\n  - id: a\n    x: .inf\n", (3, 5), "number out of range"),
    (
        "duplicate key",
        "evals.json",
        _suite(', "prompt": "again"'),
        _at(', "prompt": "again"', '"prompt"'),
        'duplicate key "prompt"',
    ),
    ("duplicate key in YAML", "suite.yaml", "evals:\n  - id: a\n    id: b\n", (3, 5), "duplicate key"),
]


@pytest.mark.parametrize(("name", "file", "content", "where", "words"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_suite_is_an_error_at_its_line_in_bounded_time_and_memory(
    tmp_path, name, file, content, where, words
):
    suite = tmp_path / "skill" / "evals" / file
    suite.parent.mkdir(parents=True)
    suite.write_text(content)
    result = _validate(tmp_path, suite.parent.parent)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    [line] = [line for line in result.stdout.splitlines() if ": error: " in line]
    assert words in line, line
    if where is not None:
        assert line.startswith(f"{suite}:{where[0]}:{where[1]}: error: "), line


def test_duplicate_keys_are_found_in_their_own_object_only():
    # "id" in every case is no duplicate; the second "id" of one case is, at its line.
    text = '{"evals": [\n {"id": 1, "p": "a"},\n {"id": 2, "p": "b"},\n {"id": 3, "id": 4}\n]}'
    problem = parse_json(text)
    assert isinstance(problem, SyntaxProblem)
    assert (problem.line, problem.column) == (4, 12) and '"id"' in problem.message


def test_every_bound_is_far_above_a_real_suite(tmp_path):
    # The deepest level allowed still reads and validates: the bound is the only limit.
    inner = json.loads("[" * (MAX_DEPTH - 4) + "]" * (MAX_DEPTH - 4))
    suite = {"skill_name": "demo", "evals": [{"id": 1, "prompt": "p", "expected_output": "o", "x": inner}]}
    assert not isinstance(parse_json(json.dumps(suite)), SyntaxProblem)
    assert not isinstance(parse_json('{"n": ' + "9" * 1000 + ', "f": 1e308}'), SyntaxProblem)
    # Aliases that repeat a little (a shared block of settings) are fine.
    shared = "base: &base {timeout: 30, model: m}\nevals:\n" + "".join(
        f"  - {{id: c{i}, cfg: *base}}\n" for i in range(50)
    )
    assert not isinstance(parse_yaml(shared), SyntaxProblem)


def test_a_fifo_a_device_a_folder_and_a_huge_file_are_reported_not_read(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:  # sparse: costs no disk
        handle.truncate(MAX_BYTES + 1)
    found = {path.name: load(path) for path in (fifo, Path("/dev/zero"), folder, huge)}
    assert all(isinstance(problem, SyntaxProblem) for problem in found.values())
    assert "FIFO" in found["fifo.json"].message
    assert "device" in found["zero"].message
    assert "folder" in found["folder.json"].message
    assert "too big" in found["huge.json"].message


def test_a_walk_reports_fifos_and_broken_links_and_goes_on(tmp_path):
    skill = tmp_path / "skill"
    (skill / "evals").mkdir(parents=True)
    os.mkfifo(skill / "evals" / "evals.json")
    (skill / "evals" / "suite.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (skill / "notes.json").symlink_to(tmp_path / "nowhere.json")
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: Does a thing. Use when asked.\n---\nBody\n")
    result = _validate(tmp_path, skill)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    out = result.stdout
    assert f"{skill / 'evals' / 'evals.json'}:1:1: error: cannot be read: a FIFO" in out
    assert f"{skill / 'evals' / 'suite.yaml'}:1:1: error: cannot be read: a broken link to" in out
    assert f"{skill / 'notes.json'}:1:1: warning: cannot be read: a broken link to" in out  # not a suite's place
    assert "4 files checked" in out  # SKILL.md too: the walk went on


def test_a_file_named_on_the_command_line_is_always_checked(tmp_path):
    broken = tmp_path / "notes.yaml"
    broken.write_text("a: [1,\n")
    result = _validate(tmp_path, broken)
    assert result.returncode == 1, result.stdout
    assert f"{broken}:2:1: error: invalid YAML" in result.stdout and "skipped" not in result.stdout


def test_a_walk_skips_the_workbenchs_own_workspaces_unless_it_starts_in_one(tmp_path):
    skill = tmp_path / "skill"
    (skill / "evals").mkdir(parents=True)
    (skill / "evals" / "evals.json").write_text(_suite(""))
    workspace = tmp_path / "skill-workspace"
    run = workspace / "iteration-1" / "eval-1" / "with_skill" / "run-1" / "outputs" / "evals"
    run.mkdir(parents=True)
    (run / "evals.json").write_text("{ broken")  # what an agent wrote: not the user's suite
    result = _validate(tmp_path, tmp_path)
    assert result.returncode == 0, result.stdout
    assert "skill-workspace" not in result.stdout
    inside = _validate(tmp_path, workspace)
    assert inside.returncode == 1 and "outputs/evals/evals.json:1:3: error" in inside.stdout


def _validate(cwd: Path, target: Path) -> subprocess.CompletedProcess:
    """The CLI in a child with 1 GiB of address space and 60 s: a bound broken is a failure, not a hung suite."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    return process.run(
        "validate",
        target,
        cwd=cwd,
        timeout=60,
        preexec_fn=limits,
        env={**os.environ, "PYTHONPATH": str(ROOT), "WORKBENCH_CONFIG_DIR": str(cwd / "config")},
    )


@pytest.mark.parametrize("name", ["v1~1", "v1^", "v0\n", "v١", "HEAD", "--output=/tmp/x", "v1..v2", "../v1", ""])
def test_a_version_name_is_exactly_v_and_digits(tmp_path, name):
    from workbench.workspace.versions import VersionError, VersionStore, number

    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: Does a thing. Use when asked.\n---\nBody\n")
    store = VersionStore(tmp_path / "workspace")
    store.snapshot(skill, None)
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: Does another. Use when asked.\n---\nBody\n")
    store.snapshot(skill, "v0")  # v1~1 would name v0 if it reached git
    assert store.versions() == ["v0", "v1"]
    with pytest.raises(VersionError):
        number(name)
    with pytest.raises(VersionError):
        store.commit_of(name)
    with pytest.raises(VersionError):
        store.diff(name, "v0")


def test_history_json_names_only_versions(tmp_path):
    from workbench.validate.validator import validate_file

    history = tmp_path / "history.json"
    history.write_text(
        json.dumps(
            {
                "started_at": "2026-11-30T10:00:00Z",
                "skill_name": "skill",
                "current_best": "v0\n",
                "iterations": [
                    {
                        "version": "v0\n",
                        "parent": None,
                        "expectation_pass_rate": 0.5,
                        "grading_result": "baseline",
                        "is_current_best": True,
                    }
                ],
            }
        )
    )
    report = validate_file(history)
    assert {d.path for d in report.diagnostics if "not a version name" in d.message} == {
        "/current_best",
        "/iterations/0/version",
    }


def test_an_artifact_written_where_a_link_was_planted_replaces_the_link(tmp_path):
    # An agent (or a cloned iteration) leaves run-1/grading.json as a link to a file
    # outside the workspace: grading must replace the link, never write through it.
    from workbench.formats import artifacts
    from workbench.grading.artifact import write_artifact

    outside = tmp_path / "home" / ".bashrc"
    outside.parent.mkdir()
    outside.write_text("export PATH=/usr/bin\n")
    run = tmp_path / "workspace" / "iteration-1" / "eval-1" / "with_skill" / "run-1"
    run.mkdir(parents=True)
    (run / "grading.json").symlink_to(outside)
    grading = {"expectations": [], "summary": {"passed": 0, "failed": 0, "total": 0, "pass_rate": 0.0}}
    write_artifact(run / "grading.json", artifacts.GRADING, grading)
    assert outside.read_text() == "export PATH=/usr/bin\n"
    assert not (run / "grading.json").is_symlink() and json.loads((run / "grading.json").read_text()) == grading


SKILL_MD_HOSTILE = [
    ("billion laughs in the frontmatter", "---\n" + _laughs() + "---\nBody\n", "aliases expand"),
    ("deep frontmatter", "---\nname: " + "[" * 300 + "]" * 300 + "\n---\nBody\n", "nested"),
    ("duplicate key in the frontmatter", "---\nname: a\nname: b\ndescription: d\n---\nBody\n", "duplicate key"),
    ("1e999 in the frontmatter", "---\nname: a\ndescription: d\nmetadata:\n  n: 1e999\n---\nBody\n", "out of range"),
]


@pytest.mark.parametrize(("name", "content", "words"), SKILL_MD_HOSTILE, ids=[h[0] for h in SKILL_MD_HOSTILE])
def test_a_hostile_skill_md_is_an_error_at_its_line(tmp_path, name, content, words):
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text(content)
    result = _validate(tmp_path, skill)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stdout + result.stderr
    [line] = [line for line in result.stdout.splitlines() if ": error: " in line]
    assert line.startswith(f"{skill / 'SKILL.md'}:") and words in line, line


def test_a_corrupt_benchmark_json_falls_back_to_the_gradings(tmp_path):
    from workbench.grading.benchmark import results_from_benchmark

    iteration = tmp_path / "iteration-1"
    iteration.mkdir()
    for text in ("", "[]", '{"runs": "all passed"}', '{"runs": [{"folder": 3, "result": []}]}', "{" * 5000):
        (iteration / "benchmark.json").write_text(text)
        assert results_from_benchmark(iteration) is None  # read from the gradings instead, never trusted


JOURNALS = {
    "a write outside the workspace": {"tags": {}, "promotion": None, "writes": {"../../victim/escaped.txt": "x"}},
    "a write of another workspace file": {"tags": {}, "promotion": None, "writes": {".workbench.lock": "x"}},
    "a promotion that deletes elsewhere": {
        "tags": {},
        "promotion": {
            "version": "v1",
            "skill_dir": "VICTIM",
            "staging": "/x",
            "place": [],
            "remove": ["important.txt"],
        },
        "writes": {},
    },
    "a promotion naming a path up and out": {
        "tags": {},
        "promotion": {
            "version": "v1",
            "skill_dir": "SKILL",
            "staging": "/x",
            "place": [],
            "remove": ["../victim/important.txt"],
        },
        "writes": {},
    },
    "a promotion staged here into another folder": {
        "tags": {},
        "promotion": {
            "version": "v1",
            "skill_dir": "VICTIM",
            "staging": "WORKSPACE/.promotion/promote-x",
            "place": [],
            "remove": ["important.txt"],
            "before": {"important.txt": "sha256:KEEP"},
        },
        "writes": {},
    },
    "wrong types": {"tags": [], "promotion": "x", "writes": {"history.json": 5}},
    "a tag that is a revision": {"tags": {"v1~1": "HEAD"}, "promotion": None, "writes": {}},
}


@pytest.mark.parametrize("how", list(JOURNALS))
def test_a_journal_left_in_a_cloned_workspace_is_refused_never_replayed(tmp_path, how):
    # journal.json is replayed by the next command, even `history`: a crafted one wrote
    # outside the workspace and deleted the victim's files. Exploit first.
    skill = tmp_path / "changelog-entry"
    shutil.copytree(Path(__file__).resolve().parents[1] / "demo" / "changelog-entry", skill)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "important.txt").write_text("keep me\n")
    workspace = tmp_path / "changelog-entry-workspace"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORKBENCH_CONFIG_DIR": str(tmp_path / "config")}
    run = workbench("version", "new", skill, cwd=tmp_path, env=env)  # in this process: its files are what is read
    assert run.returncode == 0, run.stderr
    history = (workspace / "history.json").read_text()
    keep = hashlib.sha256(b"keep me\n").hexdigest()  # the victim's file known: no help to the attacker
    crafted = json.dumps(JOURNALS[how]).replace("VICTIM", str(victim)).replace("SKILL", str(skill))
    journal = json.loads(crafted.replace("WORKSPACE", str(workspace)).replace("KEEP", keep))
    (workspace / "journal.json").write_text(json.dumps(journal))
    result = workbench("history", skill, cwd=tmp_path, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    refusal = "an interrupted promotion of v1 into" if "staged here" in how else "not a journal the workbench wrote"
    assert refusal in result.stderr, result.stderr
    assert (victim / "important.txt").read_text() == "keep me\n"
    assert not (tmp_path / "victim" / "escaped.txt").exists() and not (tmp_path.parent / "victim").exists()
    assert (workspace / "history.json").read_text() == history and (workspace / "journal.json").exists()


def test_a_lone_surrogate_is_an_error_at_its_place(tmp_path):
    suite = tmp_path / "skill" / "evals" / "evals.json"
    suite.parent.mkdir(parents=True)
    suite.write_text(_suite(', "note": "broken \\udc80 half"'))
    result = _validate(tmp_path, suite.parent.parent)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "lone surrogate" in result.stdout


def _craft_name(workspace: Path) -> None:
    text = (workspace / "history.json").read_text()
    (workspace / "history.json").write_text(text.replace('"v1"', '"../x"'))


def _craft_link_out(workspace: Path) -> None:
    outside = workspace.parent.parent / "outside"
    shutil.move(str(workspace / "v1"), outside)
    (workspace / "v1").symlink_to(outside)


def _craft_link_inside(workspace: Path) -> None:
    (workspace / "v1" / "skill" / "secret").symlink_to("/etc/passwd")


def _craft_missing(workspace: Path) -> None:
    shutil.rmtree(workspace / "v1")


# skill-creator's legacy layout from a cloned workspace: version folder names come from history.json
LEGACY_CRAFTED = [
    ("name-climbs-out", _craft_name, 14, 'expected a string matching ^v[0-9]+$, found the string "../x"'),
    ("folder-is-a-link-out", _craft_link_out, 14, "v1 is a link (to "),
    ("link-out-inside", _craft_link_inside, 14, "v1/skill/: secret is a link that leads outside skill/"),
    ("folder-missing", _craft_missing, 14, "history.json names v1 but"),
]


@pytest.mark.parametrize(("name", "craft", "line", "words"), LEGACY_CRAFTED, ids=[c[0] for c in LEGACY_CRAFTED])
def test_a_crafted_legacy_history_is_refused_with_its_line_and_nothing_imported(tmp_path, name, craft, line, words):
    sys.path.insert(0, str(ROOT / "tests"))
    from legacy_fixture import legacy_workspace, snapshot

    skill, workspace = legacy_workspace(tmp_path)
    craft(workspace)
    theirs = (
        {k: v for k, v in snapshot(workspace).items() if not k.startswith("v1")} if name != "name-climbs-out" else {}
    )
    for command in (["history"], ["version", "new"]):
        done = subprocess.run(
            workbench_command(*command, str(skill)),
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        assert f"{workspace / 'history.json'}:{line}:" in done.stderr, done.stderr
        assert words in done.stderr, done.stderr
    assert not (workspace / "versions.git" / "refs" / "tags").is_dir() or not any(
        (workspace / "versions.git" / "refs" / "tags").iterdir()
    )
    assert not (workspace / "journal.json").exists()
    for key, value in theirs.items():
        assert (workspace / key).read_bytes() == value


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_journal_cannot_reach_outside_through_a_folder_link_in_the_skill(tmp_path):
    # Found by an attacker: the names were checked as text, so `lnk/victim.txt` with lnk -> elsewhere
    # deleted and wrote outside the workspace, from `workbench history`. Exploit first.
    skill = tmp_path / "changelog-entry"
    shutil.copytree(Path(__file__).resolve().parents[1] / "demo" / "changelog-entry", skill)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep me\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORKBENCH_CONFIG_DIR": str(tmp_path / "config")}
    command = workbench_command()
    done = subprocess.run([*command, "version", "new", str(skill)], cwd=tmp_path, capture_output=True, env=env)
    assert done.returncode == 0, done.stderr
    (skill / "lnk").symlink_to(outside)
    workspace = tmp_path / "changelog-entry-workspace"
    staging = workspace / ".promotion" / "s1"
    (staging / "lnk").mkdir(parents=True)
    (staging / "lnk" / "planted.txt").write_text("evil\n")
    keep = "sha256:" + hashlib.sha256(b"keep me\n").hexdigest()
    journal = {
        "tags": {},
        "promotion": {
            "version": "v1",
            "skill_dir": str(skill),
            "staging": str(staging),
            "place": ["lnk/planted.txt"],
            "remove": ["lnk/victim.txt"],
            "before": {"lnk/planted.txt": None, "lnk/victim.txt": keep},
        },
        "writes": {},
    }
    (workspace / "journal.json").write_text(json.dumps(journal))
    result = subprocess.run([*command, "history", str(skill)], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.returncode == 2 and "goes through a link" in result.stderr, result.stderr
    assert (outside / "victim.txt").read_text() == "keep me\n" and not (outside / "planted.txt").exists()
    for broken in (b"\xff\xfe", b"[" * 100_000):  # and a journal that is not text, or too deep: refused, no traceback
        (workspace / "journal.json").write_bytes(broken)
        result = subprocess.run(
            [*command, "history", str(skill)], cwd=tmp_path, capture_output=True, text=True, env=env
        )
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
