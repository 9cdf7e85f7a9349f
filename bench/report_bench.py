"""Whole `workbench report` processes beside whole skill-creator `aggregate_benchmark.py`
processes on the same folder, in one run: what a user waits for, start-up included.

    .venv/bin/python bench/report_bench.py [--sizes 1000,10000,50000] [--repeats 5] [--json] [--keep DIR]

(--keep DIR: make the iterations there and reuse them on the next call; 50,000 runs take
minutes to generate.)

For each size (graded runs: evals x 2 configurations x 2 runs, 5 expectations a run,
each run with a conversation, an output file and a diff, as a run leaves them):
- `report --format json` with benchmark.json up to date (as `run` and `grade` leave
  the iteration) and with it removed (every grading.json read, the work the anchor
  always does); budget: at most 0.5x the anchor's wall time, pair by pair;
- `report --format html` at 10,000 and 50,000 runs: the CPU time (user + system) and
  peak memory of the whole process, the anchor's beside them; budget 1.5 s / 8 s of
  CPU, memory at most 2x the anchor's.

The commands run in turn (anchor, ours, anchor, ours ...) and each figure is the median
of the pairs' ratios; CPU and memory are the kernel's accounting of the finished child
(wait4). The machine's load is printed beside the figures. Both commands run with bytecode
caches, as installed. The last line is a one-line summary; --json prints the figures as one
JSON object instead of the table. The wall-time ratio is the figure; the CPU seconds are given
beside it because on a shared machine wall time swings with the load."""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import installed  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
AGGREGATE = ROOT.parent / "shared" / "reference" / "skill-creator" / "scripts" / "aggregate_benchmark.py"
EXPECTATIONS = 5
HTML_SIZES = (10_000, 50_000)
JSON_BUDGET = 0.5
HTML_CPU_BUDGET = {10_000: 1.5, 50_000: 8.0}
HTML_MEMORY_BUDGET = 2.0
# Both commands run with bytecode caches, as an installed workbench has them (bench/installed.py).
PYTHON = installed.python()
ENV = dict(os.environ)


def generate(iteration: Path, runs: int) -> None:
    """An iteration of `runs` graded runs as `workbench run` leaves one: plan.json, eval_metadata.json,
    and per run run.json, grading.json, transcript.jsonl, outputs/answer.md and diff.patch."""
    rng = random.Random(7)
    evals = max(1, runs // 4)
    iteration.mkdir(parents=True)
    dispatches = [
        {"eval_id": f"case-{e:05d}", "configuration": configuration, "run_number": k}
        for e in range(evals)
        for configuration in ("with_skill", "without_skill")
        for k in (1, 2)
    ]
    plan = {"skill": "bench", "skill_path": "/bench", "executor": "bench", "dispatches": dispatches}
    (iteration / "plan.json").write_text(json.dumps(plan))
    for e in range(evals):
        case = f"case-{e:05d}"
        folder = iteration / f"eval-{case}"
        folder.mkdir()
        metadata = {"eval_id": case, "eval_name": f"case {e}", "prompt": f"Do task {e}.", "assertions": []}
        (folder / "eval_metadata.json").write_text(json.dumps(metadata))
        for configuration, odds in (("with_skill", 0.8), ("without_skill", 0.5)):
            for k in (1, 2):
                run = folder / configuration / f"run-{k}"
                (run / "outputs").mkdir(parents=True)
                verdicts = [rng.random() < odds for _ in range(EXPECTATIONS)]
                _write(run / "run.json", {"eval_id": case, "run_number": k, "status": "done", "key": "k"})
                _write(run / "grading.json", _grading(case, configuration, k, e, verdicts, rng))
                events = [
                    {"kind": "user", "turn": 1, "text": f"Do task {e}."},
                    {"kind": "assistant", "turn": 1, "text": "I will read the file first. " * 8},
                    {"kind": "tool_use", "turn": 1, "text": "Read answer.md"},
                    {"kind": "tool_result", "turn": 1, "text": "line of the file\n" * 20},
                    {"kind": "assistant", "turn": 1, "text": "Done: the answer is in answer.md."},
                ]
                (run / "transcript.jsonl").write_text("".join(json.dumps(event) + "\n" for event in events))
                (run / "outputs" / "answer.md").write_text(f"# Answer {e}\n\n" + "The answer, in a few lines.\n" * 12)
                (run / "diff.patch").write_text(
                    "--- a/answer.md\n+++ b/answer.md\n@@ -0,0 +1,3 @@\n+# Answer\n+line\n+line\n"
                )


def _grading(case: str, configuration: str, k: int, e: int, verdicts: list[bool], rng: random.Random) -> dict:
    passed = sum(verdicts)
    return {
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
        "timing": {"executor_duration_seconds": rng.uniform(5, 60), "total_tokens": rng.randint(900, 9000)},
        "judge": "bench",
        "eval_id": case,
        "configuration": configuration,
        "run_number": k,
        "run_key": "k",
    }


def _write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data))


def whole(argv: list[str]) -> dict:
    """One whole process: wall seconds, CPU seconds (user + system) and peak memory (MB), from the kernel."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    assert child.stderr is not None
    error = child.stderr.read()
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):  # 1: the report says assertions failed, as they do here
        raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}): {error.decode()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024}


def pairs(ours: list[str], anchor: list[str], repeats: int) -> dict:
    """The two commands in turn, `repeats` pairs after one unmeasured pair; medians of each and of the ratios."""
    whole(anchor), whole(ours)  # warm the page cache and the interpreter's files for both
    theirs_runs, ours_runs = [], []
    for _ in range(repeats):
        theirs_runs.append(whole(anchor))
        ours_runs.append(whole(ours))

    def median(runs: list[dict], key: str) -> float:
        return statistics.median(run[key] for run in runs)

    return {
        "anchor_wall": median(theirs_runs, "wall"),
        "anchor_cpu": median(theirs_runs, "cpu"),
        "anchor_peak_mb": median(theirs_runs, "peak_mb"),
        "wall": median(ours_runs, "wall"),
        "cpu": median(ours_runs, "cpu"),
        "peak_mb": median(ours_runs, "peak_mb"),
        "ratio": statistics.median(o["wall"] / t["wall"] for o, t in zip(ours_runs, theirs_runs, strict=True)),
        "cpu_ratio": statistics.median(o["cpu"] / t["cpu"] for o, t in zip(ours_runs, theirs_runs, strict=True)),
        "memory_ratio": statistics.median(
            o["peak_mb"] / t["peak_mb"] for o, t in zip(ours_runs, theirs_runs, strict=True)
        ),
    }


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def write_benchmark(iteration: Path) -> None:
    """benchmark.json as `run` leaves it, written by a child: a child's peak memory, as the kernel
    counts it, starts at its parent's, so this process never holds an iteration itself."""
    code = "import sys; from pathlib import Path; from workbench.grading.benchmark import write_benchmark as w; "
    subprocess.run([*PYTHON, "-c", code + "w(Path(sys.argv[1]))", str(iteration)], check=True, env=ENV)


def measure(sizes: list[int], repeats: int, say, keep: Path | None = None) -> dict:
    figures: dict = {"cores": os.cpu_count(), "repeats": repeats, "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        for size in sizes:
            iteration = (keep or Path(tmp)) / f"iteration-{size}"
            if keep is None or not (iteration / "plan.json").exists():
                say(f"generating {size:,} runs ...")
                shutil.rmtree(iteration, ignore_errors=True)
                generate(iteration, size)
            anchor = [*PYTHON, str(AGGREGATE), str(iteration), "-o", str(Path(tmp) / f"theirs-{size}.json")]

            def report(fmt: str, iteration: Path = iteration) -> list[str]:
                return [*PYTHON, "-m", "workbench", "report", str(iteration), "--format", fmt]

            write_benchmark(iteration)
            entry: dict = {}
            entry["json_fresh"] = {**pairs(report("json"), anchor, repeats), "load": load()}
            if size in HTML_SIZES:
                entry["html"] = {**pairs(report("html"), anchor, repeats), "load": load()}
            (iteration / "benchmark.json").unlink()
            entry["json_absent"] = {**pairs(report("json"), anchor, repeats), "load": load()}
            write_benchmark(iteration)  # as a run leaves it, for a kept iteration's next use
            figures["sizes"][str(size)] = entry
    return figures


def table(figures: dict) -> list[str]:
    lines = [
        f"report: whole processes beside skill-creator's aggregate_benchmark.py on the same folder "
        f"(median of {figures['repeats']} alternated pairs, {figures['cores']} cores)"
    ]
    for size, entry in figures["sizes"].items():
        lines.append(f"  {int(size):,} runs")
        for key, label in (("json_fresh", "report --format json"), ("json_absent", "... without benchmark.json")):
            f = entry[key]
            lines.append(
                f"    {label:30} {f['wall'] * 1000:7.0f} ms beside the anchor's {f['anchor_wall'] * 1000:6.0f} ms: "
                f"{f['ratio']:.2f}x (CPU {f['cpu_ratio']:.2f}x)   budget {JSON_BUDGET:.2f}x   (load {f['load']})"
            )
        if "html" in entry:
            f = entry["html"]
            lines.append(
                f"    {'report --format html':30} {f['cpu']:7.2f} s CPU (budget {HTML_CPU_BUDGET[int(size)]:.1f} s; "
                f"the anchor's {f['anchor_cpu']:.2f} s), {f['wall']:.2f} s wall, peak {f['peak_mb']:.0f} MB: "
                f"{f['memory_ratio']:.2f}x the anchor's {f['anchor_peak_mb']:.0f} MB (budget "
                f"{HTML_MEMORY_BUDGET:.0f}x)   (load {f['load']})"
            )
    lines.append(summary(figures))
    return lines


def summary(figures: dict) -> str:
    """One line, stable in shape, for bench/run_all.py."""
    parts = []
    for size, entry in figures["sizes"].items():
        part = f"{int(size) // 1000}k json {entry['json_fresh']['ratio']:.2f}x/{entry['json_absent']['ratio']:.2f}x"
        if "html" in entry:
            part += f" html {entry['html']['cpu']:.1f}s cpu {entry['html']['memory_ratio']:.1f}x mem"
        parts.append(part)
    return f"report: {'; '.join(parts)} (budgets json 0.50x, html cpu 1.5s/8s, mem 2x; load {load()})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000", help="graded runs per iteration, comma-separated")
    parser.add_argument("--repeats", type=int, default=5, help="alternated pairs per figure")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--keep", type=Path, help="make the iterations in this folder, and use those already there")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    figures = measure(sizes, args.repeats, lambda text: print(text, file=sys.stderr), args.keep)
    if args.json:
        print(json.dumps(figures))
    else:
        print("\n".join(table(figures)))


if __name__ == "__main__":
    main()
