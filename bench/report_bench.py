"""A whole `workbench report --format json` process on a 10,000-run iteration,
beside a whole skill-creator `aggregate_benchmark.py` process on the same
folder, in one run (the anchor: at most half its time).

    .venv/bin/python bench/report_bench.py

Each command runs REPEATS times; the medians are compared. Two cases for
ours: the iteration as `workbench run` or `grade` leaves it (benchmark.json up
to date), and with benchmark.json removed (every grading.json read), which is
the work aggregate_benchmark.py always does."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
AGGREGATE = ROOT.parent / "shared" / "reference" / "skill-creator" / "scripts" / "aggregate_benchmark.py"
REPEATS = 5


def timed(argv: list[str]) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if done.returncode not in (0, 1):  # 1: the report says assertions failed, as they do here
            raise SystemExit(f"{argv} failed: {done.stderr.decode()[-2000:]}")
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    from grading_bench import generate

    from workbench.grading.benchmark import write_benchmark

    with tempfile.TemporaryDirectory() as tmp:
        iteration = Path(tmp) / "iteration-1"
        generate(iteration)
        theirs = timed([sys.executable, str(AGGREGATE), str(iteration), "-o", str(Path(tmp) / "theirs.json")])
        write_benchmark(iteration)
        report = [sys.executable, "-m", "workbench", "report", str(iteration), "--format", "json"]
        fresh = timed(report)
        (iteration / "benchmark.json").unlink()
        stale = timed(report)
    print("report: a whole process on 10,000 graded runs (median of 5)")
    print(f"  skill-creator aggregate_benchmark.py          {theirs * 1000:7.0f} ms   the anchor")
    print(
        f"  workbench report --format json                {fresh * 1000:7.0f} ms   {fresh / theirs:.2f}x   budget 0.50x"
    )
    print(f"  ... without benchmark.json (reads every run)  {stale * 1000:7.0f} ms   {stale / theirs:.2f}x")


if __name__ == "__main__":
    main()
