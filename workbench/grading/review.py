"""An iteration's graded runs, arranged for a person: evals x configurations
with pass rates, k/N per assertion, time, tokens and flaky marks, and the
failed expectations (failures first, each with its evidence). The report
command and the TUI's Results screen both read this.

One pass rate everywhere (docs/grading.md): a run's pass rate is passed / total
of its assertions; an eval's, and a configuration's, is the mean of its runs'
pass rates, as skill-creator's benchmark.json defines it. Pooled assertion
counts are shown as counts (k/N), never called a pass rate."""

from __future__ import annotations

from pathlib import Path

from workbench.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from workbench.formats.configurations import CONFIGURATION_PAIRS
from workbench.formats.gc_pause import gc_paused
from workbench.formats.record import Record
from workbench.grading.benchmark import (
    STOPPED,
    Mistrigger,
    RunResult,
    benchmark_cache,
    disagreeing,
    mistriggers,
    read_results,
    run_pass_rate,
    tally,
)
from workbench.grading.difference import Difference, difference
from workbench.runs.cost import dollars

NEW_CONFIGURATIONS = ("with_skill", "new_skill")


class Failure(Record):
    """A failed expectation of one run (its fields, in this order, are the report's JSON)."""

    def __init__(
        self,
        eval_id: object,
        configuration: str,
        run_number: int,
        folder: str,  # the run folder, relative to the iteration
        id: str,
        kind: str,
        text: str,
        evidence: str,
        error: bool = False,  # could not be graded (judge error, untrusted command, failed run)
    ) -> None:
        self.eval_id = eval_id
        self.configuration = configuration
        self.run_number = run_number
        self.folder = folder
        self.id = id
        self.kind = kind
        self.text = text
        self.evidence = evidence
        self.error = error


class Cell(Record):
    """One eval in one configuration, over its repeats."""

    def __init__(self) -> None:
        self.runs = 0
        self.rates: list[float] = []  # each run's pass rate
        self.passed = 0
        self.total = 0
        self.seconds = 0.0
        self.tokens = 0.0
        self.flaky = False
        self.invoked = 0
        self.staged = 0  # runs that had the skill to invoke
        self.unusable = 0  # runs whose grading.json could not be used: errors, in no rate
        self.cost_usd = 0.0  # what its runs' agents cost, as far as they said (docs/cost.md)
        self.judge_cost_usd = 0.0  # what grading them cost, apart
        self.cost_unknown = 0  # runs that did not say what the agent cost
        self.judge_unknown = 0  # runs whose judge calls had no known cost
        self.assertions: dict[str, list] = {}  # id -> [k passed, N, text]
        self.mistrigger: Mistrigger | None = None  # its skill invoked against the suite's skill_should_trigger

    @property
    def ok(self) -> bool:
        """Every assertion passed, and the skill was invoked exactly where it should be."""
        return self.passed == self.total and self.mistrigger is None

    @property
    def pass_rate(self) -> float:
        """The mean of the runs' pass rates."""
        return sum(self.rates) / len(self.rates) if self.rates else 0.0

    @property
    def pass_all(self) -> bool:
        """pass^k: every one of the k repeats passed every assertion."""
        return bool(self.rates) and not self.unusable and all(rate >= 1.0 for rate in self.rates)


class Row(Record):
    """One eval, its cells by configuration."""

    def __init__(self, eval_id: object, name: str, cells: dict[str, Cell] | None = None, folder: str = "") -> None:
        self.eval_id = eval_id
        self.name = name
        self.cells: dict[str, Cell] = {} if cells is None else cells
        self.folder = folder  # its eval-<id> folder in the iteration (eval_metadata.json is there)

    @property
    def label(self) -> str:
        """The eval's id, and its name when it has another (skill-creator's eval_metadata.json gives one)."""
        return str(self.eval_id) + (f" {self.name}" if self.name and self.name != str(self.eval_id) else "")


class Review(Record):
    """An iteration's graded runs, by eval and configuration, with their failures."""

    def __init__(
        self,
        rows: list[Row],
        failures: list[Failure],
        configurations: list[str],
        pair: tuple[str, str] | None,
        results: list[RunResult],
        errors: int,  # runs that failed plus expectations that could not be graded
        metadata: dict | None = None,  # benchmark.json's, when the review was read from it
        notes: list[str] | None = None,  # what the person should hear about how it was read
        prompts: dict[str, str] | None = None,  # eval folder -> prompt, from benchmark.json when read from it
        plan_said: dict | None = None,  # plan.json's `stopped` under STOPPED, when it was read with the runs
    ) -> None:
        self.rows = rows
        self.failures = failures
        self.configurations = configurations
        self.pair = pair
        self.results = results
        self.errors = errors
        self.metadata = metadata
        self.notes: list[str] = [] if notes is None else notes
        self.prompts = prompts
        self.plan_said = plan_said

    def totals(self, configuration: str) -> tuple[int, int]:
        """(passed, total) assertions over every run of a configuration."""
        cells = [r.cells[configuration] for r in self.rows if configuration in r.cells]
        return sum(c.passed for c in cells), sum(c.total for c in cells)

    def rate(self, configuration: str) -> float | None:
        """The configuration's pass rate: the mean of its runs' pass rates."""
        rates = [rate for row in self.rows if configuration in row.cells for rate in row.cells[configuration].rates]
        return sum(rates) / len(rates) if rates else None

    def eval_rates(self, configuration: str) -> dict[str, float]:
        """eval id -> that eval's pass rate in the configuration."""
        return {
            str(row.eval_id): row.cells[configuration].pass_rate
            for row in self.rows
            if configuration in row.cells and row.cells[configuration].rates
        }

    @property
    def new_configuration(self) -> str | None:
        return next((c for c in NEW_CONFIGURATIONS if c in self.configurations), None)

    def cost(self, configuration: str | None = None) -> dict:
        """What the runs cost (of one configuration, or all): agents, judge, total, and how many did not say."""
        cells = [
            cell for row in self.rows for c, cell in row.cells.items() if configuration is None or c == configuration
        ]
        agents, judge = sum(c.cost_usd for c in cells), sum(c.judge_cost_usd for c in cells)
        return {
            "agents": round(agents, 6),
            "judge": round(judge, 6),
            "total": round(agents + judge, 6),
            "agents_unknown": sum(c.cost_unknown for c in cells),
            "judge_unknown": sum(c.judge_unknown for c in cells),
        }

    def delta(self) -> float | None:
        """new minus baseline of the configurations' pass rates."""
        if not self.pair:
            return None
        new, base = self.rate(self.pair[0]), self.rate(self.pair[1])
        return None if new is None or base is None else new - base

    def difference(self) -> Difference | None:
        """new minus baseline paired by eval, with its 95% interval over evals."""
        if not self.pair:
            return None
        return difference(self.eval_rates(self.pair[0]), self.eval_rates(self.pair[1]), self.delta())


def build(results: list[RunResult]) -> Review:
    rows: dict[str, Row] = {}
    errors = 0
    configurations: list[str] = []
    order = {c: i for i, c in enumerate(("with_skill", "new_skill", "without_skill", "old_skill"))}
    # Each run's failures with their place in the report: the skill's own first, then the baseline's,
    # by eval and run. A run's failures share it: they are sorted a run at a time.
    failed_runs: list[tuple[tuple[int, str, int], list[Failure]]] = []
    for r in results:
        configuration, grading = r.configuration, r.grading
        if configuration not in configurations:
            configurations.append(configuration)
        # Not setdefault: it would build a Row and a Cell for every run, to be thrown away.
        row = rows.get(key := str(r.eval_id))
        if row is None:
            row = rows[key] = Row(r.eval_id, r.eval_name, folder=r.folder.split("/")[0])
        cell = row.cells.get(configuration)
        if cell is None:
            cell = row.cells[configuration] = Cell()
        summary, timing = grading.get("summary", {}), grading.get("timing", {})
        cell.runs += 1
        rate = run_pass_rate(summary)
        if rate is not None:
            cell.rates.append(rate)
        cell.passed += summary.get("passed", 0)
        cell.total += summary.get("total", 0)
        cell.seconds += timing.get("executor_duration_seconds", 0.0) or 0.0
        cell.tokens += timing.get("total_tokens", 0) or 0
        unusable = grading.get("unusable")
        if not unusable:  # a run never started cost nothing; one that ran may not say
            spent = (grading.get("execution_metrics") or {}).get("cost_usd")
            judged = grading.get("judge_cost_usd")
            if isinstance(spent, (int, float)) and _dollars(spent):
                cell.cost_usd += spent
            else:
                cell.cost_unknown += 1
            if isinstance(judged, (int, float)) and _dollars(judged):
                cell.judge_cost_usd += judged
            else:
                cell.judge_unknown += 1
        if "triggering" in grading:
            cell.staged += 1
            cell.invoked += bool(grading["triggering"].get("invoked"))
        run_error = grading.get("run_error")
        errors += bool(run_error)
        failures = []
        if unusable:  # no verdicts to show: the reason is the failure
            cell.unusable += 1
            failures.append(
                Failure(
                    r.eval_id,
                    configuration,
                    r.run_number,
                    r.folder,
                    "grading",
                    "error",
                    "the run's grading cannot be used",
                    str(grading["run_error"]),
                    True,
                )
            )
        for name, e in tally(cell.assertions, grading.get("expectations", [])):
            error = e.get("error")
            errors += bool(error)
            failures.append(
                Failure(
                    r.eval_id,
                    configuration,
                    r.run_number,
                    r.folder,
                    name,
                    str(e.get("kind", "")),
                    str(e.get("text", "")),
                    str(e.get("evidence", "")),
                    bool(error or run_error),
                )
            )
        if failures:
            failed_runs.append(((order.get(configuration, 9), key, r.run_number), failures))
    for row in rows.values():
        for cell in row.cells.values():
            cell.flaky = bool(disagreeing(cell.assertions))
    for (eval_id, configuration), miss in mistriggers(results).items():
        rows[eval_id].cells[configuration].mistrigger = miss
    configurations.sort(key=lambda c: (order.get(c, 9), c))
    failed_runs.sort(key=_place)  # stable: runs in the same place keep their order, as their failures do
    failures = [failure for _place_, run_failures in failed_runs for failure in run_failures]
    pair = next(((n, b) for n, b in CONFIGURATION_PAIRS if n in configurations and b in configurations), None)
    return Review(list(rows.values()), failures, configurations, pair, results, errors)


def _place(failed_run: tuple[tuple[int, str, int], list[Failure]]) -> tuple[int, str, int]:
    return failed_run[0]


def _dollars(value: object) -> bool:
    return dollars(value) is not None


def load_review(iteration: Path) -> Review:
    """From benchmark.json when it is up to date (fast), else from every grading.json."""
    said: dict = {}  # plan.json's `stopped`, as read with the runs: the report reads the plan once
    with gc_paused():
        cache = benchmark_cache(iteration, said)
        if cache.results is not None:
            review = build(cache.results)
            review.metadata, review.prompts = cache.metadata, cache.prompts
        else:
            prompts: dict[str, str] = {}  # read with the names: each eval_metadata.json once
            review = build(read_results(iteration, prompts, plan_said=said))
            review.prompts = prompts
    review.plan_said = said if STOPPED in said else None
    review.notes = [cache.note] if cache.note else []
    return review


def outcome(review: Review, fail_under: float | None = None, eval_fail_under: float | None = None) -> int:
    """EXIT_OK: the gates pass; EXIT_FAILED: they do not; EXIT_USAGE: errors (runs
    that failed, expectations that could not be graded). The gates: the
    with-skill pass rate is at least fail_under, and every eval's with-skill pass
    rate at least eval_fail_under; with neither, every with-skill assertion passed."""
    if review.errors:
        return EXIT_USAGE
    new = review.new_configuration
    if new is None or review.rate(new) is None:  # nothing with the skill has assertions to count
        return EXIT_OK if not review.failures else EXIT_FAILED
    if fail_under is None and eval_fail_under is None:
        return EXIT_OK if (review.rate(new) or 0.0) >= 1.0 else EXIT_FAILED
    if fail_under is not None and (review.rate(new) or 0.0) < fail_under - 1e-12:
        return EXIT_FAILED
    if eval_fail_under is not None and any(rate < eval_fail_under - 1e-12 for rate in review.eval_rates(new).values()):
        return EXIT_FAILED
    return EXIT_OK


def below(review: Review, eval_fail_under: float) -> list[str]:
    """The evals whose with-skill pass rate is under the per-eval gate."""
    new = review.new_configuration
    return [
        eval_id for eval_id, rate in (review.eval_rates(new) if new else {}).items() if rate < eval_fail_under - 1e-12
    ]


def cell_text(cell: Cell) -> str:
    """The eval's pass rate, its assertions as a count, pass^k, and a flaky mark."""
    if cell.unusable and not cell.rates:
        return "error (no usable grading)"
    text = f"{cell.pass_rate:.0%} ({cell.passed}/{cell.total})"
    if cell.unusable:
        text += f" +{cell.unusable} error"
    if cell.runs > 1:
        text += f" pass^{cell.runs} {'yes' if cell.pass_all else 'no'}"
    if cell.mistrigger:
        miss = cell.mistrigger
        text += f" skill {'not ' if miss.should_trigger else ''}invoked {miss.wrong}/{miss.staged}, should "
        text += "trigger" if miss.should_trigger else "not trigger"
    return text + (" flaky" if cell.flaky else "")
