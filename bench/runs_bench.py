"""Run orchestration speed, beside its anchor, measured in one run.

    .venv/bin/python bench/runs_bench.py

Budget (DESIGN.md section 7): orchestration overhead per dispatch <= 25 ms beyond
the agent's own time: 200 dispatches of an instant command executor at -j 4,
against running the same executor command in a bare loop (also 4 at a time).
And: a second iteration with an unchanged baseline dispatches half the runs.
And: the cost of the agents' sandbox (bubblewrap) per dispatch, the same 200
dispatches run again with --sandbox bwrap, beside the unsandboxed figure.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTANT = (
    f"{sys.executable} -c \"import json;print(json.dumps({{'type':'result','result':'ok','session_id':'s',"
    f"'usage':{{'input_tokens':1}}}}))\""
)


def main() -> None:
    from workbench.runs import executors, sandbox
    from workbench.runs.launch import prepare_launch, run_launch
    from workbench.runs.runner import DONE, REUSED, RunOptions

    with tempfile.TemporaryDirectory() as tmp:
        skill = Path(tmp) / "skills" / "changelog-entry"
        shutil.copytree(ROOT / "demo" / "changelog-entry", skill)
        cases = [
            {
                "id": f"case-{i:03d}",
                "prompt": f"case {i}",
                "expected_output": "ok",
                "files": ["fixtures/export-json/CHANGELOG.md"],
            }
            for i in range(100)
        ]
        (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "changelog-entry", "evals": cases}))
        executor = executors.make("command", INSTANT)
        options = RunOptions(jobs=4, timeout=60)

        started = time.perf_counter()
        launch = prepare_launch(skill, executor, options)
        asyncio.run(run_launch(launch, executor, options))
        ours = time.perf_counter() - started
        count = len(launch.dispatches)
        assert all(d.status == DONE for d in launch.dispatches), {d.status for d in launch.dispatches}

        def bare(_: int) -> None:
            subprocess.run(INSTANT, shell=True, capture_output=True, input=b"prompt")

        started = time.perf_counter()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(bare, range(count)))
        loop = time.perf_counter() - started

        print("workbench run: orchestration beside its anchor")
        print(f"  {count} dispatches of an instant command at -j 4:  {ours * 1000:8.0f} ms")
        print(f"  the same command {count} times in a bare loop, 4 at a time: {loop * 1000:8.0f} ms")
        overhead = (ours - loop) / count * 1000
        print(f"  overhead per dispatch (added wall time / dispatches): {overhead:5.1f} ms   budget 25 ms")
        print(
            f"  the same, as work in each of the 4 slots:             {overhead * 4:5.1f} ms   "
            "(git init + add + commit alone: ~21 ms, DESIGN)"
        )

        why = sandbox.unavailable()
        if why:
            print(f"  sandboxed: not measured ({why})")
        else:
            # The same 200 dispatches, without and with bubblewrap, alternating (twice each, the
            # best of each kept) into fresh workspaces, so that neither gets warmer caches.
            def timed(mode: str, number: int) -> float:
                chosen = RunOptions(jobs=4, timeout=60, sandbox=mode)
                began = time.perf_counter()
                planned = prepare_launch(skill, executor, chosen, workspace=Path(tmp) / f"{mode}-{number}")
                asyncio.run(run_launch(planned, executor, chosen))
                assert all(d.status == DONE for d in planned.dispatches), {d.status for d in planned.dispatches}
                return time.perf_counter() - began

            runs = {sandbox.NONE: [], sandbox.BWRAP: []}
            for number in (1, 2):
                for mode in runs:
                    runs[mode].append(timed(mode, number))
            plain, boxed = min(runs[sandbox.NONE]), min(runs[sandbox.BWRAP])
            per_plain, per_boxed = plain / count * 1000, boxed / count * 1000
            print("  per dispatch at -j 4, wall time (best of 2, alternating):")
            print(f"    --sandbox none:  {per_plain:6.1f} ms")
            print(f"    --sandbox bwrap: {per_boxed:6.1f} ms")
            print(
                f"  the sandbox's cost per dispatch: {per_boxed - per_plain:5.1f} ms wall, "
                f"{(per_boxed - per_plain) * 4:5.1f} ms as work in each of the 4 slots"
            )

        (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nOne more line.\n")
        second = prepare_launch(skill, executor, options)
        asyncio.run(run_launch(second, executor, options))
        ran = sum(d.status == DONE for d in second.dispatches)
        reused = sum(d.status == REUSED for d in second.dispatches)
        print(
            f"  second iteration, skill changed: {ran} dispatched, {reused} reused of {len(second.dispatches)}"
            f"   anchor: half dispatched ({len(second.dispatches) // 2})"
        )


if __name__ == "__main__":
    main()
