"""Grading speed, beside its anchors, measured in one run.

    .venv/bin/python bench/grading_bench.py

Budgets (DESIGN.md section 7 and the grading issue): aggregating 10,000 run
results into benchmark.json <= 1 s; the Results screen opens on 10,000 runs in
<= 1 s. The iteration is generated: 2,500 evals x 2 configurations x 2 runs,
5 expectations a run, about a third of them failing.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EVALS, RUNS, EXPECTATIONS = 2500, 2, 5


def generate(iteration: Path) -> None:
    rng = random.Random(7)
    iteration.mkdir(parents=True)
    # As `workbench run` plans it: every run listed, so each one's run.json is checked as a report checks it.
    dispatches = [
        {"eval_id": f"case-{e:04d}", "configuration": configuration, "run_number": k}
        for e in range(EVALS)
        for configuration in ("with_skill", "without_skill")
        for k in range(1, RUNS + 1)
    ]
    plan = {"skill": "bench", "skill_path": "/bench", "executor": "bench", "dispatches": dispatches}
    (iteration / "plan.json").write_text(json.dumps(plan))
    for e in range(EVALS):
        folder = iteration / f"eval-case-{e:04d}"
        folder.mkdir()
        (folder / "eval_metadata.json").write_text(
            json.dumps({"eval_id": f"case-{e:04d}", "eval_name": f"case {e}", "prompt": "p", "assertions": []})
        )
        for configuration, odds in (("with_skill", 0.8), ("without_skill", 0.5)):
            for k in range(1, RUNS + 1):
                run = folder / configuration / f"run-{k}"
                run.mkdir(parents=True)
                verdicts = [rng.random() < odds for _ in range(EXPECTATIONS)]
                passed = sum(verdicts)
                (run / "run.json").write_text(
                    json.dumps({"eval_id": f"case-{e:04d}", "run_number": k, "status": "done", "key": "k"})
                )
                (run / "grading.json").write_text(
                    json.dumps(
                        {
                            "expectations": [
                                {
                                    "text": f"assertion {i} of case {e}",
                                    "passed": v,
                                    "id": f"a{i}",
                                    "kind": "transcript_check",
                                    "evidence": "matched event 3 (turn 1)" if v else "no tool invocation matched",
                                }
                                for i, v in enumerate(verdicts)
                            ],
                            "summary": {
                                "passed": passed,
                                "failed": EXPECTATIONS - passed,
                                "total": EXPECTATIONS,
                                "pass_rate": passed / EXPECTATIONS,
                            },
                            "execution_metrics": {"total_tool_calls": 4, "errors_encountered": 0},
                            "timing": {
                                "executor_duration_seconds": rng.uniform(5, 60),
                                "total_tokens": rng.randint(900, 9000),
                            },
                            "judge": "bench",
                            "eval_id": f"case-{e:04d}",
                            "configuration": configuration,
                            "run_number": k,
                            "run_key": "k",
                        }
                    )
                )


async def results_screen(iteration: Path) -> float:
    from textual.app import App
    from textual.widgets import DataTable

    from workbench.tui.screens.results import ResultsScreen

    class Bare(App):
        CSS_PATH = str(ROOT / "workbench" / "tui" / "workbench.tcss")

    app = Bare()
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        started = time.perf_counter()
        screen = ResultsScreen(iteration)
        app.push_screen(screen)
        while not (screen.review and screen.query_one("#failures", DataTable).row_count):
            await pilot.pause(0.005)
        await pilot.pause(0)  # every pending message handled: the filled tables laid out and drawn
        return time.perf_counter() - started


def main() -> None:
    from workbench.grading.benchmark import aggregate, iteration_metadata, read_results, write_benchmark

    with tempfile.TemporaryDirectory() as tmp:
        iteration = Path(tmp) / "iteration-1"
        generate(iteration)

        started = time.perf_counter()
        results = read_results(iteration)
        read = time.perf_counter() - started
        started = time.perf_counter()
        benchmark = aggregate(results, iteration_metadata(iteration, "bench"))
        aggregated = time.perf_counter() - started
        started = time.perf_counter()
        write_benchmark(iteration, results)  # aggregate again, validate against the schema, write both files
        written = time.perf_counter() - started
        size = (iteration / "benchmark.json").stat().st_size
        opened = asyncio.run(results_screen(iteration))

    count = len(benchmark["runs"])
    print(f"grading: {count:,} graded runs ({EXPECTATIONS} expectations each)")
    print(f"  aggregate into benchmark (in memory)            {aggregated * 1000:7.0f} ms")
    print(
        f"  aggregate + validate + write benchmark.json/.md {written * 1000:7.0f} ms   budget 1,000 ms "
        f"({size / 1e6:.1f} MB)"
    )
    print(f"  (reading the {count:,} grading.json files first    {read * 1000:7.0f} ms)")
    print(f"  Results screen open, tables filled              {opened * 1000:7.0f} ms   budget 1,000 ms")


if __name__ == "__main__":
    main()
