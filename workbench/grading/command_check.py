"""command_check: a shell command run in the agent's workspace after the agent
finished (and after the diff was measured). setup_files are copied in first from
evals/ to the same relative path, in folders that hold only the suite's files
(_setup); `env` applies; a `matrix` runs every cell of
its Cartesian product and every cell must pass; the exit code must equal
expect_exit_code (default 0) and stdout must match expect_stdout (a Rust regex
searched over the whole stdout).

Each cell runs in a scratch copy of the workspace, so the checks never see each
other's leftovers and re-grading gives the same answer. The copy's repository is
the workbench's, not the agent's: what a check reads as the baseline (HEAD, the
index, any object, the repository's config) is the run's baseline as the
workbench recorded it (runs/run_folder.lay_baseline); the agent's .git is left
out of the copy, whatever it did to it (committed, moved HEAD, rewrote an object,
configured a filter or an external diff)."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from workbench.formats import paths
from workbench.grading.verdict import Verdict, tail, written
from workbench.runs import agent_files, run_folder, sandbox
from workbench.runs.executors.base import TurnCommand
from workbench.runs.processes import run_bounded
from workbench.validate import rust_regex
from workbench.workspace import layout

DEFAULT_TIMEOUT = 120.0


def cells(assertion: dict) -> list[dict[str, str]]:
    """Every combination of the matrix's values, or one empty cell."""
    matrix = assertion.get("matrix") or {}
    names = list(matrix)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*(matrix[n] for n in names))] or [{}]


def grade(
    assertion: dict,
    repo: Path,
    evals_dir: Path,
    timeout: float = DEFAULT_TIMEOUT,
    sandboxed: bool = False,
    baseline: str | None = None,
) -> Verdict:
    """sandboxed: run each cell in the agents' bubblewrap sandbox. A check runs what the
    agent wrote (its tests, a module beside a trusted script), so where the agent was
    held, the check is held the same way: only its scratch copy is writable. baseline:
    the run's baseline commit, in its own store beside repo (TREES); the copy's .git holds
    it. Without one (a run skill-creator made), the copy has no repository."""
    command = assertion.get("command") or ""
    expected_code = assertion.get("expect_exit_code", 0)
    stdout_pattern = assertion.get("expect_stdout")
    pattern = rust_regex.compile(stdout_pattern) if stdout_pattern else None
    reports, failures = [], 0
    for cell in cells(assertion):
        ok, report = _run_cell(
            command, cell, assertion, repo, evals_dir, timeout, expected_code, pattern, sandboxed, baseline
        )
        failures += not ok
        reports.append(report)
    head = (
        f"{len(reports) - failures}/{len(reports)} cell(s) passed"
        if len(reports) > 1
        else ("passed" if not failures else "failed")
    )
    return Verdict(failures == 0, f"$ {command} — {head}\n" + "\n".join(reports))


def _run_cell(
    command: str,
    cell: dict[str, str],
    assertion: dict,
    repo: Path,
    evals_dir: Path,
    timeout: float,
    expected_code: int,
    pattern: rust_regex.Pattern | None,
    sandboxed: bool = False,
    baseline: str | None = None,
) -> tuple[bool, str]:
    label = " ".join(f"{k}={v}" for k, v in cell.items()) or "run"
    with tempfile.TemporaryDirectory(prefix="workbench-check-") as scratch:
        work = Path(scratch) / "workspace"
        # What the agent left is copied without following a link: links stay links, and what is no file
        # nor folder (a pipe, a socket) is not copied, and said.
        left_out = agent_files.copy(repo, work, leave_out=(".git",))  # the agent's repository stays data
        if baseline:
            try:
                run_folder.lay_baseline(work, repo.parent / layout.TREES, baseline)
            except (OSError, ValueError) as exc:
                return False, f"[{label}] the run's baseline cannot be given to the check: {exc}"
        missing = _setup(assertion.get("setup_files") or [], evals_dir, work)
        if missing:
            return False, f"[{label}] {missing}"
        env = {**(assertion.get("env") or {}), **cell}
        argv, held = ["bash", "-c", command], None
        if sandboxed:  # no network at all: a check reaches no model (sandbox.Confinement's defaults)
            home = Path(scratch) / "home"
            home.mkdir()
            wrapped = sandbox.wrap(TurnCommand(argv=argv, env=env), work, home)
            argv, held = wrapped.argv or argv, wrapped.bounds
        try:
            finished = run_bounded(argv, "", timeout, cwd=work, env=env, contained=sandboxed, bounds=held)
        except OSError as exc:
            return False, f"[{label}] could not start bash: {exc.strerror or exc}"
    if finished.timed_out or finished.code is None:
        return False, f"[{label}] {finished.evidence}"
    code, stdout, stderr = finished.code, finished.stdout, finished.stderr
    problems = []
    if code != expected_code:
        problems.append(f"exit {code}, expected {expected_code}")
    if pattern is not None and pattern.search(stdout) is None:
        problems.append(f"stdout does not match {written(assertion.get('expect_stdout'))}")
    verdict = "ok" if not problems else "; ".join(problems)
    report = f"[{label}] exit {code}: {verdict}; stdout: {written(tail(stdout, 300))}"
    if left_out:
        report += "; not in its copy of the workspace: " + ", ".join(f"{e.path} ({e.why})" for e in left_out[:5])
    if finished.evidence:
        report += f"; {finished.evidence}"
    if stderr.strip() and problems:
        report += f"; stderr: {written(tail(stderr, 300))}"
    return not problems, report


OWN = ".workbench-check"  # the private folder of the setup files that go at the top of the repository


def _setup(files: list[str], evals_dir: Path, work: Path) -> str | None:
    """The suite's setup files laid into the check's copy, in folders only the suite filled.

    An interpreter loads what lies beside the script it runs (Python its folder's modules and their
    bytecode caches, node its node_modules, a shell script what it sources from its own folder): in a
    folder the agent wrote, what the agent left there would run in place of the suite's. So each folder
    that holds a setup file is made afresh, holding only the suite's files (what the agent left in it is
    not in the check's view), and a setup file at the top of the repository, whose folder is the agent's
    work, is laid into a private folder and linked from its place: Python, node and Ruby take a script's
    folder from where its link leads."""
    root = evals_dir.resolve()
    entries = []
    for relative in files:
        source = (evals_dir / relative).resolve()
        if paths.relative_problem(relative) or root not in source.parents or not source.exists():
            return f"setup file {relative!r} is not inside {evals_dir}"
        entries.append((PurePosixPath(relative).parts, source))
    fresh: list[tuple[str, ...]] = []
    folders = {
        parts[:-1] if len(parts) > 1 else (OWN,) for parts, source in entries if len(parts) > 1 or source.is_file()
    }
    for folder in sorted(folders, key=len):
        if not any(folder[: len(made)] == made for made in fresh):
            place = work.joinpath(*folder)
            _clear_way(work, place)
            place.mkdir(parents=True)
            fresh.append(folder)
    for parts, source in entries:
        target = work.joinpath(*parts) if len(parts) > 1 or source.is_dir() else work / OWN / parts[0]
        _clear_way(work, target)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
        if target.parent == work / OWN:
            place = work / parts[0]
            _clear_way(work, place)
            place.symlink_to(Path(OWN) / parts[0])
    return None


def _clear_way(work: Path, target: Path) -> None:
    """The agent wrote the workspace this copy comes from: a link it left where a
    setup file goes (or on the way there) would make the copy land outside. Links on
    the way, and whatever is at the target, go first."""
    place = work
    for part in target.relative_to(work).parts:
        place = place / part
        if place.is_symlink():
            place.unlink()
        elif place == target and place.is_dir():
            shutil.rmtree(place)
        elif place == target and place.exists():
            place.unlink()
