"""An iteration's graded runs, arranged for a person: evals x configurations
with pass rates, k/N per assertion, time, tokens and flaky marks, and the
failed expectations (failures first, each with its evidence). The report
command and the TUI's Results screen both read this."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from workbench.formats import artifacts
from workbench.formats.document import gc_paused
from workbench.grading.benchmark import RunResult, disagreeing, read_results, results_from_benchmark, tally

NEW_CONFIGURATIONS = ("with_skill", "new_skill")


@dataclass
class Failure:
    eval_id: object
    configuration: str
    run_number: int
    folder: str  # the run folder, relative to the iteration
    id: str
    kind: str
    text: str
    evidence: str
    error: bool = False  # could not be graded (judge error, untrusted command, failed run)


@dataclass
class Cell:
    """One eval in one configuration, over its repeats."""

    runs: int = 0
    passed: int = 0
    total: int = 0
    seconds: float = 0.0
    tokens: float = 0.0
    flaky: bool = False
    invoked: int = 0
    staged: int = 0  # runs that had the skill to invoke
    assertions: dict[str, list] = field(default_factory=dict)  # id -> [k passed, N, text]

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


@dataclass
class Row:
    eval_id: object
    name: str
    cells: dict[str, Cell] = field(default_factory=dict)


@dataclass
class Review:
    rows: list[Row]
    failures: list[Failure]
    configurations: list[str]
    pair: tuple[str, str] | None
    results: list[RunResult]
    errors: int  # runs that failed plus expectations that could not be graded

    def totals(self, configuration: str) -> tuple[int, int]:
        """(passed, total) assertions over every run of a configuration."""
        cells = [r.cells[configuration] for r in self.rows if configuration in r.cells]
        return sum(c.passed for c in cells), sum(c.total for c in cells)

    def rate(self, configuration: str) -> float | None:
        passed, total = self.totals(configuration)
        return passed / total if total else None

    @property
    def new_rate(self) -> float | None:
        """The with-skill pass rate over every assertion of every run."""
        new = next((c for c in NEW_CONFIGURATIONS if c in self.configurations), None)
        return self.rate(new) if new else None

    def delta(self) -> float | None:
        if not self.pair:
            return None
        new, base = self.rate(self.pair[0]), self.rate(self.pair[1])
        return None if new is None or base is None else new - base


def build(results: list[RunResult]) -> Review:
    rows: dict[str, Row] = {}
    failures, errors = [], 0
    configurations: list[str] = []
    for r in results:
        if r.configuration not in configurations:
            configurations.append(r.configuration)
        row = rows.setdefault(str(r.eval_id), Row(r.eval_id, r.eval_name))
        cell = row.cells.setdefault(r.configuration, Cell())
        summary, timing = r.grading.get("summary", {}), r.grading.get("timing", {})
        cell.runs += 1
        cell.passed += summary.get("passed", 0)
        cell.total += summary.get("total", 0)
        cell.seconds += timing.get("executor_duration_seconds", 0.0) or 0.0
        cell.tokens += timing.get("total_tokens", 0) or 0
        if "triggering" in r.grading:
            cell.staged += 1
            cell.invoked += bool(r.grading["triggering"].get("invoked"))
        errors += bool(r.grading.get("run_error"))
        for name, e in tally(cell.assertions, r.expectations):
            errors += bool(e.get("error"))
            failures.append(Failure(r.eval_id, r.configuration, r.run_number, r.folder, name,
                                    str(e.get("kind", "")), str(e.get("text", "")),
                                    str(e.get("evidence", "")), bool(e.get("error") or r.grading.get("run_error"))))
    for row in rows.values():
        for cell in row.cells.values():
            cell.flaky = bool(disagreeing(cell.assertions))
    order = {c: i for i, c in enumerate(("with_skill", "new_skill", "without_skill", "old_skill"))}
    configurations.sort(key=lambda c: (order.get(c, 9), c))
    # The skill's own failures first, then the baseline's.
    failures.sort(key=lambda f: (order.get(f.configuration, 9), str(f.eval_id), f.run_number))
    pair = next(((n, b) for n, b in artifacts.CONFIGURATION_PAIRS if n in configurations and b in configurations),
                None)
    return Review(list(rows.values()), failures, configurations, pair, results, errors)


def load_review(iteration: Path) -> Review:
    """From benchmark.json when it is up to date (fast), else from every grading.json."""
    with gc_paused():
        cached = results_from_benchmark(iteration)
        return build(cached if cached is not None else read_results(iteration))


def outcome(review: Review, fail_under: float | None = None) -> int:
    """0: every with-skill assertion passed (or the rate is at least fail_under);
    1: some failed; 2: errors (runs that failed, expectations that could not be graded)."""
    if review.errors:
        return 2
    rate = review.new_rate
    if rate is None:
        return 0 if not review.failures else 1
    if fail_under is not None:
        return 0 if rate >= fail_under else 1
    return 0 if rate >= 1.0 else 1
