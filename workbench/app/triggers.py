"""Trigger evaluation (docs/triggers.md): does the agent use the skill for the
queries it should, and not for the others?

Each query of a trigger eval set runs through the agent with the skill staged
in a private workspace and a private agent config (nothing of the user's own
skills is seen), N times. The runner stops the agent as soon as its event
stream decides (workbench/runs/skill_use.py), so a query costs one short turn.
A measurement is an iteration under <workspace>/triggers/: plan.json, one run
folder per dispatch (run.json, transcript.jsonl, trigger.json) and
results.json. The same command again resumes an unfinished one; identical
dispatches are reused from the cache unless --fresh."""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from workbench.app import agent, preflight
from workbench.app import cost as app_cost
from workbench.app import trust as app_trust
from workbench.app.choices import TRIGGER_RUNS, Agent, Limits, Placement
from workbench.app.pipeline import Untrusted, check_skill, installed_elsewhere, run_loop
from workbench.app.placement import hold
from workbench.app.rounds import in_rounds
from workbench.config import load_config
from workbench.errors import Refused
from workbench.formats import detect, skill_md, trigger_set
from workbench.formats.document import SyntaxProblem, load
from workbench.formats.money import money
from workbench.formats.regular import read_json
from workbench.formats.save import atomic_write
from workbench.grading import trigger_results
from workbench.grading.trigger_results import QueryResult, Scores, visible
from workbench.grading.trigger_results import listed as listed  # the Triggers screen's order of the queries
from workbench.improve.adaptive import AGREE_RUNS
from workbench.runs import cluster, cost, executors, sandbox, skill_use
from workbench.runs import run_folder as ws
from workbench.runs.budget import Budget, Stop
from workbench.runs.cases import RunCase
from workbench.runs.estimate import TRIGGER_ASSUMED, Estimate, estimate
from workbench.runs.launch import RunRefused, adaptive_digest, choose_iteration
from workbench.runs.runner import (
    DONE,
    FAILED,
    REUSED,
    SKIPPED,
    STOPPED,
    Dispatch,
    Runner,
    RunOptions,
    dispatch_key,
    skill_digest,
)
from workbench.runs.transcript import ASSISTANT, TOOL_USE, read_jsonl
from workbench.validate.diagnostic import Diagnostic
from workbench.validate.validator import syntax_diagnostic, validate_document
from workbench.workspace import journal, layout

FOLDER = "triggers"  # <workspace>/triggers: trigger iterations, their cache, the optimizer's split and log
RESULTS = "results.json"
TRIGGER = "trigger.json"  # per run: triggered or not, and the event that decided it
BUDGET_STOPPED = "not run: the budget stopped the run"
FIRST_ROUND = 2  # --runs auto: runs of each query in the first round, and added per round after


@dataclass(frozen=True)
class TriggerRequest:
    skill_dir: Path
    queries: Path | None = None  # default: evals/trigger-evals.json
    agent: Agent = field(default_factory=Agent)
    limits: Limits = field(default_factory=Limits.for_triggers)  # adaptive: rounds until each query is settled
    placement: Placement = field(default_factory=Placement)
    subset: tuple[int, ...] | None = None  # indices into the set (the optimizer's train or held-out part)
    source: Path | None = None  # the skill folder staged (a proposed description); default skill_dir
    label: str = ""  # what this measurement is, in plan.json ("train", "held-out")


@dataclass(frozen=True)
class Query:
    index: int  # 0-based, in the set
    query: str
    should_trigger: bool


@dataclass
class PreparedTriggers:
    request: TriggerRequest
    executor: executors.Executor
    queries_file: Path
    queries: list[Query]
    skill_name: str
    description: str
    workspace: Path  # the skill's workspace (its lock)
    folder: Path  # <workspace>/triggers
    iteration: int
    dispatches: list[Dispatch]  # every one planned (--runs auto: up to --max-runs)
    options: RunOptions
    sandbox: str
    warnings: tuple[str, ...] = ()
    estimate: Estimate | None = None
    sample: str = ""
    plain: str = ""  # the plan's digest before any fresh salt (a stopped --fresh run resumes by it)

    @property
    def iteration_dir(self) -> Path:
        return layout.iteration_dir(self.folder, self.iteration)

    def untrusted(self) -> list[str]:
        return app_trust.asks([app_trust.agent(self.executor, self.request.agent.command)])

    def trust(self) -> None:
        app_trust.trust([app_trust.agent(self.executor, self.request.agent.command)])

    def budget(self) -> Budget:
        """The evaluation's hard limits (app/cost.py)."""
        return app_cost.budget(self.request.limits, self.estimate)


@dataclass
class TriggerResults:
    queries: list[QueryResult]
    iteration: Path
    skill_name: str
    description: str
    executor: str
    dispatches: int = 0  # that ran here (not resumed, not reused)
    cost_usd: float = 0.0
    cost_unknown: int = 0
    stopped: Stop | None = None  # the budget left runs unstarted
    rounds: list[dict] = field(default_factory=list)  # --runs auto: what each round ran and settled

    @property
    def scores(self) -> Scores:
        return Scores.of(self.queries)

    @property
    def errors(self) -> int:
        return sum(len(q.errors) for q in self.queries)

    @property
    def all_as_expected(self) -> bool:
        return all(q.passed for q in self.queries)

    def as_json(self) -> dict:
        return {
            **self.scores.as_json(),
            "queries": [q.as_json() for q in self.queries],
            "skill": self.skill_name,
            "description": self.description,
            "executor": self.executor,
            "iteration": str(self.iteration),
            "errors": self.errors,
            "dispatches": self.dispatches,
            "cost_usd": round(self.cost_usd, 6),
            "cost_unknown": self.cost_unknown,
            **({"stopped": self.stopped.as_json(), "incomplete": True} if self.stopped else {}),
            **({"rounds": self.rounds} if self.rounds else {}),
        }


def default_queries(skill_dir: Path) -> Path:
    return skill_dir / trigger_set.DEFAULT_FILE


def read_queries(path: Path) -> list[Query]:
    """The queries of a trigger eval set, or RunRefused with its errors (file, line, column)."""
    return checked_queries(path)[0]


def checked_queries(path: Path) -> tuple[list[Query], list[str]]:
    """The queries and the set's warnings (one class only, ...), from one read and one validation; or
    RunRefused with its errors (file, line, column)."""
    if not path.is_file():
        raise Refused(
            f"{path}: no trigger eval set here; write one as skill-creator does, a JSON array of "
            '{"query": "...", "should_trigger": true|false} (or give one with --queries)'
        )
    parsed = load(path)
    if isinstance(parsed, SyntaxProblem):
        raise RunRefused(path, [syntax_diagnostic(parsed)])
    if parsed.data == []:
        raise RunRefused(path, [Diagnostic("error", "", "the set is empty: expected at least one query", 1, 1)])
    fmt = detect.refine(detect.by_place(path), parsed.data)
    if fmt is not trigger_set.FORMAT:
        what = f"a {fmt.title}" if fmt is not None else "not a format the workbench knows"
        raise RunRefused(
            path,
            [
                Diagnostic(
                    "error",
                    "",
                    f"expected a trigger eval set, an array of {{query, should_trigger}}; this is {what}",
                    1,
                    1,
                )
            ],
        )
    found = validate_document(parsed, fmt)
    errors = [d for d in found if d.severity == "error"]
    if errors:
        raise RunRefused(path, errors)
    queries = [Query(i, item["query"], bool(item["should_trigger"])) for i, item in enumerate(parsed.data)]
    return queries, [d.message for d in found]


def read_description(skill_dir: Path) -> str:
    parsed = load(skill_dir / "SKILL.md")
    if isinstance(parsed, SyntaxProblem) or not isinstance(parsed.data, dict):
        return ""
    value = parsed.data.get("description")
    return value if isinstance(value, str) else ""


def _case(query: Query) -> RunCase:
    # The raw case names the dispatch: a trigger run differs from an eval's run of the same prompt. What
    # the query should do is left out: it changes the score, not the run (a flipped expectation re-scores).
    raw = {"trigger_query": query.query}
    return RunCase(
        id=str(query.index + 1),
        eval_id=query.index + 1,
        name=query.query[:60],
        prompt=query.query,
        skill_should_trigger=query.should_trigger,
        raw=raw,
    )


def prepare(request: TriggerRequest) -> PreparedTriggers:
    """Resolve, read and check, plan. Raises WorkbenchError when it cannot run."""
    config = load_config()
    name = agent.executor_name(request.agent.executor, config)
    # The agent runs in each dispatch's repository: a relative path to its program means the user's folder.
    request = replace(request, agent=replace(request.agent, command=preflight.absolute_command(request.agent.command)))
    executor = agent.make(name, request.agent.command, request.agent.model)
    limits, placement = request.limits, request.placement
    skill_dir = request.skill_dir.resolve()
    source = (request.source or skill_dir).resolve()
    if not (source / "SKILL.md").is_file():
        raise Refused(f"{source}: no SKILL.md: a trigger evaluation tests a skill's description")
    check_skill(source)
    queries_file = (request.queries or default_queries(skill_dir)).resolve()
    every, said = checked_queries(queries_file)
    chosen = every if request.subset is None else [every[i] for i in request.subset if 0 <= i < len(every)]
    if not chosen:
        raise Refused("no queries to run")
    held = hold(placement.sandbox, placement.network, executor, config)
    mode = held.sandbox
    skill_name = skill_md.read_name(source / "SKILL.md") or source.name
    address = cluster.chosen(placement.cluster, config.cluster)
    if not address:  # before anything is planned or priced (on a cluster it starts on the workers)
        preflight.check(preflight.of_executor(executor, "agent", mode))
    if address:
        cluster.check_address(address)  # the address and the extra, before anything is planned
    runs = limits.repeats(TRIGGER_RUNS)
    options = RunOptions(
        runs=runs,
        jobs=limits.jobs,
        timeout=limits.timeout,
        baseline="none",
        sandbox=mode,
        network=held.network,
        network_allow=held.allow,
        limits=held.limits,
        show=held.show,
        watch_skill=skill_name,
        cluster=address,
    )
    workspace = (placement.workspace or layout.default_workspace(skill_dir)).resolve()
    folder = workspace / FOLDER
    dispatches = []
    staged = skill_digest(source)  # once: every dispatch stages the same skill
    for query in chosen:
        case = _case(query)
        for number in range(1, runs + 1):
            dispatch = Dispatch(case, "with_skill", number, source, Path())
            dispatch.key = dispatch_key(dispatch, executor, staged)
            dispatches.append(dispatch)
    plain = adaptive_digest({d.key for d in dispatches})  # the plan before any fresh salt
    sample = (_unfinished_sample(folder, plain) or secrets.token_hex(6)) if limits.fresh else ""
    for dispatch in dispatches if sample else []:
        dispatch.sample = sample
        dispatch.key = dispatch_key(dispatch, executor, staged)
    iteration = choose_iteration(folder, {d.key for d in dispatches}, None, limits.adaptive)
    for d in dispatches:
        d.folder = ws.run_dir(folder, iteration, d.case, d.configuration, d.run_number)
    warnings = [*held.warnings, *installed_elsewhere(executor, skill_name, mode)]
    if executor.name == "demo":
        warnings.append(
            "the demo agent is not a model: it uses the skill for nearly every request whatever the description "
            "says, so these results show the workflow, not the description (no description can win with it)"
        )
    warnings += [f"{queries_file.name}: {w}" for w in said]
    first = [d for d in dispatches if not limits.adaptive or d.run_number <= FIRST_ROUND]
    guess = estimate(first, folder, queries_file, executor, limits.jobs, source, TRIGGER_ASSUMED)
    if limits.adaptive:
        guess = estimate(dispatches, folder, queries_file, executor, limits.jobs, source, TRIGGER_ASSUMED).within(guess)
    guess.limited(limits.max_dispatches, limits.max_cost)
    prepared = PreparedTriggers(
        request,
        executor,
        queries_file,
        chosen,
        skill_name,
        read_description(source),
        workspace,
        folder,
        iteration,
        dispatches,
        options,
        mode,
        tuple(warnings),
        guess,
        sample,
    )
    prepared.plain = plain
    return prepared


def _unfinished_sample(folder: Path, plain: str) -> str | None:
    """--fresh again after a stop: the salt of the latest iteration when it is this same plan, drawn fresh and
    not finished, so the same command resumes it instead of drawing everything anew."""
    latest = max(layout.iteration_numbers(folder), default=0)
    if not latest:
        return None
    iteration = layout.iteration_dir(folder, latest)
    try:
        plan = read_json(iteration / layout.PLAN)
    except (OSError, ValueError):
        return None
    if not isinstance(plan, dict) or plan.get("plain") != plain:
        return None
    if (iteration / RESULTS).exists() and not plan.get("stopped"):
        return None  # finished: --fresh draws anew
    sample = plan.get("sample")
    return sample if isinstance(sample, str) and sample else None


def _write_plan(prepared: PreparedTriggers, stopped: Stop | None = None, rounds: list[dict] | None = None) -> None:
    request = prepared.request
    plan = {
        "kind": "triggers",
        "skill": prepared.skill_name,
        "skill_path": str(request.source or request.skill_dir),
        "description": prepared.description,
        "suite_file": str(prepared.queries_file),
        "executor": prepared.executor.label,
        "sandbox": prepared.sandbox,
        "network": prepared.options.network if prepared.sandbox == sandbox.BWRAP else "open",
        "warnings": list(prepared.warnings),
        **({"label": request.label} if request.label else {}),
        **({"sample": prepared.sample, "plain": prepared.plain} if prepared.sample else {}),
        **({"stopped": stopped.as_json()} if stopped else {}),
        **(
            {
                "adaptive": {
                    "max_runs": request.limits.max_runs,
                    "potential": adaptive_digest({d.key for d in prepared.dispatches}),
                }
            }
            if request.limits.adaptive
            else {}
        ),
        **({"rounds": rounds} if rounds else {}),
        "dispatches": [
            {"eval_id": d.case.eval_id, "query": d.case.prompt, "run_number": d.run_number, "key": d.key}
            for d in prepared.dispatches
        ],
    }
    folder = prepared.iteration_dir
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / layout.PLAN, json.dumps(plan, indent=2, ensure_ascii=False) + "\n")


async def execute(
    prepared: PreparedTriggers,
    on_change: Callable[[Dispatch], None] | None = None,
    say: Callable[[str], None] | None = None,
    started: Callable[[], None] | None = None,
) -> TriggerResults:
    """Run every query's runs (in rounds with --runs auto), holding the workspace's lock; results.json last."""
    asks = prepared.untrusted()
    if asks:
        raise Untrusted(asks)
    request = prepared.request
    if prepared.options.cluster:
        await cluster.probe(prepared.options.cluster)  # before the workspace is taken or anything is written
    with journal.writing(prepared.workspace, "trigger", request.placement.wait, say, request.skill_dir):
        if started is not None:
            started()
        await asyncio.to_thread(_write_plan, prepared)
        budget = prepared.budget()
        runner = Runner(
            prepared.executor,
            prepared.folder,
            prepared.skill_name,
            prepared.options,
            on_change,
            lambda d: _record_trigger(d, prepared.skill_name),
            budget=budget,
        )
        rounds: list[dict] = []
        if request.limits.adaptive:
            await _rounds(runner, prepared, rounds)
        else:
            await runner.run(prepared.dispatches)
        stopped = budget.stopped
        if stopped or rounds:
            await asyncio.to_thread(_write_plan, prepared, stopped, rounds)
        results = collect(prepared, stopped, rounds)
        await asyncio.to_thread(
            atomic_write,
            prepared.iteration_dir / RESULTS,
            json.dumps(results.as_json(), indent=2, ensure_ascii=False) + "\n",
        )
        return results


def run(
    prepared: PreparedTriggers,
    on_change: Callable[[Dispatch], None] | None = None,
    say: Callable[[str], None] | None = None,
    started: Callable[[], None] | None = None,
    cancel: threading.Event | None = None,
) -> TriggerResults:
    """execute() in an event loop of its own (a thread's, or the command's). `cancel` set: the agents are
    stopped (their process trees killed) and Cancelled is raised; the same measurement resumes."""
    if cancel is None:
        return run_loop(execute(prepared, on_change, say, started))

    async def watched() -> TriggerResults:
        work = asyncio.ensure_future(execute(prepared, on_change, say, started))
        while not work.done():
            if cancel.is_set():
                work.cancel()
                try:
                    await work
                except asyncio.CancelledError:
                    raise Cancelled("stopped by you: the agents were stopped") from None
            await asyncio.wait({work}, timeout=0.1)
        return work.result()

    return run_loop(watched())


class Cancelled(Refused):
    """A measurement stopped by the person: what finished is kept, the same measurement resumes."""


async def _rounds(runner: Runner, prepared: PreparedTriggers, rounds: list[dict]) -> None:
    """--runs auto: FIRST_ROUND runs of every query, then FIRST_ROUND more of each query not yet settled
    (trigger_results.settled says when), up to --max-runs; in the runs' engine (rounds.in_rounds)."""
    most = prepared.request.limits.max_runs
    settled: dict[str, str] = {}
    reached = [0]  # runs of each query asked for so far

    def window() -> list[Dispatch]:
        upto = min(most, reached[0] + FIRST_ROUND)
        todo = [d for d in prepared.dispatches if d.case.id not in settled and reached[0] < d.run_number <= upto]
        reached[0] = upto
        return todo

    async def run(todo: list[Dispatch]) -> None:
        await runner.run(todo)
        now: dict[str, str] = {}
        for query in prepared.queries:
            case_id = str(query.index + 1)
            if case_id in settled:
                continue
            result = _query_result(query, [d for d in prepared.dispatches if d.case.id == case_id])
            why = trigger_results.settled(result, reached[0], most, AGREE_RUNS)
            if why:
                now[case_id] = why
        settled.update(now)
        rounds.append({"runs_each": reached[0], "dispatches": len(todo), "settled": now})

    def following() -> list[Dispatch]:
        return window() if reached[0] < most else []

    await in_rounds(window(), run, following, lambda: runner.budget is not None and bool(runner.budget.stopped))


def _record_trigger(dispatch: Dispatch, skill_name: str) -> str | None:
    """trigger.json beside a finished run: whether the skill was used, and what decided it."""
    try:
        record = read_json(dispatch.folder / layout.RUN_RECORD)
    except (OSError, ValueError):
        return None  # said as the run's error when the results are read
    if not isinstance(record, dict) or record.get("status") != DONE:
        return None
    data: dict[str, object] = {}
    try:
        events = read_jsonl((dispatch.folder / layout.TRANSCRIPT).read_text("utf-8"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        data = {"error": f"its transcript cannot be read: {exc}"}
    else:
        if not any(e.kind in (ASSISTANT, TOOL_USE) for e in events):
            data = {"error": "its transcript holds no message of the agent: nothing says whether it used the skill"}
        use = skill_use.decide(events, skill_name, turn_over=True)
        if "error" not in data and use is not None:  # turn_over decides
            data = {"triggered": use.invoked, "evidence": use.evidence}
    atomic_write(dispatch.folder / TRIGGER, json.dumps(data, indent=2, ensure_ascii=False) + "\n", sync_dir=False)
    return "triggered" if data.get("triggered") else "did not trigger"


def _query_result(query: Query, dispatches: list[Dispatch]) -> QueryResult:
    result = QueryResult(query.query, query.should_trigger)
    for d in sorted(dispatches, key=lambda d: d.run_number):
        if d.status == STOPPED:
            result.errors.append(f"run {d.run_number}: {BUDGET_STOPPED}")
            continue
        if d.status not in (DONE, FAILED, REUSED, SKIPPED):
            continue  # --runs auto: never needed
        try:
            record = read_json(d.folder / layout.RUN_RECORD)
        except (OSError, ValueError) as exc:
            result.errors.append(f"run {d.run_number}: run.json cannot be read: {exc}")
            continue
        if not isinstance(record, dict) or record.get("status") != DONE:
            error = record.get("error") if isinstance(record, dict) else "run.json is not an object"
            result.errors.append(f"run {d.run_number}: {error}")
            continue
        try:
            decided = read_json(d.folder / TRIGGER)
        except (OSError, ValueError) as exc:
            result.errors.append(f"run {d.run_number}: trigger.json cannot be read: {exc}")
            continue
        if not isinstance(decided, dict) or not isinstance(decided.get("triggered"), bool):
            why = decided.get("error") if isinstance(decided, dict) else None
            result.errors.append(f"run {d.run_number}: {why or 'trigger.json says nothing of triggering'}")
            continue
        result.runs += 1
        result.triggered += decided["triggered"]
        result.evidence.append(f"run {d.run_number}: {decided.get('evidence', '')}")
    return result


def collect(
    prepared: PreparedTriggers, stopped: Stop | None = None, rounds: list[dict] | None = None
) -> TriggerResults:
    """The results of the dispatches as they stand (read from their folders)."""
    queries = [
        _query_result(q, [d for d in prepared.dispatches if d.case.id == str(q.index + 1)]) for q in prepared.queries
    ]
    spent: list[float | None] = []
    ran = 0
    for d in prepared.dispatches:
        if d.status in (DONE, FAILED):
            ran += 1
        if d.status in (DONE, FAILED, REUSED, SKIPPED):
            try:
                record = read_json(d.folder / layout.RUN_RECORD)
            except (OSError, ValueError):
                continue
            spent.append(cost.dollars(record.get("cost_usd")) if isinstance(record, dict) else None)
    total, unknown = cost.total(spent)
    return TriggerResults(
        queries,
        prepared.iteration_dir,
        prepared.skill_name,
        prepared.description,
        prepared.executor.label,
        ran,
        total,
        unknown,
        stopped,
        rounds or [],
    )


def render(results: TriggerResults) -> str:
    """The results as text: the scores with intervals, then errors, misses and false triggers first."""
    scores = results.scores
    lines = [
        f"Triggering of {results.skill_name} with the {results.executor}: {len(results.queries)} queries",
        "  " + scores.line("recall"),
        "  " + scores.line("precision"),
        "  " + scores.line("accuracy"),
        "",
    ]
    unstarted = 0
    for q in trigger_results.listed(results.queries):
        rate = f"{q.triggered}/{q.runs}" if q.runs else "-"
        expected = "should trigger" if q.should_trigger else "should not"
        mark = {"ok": "ok", "miss": "MISS", "false trigger": "FALSE TRIGGER", "error": "ERROR"}[q.kind]
        lines.append(f"{mark:>13}  {rate:>5}  ({expected})  {visible(q.query)}")
        said = [e for e in q.errors if not e.endswith(BUDGET_STOPPED)]
        unstarted += len(q.errors) - len(said)
        for error in said[:3]:
            lines.append(f"{'':>15}{visible(error)}")
    if unstarted:
        lines.append(f"{'':>15}{unstarted} run(s) not started: the budget stopped the run")
    settled = {why for r in results.rounds for why in r.get("settled", {}).items()}
    if settled:
        lines += ["", f"in rounds, {len(results.rounds)} round(s): why each query stopped repeating"]
        by_id = {str(i + 1): q.query for i, q in enumerate(results.queries)}
        lines += [f"  {visible(by_id.get(case_id, case_id))}: {why}" for case_id, why in sorted(settled)]
    spend = money(results.cost_usd)
    if results.cost_unknown:
        spend += f" and {results.cost_unknown} run(s) of unknown cost (stopped before the agent said it)"
    per = money(results.cost_usd / len(results.queries)) if results.queries else "-"
    lines += [
        "",
        f"{results.dispatches} dispatch(es) ran here, {spend}; {per} a query; results.json in {results.iteration}",
    ]
    if results.stopped:
        lines.insert(0, f"INCOMPLETE: {results.stopped.said()}")
    return "\n".join(lines) + "\n"


def latest_results(workspace: Path, queries_file: Path) -> tuple[Path, list[QueryResult]] | str | None:
    """The newest whole measurement of this set (not an optimizer's train or held-out part) as query
    results; a message when its results.json cannot be read (a broken file is an error, never a pass);
    None when the set was not measured yet."""
    folder = workspace / FOLDER
    for number in sorted(layout.iteration_numbers(folder), reverse=True):
        iteration = layout.iteration_dir(folder, number)
        path = iteration / RESULTS
        if not path.exists():
            continue  # unfinished: the one before may have results
        try:
            plan = read_json(iteration / layout.PLAN)
        except (OSError, ValueError):
            plan = None
        if not isinstance(plan, dict) or plan.get("label") or plan.get("suite_file") != str(queries_file.resolve()):
            continue
        try:
            data = read_json(path)
            return path, [_result_row(q) for q in data["queries"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return f"{path} cannot be read ({exc}): measure again (t) or fix it by hand"
    return None


def _result_row(q: object) -> QueryResult:
    """One query of results.json, its types exactly as written (a string "false" is not False)."""
    if not isinstance(q, dict):
        raise TypeError("a query's result is not an object")
    counts = [q.get("triggered"), q.get("runs"), q.get("errors", 0)]
    if not isinstance(q.get("query"), str) or not isinstance(q.get("should_trigger"), bool):
        raise TypeError("a query's result has no text query and boolean should_trigger")
    if not all(type(c) is int and c >= 0 for c in counts) or counts[0] > counts[1]:
        raise TypeError("a query's triggered, runs and errors are not counts (triggered at most runs)")
    return QueryResult(q["query"], q["should_trigger"], counts[0], counts[1], ["error"] * counts[2])
