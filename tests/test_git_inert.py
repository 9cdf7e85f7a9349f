"""Git never obeys a tree it did not write (issue 24, docs/security.md "Git").

The class: every way a tree can configure git. A work tree's `.gitattributes`
(filter, diff and textconv drivers; export-ignore and export-subst; text, eol
and working-tree-encoding conversions), `.gitignore` files, a nested
repository's `.git/config` (filters, fsmonitor, hooks) read when git descends
into a gitlink, the outer repository's own `.git` (config, info/attributes,
info/exclude, alternates, replace refs) and a bare repository's HEAD tree. Each
vector below is an exploit with a marker command that must not run, or content
that must come out byte for byte; then a shim on PATH proves the mechanism: no
git process the workbench starts reads a tree it did not write."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from agents import answer_skill
from conftest import DEMO
from support.cli import workbench

from workbench.grading import diff_scope
from workbench.runs import run_folder as ws
from workbench.runs import sandbox
from workbench.workspace import git_objects, trees
from workbench.workspace.versions import VersionStore

ROOT = Path(__file__).resolve().parent.parent
needs_bwrap = pytest.mark.skipif(
    bool(sandbox.unavailable()),
    reason=f"no sandbox here: {sandbox.unavailable()} (tests/run.sh installs bubblewrap when it runs as root)",
)
SANDBOXES = [pytest.param("bwrap", marks=needs_bwrap), "none"]
QUIET = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]

# An agent that plants every vector it can in its workspace, then leaves changes for git to look at.
NESTED_AGENT = r"""#!/bin/sh
set -e
MARK="$MARKERS"
mkdir sub && cd sub
git init -q
git config user.name a && git config user.email a@a
echo one > tracked.txt && git add tracked.txt && git commit -qm one
git config filter.evil.clean "sh -c 'touch $MARK/nested-clean; cat'"
git config filter.evil.smudge "sh -c 'touch $MARK/nested-smudge; cat'"
git config filter.evil.process "sh -c 'touch $MARK/nested-process'"
git config core.fsmonitor "sh -c 'touch $MARK/nested-fsmonitor'"
git config diff.evil.textconv "sh -c 'touch $MARK/nested-textconv; cat'"
git config diff.external "sh -c 'touch $MARK/nested-external'"
mkdir -p .git/hooks
for hook in post-index-change pre-commit post-checkout reference-transaction; do
  printf '#!/bin/sh\ntouch %s/hook-%s\n' "$MARK" "$hook" > .git/hooks/$hook; chmod +x .git/hooks/$hook
done
echo '* filter=evil diff=evil' > .gitattributes
echo two > tracked.txt
cd ..
# The outer repository too: its config is put back, but its attributes and excludes are the agent's.
git config filter.evil.clean "sh -c 'touch $MARK/outer-clean; cat'" || true
git config core.fsmonitor "sh -c 'touch $MARK/outer-fsmonitor'" || true
echo '* filter=evil diff=evil export-ignore' > .gitattributes
printf '* filter=evil\n' > .git/info/attributes 2>/dev/null || true
echo 'hidden.txt' >> .git/info/exclude 2>/dev/null || true
echo secret > hidden.txt
echo inside > answer.txt
echo '{"type":"result","result":"ok","session_id":"s","usage":{"input_tokens":1}}'
"""


def _workbench(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "MARKERS": str(tmp_path / "markers"), **(env or {})}
    (tmp_path / "markers").mkdir(exist_ok=True)
    return workbench(*args, env=full, cwd=tmp_path)  # in this process: what it writes and runs is what is read


def _scope_skill(tmp_path: Path) -> Path:
    scope = {"id": "scope", "type": "diff_scope", "max_files_touched": 50}
    return answer_skill(tmp_path, DEMO, turns=None, assertions=[scope])


def _markers(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "markers").iterdir())


@pytest.mark.parametrize("mode", SANDBOXES)
def test_a_nested_repository_the_agent_made_runs_nothing_on_the_host(tmp_path, mode):
    skill = _scope_skill(tmp_path)
    (tmp_path / "agent.sh").write_text(NESTED_AGENT)
    args = ["run", str(skill), "--executor", "command", "--agent-command", f"sh {tmp_path / 'agent.sh'}"]
    done = _workbench(tmp_path, *args, "--judge", "demo", "--baseline", "none", "--sandbox", mode, "--trust")
    [run] = list((tmp_path / "changelog-entry-workspace").glob("iteration-1/*/*/run-1"))
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "done", (record, done.stderr)
    # Made inside the agent's own turn, the nested repository's commit ran its hooks there (sandboxed or
    # not, that is the agent's own doing); nothing ran once the turn was over.
    assert [m for m in _markers(tmp_path) if not m.startswith("hook-")] == [], done.stderr
    # The nested repository's files are data, its .git is left out, and the evidence says so.
    assert "sub/tracked.txt" in record["changed_files"] and "sub/.gitattributes" in record["changed_files"]
    assert not any(".git/" in name for name in record["changed_files"])
    assert record["workspace_notes"] == ["a nested repository at sub/: read as plain files, its .git left out"]
    # What the agent excluded or attributed is measured all the same: the bytes it left are the evidence.
    assert "hidden.txt" in record["changed_files"]
    assert (run / "outputs" / "sub" / "tracked.txt").read_text() == "two\n"
    patch = (run / "diff.patch").read_text()
    assert "+two" in patch and "+secret" in patch
    grading = json.loads((run / "grading.json").read_text())
    assert "file(s) touched" in grading["expectations"][0]["evidence"]


@pytest.mark.slow  # 18 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_tree_returned_by_a_cluster_worker_runs_nothing_on_the_submitting_machine(tmp_path):
    """The worker's run folder comes back with the agent's nested repository in it; grading here reads
    the run's own store only."""
    pytest.importorskip("distributed", reason="the cluster extra is not installed")
    from test_cluster import DASK, LocalCluster

    if not DASK.exists():
        pytest.skip(f"the dask command is not at {DASK}")
    skill = _scope_skill(tmp_path)
    (tmp_path / "agent.sh").write_text(NESTED_AGENT)
    (tmp_path / "markers").mkdir()
    (tmp_path / "logs").mkdir()
    cluster = LocalCluster(tmp_path / "logs")
    try:
        cluster.add_workers(1, MARKERS=str(tmp_path / "worker-markers"))
        (tmp_path / "worker-markers").mkdir()
        args = ["run", str(skill), "--executor", "command", "--agent-command", f"sh {tmp_path / 'agent.sh'}"]
        args += ["--judge", "demo", "--baseline", "none", "--sandbox", "none", "--trust", "--cluster", cluster.address]
        done = _workbench(tmp_path, *args)
    finally:
        cluster.stop()
    [run] = list((tmp_path / "changelog-entry-workspace").glob("iteration-1/*/*/run-1"))
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "done" and "sub/tracked.txt" in record["changed_files"], (record, done.stderr)
    assert json.loads((run / "grading.json").read_text())["expectations"][0]["passed"]
    assert _markers(tmp_path) == []
    assert [m for m in os.listdir(tmp_path / "worker-markers") if not m.startswith("hook-")] == []


def test_attributes_of_the_fixtures_change_no_byte_of_the_baseline(tmp_path):
    """text/eol/working-tree-encoding/ident conversions would make `git add` commit other bytes."""
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / ".gitattributes").write_text("* text eol=crlf ident\nutf16.txt working-tree-encoding=UTF-16\n")
    (folder / "crlf.txt").write_bytes(b"one\r\ntwo\r\n$Id$\n")
    (folder / "utf16.txt").write_bytes("hé\n".encode("utf-16"))
    commit = ws.baseline(folder)
    objects = git_objects.Objects(tmp_path / "trees" / "objects")
    files = objects.entries(objects.tree_of(commit))
    for name in ("crlf.txt", "utf16.txt", ".gitattributes"):
        assert objects.read(files[name].oid)[1] == (folder / name).read_bytes()
    # The agent's repository is a real one: git itself finds it whole and clean.
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": str(tmp_path)}
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=folder, capture_output=True, text=True, env=env)
    assert fsck.returncode == 0, fsck.stderr
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, env=env)
    assert head.stdout.strip() == commit
    assert ws.changed_files(folder, commit).files == []


def test_the_agents_repository_is_clean_for_git_and_equal_to_what_git_would_commit(tmp_path):
    """The objects and index written without git are what git writes: ids, modes, links, order."""
    folder = tmp_path / "repo"
    (folder / "d" / "e").mkdir(parents=True)
    (folder / "a.txt").write_text("a\n")
    (folder / "d" / "run.sh").write_text("#!/bin/sh\n")
    (folder / "d" / "run.sh").chmod(0o755)
    (folder / "d" / "e" / "f.bin").write_bytes(bytes(range(256)))
    (folder / "d-e.txt").write_text("sorts between d and d/ in git's order\n")
    (folder / "link").symlink_to("a.txt")
    (folder / "ünïcode name.txt").write_text("x\n")
    commit = ws.baseline(folder)
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": str(tmp_path)}
    status = subprocess.run(["git", "status", "--porcelain"], cwd=folder, capture_output=True, text=True, env=env)
    assert status.returncode == 0 and status.stdout == "", status.stdout + status.stderr
    twin = tmp_path / "twin"
    shutil.copytree(folder, twin, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    subprocess.run(["git", "init", "-q", str(twin)], check=True, env=env)
    subprocess.run(["git", "-C", str(twin), "add", "-A"], check=True, env=env)
    tree = subprocess.run(["git", "-C", str(twin), "write-tree"], capture_output=True, text=True, env=env)
    assert git_objects.Objects(tmp_path / "trees" / "objects").tree_of(commit) == tree.stdout.strip()


def test_the_agent_cannot_rewrite_the_baseline_it_is_measured_against(tmp_path):
    """Its .git is its own: a baseline commit rewritten there changes nothing of what is measured."""
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "big.txt").write_text("".join(f"line {n}\n" for n in range(100)))
    commit = ws.baseline(folder)
    (folder / "big.txt").write_text("all new\n")
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": str(tmp_path)}
    for args in (["add", "-A"], [*QUIET, "commit", "-qm", "forged"]):
        subprocess.run(["git", *args], cwd=folder, check=True, env=env)
    shutil.rmtree(folder / ".git" / "objects")  # and its objects gone
    files, lines = diff_scope.measure(folder, commit, tmp_path / "diff.patch")
    assert files == ["big.txt"] and lines == 101


def _commit_all(repo: Path) -> None:
    subprocess.run(["git", "-C", str(repo), *QUIET, "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *QUIET, "commit", "-qm", "skill"], check=True)


def _nested_repo_with_a_filter(folder: Path, markers: Path) -> None:
    """A nested repository shipped with a skill, with every command git could run from it."""
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "note.txt").write_text("one\n")
    _commit_all(folder)
    config = {
        "filter.evil.clean": f"sh -c 'touch {markers}/clean; cat'",
        "filter.evil.process": f"sh -c 'touch {markers}/process'",
        "core.fsmonitor": f"sh -c 'touch {markers}/fsmonitor'",
    }
    for key, value in config.items():
        subprocess.run(["git", "-C", str(folder), "config", key, value], check=True)
    (folder / ".git" / "hooks").mkdir(exist_ok=True)
    hook = folder / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {markers}/hook\n")
    hook.chmod(0o755)
    (folder / ".gitattributes").write_text("* filter=evil\n")
    (folder / "note.txt").write_text("two\n")  # dirty: `git status` would hash it through the filter


@pytest.mark.slow  # 26 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_promote_write_never_enters_a_nested_repository_shipped_with_the_skill(tmp_path):
    project = tmp_path / "proj"
    skill = project / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    markers = tmp_path / "markers"
    markers.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    _commit_all(project)
    assert _workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nOne more line.\n")
    assert _workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    assert _workbench(tmp_path, "evaluate", str(skill), "v1", "--trust").returncode == 0
    subprocess.run(["git", "-C", str(project), "checkout", "--", "."], check=True)
    # The nested repository comes with the skill: registered in the project as a gitlink, then dirtied.
    _nested_repo_with_a_filter(skill / "vendor", markers)
    subprocess.run(["git", "-C", str(project), *QUIET, "add", "skills/changelog-entry/vendor"], check=True)
    subprocess.run(["git", "-C", str(project), *QUIET, "commit", "-qm", "vendor"], check=True)
    promoted = _workbench(tmp_path, "promote", str(skill), "v1", "--write", "--yes")
    assert _markers(tmp_path) == []
    # Git cannot say whether writing would lose work in a repository it must not enter: refused, nothing written.
    assert promoted.returncode == 2 and "vendor" in promoted.stderr, promoted.stderr
    assert "One more line." not in (skill / "SKILL.md").read_text()


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_promote_write_runs_no_filter_of_an_untracked_nested_repository(tmp_path):
    project = tmp_path / "proj"
    skill = project / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    _commit_all(project)
    assert _workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    _nested_repo_with_a_filter(skill / "vendor", tmp_path / "markers")
    refused = _workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes")
    assert _markers(tmp_path) == []
    assert "vendor" in refused.stderr and "uncommitted" in refused.stderr, refused.stderr


def test_snapshots_and_promotions_are_the_committed_bytes_whatever_gitattributes_says(tmp_path):
    """export-ignore would drop a file from `git archive`, export-subst would expand $Format$ in it."""
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    (skill / ".gitattributes").write_text("notes.md export-ignore\nSKILL.md export-subst\n* ident\n")
    (skill / "notes.md").write_text("kept\n")
    with (skill / "SKILL.md").open("a") as text:
        text.write("\nBuilt from $Format:%H$ on $Format:%cd$. $Id$\n")
    store = VersionStore(tmp_path / "ws")
    store.snapshot(skill, None)
    exported = store.export("v0")
    for name in ("notes.md", "SKILL.md", ".gitattributes"):
        assert (exported / name).read_bytes() == (skill / name).read_bytes(), name
    assert store.files("v0")["SKILL.md"] == (skill / "SKILL.md").read_bytes()
    written = tmp_path / "written"
    store.materialize("v0", written)
    assert (written / "SKILL.md").read_bytes() == (skill / "SKILL.md").read_bytes()
    assert (written / "notes.md").exists()


def test_a_diff_driver_or_textconv_named_by_attributes_runs_nothing_and_hides_nothing(tmp_path):
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "code.py").write_text("old\n")
    commit = ws.baseline(folder)
    marker = tmp_path / "driver-ran"
    with (folder / ".git" / "config").open("a") as config:
        config.write(f'[diff "evil"]\n\ttextconv = touch {marker}; echo\n\tcommand = touch {marker}; true\n')
    (folder / ".gitattributes").write_text("* diff=evil -diff binary\n")
    (folder / "code.py").write_text("new\n")
    files, lines = diff_scope.measure(folder, commit, tmp_path / "diff.patch")
    assert not marker.exists()
    assert "code.py" in files and lines == 3  # two for code.py, one for .gitattributes: text, not "binary"
    assert "+new" in (tmp_path / "diff.patch").read_text()


def test_ignore_rules_are_the_baselines_never_the_agents(tmp_path):
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / ".gitignore").write_text("build/\n*.log\n")
    (folder / "kept.log").write_text("tracked, so never ignored\n")
    commit = ws.baseline(folder)
    (folder / "build").mkdir()
    (folder / "build" / "out.o").write_text("ignored by the fixture's rules\n")
    (folder / "debug.log").write_text("ignored too\n")
    (folder / "kept.log").write_text("changed\n")
    (folder / "sub").mkdir()
    (folder / "sub" / ".gitignore").write_text("*\n")  # the agent's own rules hide nothing
    (folder / "sub" / "work.txt").write_text("counted\n")
    (folder / ".git" / "info").mkdir(exist_ok=True)
    (folder / ".git" / "info" / "exclude").write_text("*.txt\n")
    assert ws.changed_files(folder, commit).files == ["kept.log", "sub/.gitignore", "sub/work.txt"]


def test_fifos_and_sockets_in_the_workspace_are_noted_not_read(tmp_path):
    folder = tmp_path / "repo"
    folder.mkdir()
    commit = ws.baseline(folder)
    os.mkfifo(folder / "pipe")
    changes = ws.changed_files(folder, commit)  # a read would block forever
    assert changes.files == [] and changes.notes == ["pipe (a FIFO): not read"]


def test_a_skill_folder_is_read_as_git_would_add_it_but_by_the_workbench(tmp_path):
    skill = tmp_path / "skill"
    shutil.copytree(DEMO, skill)
    (skill / ".gitignore").write_text("*.pyc\n")
    (skill / "x.pyc").write_bytes(b"\0")
    (skill / "sub").mkdir()
    (skill / "sub" / ".git").mkdir()  # a nested repository: its files are data, its .git never read
    (skill / "sub" / "a.md").write_text("a\n")
    found = trees.read(skill, None, leave_out=lambda p: p == "evals", own_ignore_files=True)
    assert "x.pyc" not in found.entries and "sub/a.md" in found.entries and found.nested == ["sub/"]
    assert not any(name.startswith("evals/") for name in found.entries)


# ---------------------------------------------------------------- the mechanism: every git process

GIT_SHIM = """#!/bin/sh
printf '%s\\0' "$PWD" "$GIT_DIR" "$GIT_WORK_TREE" "$@" >> "$GIT_LOG"
printf '\\n' >> "$GIT_LOG"
exec {real} "$@"
"""


@pytest.mark.slow  # 30 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_no_git_process_reads_a_tree_the_workbench_did_not_write(tmp_path):
    """Every git the workbench starts, through a whole run, grading, a version, a promotion with its
    write: none runs in or names as its work tree an agent's workspace or the skill folder, but the
    promotion's listing of the user's own repository (index and objects only)."""
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "git").write_text(GIT_SHIM.format(real=shutil.which("git")))
    (shim / "git").chmod(0o755)
    log = tmp_path / "git.log"
    env = {"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}", "GIT_LOG": str(log)}
    project = tmp_path / "proj"
    skill = project / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    _commit_all(project)
    for args in (
        ["run", str(skill), "--executor", "demo", "--trust"],
        ["version", "new", str(skill)],
        ["evaluate", str(skill), "v0", "--trust", "--only", "question-not-a-request"],
        ["grade", str(project / "changelog-entry-workspace" / "iteration-1")],
        ["promote", str(skill), "v0", "--write", "--yes"],
    ):
        done = _workbench(tmp_path, *args, env=env)
        assert done.returncode in (0, 1), (args, done.stderr)
    calls = [line.split("\0")[:-1] for line in log.read_text().split("\n") if line]
    assert calls, "the shim saw no git at all: the test would mean nothing"
    workspace = project / "changelog-entry-workspace"
    for cwd, git_dir, work_tree, *argv in calls:
        places = [cwd, git_dir, work_tree, *(a.split("=", 1)[1] for a in argv if a.startswith("--work-tree="))]
        places += [a.split("=", 1)[1] for a in argv if a.startswith("--git-dir=")]
        for place in filter(None, places):
            real = os.path.realpath(place)
            inside_repo = "/repo" in real and real.startswith(str(workspace))
            assert not inside_repo, (place, argv)
            if real.startswith(str(skill)) or real == str(project):
                # Only the user's repository, asked which files are committed: index, objects, names.
                sub = next(a for a in argv if not a.startswith("-") and "=" not in a and a not in {"HEAD"})
                assert sub in ("ls-files", "ls-tree") and "--literal-pathspecs" in argv, argv


def test_a_big_file_is_streamed_into_the_store_with_gits_own_id(tmp_path):
    folder = tmp_path / "repo"
    folder.mkdir()
    big = folder / "big.bin"
    with big.open("wb") as out:
        for n in range(10):
            out.write(bytes([n]) * git_objects.CHUNK)
    commit = ws.baseline(folder)
    objects = git_objects.Objects(tmp_path / "trees" / "objects")
    oid = objects.entries(objects.tree_of(commit))["big.bin"].oid
    expected = subprocess.run(["git", "hash-object", "--no-filters", str(big)], capture_output=True, text=True)
    assert oid == expected.stdout.strip() and objects.read(oid)[1] == big.read_bytes()
    assert trees.entry_of(big) == git_objects.Entry(git_objects.FILE, oid)


def test_a_baseline_writes_one_pack_once_in_place_in_both_new_repositories(tmp_path):
    """Both object folders are new when a baseline is made: its objects go into one pack, written in place,
    read-only, with no temporary file renamed into place and no second read of the store to copy it (a
    dispatch wrote each object as a file in a folder of its own, in both). git finds both whole, every
    object in the pack and none loose, and the agent's repository clean."""

    folder = tmp_path / "repo"
    (folder / "d").mkdir(parents=True)
    (folder / "a.txt").write_text("a\n")
    (folder / "d" / "b.txt").write_text("b\n")
    (folder / "link").symlink_to("a.txt")
    events: list[str] = []
    watching = [True]
    sys.addaudithook(
        lambda event, args: watching[0] and event in ("os.rename", "shutil.copytree") and events.append(event)
    )
    try:
        commit = ws.baseline(folder)
    finally:
        watching[0] = False
    assert events == []
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": str(tmp_path)}
    for repository in (folder, tmp_path / "trees"):
        fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repository, capture_output=True, text=True, env=env)
        assert fsck.returncode == 0, fsck.stderr
        count = subprocess.run(["git", "count-objects", "-v"], cwd=repository, capture_output=True, text=True, env=env)
        said = dict(line.split(": ") for line in count.stdout.splitlines())
        # 3 blobs (a link is one), 2 trees, the commit: all in one pack, none loose
        assert (said["count"], said["in-pack"], said["packs"]) == ("0", "6", "1")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=folder, capture_output=True, text=True, env=env)
    assert status.stdout == "" and status.returncode == 0
    stored = {p.relative_to(tmp_path / "trees" / "objects") for p in (tmp_path / "trees" / "objects").rglob("*/*")}
    agents = {p.relative_to(folder / ".git" / "objects") for p in (folder / ".git" / "objects").rglob("*/*")}
    assert stored == agents and {p.suffix for p in stored} == {".pack", ".idx"} and len(stored) == 2
    for name in stored:
        assert (folder / ".git" / "objects" / name).stat().st_mode & 0o777 == 0o444
        assert (folder / ".git" / "objects" / name).read_bytes() == (tmp_path / "trees" / "objects" / name).read_bytes()
    assert ws.changed_files(folder, commit).files == []
