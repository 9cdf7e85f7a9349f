"""The iteration layout, both ways: where each file of a run is written, and
listing the runs back. skill-creator's layout, so its viewer and aggregator
read ours:

    <workspace>/iteration-N/plan.json, benchmark.json, benchmark.md, feedback.json
    <workspace>/iteration-N/eval-<id>/eval_metadata.json
    <workspace>/iteration-N/eval-<id>/<configuration>/run-<k>/{run.json, grading.json, ...}

Nothing else builds or parses these names. Plain os calls: listing 10,000 runs
with pathlib costs more than reading them. No git here (reports import this)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PLAN = "plan.json"
BENCHMARK = "benchmark.json"
BENCHMARK_MD = "benchmark.md"
FEEDBACK = "feedback.json"
EVAL_METADATA = "eval_metadata.json"
RUN_RECORD = "run.json"  # ours, written last: a run is finished when it exists
GRADING = "grading.json"
TRANSCRIPT = "transcript.jsonl"
TIMING = "timing.json"
METRICS = "metrics.json"
DIFF = "diff.patch"
OUTPUTS = "outputs"
REPO = "repo"

ITERATION_PREFIX, EVAL_PREFIX, RUN_PREFIX = "iteration-", "eval-", "run-"


def iteration_dir(workspace: Path, iteration: int) -> Path:
    return workspace / f"{ITERATION_PREFIX}{iteration}"


def iteration_numbers(workspace: Path) -> list[int]:
    return sorted(
        int(name[len(ITERATION_PREFIX) :])
        for name in folders(str(workspace), ITERATION_PREFIX)
        if name[len(ITERATION_PREFIX) :].isdigit()
    )


def eval_dir(iteration: Path, case_id: str) -> Path:
    return iteration / f"{EVAL_PREFIX}{case_id}"


def run_dir(iteration: Path, case_id: str, configuration: str, run_number: int) -> Path:
    return eval_dir(iteration, case_id) / configuration / f"{RUN_PREFIX}{run_number}"


@dataclass(frozen=True, slots=True)
class RunFolder:
    path: str  # the run folder
    eval_folder: str  # eval-<id>
    configuration: str
    number: int

    @property
    def case_id(self) -> str:
        return self.eval_folder[len(EVAL_PREFIX) :]

    @property
    def relative(self) -> str:
        """eval-<id>/<configuration>/run-<k>, as benchmark.json and the viewer name a run."""
        return f"{self.eval_folder}/{self.configuration}/{RUN_PREFIX}{self.number}"


def eval_folders(iteration: Path | str) -> list[str]:
    return sorted(folders(str(iteration), EVAL_PREFIX))


def runs(iteration: Path | str, eval_folder: str | None = None) -> list[RunFolder]:
    """Every run folder of an iteration (or of one of its evals), in order:
    eval, configuration, run number."""
    out = []
    for name in [eval_folder] if eval_folder else eval_folders(iteration):
        eval_path = os.path.join(iteration, name)
        for configuration in sorted(folders(eval_path, "")):
            base = os.path.join(eval_path, configuration)
            numbered = [(run_number(run), run) for run in folders(base, RUN_PREFIX)]
            out += [RunFolder(os.path.join(base, run), name, configuration, number) for number, run in sorted(numbered)]
    return out


def run_number(name: str) -> int:
    number = name.rsplit(RUN_PREFIX, 1)[-1]
    return int(number) if number.isdigit() else 0


def folders(parent: str, prefix: str) -> list[str]:
    try:
        with os.scandir(parent) as entries:
            return [e.name for e in entries if e.name.startswith(prefix) and e.is_dir()]
    except OSError:
        return []
