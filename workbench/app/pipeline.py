"""One pipeline for every run (docs/architecture.md).

A RunRequest says what to run: the skill, the executor, the judge, the
baseline, repeats and limits, and for Improve mode the version to evaluate.
prepare() resolves the defaults (flags, then the config, then the workbench's
own), builds the executor and the judge, checks the suite, plans the
dispatches and lists every command that would execute and is not trusted yet:
the agent's, the judge's and the suite's own. execute() refuses to start while
that list is not empty, then launches, grades each run as it finishes,
aggregates benchmark.json and, for a version, decides and records the result.

`workbench run`, `workbench evaluate`, the Runs screen and the History screen
all call these two; `workbench grade` calls prepare_grading() and regrade(),
under the same trust rule."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from workbench.app import agent, preflight
from workbench.app import cost as app_cost
from workbench.app import trust as app_trust
from workbench.app.choices import Agent, Judge, Limits, Placement
from workbench.app.placement import hold
from workbench.app.rounds import Sides, run_rounds
from workbench.config import Config, load_config, where
from workbench.errors import Refused, WorkbenchError
from workbench.formats import paths, skill_md
from workbench.formats.regular import read_object
from workbench.grading import judges
from workbench.grading.benchmark import write_benchmark
from workbench.grading.command_check import DEFAULT_TIMEOUT as DEFAULT_CHECK_TIMEOUT
from workbench.grading.grade import GradeOptions, IterationGraded, grade_as_it_goes, grade_iteration
from workbench.grading.review import Review, load_review
from workbench.grading.suite import GradingSuite, load_suite, suite_of_iteration
from workbench.improve.analysis import analyse_evaluation
from workbench.improve.decide import DEFAULT_MARGIN
from workbench.improve.evaluate import Evaluation, EvaluationPlan, plan_evaluation, record_evaluation
from workbench.improve.history import best_folder
from workbench.runs import cluster, executors, network, sandbox
from workbench.runs.budget import Budget, Stop
from workbench.runs.estimate import Estimate, estimate
from workbench.runs.launch import Launch, RunRefused, default_suite, prepare_launch, run_launch
from workbench.runs.runner import OLD, WITH, WITHOUT, Dispatch, RunOptions
from workbench.validate.diagnostic import did_you_mean
from workbench.validate.validator import validate_file
from workbench.workspace import journal, layout
from workbench.workspace.layout import default_workspace

BASELINES = (WITHOUT, OLD, "none")


@dataclass(frozen=True)
class RunRequest:
    skill_dir: Path
    suite: Path | None = None  # default: evals/evals.json, else evals/suite.yaml
    agent: Agent = field(default_factory=Agent)
    judge: Judge = field(default_factory=Judge)
    check_timeout: float = DEFAULT_CHECK_TIMEOUT
    limits: Limits = field(default_factory=Limits)  # repeats, spending, concurrency, timeout, fresh
    placement: Placement = field(default_factory=Placement)  # sandbox, network, cluster, workspace, wait
    baseline: str = WITHOUT
    only: frozenset[str] | None = None
    failed: bool = False
    iteration: int | None = None
    version: str | None = None  # evaluate this version's snapshot against the current best
    margin: float = DEFAULT_MARGIN
    decide_by: str = "rule"
    auto_promote: bool = False


class Untrusted(WorkbenchError):
    """Commands the workbench did not write would run; a person has to trust them first."""

    def __init__(self, commands: list[str]) -> None:
        super().__init__("these commands would run and are not trusted:\n" + "\n".join(commands))
        self.commands = commands


def id_set(text: str | None) -> frozenset[str] | None:
    """'a, b' -> {'a', 'b'}; nothing -> None (every eval)."""
    ids = frozenset(part.strip() for part in (text or "").split(",") if part.strip())
    return ids or None


def default_judge(executor: str, config: Config | None = None) -> str:
    """The demo agent pairs with the demo judge; any other with the config's judge, else what is here:
    Claude Code when it is installed, else the Messages API when ANTHROPIC_API_KEY is set, else Claude
    Code still (the preflight then says what to install, when the suite needs a judge at all)."""
    if executor == "demo":
        return "demo"
    chosen = (config or load_config()).judge
    if chosen:
        return chosen
    if (
        shutil.which(os.environ.get("WORKBENCH_CLAUDE", "claude")) is None
        and os.environ.get("ANTHROPIC_API_KEY", "").strip()
    ):
        return "anthropic"
    return "claude"


def defaults(request: RunRequest, config: Config | None = None) -> RunRequest:
    """The one place defaults are decided: what the request says, then the config
    file (docs/config.md), then ours. A name taken from the config that no
    registry knows is refused, saying which key of which file it came from."""
    config = config or load_config()
    executor = agent.executor_name(request.agent.executor, config)
    address = cluster.chosen(request.placement.cluster, config.cluster)
    choice = request.judge
    name = choice.name or ("command" if choice.command else default_judge(executor, config))
    from_config = not choice.name and not choice.command and executor != "demo"
    if from_config and name not in judges.NAMES:
        raise Refused(
            f"{where('judge')}: unknown judge {name!r} in the config file{did_you_mean(str(name), judges.NAMES)}; "
            f"expected one of {', '.join(judges.NAMES)}"
        )
    if from_config and name == "command":
        raise Refused(f'{where("judge")}: the config file\'s judge is "command", which needs --judge-command CMD')
    model = choice.model or (config.judge_model if name in ("claude", "anthropic") else None)
    base_url = choice.base_url or (config.judge_base_url if name == "anthropic" else None)
    # The agent's command runs in each dispatch's repository: a relative path to its program means the user's folder.
    command = preflight.absolute_command(request.agent.command)
    return replace(
        request,
        agent=replace(request.agent, executor=executor, command=command),
        judge=Judge(name, choice.command, model, base_url),
        placement=replace(request.placement, cluster=address),
    )


def installed_elsewhere(executor: executors.Executor, name: str, mode: str) -> list[str]:
    """A skill of the same name installed in the user's own scope: said on the run.
    The private agent config hides it, or the sandbox's private home; else the
    baseline may see it."""
    said = []
    for place, hidden in executor.user_skill_places():
        if not (place / name).exists():
            continue
        if hidden or mode == sandbox.BWRAP:
            said.append(
                f"a skill named {name!r} is installed in your user scope ({place / name}); the runs do not see it"
            )
        else:
            said.append(
                f"a skill named {name!r} is installed in your user scope ({place / name}) and, without the "
                "sandbox, the agent finds it there: the without-skill baseline may use it"
            )
    return said


def make_executor(request: RunRequest) -> executors.Executor:
    return agent.make(request.agent.executor, request.agent.command, request.agent.model)


def make_judge(choice: Judge) -> judges.Judge:
    try:
        return judges.make(choice.name or "demo", choice.command, choice.model, choice.base_url)
    except ValueError as exc:
        raise Refused(str(exc)) from None


def _programs(
    executor: executors.Executor | None, agent_command: str | None, judge: judges.Judge, judge_command: str | None
) -> list[app_trust.Program]:
    """What a run starts that may need trust: its agent (none for a grading) and its judge."""
    found = [] if executor is None else [app_trust.agent(executor, agent_command)]
    return [*found, app_trust.judge(judge, judge_command)]


@dataclass
class Prepared:
    """A planned run, not started: what it will dispatch and what it needs trusted."""

    request: RunRequest
    executor: executors.Executor
    judge: judges.Judge
    suite: GradingSuite
    launch: Launch
    options: RunOptions
    evaluation: EvaluationPlan | None = None
    estimate: Estimate | None = None  # what it will cost and take, said before it starts

    @property
    def warnings(self) -> tuple[str, ...]:
        """Said when the run starts (CLI, Runs screen) and in benchmark.md's notes."""
        return self.launch.warnings

    @property
    def dispatches(self) -> list[Dispatch]:
        return self.launch.dispatches

    @property
    def iteration(self) -> Path:
        return self.launch.folder

    def untrusted(self) -> list[str]:
        programs = _programs(self.executor, self.request.agent.command, self.judge, self.request.judge.command)
        return app_trust.asks(programs, self.suite)

    def sides(self) -> Sides:
        """What repeats in --runs auto: the configurations run; for an evaluation with a decision, against
        the best run here as old_skill, or against its rates recorded earlier (it does not run then)."""
        configurations = tuple(dict.fromkeys(d.configuration for d in self.launch.potential or self.dispatches))
        plan = self.evaluation
        if plan is None or plan.version in ("v0", plan.best):
            return Sides(configurations)
        if plan.run_best:
            return Sides(configurations, OLD)
        ids = {str(d.case.eval_id): d.case.id for d in self.launch.potential or self.dispatches}
        earlier = plan.earlier.get("evals") or {}
        recorded = {ids[k]: float(v) for k, v in earlier.items() if k in ids and isinstance(v, (int, float))}
        return Sides((WITH,), "recorded", recorded)

    def budget(self) -> Budget:
        """The run's hard limits (app/cost.py)."""
        return app_cost.budget(self.request.limits, self.estimate)

    def trust(self) -> None:
        """A person has seen untrusted() and trusts exactly those contents."""
        programs = _programs(self.executor, self.request.agent.command, self.judge, self.request.judge.command)
        app_trust.trust(programs, self.suite)


@dataclass
class Outcome:
    prepared: Prepared
    review: Review
    evaluation: Evaluation | None = None
    stopped: Stop | None = None  # why dispatches were left unstarted (the budget): the iteration is incomplete
    kept: list[tuple[Path, str]] = field(default_factory=list)  # runs whose earlier grading stayed, and why

    @property
    def iteration(self) -> Path:
        return self.prepared.iteration


def prepare(request: RunRequest, config: Config | None = None) -> Prepared:
    """Resolve, check and plan. Raises WorkbenchError (RunRefused with the
    suite's diagnostics, HistoryBroken, VersionError, Refused) when it cannot run."""
    request = defaults(request, config)
    if request.baseline not in BASELINES:
        raise Refused(f"unknown baseline {request.baseline!r}; expected one of {', '.join(BASELINES)}")
    limits, placement = request.limits, request.placement
    if placement.cluster:
        cluster.check_address(placement.cluster)  # the address and the extra, before anything is planned
    executor = make_executor(request)
    judge = make_judge(request.judge)
    skill_dir = request.skill_dir.resolve()
    check_skill(skill_dir)
    try:
        suite_file = (request.suite or default_suite(skill_dir)).resolve()
    except FileNotFoundError as exc:
        raise Refused(str(exc)) from None
    suite = load_suite(suite_file, skill_md.read_name(skill_dir / "SKILL.md") or skill_dir.name, executor.label)
    suite.trust_content()  # the digest of what trust covers, now: a tree that cannot be trusted is refused here
    held = hold(placement.sandbox, placement.network, executor, config)
    mode = held.sandbox
    # Before anything is planned or priced: every program this run starts is there and starts, as it will.
    if not placement.cluster:  # on a cluster the agent starts on the workers, not here; the judge starts here
        preflight.check(preflight.of_executor(executor, "agent", mode))
    if suite.needs_judge(request.only) or (request.version and request.decide_by == "comparator"):
        preflight.check_judge(judge)
    workspace = (placement.workspace or default_workspace(skill_dir)).resolve()
    evaluation, source, old_skill, baseline = None, skill_dir, None, request.baseline
    if request.version:
        evaluation = plan_evaluation(skill_dir, request.version, workspace, executor, suite, judge)
        source = evaluation.snapshot
        if evaluation.run_best:
            baseline, old_skill = OLD, evaluation.best_snapshot
    elif baseline == OLD:
        old_skill = best_folder(skill_dir, workspace)
        if old_skill is None:
            raise Refused(
                "--baseline old_skill compares with the current best version; there are no versions "
                "yet (workbench version new, then workbench evaluate)."
            )
    options = RunOptions(
        sandbox=mode,
        network=held.network,
        network_allow=held.allow,
        limits=held.limits,
        show=held.show,
        runs=limits.runs,
        jobs=limits.jobs,
        timeout=limits.timeout,
        baseline=baseline,
        only=set(request.only) if request.only else None,
        failed=request.failed,
        fresh=limits.fresh,
        adaptive=limits.adaptive,
        cluster=placement.cluster,
    )
    if limits.adaptive:
        options.runs = limits.max_runs  # planned up to the maximum, run in rounds (workbench/app/rounds.py)
    try:
        launch = prepare_launch(
            source, executor, options, suite_file, workspace, request.iteration, old_skill, write=False
        )
    except ValueError as exc:
        raise Refused(str(exc)) from None
    if not launch.dispatches:
        raise Refused("nothing to run (check --only / --failed).")
    launch.sandbox = mode
    launch.network = options.network if mode == sandbox.BWRAP else network.OPEN
    launch.warnings = held.warnings + tuple(installed_elsewhere(executor, launch.skill_name, mode))
    guess = estimate(launch.potential or launch.dispatches, workspace, suite_file, executor, limits.jobs, source)
    if launch.potential is not None:  # --runs auto: the first round, and at most every round
        guess = guess.within(estimate(launch.dispatches, workspace, suite_file, executor, limits.jobs, source))
    guess.limited(limits.max_dispatches, limits.max_cost)
    return Prepared(request, executor, judge, suite, launch, options, evaluation, guess)


def check_skill(skill_dir: Path) -> None:
    """A skill whose SKILL.md has errors does not run: its name becomes a folder in
    every workspace (.claude/skills/<name>), so it must be the spec's (lowercase
    letters, digits and hyphens, at most 64). Nor does one with links out of it:
    it is copied into every workspace. A chock policy (manifest.yaml, no SKILL.md)
    runs as a policy."""
    skill_file = skill_dir / "SKILL.md"
    if not skill_file.exists():
        return
    try:
        report = validate_file(skill_file)
    except OSError as exc:
        raise Refused(f"{skill_file}: cannot read it: {exc}") from None
    errors = [d for d in report.diagnostics if d.severity == "error"]
    if errors:
        raise RunRefused(skill_file, errors)
    outward = paths.links_out(skill_dir)
    if outward:
        raise Refused(
            f"{skill_dir} has links that lead outside it, and the skill is copied into every workspace: "
            + "; ".join(outward[:5])
            + ". Copy what they name into the skill, or remove them."
        )


async def execute(
    prepared: Prepared,
    on_change: Callable[[Dispatch], None] | None = None,
    say: Callable[[str], None] | None = None,
    started: Callable[[], None] | None = None,
) -> Outcome:
    """Launch, grade as runs finish, aggregate; decide and record for a version.
    Holds the workspace's lock throughout (WorkspaceBusy when another writer has
    it, unless the request waits); `say` hears the waiting and any recovery,
    `started` is called once the lock is held (nothing ran before it)."""
    asks = prepared.untrusted()
    if asks:
        raise Untrusted(asks)
    verb = "evaluate" if prepared.request.version else "run"
    if prepared.options.cluster:
        await cluster.probe(prepared.options.cluster)  # before the workspace is taken or anything is written
    with contextlib.ExitStack() as held:
        # In a thread: waiting for the lock must not hold up the app's event loop.
        writer = journal.writing(
            prepared.launch.workspace, verb, prepared.request.placement.wait, say, prepared.request.skill_dir
        )
        await asyncio.to_thread(held.enter_context, writer)
        await asyncio.to_thread(prepared.launch.settle, prepared.executor)
        if started is not None:
            started()
        return await _execute(prepared, on_change)


async def _execute(prepared: Prepared, on_change: Callable[[Dispatch], None] | None) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="workbench-trusted-") as private:
        # From here on, the suite, fixtures, setup files and guards are read from a private
        # copy of exactly what was trusted (GradingSuite.snapshot says why a copy).
        suite = await asyncio.to_thread(prepared.suite.snapshot, Path(private))
        for dispatch in prepared.launch.potential or prepared.dispatches:
            dispatch.case = suite.cases[dispatch.case.id]
        grade = GradeOptions(
            prepared.judge,
            trusted=True,
            timeout=prepared.request.check_timeout,
            sandboxed=prepared.options.sandbox == sandbox.BWRAP,  # checks run what the agent wrote: held alike
        )
        budget = prepared.budget()
        graded = grade_as_it_goes(suite, grade)
        if prepared.launch.potential is not None:
            await run_rounds(
                prepared.launch,
                prepared.launch.potential,
                prepared.executor,
                prepared.options,
                prepared.sides(),
                prepared.request.margin,
                on_change,
                graded,
                prepared.judge,
                budget,
                prepared.launch.write_plan,
            )
        else:
            await asyncio.to_thread(prepared.launch.write_plan)  # nothing is written before it is trusted and starts
            await run_launch(
                prepared.launch,
                prepared.executor,
                prepared.options,
                on_change,
                graded,
                responder=prepared.judge,  # the run's judge plays responder evals' simulated user
                budget=budget,
            )
        if budget.stopped:
            # Said in plan.json: the unstarted runs are read as not run, with this reason, never as passed.
            prepared.launch.stopped = budget.stopped
            await asyncio.to_thread(prepared.launch.write_plan)
    return await asyncio.to_thread(finish, prepared, graded.kept)


def run(
    prepared: Prepared,
    on_change: Callable[[Dispatch], None] | None = None,
    say: Callable[[str], None] | None = None,
    started: Callable[[], None] | None = None,
) -> Outcome:
    return run_loop(execute(prepared, on_change, say, started))


T = TypeVar("T")


def run_loop(work: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(work), its result handed back outside the loop's main task. At its end asyncio.run puts
    Ctrl-C's handler back, and signal.signal then formats the text of an error it never raises: the repr of
    the old handler, which holds the main task, whose repr holds its result. An Outcome or the results of
    200 dispatches took 30 ms to a second to write out, after the last dispatch, while the user waited."""
    kept: list[T] = []

    async def main() -> None:
        kept.append(await work)

    asyncio.run(main())
    return kept[0]


def finish(prepared: Prepared, kept: list[tuple[Path, str]] | None = None) -> Outcome:
    """benchmark.json and .md, the review, and for a version its decision. kept: runs whose earlier
    grading stayed because the new one would have lost verdicts (the judge failed): then the
    iteration is not graded whole, its benchmark is not written and its evaluation not recorded."""
    kept = kept or []
    if not kept:
        write_benchmark(prepared.iteration)
    review = load_review(prepared.iteration)
    evaluation = None
    if prepared.evaluation is not None:
        request = prepared.request
        # Runs with errors, or a part of the suite, are shown and decided but not recorded.
        whole = not review.errors and not request.only and not kept
        rounds = prepared.launch.adaptive
        evaluation = record_evaluation(
            prepared.evaluation,
            review,
            prepared.iteration,
            prepared.launch.iteration,
            prepared.executor,
            prepared.judge,
            request.margin,
            request.auto_promote,
            request.decide_by,
            record_it=whole,
            adaptive=rounds.as_json() if rounds is not None else None,
        )
        analyse_evaluation(prepared.evaluation, evaluation, prepared.judge)  # why it won or lost: analysis.json
    return Outcome(prepared, review, evaluation, prepared.launch.stopped, kept)


@dataclass
class Regrade:
    """Grading an iteration again without running agents: the judge and the suite's commands, trusted first."""

    iteration: Path
    suite: GradingSuite
    judge: judges.Judge
    choice: Judge
    check_timeout: float = DEFAULT_CHECK_TIMEOUT
    jobs: int = 4
    sandboxed: bool = False  # the iteration's agents ran sandboxed: its checks do too

    def untrusted(self) -> list[str]:
        return app_trust.asks(_programs(None, None, self.judge, self.choice.command), self.suite)

    def trust(self) -> None:
        app_trust.trust(_programs(None, None, self.judge, self.choice.command), self.suite)


def prepare_grading(
    iteration: Path,
    choice: Judge,
    check_timeout: float = DEFAULT_CHECK_TIMEOUT,
    jobs: int = 4,
    config: Config | None = None,
) -> Regrade:
    try:
        suite = suite_of_iteration(iteration)
    except FileNotFoundError as exc:
        raise Refused(str(exc)) from None
    suite.trust_content()  # a tree that cannot be trusted is refused here, before anything is asked
    executor = "demo" if suite.executor.startswith("demo") else "other"
    choice = defaults(RunRequest(iteration, agent=Agent(executor), judge=choice), config).judge
    ran = read_object(iteration / layout.PLAN).get("sandbox")
    if ran == sandbox.BWRAP and sandbox.unavailable():
        raise Refused(f"{iteration}'s agents ran sandboxed, and its checks would too: {sandbox.unavailable()}")
    judge = make_judge(choice)
    if suite.needs_judge():  # before anything is graded: the judge starts
        _judge_ready(judge, iteration)
    return Regrade(iteration, suite, judge, choice, check_timeout, jobs, ran == sandbox.BWRAP)


def _judge_ready(judge: judges.Judge, iteration: Path) -> None:
    """Refuse, before any grading is touched, a judge that cannot run at all."""
    try:
        preflight.check_judge(judge)
    except preflight.CannotStart as exc:
        raise Refused(
            f"{exc}. Nothing was graded: every grading.json and benchmark.json of {iteration} is as it was"
        ) from None


def regrade(
    work: Regrade, wait: bool = False, say: Callable[[str], None] | None = None
) -> tuple[IterationGraded, Review]:
    """Grade every finished run again, holding the workspace's lock; returns what was graded, kept and
    left, and the review. Nothing graded is lost: a judge that cannot run is refused before anything is
    touched; a run whose new grading could not decide what its grading.json had decided keeps that one;
    benchmark.json is written only when every run graded now decided everything (else it stays as it was)."""
    asks = work.untrusted()
    if asks:
        raise Untrusted(asks)
    if work.suite.needs_judge():  # checked when prepared too; the screens may regrade later
        _judge_ready(work.judge, work.iteration)
    with journal.writing(work.iteration.resolve().parent, "grade", wait, say):
        with tempfile.TemporaryDirectory(prefix="workbench-trusted-") as private:
            suite = work.suite.snapshot(Path(private))  # what was trusted, in a copy only the workbench writes
            options = GradeOptions(work.judge, True, work.check_timeout, work.sandboxed)
            graded = grade_iteration(work.iteration, suite, options, work.jobs)
        if graded.complete:
            write_benchmark(work.iteration)
    return graded, load_review(work.iteration)
