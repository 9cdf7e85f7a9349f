"""A dispatch reaches the disk in order, at few points (issue 26): every file run.json vouches for is on the
disk before run.json is, and run.json itself is durable once the dispatch is over (its grading included); a
dispatch waits for the disk at most twice, graded or not (it waited fourteen times: once per file written, and
per folder).

Recorded at the system calls, in process: each rename into place, each fsync or fdatasync (of which file), each
syncfs (which makes everything written before it durable)."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import threading
from pathlib import Path

import pytest
from agents import answer_skill
from conftest import DEMO

from workbench.formats import save
from workbench.runs import executors
from workbench.runs.launch import prepare_launch, run_launch
from workbench.runs.runner import DONE, RunOptions

RESULT = """echo '{"type":"result","result":"ok","session_id":"s","usage":{"input_tokens":1}}'"""


@pytest.fixture
def disk_log(monkeypatch):
    """(what, path) in the order the calls returned: ("renamed", target), ("synced", file), ("syncfs", "")."""
    log: list[tuple[str, str]] = []
    lock = threading.Lock()
    replace, fsync, fdatasync = os.replace, os.fsync, os.fdatasync

    def logged_replace(source, target, **kw):
        replace(source, target, **kw)
        with lock:
            log.append(("renamed", os.fspath(target)))

    def synced(real):
        def call(fd):
            name = os.readlink(f"/proc/self/fd/{fd}") if isinstance(fd, int) else os.fspath(fd.name)
            real(fd)
            with lock:
                log.append(("synced", name))

        return call

    monkeypatch.setattr(os, "replace", logged_replace)
    monkeypatch.setattr(os, "fsync", synced(fsync))
    monkeypatch.setattr(os, "fdatasync", synced(fdatasync))
    real_syncfs = getattr(save, "syncfs", None)
    if real_syncfs is not None:

        def logged_syncfs(fd):
            result = real_syncfs(fd)
            with lock:
                log.append(("syncfs", ""))
            return result

        monkeypatch.setattr(save, "syncfs", logged_syncfs)
    return log


def _durable_before(log: list[tuple[str, str]], path: str, until: int) -> bool:
    """Whether the file renamed to `path` (its last rename before `until`) was durable by index `until`: its
    content synced before the rename and its folder synced after it, or a syncfs after its rename."""
    renamed = max(i for i, (what, where) in enumerate(log[:until]) if what == "renamed" and where == path)
    if any(what == "syncfs" for what, _ in log[renamed:until]):
        return True
    content = any(what == "synced" and Path(where).parent == Path(path).parent for what, where in log[:renamed])
    folder = any(what == "synced" and where == str(Path(path).parent) for what, where in log[renamed:until])
    return content and folder


def test_every_file_of_a_dispatch_is_durable_before_its_run_record_and_it_waits_at_most_twice(tmp_path, disk_log):
    skill = answer_skill(tmp_path, DEMO, turns=None)
    executor = executors.make("command", RESULT)
    options = RunOptions(jobs=1, timeout=30, baseline="none")
    launch = prepare_launch(skill, executor, options)
    first = len(disk_log)
    asyncio.run(run_launch(launch, executor, options))
    [dispatch] = launch.dispatches
    assert dispatch.status == DONE
    folder = str(dispatch.folder)
    log = disk_log[first:]
    record = str(dispatch.folder / "run.json")
    at = max(i for i, (what, where) in enumerate(log) if what == "renamed" and where == record)
    vouched = {where for what, where in log[:at] if what == "renamed" and where.startswith(folder + "/")}
    assert {"transcript.jsonl", "metrics.json", "timing.json"} <= {Path(p).name for p in vouched}
    late = sorted(p for p in vouched if not _durable_before(log, p, at))
    assert not late, f"written before run.json but not durable before it: {late}"
    assert _durable_before(log, record, len(log)), "run.json is not durable once the dispatch is finished"
    waits = [entry for entry in log if entry[0] in ("synced", "syncfs")]
    assert len(waits) <= 2, f"the dispatch waited for the disk {len(waits)} times: {waits}"


def test_syncfs_is_the_kernels():
    """The durable point is a real syncfs of the folder's filesystem (0 on success), not a stub."""
    fd = os.open(".", os.O_RDONLY)
    try:
        assert save.syncfs(fd) == 0
    finally:
        os.close(fd)
    assert ctypes.CDLL(None).syncfs  # the C library has it


def _syncfs_refused_and_fsyncs_named(monkeypatch) -> list[str]:
    """syncfs refused from now on; the list fills with the path of every descriptor fsync'd."""
    synced: list[str] = []
    opened: dict[int, str] = {}
    real_open, real_fsync = os.open, os.fsync

    def track_open(path, flags, *rest):
        fd = real_open(path, flags, *rest)
        opened[fd] = str(path)
        return fd

    monkeypatch.setattr(save, "syncfs", lambda fd: -1)
    monkeypatch.setattr(save, "_syncfs_refused", False)
    monkeypatch.setattr(os, "open", track_open)
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(opened[fd]), real_fsync(fd)))
    return synced


def test_where_syncfs_is_refused_every_file_under_the_folder_is_synced(tmp_path, monkeypatch):
    """The fallback covers what the caller wrote, not only its folder (nor another caller's files)."""
    (tmp_path / "outputs").mkdir()
    written = [tmp_path / "outputs" / "a.txt", tmp_path / "grading.json"]
    for path in written:
        path.write_text("x")
    synced = _syncfs_refused_and_fsyncs_named(monkeypatch)
    save.durable_point(tmp_path)
    assert {str(p) for p in [*written, tmp_path / "outputs", tmp_path]} <= set(synced)


def _many_cases(skill: Path, count: int) -> None:
    suite = skill / "evals" / "evals.json"
    data = json.loads(suite.read_text())
    data["evals"] = [{**data["evals"][0], "id": f"case-{i}", "prompt": f"case {i}"} for i in range(count)]
    suite.write_text(json.dumps(data))


def test_the_plan_of_many_evals_waits_for_the_disk_once_and_all_of_it_is_durable(tmp_path, disk_log):
    """plan.json and each eval's eval_metadata.json reach the disk at one durable point: a 200-dispatch run
    waited for the disk 202 times before its first dispatch (a sync of each file and of its folder)."""
    skill = answer_skill(tmp_path, DEMO, turns=None)
    _many_cases(skill, 20)
    executor = executors.make("command", RESULT)
    launch = prepare_launch(skill, executor, RunOptions(jobs=1, timeout=30))
    first = len(disk_log)
    launch.write_plan()
    log = disk_log[first:]
    written = [where for what, where in log if what == "renamed"]
    assert len(written) == 21  # plan.json and 20 eval_metadata.json
    late = [p for p in written if not _durable_before(log, p, len(log))]
    assert not late, f"not durable once the plan is written: {late}"
    waits = [entry for entry in log if entry[0] in ("synced", "syncfs")]
    assert len(waits) <= 1, f"the plan waited for the disk {len(waits)} times"


def test_where_syncfs_is_refused_the_named_files_their_folders_and_the_folder_are_synced(tmp_path, monkeypatch):
    """Given what was written, the fallback syncs that (and where it was renamed), not the whole folder."""
    (tmp_path / "eval-a").mkdir()
    (tmp_path / "eval-b").mkdir()
    written = [tmp_path / "plan.json", tmp_path / "eval-a" / "eval_metadata.json"]
    for path in [*written, tmp_path / "eval-b" / "old.json"]:
        path.write_text("x")
    synced = _syncfs_refused_and_fsyncs_named(monkeypatch)
    save.durable_point(tmp_path, written)
    assert set(synced) == {str(p) for p in [*written, tmp_path / "eval-a", tmp_path]}


def test_a_graded_dispatch_waits_for_the_disk_twice_and_its_grading_is_durable(tmp_path, disk_log):
    """Its grading (grading.json, diff.patch) reaches the disk at one durable point shared with the dispatches
    ending beside it: grading synced each file, and diff.patch's folder, one by one (5 waits a dispatch). That
    point makes run.json durable too (written before it): run.json's own sync after it was a third wait."""
    from workbench.grading.grade import GradeOptions, grade_as_it_goes
    from workbench.grading.judges import make
    from workbench.grading.suite import load_suite

    skill = answer_skill(tmp_path, DEMO, turns=None)
    executor = executors.make("command", RESULT)
    options = RunOptions(jobs=1, timeout=30, baseline="none")
    launch = prepare_launch(skill, executor, options)
    graded = grade_as_it_goes(load_suite(launch.suite, launch.skill_name), GradeOptions(make("demo"), trusted=True))
    first = len(disk_log)
    asyncio.run(run_launch(launch, executor, options, after=graded))
    [dispatch] = launch.dispatches
    assert dispatch.status == DONE and dispatch.detail.startswith("graded")
    log = disk_log[first:]
    for name in ("run.json", "grading.json", "diff.patch"):
        assert _durable_before(log, str(dispatch.folder / name), len(log)), f"{name} is not durable at the end"
    waits = [entry for entry in log if entry[0] in ("synced", "syncfs")]
    assert len(waits) <= 2, f"the dispatch waited for the disk {len(waits)} times: {waits}"
