"""`workbench version new`, `evaluate`, `promote` and `history`: thin over the core."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from workbench.formats import skill_md
from workbench.grading.artifact import ArtifactInvalid
from workbench.grading.benchmark import NoGradedRuns
from workbench.grading.cli_grade import JudgeChoice, make_judge, print_problems, print_refused, suite_trusted
from workbench.grading.suite import load_suite
from workbench.improve import history as hist
from workbench.improve.evaluate import evaluate
from workbench.improve.promote import unsafe_to_overwrite, write_version
from workbench.improve.versions import VersionError, VersionStore
from workbench.runs import executors
from workbench.runs import trust as trusted
from workbench.runs import workspace as ws
from workbench.runs.launch import RunRefused, default_suite
from workbench.runs.runner import RunOptions

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
err = Console(stderr=True, soft_wrap=True)


def _workspace(skill_dir: Path, workspace: Path | None) -> Path:
    return (workspace or ws.default_workspace(skill_dir)).resolve()


def _history(workspace: Path, store: VersionStore) -> hist.History | None:
    """The checked history; prints its problems (file:line:col) and raises SystemExit(2) when broken."""
    try:
        history = hist.load_history(workspace, store)
    except hist.HistoryBroken as exc:
        print_problems(exc, err,
                       f"workbench: {exc.path.name} is broken; fix it by hand (nothing is repaired silently).")
        raise SystemExit(EXIT_USAGE) from None
    if history is None and store.versions():
        err.print(f"workbench: {workspace / hist.FILE} is missing but {store.path} has versions "
                  f"({', '.join(store.versions())}); restore history.json first.")
        raise SystemExit(EXIT_USAGE)
    return history


def version_new_command(skill_dir: Path, parent: str | None, workspace: Path | None) -> int:
    skill_dir = skill_dir.resolve()
    workspace = _workspace(skill_dir, workspace)
    store = VersionStore(workspace)
    history = _history(workspace, store)
    try:
        version, parent = hist.new_version(workspace, store, history, skill_dir,
                                           skill_md.read_name(skill_dir / "SKILL.md") or skill_dir.name, parent)
    except VersionError as exc:
        err.print(f"workbench version new: {exc}")
        return EXIT_USAGE
    if parent is None:
        print(f"{version}: the baseline, snapshot of {skill_dir} in {store.path}")
        return EXIT_OK
    stat = store.repo().git.diff("--stat", store.commit_of(parent), store.commit_of(version))
    print(f"{version}: from {parent}\n{stat}\nEvaluate it with: workbench evaluate {skill_dir} {version}")
    return EXIT_OK


def evaluate_command(skill_dir: Path, version: str, workspace: Path | None, executor_name: str,
                     agent_command: str | None, model: str | None, choice: JudgeChoice, runs: int | None,
                     jobs: int, timeout: float, only: str | None, trust: bool, margin: float,
                     auto_promote: bool, decide_by: str = "rule") -> int:
    skill_dir = skill_dir.resolve()
    workspace = _workspace(skill_dir, workspace)
    store = VersionStore(workspace)
    history = _history(workspace, store)
    if history is None:
        err.print(f"workbench evaluate: no versions yet; make v0 with `workbench version new {skill_dir}`.")
        return EXIT_USAGE
    try:
        executor = executors.make(executor_name, agent_command, model)
        store.commit_of(version)
    except (ValueError, VersionError) as exc:
        err.print(f"workbench evaluate: {exc}")
        return EXIT_USAGE
    if not executor.trusted_by_default and not (trust or trusted.is_trusted(agent_command)):
        err.print(f"workbench evaluate: this would run {agent_command} in every workspace; pass --trust.")
        return EXIT_USAGE
    try:
        suite = load_suite(default_suite(skill_dir), "", executor.label)
    except RunRefused as exc:
        print_refused(exc, err, "evaluate")
        return EXIT_USAGE
    except FileNotFoundError as exc:
        err.print(f"workbench evaluate: {exc}")
        return EXIT_USAGE
    judge = make_judge(choice, executor.label, err, trust)
    if judge is None or not suite_trusted(suite, trust, err):
        return EXIT_USAGE
    if not executor.trusted_by_default:
        trusted.trust(agent_command, "agent command")
    err.print(f"Evaluating {version} (its snapshot) with the {executor.label}, graded by the {judge.label}")
    try:
        result = evaluate(skill_dir, version, workspace, executor, judge, RunOptions(
            runs=runs, jobs=jobs, timeout=timeout,
            only={i.strip() for i in only.split(",") if i.strip()} if only else None), choice.check_timeout, margin,
            auto_promote, decide_by=decide_by)
    except (VersionError, NoGradedRuns, ArtifactInvalid, ValueError) as exc:
        err.print(f"workbench evaluate: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.print("workbench evaluate: cancelled; agents were stopped. Run the same command again to resume.")
        return EXIT_USAGE
    print(f"{version}: {result.passed}/{result.total} with-skill assertions passed ({result.rate:.0%}) in "
          f"{result.iteration}")
    if result.best_ran_here:
        print(f"The best, {result.best}, had no runs on these evals with this executor: it ran here as old_skill.")
    if result.decision is not None:
        print(f"{version} against {result.best}: {result.evidence}")
    else:
        print(f"{version}: {result.result}")
    if result.promoted:
        print(f"{version} is now the current best (--auto-promote).")
    elif result.result == "won":
        print(f"{version} won: promote it with `workbench promote {skill_dir} {version}` (add --write to put its "
              "files in the skill folder).")
    return EXIT_OK


def promote_command(skill_dir: Path, version: str, workspace: Path | None, write: bool, yes: bool) -> int:
    skill_dir = skill_dir.resolve()
    workspace = _workspace(skill_dir, workspace)
    store = VersionStore(workspace)
    history = _history(workspace, store)
    if history is None:
        err.print("workbench promote: no versions yet.")
        return EXIT_USAGE
    try:
        store.commit_of(version)
    except VersionError as exc:
        err.print(f"workbench promote: {exc}")
        return EXIT_USAGE
    if history.entry(version) is None:
        err.print(f"workbench promote: {version} has not been evaluated; run `workbench evaluate {skill_dir} "
                  f"{version}` first.")
        return EXIT_USAGE
    if write:
        diff = store.diff_with_folder(version, skill_dir)
        if diff.strip():
            why = unsafe_to_overwrite(store, skill_dir)
            if why:
                err.print(f"workbench promote: refused, nothing changed: {why}.")
                return EXIT_USAGE
            print(f"Writing {version} into {skill_dir} changes:\n{diff}")
            try:
                agreed = yes or click.confirm(f"Write {version}'s files into the skill folder?", default=False,
                                              err=True)
            except click.Abort:  # no answer (no terminal, or Ctrl-C)
                agreed = False
            if not agreed:
                err.print("workbench promote: nothing written, nothing promoted.")
                return EXIT_FAILED
    try:
        history.promote(version)
        history.save()
    except (ValueError, ArtifactInvalid) as exc:
        err.print(f"workbench promote: {exc}")
        return EXIT_USAGE
    print(f"{version} is the current best.")
    if write and diff.strip():
        changed = write_version(store, version, skill_dir)
        print(f"Wrote {len(changed)} file(s) into {skill_dir}: {', '.join(changed)}")
    return EXIT_OK


def tree_lines(rows: list[dict]) -> list[str]:
    children: dict[str | None, list[dict]] = {}
    for row in rows:
        children.setdefault(row["parent"], []).append(row)
    lines: list[str] = []

    def walk(row: dict, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─ " if last else "├─ ")
        rate = row["expectation_pass_rate"]
        shown = (f"{rate:.0%} ({row['passed']}/{row['total']})" if rate is not None and row["total"]
                 else ("—" if row["evaluated"] else "not evaluated"))
        where = f" iteration-{row['iteration']}" if row["iteration"] else ""
        lines.append(f"{prefix}{branch}{row['version']}  {row['grading_result'] or '':8} {shown}{where}"
                     + ("  ★ best" if row["is_current_best"] else ""))
        kids = children.get(row["version"], [])
        for index, child in enumerate(kids):
            walk(child, prefix + ("" if top else ("   " if last else "│  ")), index == len(kids) - 1, False)

    for index, root in enumerate(children.get(None, [])):
        walk(root, "", index == len(children[None]) - 1, True)
    return lines


def history_command(skill_dir: Path, workspace: Path | None, fmt: str) -> int:
    skill_dir = skill_dir.resolve()
    workspace = _workspace(skill_dir, workspace)
    store = VersionStore(workspace)
    history = _history(workspace, store)
    if history is None:
        err.print(f"workbench history: no versions yet in {workspace}; start with `workbench version new "
                  f"{skill_dir}`.")
        return EXIT_USAGE
    rows = hist.history_rows(workspace, store, history)
    if fmt == "json":
        print(json.dumps({"skill_name": history.data.get("skill_name"), "workspace": str(workspace),
                          "current_best": history.current_best, "versions": rows}, indent=2))
    else:
        print(f"{history.data.get('skill_name')} · {workspace} · current best {history.current_best}")
        print("\n".join(tree_lines(rows)))
    return EXIT_OK
