"""`workbench trigger`: the trigger evaluation on the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.app import optimize_description, triggers
from workbench.app.cost import ask_first
from workbench.cli.options import (
    CONTEXT,
    TRIGGER,
    Asked,
    agent_options,
    bundle,
    dry_run_option,
    limits_options,
    placement_options,
    trust_option,
    yes_option,
)
from workbench.cli.output import dry_run_end, print_error, refused_trust, say
from workbench.cli.run import confirmed
from workbench.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, WorkbenchError
from workbench.formats.money import money

if TYPE_CHECKING:
    from workbench.app.choices import Agent, Limits, Placement


def trigger_command(request: triggers.TriggerRequest, trust: bool, fmt: str, yes: bool, dry_run: bool = False) -> int:
    """0 when every query behaves as expected, 1 otherwise, 2 on errors (a run that failed, a stop)."""
    try:
        prepared = triggers.prepare(request)
        question = ask_first(prepared.estimate)
    except WorkbenchError as exc:
        return print_error(exc, "trigger")
    for warning in prepared.warnings:
        say(f"workbench trigger: warning: {warning}")
    guess = prepared.estimate
    if dry_run:
        click.echo(f"Would run {measured(prepared)}, into {prepared.iteration_dir}")
        if guess is not None:
            click.echo(f"Estimate: {guess.line()} ({guess.basis})")
        dry_run_end(prepared.untrusted())
        return EXIT_OK
    refused = confirmed(question, yes, "trigger")
    if refused is not None:
        return refused
    refused = refused_trust(prepared, trust, "trigger")
    if refused is not None:
        return refused
    limits = request.limits
    runs = f"up to {limits.max_runs} runs each (--runs auto)" if limits.adaptive else f"{limits.runs} run(s) each"

    def started() -> None:
        if guess is not None:
            say(f"workbench trigger: {guess.line()} ({guess.basis})")
        say(
            f"Triggering {prepared.skill_name}: {len(prepared.queries)} queries, {runs}, with the "
            f"{prepared.executor.label}"
            + (f" on the cluster at {prepared.options.cluster}" if prepared.options.cluster else "")
            + f" into {prepared.iteration_dir}"
        )

    try:
        results = triggers.run(prepared, None, lambda text: say(f"workbench trigger: {text}"), started)
    except KeyboardInterrupt:
        say("workbench trigger: cancelled; agents were stopped. Run the same command again to resume.")
        return EXIT_USAGE
    except WorkbenchError as exc:
        return print_error(exc, "trigger")
    if fmt == "json":
        click.echo(json.dumps(results.as_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(triggers.render(results), nl=False)
    if results.stopped:
        say(f"workbench trigger: {results.stopped.said(flags=True)}; the same command with a higher limit finishes it.")
        return EXIT_USAGE
    if results.errors:
        say(f"workbench trigger: {results.errors} run(s) could not be decided (see above): they count for nothing.")
        return EXIT_USAGE
    return EXIT_OK if results.all_as_expected else EXIT_FAILED


def measured(prepared: triggers.PreparedTriggers) -> str:
    """`40 dispatches: 8 queries, 5 run(s) each, with the Claude Code`: one measurement, as planned."""
    limits = prepared.request.limits
    runs = limits.max_runs if limits.adaptive else limits.runs
    each = f"up to {runs} runs each (--runs auto)" if limits.adaptive else f"{runs} run(s) each"
    return (
        f"{len(prepared.dispatches)} dispatches: {len(prepared.queries)} queries, {each}, with the "
        f"{prepared.executor.label}"
    )


def optimize_command(request: optimize_description.OptimizeRequest, trust: bool, dry_run: bool = False) -> int:
    """0 when a description beat the start on the held-out queries (kept as a version), 1 when none did, 2 on
    errors."""
    try:
        proposer, _mode = optimize_description.ready(request)
        if dry_run:
            whole = triggers.prepare(request.trigger)
            click.echo(
                f"Would measure the start's description, then propose at most {request.rounds} description(s) "
                f"with the {proposer.label}, each measured on the train and the held-out queries; the whole set "
                f"once is {measured(whole)}"
            )
            if whole.estimate is not None:
                click.echo(f"Estimate of the whole set once: {whole.estimate.line()} ({whole.estimate.basis})")
            dry_run_end(optimize_description.Asks(request).untrusted())
            return EXIT_OK
        refused = refused_trust(optimize_description.Asks(request), trust, "optimize-description")
    except WorkbenchError as exc:
        return print_error(exc, "optimize-description")
    if refused is not None:
        return refused
    try:
        done = optimize_description.optimize(request, lambda text: say(f"workbench optimize-description: {text}"))
    except KeyboardInterrupt:
        say("workbench optimize-description: cancelled; agents were stopped.")
        return EXIT_USAGE
    except WorkbenchError as exc:
        return print_error(exc, "optimize-description")
    assert done.start is not None and done.best is not None
    score = optimize_description.SCORE
    click.echo(f"Start ({done.start_version}): held-out {done.start.held_out.line(score)}")
    for entry in done.rounds:
        held = entry.get("held_out", {}).get(score)
        shown = f"held-out {score} {held:.2f}" if isinstance(held, (int, float)) else ""
        click.echo(
            f"  round {entry['round']}: {entry['outcome']}"
            + (f" ({shown})" if shown else "")
            + (f" -> {entry['version']}" if entry.get("version") else "")
        )
    click.echo(f"Best: {done.best_version}, held-out {done.best.held_out.line(score)}")
    click.echo(f"  description: {done.best.description}")
    click.echo(f"Spent {money(done.spent)}. {done.stopped}.")
    if done.best is done.start:
        return EXIT_FAILED
    skill_dir = request.trigger.skill_dir.resolve()
    click.echo(
        f"{done.best_version} is a version like any other, changed only in its description (its task evals "
        f"would tie: the held-out queries chose it). Promote it with `workbench promote {skill_dir} "
        f"{done.best_version}`; --write puts it in the skill folder, after showing the diff."
    )
    return EXIT_OK


queries_option = click.option(
    "--queries",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The trigger eval set: a JSON array of {query, should_trigger} (default: evals/trigger-evals.json).",
)


def trigger_request(
    skill_dir: Path, queries: Path | None, agent: Agent, limits: Limits, placement: Placement
) -> triggers.TriggerRequest:
    return triggers.TriggerRequest(skill_dir, queries, agent, limits, placement)


@click.command(context_settings=CONTEXT)
@click.argument("skill_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@queries_option
@agent_options("The agent each query runs through")
@limits_options(TRIGGER)
@placement_options()
@trust_option
@dry_run_option
@yes_option
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@bundle("asked", Asked)
def trigger(
    skill_dir: Path,
    queries: Path | None,
    agent: Agent,
    limits: Limits,
    placement: Placement,
    asked: Asked,
    fmt: str,
) -> None:
    """Does the skill trigger? Run each query of the trigger eval set through the agent with the skill
    installed privately, stop it once triggering is decided, and report per query k/N and recall,
    precision and accuracy with intervals. Exit 0 when every query behaves as expected, 1 otherwise,
    2 on errors."""

    request = trigger_request(skill_dir, queries, agent, limits, placement)
    sys.exit(trigger_command(request, asked.trust, fmt, asked.yes, asked.dry_run))
