"""`workbench version new`, `promote` and `history`: thin over the core
(`evaluate` runs through the pipeline: cli/run.py)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from workbench.app.versions import HISTORY_FILE, History, Versions
from workbench.cli.options import (
    CONTEXT,
    RUN,
    Asked,
    agent_options,
    bundle,
    check_timeout_option,
    dry_run_option,
    judge_options,
    limits_options,
    margin_option,
    placement_options,
    proposer_options,
    trust_option,
    yes_option,
)
from workbench.cli.output import dry_run_end, print_error, print_trust_list, teller
from workbench.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, WorkbenchError
from workbench.formats import skill_md
from workbench.formats.money import money

if TYPE_CHECKING:
    from workbench.app.choices import Agent, Judge, Limits, Placement, Proposer
    from workbench.app.draft_cases import DraftRequest
    from workbench.app.improve_loop import ImproveRequest

err = Console(stderr=True, soft_wrap=True)


def _history(versions: Versions, verb: str) -> History | None:
    """The checked history, once a change a killed workbench left is finished; prints its problems
    (file:line:col) and raises SystemExit(2) when broken."""
    store = versions.store
    try:
        done = versions.recover()
        if done:
            teller(verb)(done)
        history = versions.history()
    except WorkbenchError as exc:  # history.json, evaluations.json or journal.json broken
        raise SystemExit(print_error(exc, verb)) from None
    if history is None and store.versions():
        err.print(
            f"workbench {verb}: {versions.workspace / HISTORY_FILE} is missing but {store.path} has versions "
            f"({', '.join(store.versions())}); restore history.json first."
        )
        raise SystemExit(EXIT_USAGE)
    return history


def version_new_command(skill_dir: Path, parent: str | None, workspace: Path | None, wait: bool = False) -> int:
    versions = Versions.of(skill_dir, workspace)
    skill_dir, store = versions.skill_dir, versions.store
    try:
        name = skill_md.read_name(skill_dir / "SKILL.md") or skill_dir.name
        version, parent = versions.new(name, parent, wait, teller("version new"))
    except WorkbenchError as exc:
        return print_error(exc, "version new")
    if parent is None:
        print(f"{version}: the baseline, snapshot of {skill_dir} in {store.path}")
        return EXIT_OK
    stat = store.diff(parent, version, "--stat")
    print(f"{version}: from {parent}\n{stat}\nEvaluate it with: workbench evaluate {skill_dir} {version}")
    return EXIT_OK


def promote_command(
    skill_dir: Path, version: str, workspace: Path | None, write: bool, yes: bool, wait: bool = False
) -> int:
    versions = Versions.of(skill_dir, workspace)
    skill_dir, store = versions.skill_dir, versions.store
    history = _history(versions, "promote")
    if history is None:
        err.print("workbench promote: no versions yet.")
        return EXIT_USAGE
    try:
        store.commit_of(version)
    except WorkbenchError as exc:
        return print_error(exc, "promote")
    if history.entry(version) is None:
        err.print(
            f"workbench promote: {version} has not been evaluated; run `workbench evaluate {skill_dir} "
            f"{version}` first."
        )
        return EXIT_USAGE
    doubt = versions.standing(history, version).doubt()
    if doubt and not yes:  # a promotion the evidence does not back: asked first, or --yes
        if not sys.stdin.isatty():
            err.print(
                f"workbench promote: {doubt}. There is no terminal to ask whether to promote it all the same: "
                "nothing promoted. Pass --yes to promote it.",
                markup=False,
                highlight=False,
            )
            return EXIT_USAGE
        if not click.confirm(f"{doubt}. Promote {version} all the same?", default=False, err=True):
            err.print("workbench promote: nothing promoted.")
            return EXIT_USAGE
    shown = None
    if write:
        shown = versions.plan_write(version)
        if shown.diff.strip():
            if shown.refused:
                err.print(f"workbench promote: refused, nothing changed: {shown.refused}.")
                return EXIT_USAGE
            print(f"Writing {version} into {skill_dir} changes:\n{shown.diff}")
            if not yes and not sys.stdin.isatty():  # as the cost question: could not ask, so could not do it
                err.print(
                    f"workbench promote: writing into {skill_dir} asks first, and there is no terminal to ask: "
                    "nothing written, nothing promoted. Pass --yes to write it (the diff is above)."
                )
                return EXIT_USAGE
            try:
                agreed = yes or click.confirm(
                    f"Write {version}'s files into the skill folder?", default=False, err=True
                )
            except click.Abort:  # Ctrl-C
                agreed = False
            if not agreed:
                err.print("workbench promote: not written, nothing promoted.")
                return EXIT_USAGE
    try:
        changed = versions.promote(version, shown, wait, teller("promote"))
    except WorkbenchError as exc:
        return print_error(exc, "promote")
    print(f"{version} is the current best.")
    if changed:
        print(f"Updated {len(changed)} file(s) in {skill_dir} (written or removed): {', '.join(changed)}")
    return EXIT_OK


def tree_lines(rows: list[dict]) -> list[str]:
    children: dict[str | None, list[dict]] = {}
    for row in rows:
        children.setdefault(row["parent"], []).append(row)
    lines: list[str] = []

    def walk(row: dict, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─ " if last else "├─ ")
        rate = row["expectation_pass_rate"]
        again = row.get("measured_rate")
        shown = (
            f"{rate:.0%}, as old_skill {again:.0%} ({row['passed']}/{row['total']})"
            if rate is not None and row["total"] and row.get("measured_as") and again is not None and again != rate
            else f"{rate:.0%} ({row['passed']}/{row['total']})"
            if rate is not None and row["total"]
            else f"{rate:.0%}"  # measured elsewhere (skill-creator's history.json): the rate alone
            if rate is not None
            else ("—" if row["evaluated"] else "not evaluated")
        )
        where = f" iteration-{row['iteration']}" if row["iteration"] else ""
        lines.append(
            f"{prefix}{branch}{row['version']}  {row['grading_result'] or '':8} {shown}{where}"
            + ("  ★ best" if row["is_current_best"] else "")
        )
        kids = children.get(row["version"], [])
        for index, child in enumerate(kids):
            walk(child, prefix + ("" if top else ("   " if last else "│  ")), index == len(kids) - 1, False)

    for index, root in enumerate(children.get(None, [])):
        walk(root, "", index == len(children[None]) - 1, True)
    return lines


def history_command(skill_dir: Path, workspace: Path | None, fmt: str) -> int:
    versions = Versions.of(skill_dir, workspace)
    skill_dir, workspace = versions.skill_dir, versions.workspace
    history = _history(versions, "history")
    if history is None:
        err.print(f"workbench history: no versions yet in {workspace}; start with `workbench version new {skill_dir}`.")
        return EXIT_USAGE
    rows = versions.rows(history)
    if fmt == "json":
        print(
            json.dumps(
                {
                    "skill_name": history.data.get("skill_name"),
                    "workspace": str(workspace),
                    "current_best": history.current_best,
                    "versions": rows,
                },
                indent=2,
            )
        )
    else:
        print(f"{history.data.get('skill_name')} · {workspace} · current best {history.current_best}")
        print("\n".join(tree_lines(rows)))
    return EXIT_OK


def improve_command(request: ImproveRequest, trust: bool, dry_run: bool = False) -> int:
    """workbench improve: the loop, said round by round; 0 when a version won, 1 when none did, 2 on errors."""
    from workbench.app.improve_loop import improve

    if dry_run:
        return improve_dry_run(request)

    def trusted(commands: list[str]) -> bool:
        if not trust:
            print_trust_list("improve", commands)
        return trust

    try:
        done = improve(request, teller("improve"), trusted)
    except WorkbenchError as exc:
        return print_error(exc, "improve")
    for entry in done.rounds:
        cost = money(entry.cost_usd) if entry.cost_usd is not None else "cost unknown"
        print(
            f"round {entry.round}: {entry.version or '—'} from {entry.base}: {entry.outcome} "
            f"({entry.dispatches} dispatches, {cost}"
            + (f", {entry.iteration}" if entry.iteration else "")
            + ")"
            + (" · promoted" if entry.promoted else "")
        )
        print(f"  {entry.proposal}")
    print(f"stopped: {done.stopped}")
    promoted = [entry.version for entry in done.rounds if entry.promoted]
    if promoted:
        print(
            f"The skill folder still holds your own files: `workbench promote {request.run.skill_dir} {promoted[-1]} "
            "--write` writes the best's into it (the diff first)."
        )
    won = any(entry.outcome == "won" for entry in done.rounds)
    if not won and done.rounds and all(entry.proposer_failed for entry in done.rounds):
        # Nothing was proposed, so nothing lost: the loop could not do its work (2), it did not fail at it (1).
        teller("improve")(
            f"the proposer did not run to its end in any of the {len(done.rounds)} round(s) (see above): nothing "
            "was proposed or measured"
        )
        return EXIT_USAGE
    return EXIT_OK if won else EXIT_FAILED


def draft_cases_command(request: DraftRequest, asked: Asked) -> int:
    from workbench.app.draft_cases import prepare

    try:
        prepared = prepare(request)
    except WorkbenchError as exc:
        return print_error(exc, "draft-cases")
    target, asks = prepared.suite, prepared.untrusted()
    if asked.dry_run:
        print(
            f"Would ask the {prepared.agent.label} for {request.count} case(s) for {target.name}, written to "
            f"{prepared.written_to} (never into {target.name}); its cost is known once it ran."
        )
        dry_run_end(asks)
        return EXIT_OK
    if asks and not asked.trust:
        print_trust_list("draft-cases", asks)
        return EXIT_USAGE
    prepared.trust()
    try:
        done = prepared.draft()
    except WorkbenchError as exc:
        return print_error(exc, "draft-cases")
    cost = money(done.cost_usd) if done.cost_usd is not None else "cost unknown"
    print(
        f"{len(done.cases)} case(s) drafted into {done.written} ({cost}); none is in {target.name} until you accept it:"
    )
    for case in done.cases:
        clash = (
            " (this id is taken in the suite: accepting it gives it a fresh one)"
            if case.get("id") in done.taken
            else ""
        )
        print(f"  {case.get('id', '(no id)')}: {str(case.get('prompt', ''))[:100]}{clash}")
    skill_dir = request.skill_dir.resolve()
    print(f"Open the skill (workbench {skill_dir}), select a draft in {done.written.name}, and Accept draft (ctrl+b).")
    return EXIT_OK


def improve_dry_run(request: ImproveRequest) -> int:
    """What `improve` would do: the proposer, one evaluation's plan and estimate, what it would ask to trust."""
    from workbench.app.improve_loop import ready, untrusted
    from workbench.cli.run import planned, said

    try:
        proposer, _mode, each = ready(request)
    except WorkbenchError as exc:
        return print_error(exc, "improve")
    print(
        f"Would propose at most {request.rounds} version(s) with the {proposer.label}, each from the current best "
        "(the skill as it is, snapshot as v0, when there is no version yet), and evaluate each against the best."
    )
    print(f"Each evaluation, about: {planned(each)}")
    if each.estimate is not None:
        print(f"Estimate of one evaluation: {said(each.estimate)}")
    dry_run_end(untrusted(request) + each.untrusted())
    return EXIT_OK


@dataclass(frozen=True)
class Improved:
    """improve's own options."""

    rounds: int
    patience: int
    check_timeout: float
    margin: float
    auto_promote: bool


@click.command(context_settings=CONTEXT)
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@proposer_options("The agent that rewrites the skill from the brief (docs/improve.md, the proposer protocol).")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True, help="Proposals at most.")
@click.option(
    "--patience", type=click.IntRange(min=1), default=2, show_default=True, help="Stop after K rounds without a win."
)
@agent_options("The agent that runs each eval")
@judge_options
@check_timeout_option
@limits_options(RUN)
@yes_option
@placement_options()
@trust_option
@margin_option
@click.option("--auto-promote", is_flag=True, help="Make each winner the current best and go on from it.")
@dry_run_option
@bundle("wanted", Improved)
@bundle("asked", Asked)
def improve(
    skill_dir: Path,
    proposer: Proposer,
    agent: Agent,
    judge: Judge,
    limits: Limits,
    placement: Placement,
    wanted: Improved,
    asked: Asked,
) -> None:
    """Improve the skill with an agent: each round a proposer rewrites a copy of the
    current best from its failed expectations, the result becomes a version and is
    evaluated against the best with the rule of `evaluate`; analysis.json says which
    assertions flipped. Nothing is promoted without --auto-promote.

    Exits 0 when a version won, 1 when none did, 2 on errors."""
    from workbench.app.improve_loop import ImproveRequest
    from workbench.cli.run import run_request

    each = replace(limits, max_cost=None)  # --max-cost is the whole loop's: proposers and evaluations
    request = replace(
        run_request(skill_dir, agent, judge, each, placement),
        check_timeout=wanted.check_timeout,
        margin=wanted.margin,
    )
    loop = ImproveRequest(
        request,
        proposer,
        wanted.rounds,
        wanted.patience,
        limits.max_cost,
        wanted.auto_promote,
    )
    sys.exit(improve_command(loop, asked.trust, asked.dry_run))
