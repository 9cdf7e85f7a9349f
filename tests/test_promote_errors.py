"""An error in the middle of `promote --write` is not a kill: the folder is put
back as it was, byte for byte, history.json is unchanged, and the message says
what failed; where even putting it back fails, the message says the promotion
is half applied, lists what is from which version and gives the one command
that finishes it, and that command says it finished a promotion stopped at an
error, never one a killed workbench left.

The failure is real: one folder of the skill (z/) is mounted read-only in a
bubblewrap mount namespace around the workbench, so renaming into or out of it
fails (EXDEV/EROFS) after SKILL.md and a/ were already written. A rollback that
fails too is injected at its first step (WORKBENCH_TEST_FAIL_AT, as the kill
tests' WORKBENCH_TEST_KILL_AT): no real failure strikes only the way back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DEMO, REPO
from support import process
from support.cli import workbench

from workbench.improve.history import load_history
from workbench.workspace import journal
from workbench.workspace.versions import VersionStore

EVALS = ("export-json-flag",)


def _bwrap_works() -> bool:
    try:
        return subprocess.run(["bwrap", "--dev-bind", "/", "/", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap cannot make a mount namespace here")


def _workbench(cwd: Path, *args: str, read_only: Path | None = None, env: dict[str, str] | None = None):
    """The command line, in this process; with read_only, a real process in a mount namespace where that folder
    is read-only for this command only, as a mount the user cannot write."""
    environment = {**os.environ, "PYTHONPATH": str(REPO), "WORKBENCH_CONFIG_DIR": str(cwd / "config"), **(env or {})}
    if read_only is None:
        return workbench(*args, cwd=cwd, env=environment)
    mount = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(read_only), str(read_only), "--"]
    return subprocess.run(
        [*mount, *process.command(*args)], cwd=cwd, capture_output=True, text=True, timeout=300, env=environment
    )


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """v0 and v1 evaluated, v1 the best and in the folder; v0 differs in SKILL.md, a/x.md, z/y.md, a link and
    a mode, and has a file v1 removed (gone/old.md)."""
    base = tmp_path_factory.mktemp("promote-errors")
    skill = base / "changelog-entry"
    shutil.copytree(DEMO, skill)
    suite = skill / "evals" / "evals.json"
    data = json.loads(suite.read_text())
    data["evals"] = [case for case in data["evals"] if case["id"] in EVALS]
    suite.write_text(json.dumps(data, indent=2))
    for extra in ("suite.yaml", "skill-creator.evals.json"):
        (skill / "evals" / extra).unlink()
    for folder, text in (("a", "x.md"), ("z", "y.md"), ("gone", "old.md")):
        (skill / folder).mkdir()
        (skill / folder / text).write_text(f"{folder} in v0\n")
    (skill / "LINK.md").symlink_to("SKILL.md")
    run = ("--sandbox", "none", "--trust")
    assert _workbench(base, "version", "new", skill).returncode == 0
    assert _workbench(base, "evaluate", skill, "v0", *run).returncode == 0
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nOne more line in v1.\n")
    (skill / "SKILL.md").chmod(0o755)
    for folder, text in (("a", "x.md"), ("z", "y.md")):
        (skill / folder / text).write_text(f"{folder} in v1\n")
    shutil.rmtree(skill / "gone")
    (skill / "LINK.md").unlink()
    (skill / "LINK.md").symlink_to("a/x.md")
    assert _workbench(base, "version", "new", skill).returncode == 0
    assert _workbench(base, "evaluate", skill, "v1", *run).returncode == 0
    assert _workbench(base, "promote", skill, "v1", "--yes").returncode == 0  # its files are in the folder
    return base


@pytest.fixture
def copy(made, tmp_path) -> Path:
    shutil.copytree(made, tmp_path / "copy", symlinks=True)
    return tmp_path / "copy"


def _folder(skill: Path) -> dict[str, tuple]:
    """Every entry of the skill folder: its kind, mode, and bytes or link target."""
    out = {}
    for path in sorted(skill.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            out[str(path.relative_to(skill))] = ("link", os.readlink(path))
        elif path.is_dir():
            out[str(path.relative_to(skill))] = ("folder", oct(info.st_mode & 0o7777))
        else:
            out[str(path.relative_to(skill))] = ("file", oct(info.st_mode & 0o7777), path.read_bytes())
    return out


@pytest.mark.slow  # 15 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_an_io_error_midway_puts_the_folder_back_byte_for_byte_and_promotes_nothing(copy):
    skill, workspace = copy / "changelog-entry", copy / "changelog-entry-workspace"
    folder, history = _folder(skill), (workspace / "history.json").read_bytes()
    failed = _workbench(copy, "promote", skill, "v0", "--write", "--yes", read_only=skill / "z")
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert _folder(skill) == folder and (workspace / "history.json").read_bytes() == history
    assert not (workspace / journal.FILE).exists() and not any((workspace / journal.STAGING).iterdir())
    said = " ".join(failed.stderr.split())
    assert f"writing v0 into {skill} failed: {skill / 'z' / 'y.md'}" in said, said
    assert "The folder was put back as it was (v1), byte for byte, and nothing was promoted" in said
    assert "Traceback" not in failed.stderr
    # Nothing is pending: the next command finishes nothing, and says nothing of a kill.
    shown = _workbench(copy, "history", skill)
    assert shown.returncode == 0 and "current best v1" in shown.stdout, shown.stdout + shown.stderr
    assert "finished" not in shown.stderr and "killed" not in shown.stderr
    # Once the folder can be written, the same promotion goes through whole.
    assert _workbench(copy, "promote", skill, "v0", "--write", "--yes").returncode == 0
    store = VersionStore(workspace)
    assert store.tree_of_folder(skill) == store.tree_of("v0")


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_rollback_that_fails_too_says_what_is_from_which_version_and_the_command_that_finishes(copy):
    skill, workspace = copy / "changelog-entry", copy / "changelog-entry-workspace"
    history = (workspace / "history.json").read_bytes()
    failed = _workbench(
        copy, "promote", skill, "v0", "--write", "--yes", read_only=skill / "z",
        env={"WORKBENCH_TEST_FAIL_AT": "rolling-back"},
    )  # fmt: skip
    assert failed.returncode == 2, failed.stdout + failed.stderr
    lines = failed.stderr.splitlines()
    assert any("The promotion is half applied" in line for line in lines), failed.stderr
    # Removed first, then one file at a time in order: LINK.md, SKILL.md and a/ were written when z/ failed.
    assert "  from v0: LINK.md, SKILL.md, a/x.md, gone/old.md" in lines, failed.stderr
    assert "  from v1: z/y.md" in lines, failed.stderr
    assert f"Once the cause is fixed, `workbench history {skill}` finishes the promotion of v0." in lines
    assert (workspace / "history.json").read_bytes() == history  # the best is still v1
    recorded = json.loads((workspace / journal.FILE).read_text())
    assert "z/y.md" in recorded["stopped"] and "injected by a test" in recorded["stopped"]
    # The command it names finishes it, and says it finished a promotion stopped at an error, not a kill.
    finished = _workbench(copy, "history", skill)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    said = " ".join(finished.stderr.split())
    assert f"finished the promotion of v0 into {skill}, which had stopped half applied at an error" in said
    assert "killed" not in said and "current best v0" in finished.stdout
    store = VersionStore(workspace)
    assert store.tree_of_folder(skill) == store.tree_of("v0")
    best = load_history(workspace, store)
    assert best is not None and best.current_best == "v0"
    assert not (workspace / journal.FILE).exists() and not any((workspace / journal.STAGING).iterdir())


def test_staging_that_fails_changes_nothing_and_names_what_failed(copy):
    """Before the change begins: the version's files cannot be made ready (the staging folder is read-only)."""
    skill, workspace = copy / "changelog-entry", copy / "changelog-entry-workspace"
    (workspace / journal.STAGING).mkdir(exist_ok=True)
    folder, history = _folder(skill), (workspace / "history.json").read_bytes()
    failed = _workbench(copy, "promote", skill, "v0", "--write", "--yes", read_only=workspace / journal.STAGING)
    assert failed.returncode == 2, failed.stdout + failed.stderr
    said = " ".join(failed.stderr.split())
    assert "failed before anything changed" in said and "nothing was written or promoted" in said, said
    assert _folder(skill) == folder and (workspace / "history.json").read_bytes() == history
    assert not (workspace / journal.FILE).exists()
