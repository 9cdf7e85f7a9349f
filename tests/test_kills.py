"""The workbench as a fault injector sees it: `run`, `version new`, `evaluate` and
`promote --write` killed with SIGKILL after a random delay (fixed seeds), the
state checked after every kill and after the command is run again; and two
writers racing for one workspace.

The invariants: no report exits 0 on an iteration with a run missing or
ungraded, and a finished one has the grades of an uninterrupted run;
history.json parses, validates and agrees with versions.git; the skill folder is
entirely one version's, and the best's, once no journal is pending (a pending
one is finished by the next command); every command run again completes.

A small copy of the demo (three evals, offline agent and judge) keeps each
command around a second; the seeds and counts are in the constants below."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import DEMO
from support import cli, process

from workbench.improve.history import EVALUATIONS, load_history
from workbench.workspace import journal, layout, lock
from workbench.workspace.versions import VersionStore

ROOT = Path(__file__).resolve().parents[1]
EVALS = ("export-json-flag", "deprecated-option", "kind-named-in-request")
# The instants of the kills span each window evenly (see spread): one in each equal part of it.
RUN_CHAINS, RUN_KILLS_PER_CHAIN = 3, 4  # up to 12 kills of `run`
VERSION_KILLS = 16
EVALUATE_VERSIONS, EVALUATE_KILLS_PER_VERSION = 4, 2  # up to 8 kills of `evaluate`
PROMOTE_KILLS = 20
RUN_ARGS = ("--sandbox", "none", "--trust")


def small_demo(base: Path) -> Path:
    skill = base / "changelog-entry"
    shutil.copytree(DEMO, skill)
    for extra in ("suite.yaml", "skill-creator.evals.json"):
        (skill / "evals" / extra).unlink()
    suite = skill / "evals" / "evals.json"
    data = json.loads(suite.read_text())
    data["evals"] = [case for case in data["evals"] if case["id"] in EVALS]
    suite.write_text(json.dumps(data, indent=2))
    return skill


def environment(cwd: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "WORKBENCH_CONFIG_DIR": str(cwd / "config")}


def workbench(cwd: Path, *args: str, kill_at: str = "", real: bool = False) -> subprocess.CompletedProcess:
    """The CLI to its end. kill_at names the step of journal.py where it kills itself (SIGKILL): a real
    process, as is one timed for a kill window (real: its start is part of what a kill lands in). Any other
    (what runs after a kill, on the state it left) runs in this process: it is the state that is tested."""
    if kill_at or real:
        done = process.run(*args, cwd=cwd, timeout=120, env={**environment(cwd), "WORKBENCH_TEST_KILL_AT": kill_at})
    else:
        done = cli.workbench(*args, cwd=cwd, env=environment(cwd))
    assert "Traceback" not in done.stderr, done.stderr
    return done


def start(cwd: Path, *args: str) -> subprocess.Popen:
    # A session of its own: the kill takes the workbench and what it started, as a crash would.
    return process.start(
        *args,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=environment(cwd),
        start_new_session=True,
    )


def kill_after(process: subprocess.Popen, delay: float) -> int | None:
    """SIGKILL after delay seconds; None when killed, else its exit code (it finished first)."""
    try:
        process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        process.stderr.close()  # type: ignore[union-attr]
        return None
    stderr = process.stderr.read()  # type: ignore[union-attr]
    process.stderr.close()  # type: ignore[union-attr]
    assert "Traceback" not in stderr, stderr
    return process.returncode


class Window:
    """How long a whole one takes here, the kill window's unit: timed once, then again by
    every try that finished before its kill. The load of a shared machine changes within one
    test: timed once while another process held a core, a window had every kill land after
    the end (a CI run: 14 of 16 finished, none killed before the change)."""

    def __init__(self, whole: float) -> None:
        self.whole = whole

    def kill(self, cwd: Path, part: float, *args: str) -> int | None:
        """Starts `workbench args`, SIGKILLs it at part of the window: as kill_after()."""
        began = time.monotonic()
        code = kill_after(start(cwd, *args), part * self.whole)
        if code is not None:
            self.whole = time.monotonic() - began
        return code


def spread(rng: random.Random, count: int, low: float, high: float) -> list[float]:
    """count instants that span [low, high]: one at a random place in each of count equal
    parts of it, in a random order (seeded). Random draws of as many can leave a part of
    the window with none; these never do."""
    width = (high - low) / count
    instants = [low + (part + rng.random()) * width for part in range(count)]
    rng.shuffle(instants)
    return instants


def gradings(iteration: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for run in layout.runs(iteration):
        summary = json.loads(Path(run.path, layout.GRADING).read_text())["summary"]
        out[run.relative] = (summary["passed"], summary["total"])
    return out


def finished(iteration: Path) -> bool:
    """Every run plan.json names has its run.json and a grading of that very run."""
    try:
        plan = json.loads((iteration / layout.PLAN).read_text())
    except (OSError, ValueError):
        return False
    for item in plan["dispatches"]:
        folder = layout.run_dir(iteration, str(item["eval_id"]), item["configuration"], item["run_number"])
        try:
            record = json.loads((folder / layout.RUN_RECORD).read_text())
            grading = json.loads((folder / layout.GRADING).read_text())
        except (OSError, ValueError):
            return False
        if grading.get("run_key") != record.get("key"):
            return False
    return True


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, tuple[int, int]]:
    """The grades of an uninterrupted run of the small demo."""
    base = tmp_path_factory.mktemp("reference")
    skill = small_demo(base)
    assert workbench(base, "run", str(skill), *RUN_ARGS).returncode == 0
    return gradings(base / "changelog-entry-workspace" / "iteration-1")


@pytest.mark.slow  # 26 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_run_killed_anywhere_never_reports_green_half_done_and_resumes(tmp_path, reference):
    # The kill window is this machine's own: how long a whole run takes here (fixed delays of 0.2 to 1.5 s
    # had most tries finish first once runs got faster: 5 kills in 12 on a CI run).
    timed = tmp_path / "timed"
    timed.mkdir()
    began = time.monotonic()
    assert workbench(timed, "run", str(small_demo(timed)), *RUN_ARGS, real=True).returncode == 0
    window = Window(time.monotonic() - began)
    kills, started = 0, time.monotonic()
    parts = spread(random.Random(0), RUN_CHAINS * RUN_KILLS_PER_CHAIN, 0.1, 0.95)
    for chain in range(RUN_CHAINS):
        base = tmp_path / f"chain-{chain}"
        base.mkdir()
        skill = small_demo(base)
        iteration = base / "changelog-entry-workspace" / "iteration-1"
        for attempt in range(RUN_KILLS_PER_CHAIN + 1):
            if attempt < RUN_KILLS_PER_CHAIN:
                code = window.kill(base, parts[chain * RUN_KILLS_PER_CHAIN + attempt], "run", str(skill), *RUN_ARGS)
            else:
                code = kill_after(start(base, "run", str(skill), *RUN_ARGS), 120)
            if code is not None:
                assert code == 0  # it finished by itself (and took over the lock of the killed one)
                break
            kills += 1
            if iteration.is_dir():
                report = workbench(base, "report", str(iteration))
                if finished(iteration):
                    assert report.returncode == 0, report.stdout
                    assert gradings(iteration) == reference
                else:
                    assert report.returncode == 2, f"chain {chain} attempt {attempt}: {report.stdout}"
        assert finished(iteration)
        assert workbench(base, "report", str(iteration)).returncode == 0
        assert gradings(iteration) == reference
        assert layout.iteration_numbers(iteration.parent) == [1]  # resumed, never begun again elsewhere
    print(f"run: {kills} kills in {time.monotonic() - started:.1f} s (a whole run: {window.whole:.2f} s)")
    # A resumed run does only what is left, so a late part of the window may find it done: the first try of
    # each chain, a whole run, is what is sure to be killed.
    assert kills >= RUN_CHAINS


def check_history(workspace: Path) -> None:
    """history.json parses, validates and agrees with versions.git, and so does evaluations.json."""
    store = VersionStore(workspace)
    history = load_history(workspace, store)  # raises HistoryBroken on any disagreement
    if store.versions():
        assert history is not None, "versions.git has versions and history.json is missing"
    if history is not None:
        evaluations = json.loads((workspace / EVALUATIONS).read_text()) if (workspace / EVALUATIONS).exists() else {}
        for version in store.versions():
            if version != "v0":  # v0 has its entry from the start
                assert (history.entry(version) is None) == (version not in evaluations), version


def settle(workspace: Path) -> bool:
    """What the next command does first: finish a pending change. True when one was pending."""
    pending = (workspace / journal.FILE).exists()
    deadline = time.monotonic() + 5
    while journal.recover_now(workspace) is None and (workspace / journal.FILE).exists():
        # recover_now steps aside while a writer holds the lock; the killed one holds nothing.
        holder = lock.holder(workspace)
        pid = holder.split()[1] if holder.startswith("pid ") else ""
        alive = bool(pid) and os.path.exists(f"/proc/{pid}")
        assert time.monotonic() < deadline, f"the lock is still held after the kill: {holder}, alive: {alive}"
        time.sleep(0.1)
    assert not (workspace / journal.FILE).exists()
    return pending


@pytest.mark.slow  # 17 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_version_new_killed_anywhere_leaves_versions_and_history_agreeing(tmp_path):
    skill = small_demo(tmp_path)
    workspace = tmp_path / "changelog-entry-workspace"
    rng = random.Random(13)
    outcomes = {"before": 0, "after": 0, "pending": 0, "finished": 0}
    # The kill window is this machine's own (a loaded CI runner is slower): how long a whole one takes here.
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nTimed.\n")
    timed = time.monotonic()
    assert workbench(tmp_path, "version", "new", str(skill), real=True).returncode == 0
    window = Window(time.monotonic() - timed)
    started = time.monotonic()

    # The change lands in the last few ms before the exit: kills found both sides by bisecting
    # between the latest kill that came before it and the earliest that came after (or the end).
    bounds = {"before": 0.0, "after": float("inf")}

    def attempt(number: int, part: float) -> None:
        with (skill / "SKILL.md").open("a") as handle:
            handle.write(f"\nEdit {number}.\n")
        before = VersionStore(workspace).versions()
        delay = part * window.whole
        code = window.kill(tmp_path, part, "version", "new", str(skill))
        if code is not None:
            assert code == 0
            outcomes["finished"] += 1
            bounds["after"] = min(bounds["after"], window.whole)
        else:
            if settle(workspace):
                outcomes["pending"] += 1
            check_history(workspace)
            side = "after" if VersionStore(workspace).versions() != before else "before"
            outcomes[side] += 1
            bounds[side] = max(bounds[side], delay) if side == "before" else min(bounds[side], delay)
        check_history(workspace)

    for number, part in enumerate(spread(rng, VERSION_KILLS, 0.3, 1.1)):
        attempt(number, part)
    for extra in range(12):  # the load moved under the window (CI: 15 before, 0 after, 9 finished)
        if outcomes["before"] and outcomes["after"]:
            break
        low, high = bounds["before"], min(bounds["after"], window.whole * 1.5)
        if low >= high:  # the load moved: the old bounds no longer hold
            low, high = 0.5 * window.whole, 1.5 * window.whole
        attempt(VERSION_KILLS + extra, (low + high) / 2 / window.whole)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nThe last edit.\n")
    again = workbench(tmp_path, "version", "new", str(skill))
    assert again.returncode == 0, again.stderr
    check_history(workspace)
    assert workbench(tmp_path, "history", str(skill)).returncode == 0
    print(f"version new: {VERSION_KILLS} tries {outcomes} in {time.monotonic() - started:.1f} s")
    assert outcomes["before"] and outcomes["after"]  # kills landed on both sides of the change


@pytest.mark.slow  # 31 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_evaluate_killed_anywhere_records_whole_or_not_at_all(tmp_path):
    skill = small_demo(tmp_path)
    workspace = tmp_path / "changelog-entry-workspace"
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    # The kill window is this machine's own: how long a whole evaluation takes here (fixed delays of 0.4 to
    # 1.6 s had most tries finish first once grading got faster: 1 kill in 8 on a CI run).
    timed = time.monotonic()
    assert workbench(tmp_path, "evaluate", str(skill), "v0", *RUN_ARGS, real=True).returncode == 0
    window = Window(time.monotonic() - timed)
    parts = iter(spread(random.Random(7), EVALUATE_VERSIONS * EVALUATE_KILLS_PER_VERSION, 0.15, 0.95))
    kills, recorded_by_kill, started = 0, 0, time.monotonic()
    for number in range(1, EVALUATE_VERSIONS + 1):
        with (skill / "SKILL.md").open("a") as handle:
            handle.write(f"\nEdit {number}.\n")
        assert workbench(tmp_path, "version", "new", str(skill), "--from", "v0").returncode == 0
        version = f"v{number}"
        for part in [next(parts) for _ in range(EVALUATE_KILLS_PER_VERSION)]:
            code = window.kill(tmp_path, part, "evaluate", str(skill), version, *RUN_ARGS)
            if code is not None:
                assert code == 0
                break
            kills += 1
            if not (workspace / journal.FILE).exists():
                check_history(workspace)
            settle(workspace)
            check_history(workspace)
            history = load_history(workspace, VersionStore(workspace))
            assert history is not None
            if history.entry(version) is not None:
                recorded_by_kill += 1
                record = json.loads((workspace / EVALUATIONS).read_text())[version]
                assert finished(layout.iteration_dir(workspace, record["iteration"]))
        done = workbench(tmp_path, "evaluate", str(skill), version, *RUN_ARGS)
        assert done.returncode == 0, done.stderr
        check_history(workspace)
        history = load_history(workspace, VersionStore(workspace))
        assert history is not None and history.entry(version)["expectation_pass_rate"] == 1.0
    print(f"evaluate: {kills} kills ({recorded_by_kill} after the record) in {time.monotonic() - started:.1f} s")
    assert kills >= EVALUATE_VERSIONS


@pytest.mark.slow  # 120 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_promote_write_killed_anywhere_leaves_one_whole_version(tmp_path):
    skill = small_demo(tmp_path)
    workspace = tmp_path / "changelog-entry-workspace"
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    assert workbench(tmp_path, "evaluate", str(skill), "v0", *RUN_ARGS).returncode == 0
    # v1 differs in many files (a wide window to land in), a link and a mode.
    for index in range(300):
        (skill / "references" / f"part-{index // 50}").mkdir(parents=True, exist_ok=True)
        (skill / "references" / f"part-{index // 50}" / f"note-{index}.md").write_text(f"note {index}\n")
    (skill / "LINK.md").symlink_to("SKILL.md")
    (skill / "SKILL.md").chmod(0o755)
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    assert workbench(tmp_path, "evaluate", str(skill), "v1", *RUN_ARGS).returncode == 0
    store = VersionStore(workspace)
    trees = {store.tree_of(v): v for v in ("v0", "v1")}
    # The kill window is this machine's own: how long a whole promotion of the files takes here.
    timed = time.monotonic()
    assert workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes", real=True).returncode == 0
    window = Window(time.monotonic() - timed)
    assert store.tree_of_folder(skill) == store.tree_of("v0")

    rng = random.Random(42)
    outcomes = {"old": 0, "new": 0, "pending": 0, "finished": 0}
    started = time.monotonic()
    for attempt in range(PROMOTE_KILLS):
        target = "v1" if attempt % 2 == 0 else "v0"
        other = "v0" if target == "v1" else "v1"
        # Later tries reach further: the promotion may run slower under load, and kills must land
        # after its change began too (a CI run had all 16 of a fixed window land before it).
        part = rng.uniform(0.5, 1.2 + 0.1 * attempt)
        code = window.kill(tmp_path, part, "promote", str(skill), target, "--write", "--yes")
        if code is not None:
            assert code == 0
            outcomes["finished"] += 1
        else:
            if (workspace / journal.FILE).exists():
                outcomes["pending"] += 1
            else:
                folder = trees.get(store.tree_of_folder(skill))
                assert folder in ("v0", "v1"), f"attempt {attempt}: a folder of mixed versions"
                history = load_history(workspace, store)
                assert history is not None and history.current_best == folder  # files first, then history
                outcomes["new" if folder == target else "old"] += 1
            settle(workspace)
            history = load_history(workspace, store)
            assert history is not None
            assert trees.get(store.tree_of_folder(skill)) == history.current_best in (target, other)
            again = workbench(tmp_path, "promote", str(skill), target, "--write", "--yes")
            assert again.returncode == 0, again.stderr
        history = load_history(workspace, store)
        assert history is not None and history.current_best == target
        assert store.tree_of_folder(skill) == store.tree_of(target)
    assert workbench(tmp_path, "promote", str(skill), "v1", "--write", "--yes").returncode == 0
    assert os.readlink(skill / "LINK.md") == "SKILL.md" and os.access(skill / "SKILL.md", os.X_OK)
    leftovers = list((workspace / journal.STAGING).glob("*")) if (workspace / journal.STAGING).exists() else []
    assert not leftovers
    print(f"promote --write: {PROMOTE_KILLS} tries {outcomes} in {time.monotonic() - started:.1f} s")
    # Kills landed before the change and after it began (the named steps pin the moments in between).
    assert outcomes["old"] and outcomes["new"] + outcomes["pending"] + outcomes["finished"]


def test_two_runs_at_once_one_runs_the_other_is_told_who_holds_the_workspace(tmp_path, reference):
    skill = small_demo(tmp_path)
    first, second = (start(tmp_path, "run", str(skill), *RUN_ARGS) for _ in range(2))
    results = []
    for child in (first, second):
        _out, err = child.communicate(timeout=120)
        results.append((child.returncode, err))
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    [(_, refused)] = [r for r in results if r[0] == 2]
    # One line a script can grep, whatever the path's length: nothing started, so no heading and no bar.
    [line] = refused.splitlines()
    assert "is in use by pid" in line and "workbench run" in line and "--wait" in line, refused
    assert line.startswith("workbench run: ") and "dispatches" not in line
    iteration = tmp_path / "changelog-entry-workspace" / "iteration-1"
    assert workbench(tmp_path, "report", str(iteration)).returncode == 0
    assert gradings(iteration) == reference


def test_two_runs_with_wait_run_one_after_the_other_and_grade_right(tmp_path, reference):
    skill = small_demo(tmp_path)
    first = start(tmp_path, "run", str(skill), *RUN_ARGS, "--wait")
    # The second starts once the first holds the lock: started together, the first could
    # be done before the second asked, and nobody would have had to wait.
    lock_file = tmp_path / "changelog-entry-workspace" / lock.FILE
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and first.poll() is None:
        if lock_file.exists() and lock_file.read_text().split("\n", 1)[0] == str(first.pid):
            break
        time.sleep(0.02)
    processes = [first, start(tmp_path, "run", str(skill), *RUN_ARGS, "--wait")]
    results = []
    for child in processes:
        err = child.communicate(timeout=120)[1]
        results.append((child.returncode, err))
    assert [code for code, _ in results] == [0, 0], results
    assert any("waiting for pid" in err for _, err in results)
    workspace = tmp_path / "changelog-entry-workspace"
    assert layout.iteration_numbers(workspace) == [1]  # the second resumed the first's iteration
    assert gradings(workspace / "iteration-1") == reference


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory) -> Path:
    """v0 and v1 evaluated, v0 the best and in the folder; v1 adds files, a link and a mode."""
    base = tmp_path_factory.mktemp("two-versions")
    skill = small_demo(base)
    assert workbench(base, "version", "new", str(skill)).returncode == 0
    assert workbench(base, "evaluate", str(skill), "v0", *RUN_ARGS).returncode == 0
    for index in range(20):
        (skill / "references").mkdir(exist_ok=True)
        (skill / "references" / f"note-{index}.md").write_text(f"note {index}\n")
    (skill / "LINK.md").symlink_to("SKILL.md")
    (skill / "SKILL.md").chmod(0o755)
    assert workbench(base, "version", "new", str(skill)).returncode == 0
    assert workbench(base, "evaluate", str(skill), "v1", *RUN_ARGS).returncode == 0
    assert workbench(base, "promote", str(skill), "v0", "--write", "--yes").returncode == 0
    return base


@pytest.mark.slow  # 20 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("point", ["journal-written", "half-swapped", "before-history.json"])
def test_promote_killed_inside_its_change_is_finished_by_the_next_command(tmp_path, two_versions, point):
    base = tmp_path / "copy"
    shutil.copytree(two_versions, base, symlinks=True)
    skill, workspace = base / "changelog-entry", base / "changelog-entry-workspace"
    store = VersionStore(workspace)
    killed = workbench(base, "promote", str(skill), "v1", "--write", "--yes", kill_at=point)
    assert killed.returncode == -signal.SIGKILL
    assert (workspace / journal.FILE).exists()
    history = load_history(workspace, store)
    assert history is not None and history.current_best == "v0"  # history.json last: not yet
    if point == "half-swapped":
        assert store.tree_of_folder(skill) not in (store.tree_of("v0"), store.tree_of("v1"))  # mixed, until…
    shown = workbench(base, "history", str(skill))
    assert shown.returncode == 0 and "finished an interrupted change (a promotion of v1" in shown.stderr
    assert "current best v1" in shown.stdout
    assert store.tree_of_folder(skill) == store.tree_of("v1")
    assert os.readlink(skill / "LINK.md") == "SKILL.md" and os.access(skill / "SKILL.md", os.X_OK)
    assert not (workspace / journal.FILE).exists() and not any((workspace / journal.STAGING).iterdir())


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("point", ["journal-written", "before-evaluations.json", "before-history.json"])
def test_evaluate_killed_while_recording_is_finished_by_the_next_command(tmp_path, point):
    skill = small_demo(tmp_path)
    workspace = tmp_path / "changelog-entry-workspace"
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    killed = workbench(tmp_path, "evaluate", str(skill), "v0", *RUN_ARGS, kill_at=point)
    assert killed.returncode == -signal.SIGKILL
    check_history(workspace)
    assert workbench(tmp_path, "history", str(skill)).returncode == 0
    check_history(workspace)
    history = load_history(workspace, VersionStore(workspace))
    assert history is not None and history.entry("v0")["expectation_pass_rate"] == 1.0


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("point", ["journal-written", "before-history.json"])
def test_the_first_version_killed_midway_is_finished_by_the_next_command(tmp_path, point):
    skill = small_demo(tmp_path)
    workspace = tmp_path / "changelog-entry-workspace"
    killed = workbench(tmp_path, "version", "new", str(skill), kill_at=point)
    assert killed.returncode == -signal.SIGKILL
    assert not (workspace / "history.json").exists()  # the tag and history.json come together
    shown = workbench(tmp_path, "history", str(skill))
    assert shown.returncode == 0, shown.stderr
    check_history(workspace)
    assert VersionStore(workspace).versions() == ["v0"]


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_an_interrupted_promotion_never_overwrites_what_the_person_changed_since(tmp_path, two_versions):
    base = tmp_path / "copy"
    shutil.copytree(two_versions, base, symlinks=True)
    skill, workspace = base / "changelog-entry", base / "changelog-entry-workspace"
    store = VersionStore(workspace)
    killed = workbench(base, "promote", str(skill), "v1", "--write", "--yes", kill_at="journal-written")
    assert killed.returncode == -signal.SIGKILL
    # After the crash, before any command: the person edits a file the promotion replaces.
    mine = "# my edit, made after the crash\n"
    (skill / "SKILL.md").write_text(mine)
    refused = workbench(base, "history", str(skill))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"{workspace / journal.FILE}:1:1: error: the promotion of v1" in refused.stderr
    assert "SKILL.md changed there" in refused.stderr
    assert (skill / "SKILL.md").read_text() == mine and (workspace / journal.FILE).exists()
    # Moved out of the way (it is theirs), the next command finishes the promotion.
    (skill / "SKILL.md").rename(base / "my-SKILL.md")
    finished = workbench(base, "history", str(skill))
    assert finished.returncode == 0 and "finished an interrupted change" in finished.stderr, finished.stderr
    assert store.tree_of_folder(skill) == store.tree_of("v1") and (base / "my-SKILL.md").read_text() == mine


@pytest.mark.slow  # 23 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_an_interrupted_promotion_with_its_own_workspace_is_finished_by_a_command_on_that_skill(tmp_path):
    skill = small_demo(tmp_path)
    workspace = tmp_path / "elsewhere"
    where = ("--workspace", str(workspace))
    assert workbench(tmp_path, "version", "new", str(skill), *where).returncode == 0
    assert workbench(tmp_path, "evaluate", str(skill), "v0", *where, *RUN_ARGS).returncode == 0
    (skill / "NOTES.md").write_text("more\n")
    assert workbench(tmp_path, "version", "new", str(skill), *where).returncode == 0
    assert workbench(tmp_path, "evaluate", str(skill), "v1", *where, *RUN_ARGS).returncode == 0
    assert workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes", *where).returncode == 0
    killed = workbench(tmp_path, "promote", str(skill), "v1", "--write", "--yes", *where, kill_at="half-swapped")
    assert killed.returncode == -signal.SIGKILL
    shown = workbench(tmp_path, "history", str(skill), *where)
    assert shown.returncode == 0 and "finished an interrupted change" in shown.stderr, shown.stderr
    assert (skill / "NOTES.md").read_text() == "more\n" and "current best v1" in shown.stdout
    assert not (workspace / journal.FILE).exists()


@pytest.mark.parametrize("point", ["legacy-commits-made", "journal-written", "half-tagged"])
def test_importing_a_legacy_history_killed_midway_leaves_none_or_all_of_it(tmp_path, point):
    from legacy_fixture import HISTORY, legacy_workspace, snapshot

    skill, workspace = legacy_workspace(tmp_path)
    theirs = snapshot(workspace)
    killed = workbench(tmp_path, "history", str(skill), kill_at=point)
    assert killed.returncode == -9, killed.stderr
    store = VersionStore(workspace)
    if point == "legacy-commits-made":
        assert store.versions() == [] and not (workspace / "journal.json").exists()  # no half import
    else:
        assert (workspace / "journal.json").exists()  # the import happened; the next command finishes it
    assert snapshot(workspace) == theirs
    shown = workbench(tmp_path, "history", str(skill))
    assert shown.returncode == 0, shown.stderr
    assert "v2  won      85%  ★ best" in shown.stdout, shown.stdout
    store = VersionStore(workspace)
    assert store.versions() == ["v0", "v1", "v2"]
    assert [store.parent_of(v) for v in ("v0", "v1", "v2")] == [None, "v0", "v1"]
    history = load_history(workspace, store)
    assert history is not None and history.data == HISTORY
    assert snapshot(workspace) == theirs and not (workspace / "journal.json").exists()
