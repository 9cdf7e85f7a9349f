"""Run orchestration speed, beside its anchor, measured in one run.

    .venv/bin/python bench/runs_bench.py

Budget (DESIGN.md section 7): orchestration overhead per dispatch <= 25 ms beyond
the agent's own time: 200 dispatches of an instant command executor at -j 4,
against running the same executor command in a bare loop (also 4 at a time).
And: a second iteration with an unchanged baseline dispatches half the runs.
And: the cost of the agents' sandbox per dispatch, beside the unsandboxed figure: the same 200 dispatches,
each time a whole `workbench run` process, with --sandbox none; with bubblewrap and the machine's network
(--network open); with the confined network but nothing to reach (no relay: the demo agent's case); and with
the confined network relaying to a model endpoint (the relay outside, the sandbox's first process inside:
every real agent's case). The bounds (cgroups, rlimits, the watch) are in force in all three sandboxed runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
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
            sandbox_costs(skill, Path(tmp), count)

        (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nOne more line.\n")
        second = prepare_launch(skill, executor, options)
        asyncio.run(run_launch(second, executor, options))
        ran = sum(d.status == DONE for d in second.dispatches)
        reused = sum(d.status == REUSED for d in second.dispatches)
        print(
            f"  second iteration, skill changed: {ran} dispatched, {reused} reused of {len(second.dispatches)}"
            f"   anchor: half dispatched ({len(second.dispatches) // 2})"
        )


class CpuMeter:
    """The CPU time of a whole process tree, sandboxes included: a cpuacct cgroup of its own where one can be
    made (cgroup v1, as root: counts every process, whatever pid namespace it is in); else the rusage of the
    children, which misses what runs inside bubblewrap's pid namespace (its init reaps it, uncounted)."""

    ROOT = Path("/sys/fs/cgroup/cpuacct")
    HOW = "a cpuacct cgroup" if os.access(ROOT, os.W_OK) else "rusage: what runs inside bubblewrap is missed"

    def __init__(self) -> None:
        self.folder: Path | None = None
        if os.access(self.ROOT, os.W_OK):
            self.folder = Path(tempfile.mkdtemp(prefix="runs-bench-", dir=self.ROOT))
        self.before = resource.getrusage(resource.RUSAGE_CHILDREN)

    def argv(self, argv: list[str]) -> list[str]:
        if self.folder is None:
            return argv
        return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(self.folder), *argv]

    def seconds(self) -> float:
        if self.folder is None:
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return after.ru_utime + after.ru_stime - self.before.ru_utime - self.before.ru_stime
        deadline = time.monotonic() + 10  # a sandbox's last processes may still be going
        while (self.folder / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.01)
        used = int((self.folder / "cpuacct.usage").read_text()) / 1e9
        while True:
            try:
                self.folder.rmdir()
                return used
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)


def sandbox_costs(skill: Path, tmp: Path, count: int) -> None:
    """Whole `workbench run` processes, the modes alternating (twice each, the best of each kept) into fresh
    workspaces, so that none gets warmer caches."""
    config = tmp / "config"
    config.mkdir(exist_ok=True)
    relayed = tmp / "config-relayed"
    relayed.mkdir(exist_ok=True)
    (relayed / "config.json").write_text(json.dumps({"network_allow": ["127.0.0.1:59999"]}))  # something to reach
    modes = {
        "--sandbox none": (["--sandbox", "none"], config),
        "bwrap, --network open": (["--sandbox", "bwrap", "--network", "open"], config),
        "bwrap, confined, nothing to reach": (["--sandbox", "bwrap"], config),
        "bwrap, confined, relayed to a model": (["--sandbox", "bwrap"], relayed),
    }
    base = ["run", str(skill), "--executor", "command", "--agent-command", INSTANT, "--baseline", "without_skill"]
    base += ["--judge", "demo", "-j", "4", "--trust", "--yes"]
    taken: dict[str, list[float]] = {name: [] for name in modes}
    work: dict[str, list[float]] = {name: [] for name in modes}  # CPU seconds of the whole process tree
    for _round in (1, 2):
        for name, (args, folder) in modes.items():
            env = {**os.environ, "WORKBENCH_CONFIG_DIR": str(folder), "PYTHONPATH": str(ROOT)}
            workspace = tmp / f"ws-{len(taken[name])}-{abs(hash(name))}"
            meter = CpuMeter()
            began = time.perf_counter()
            done = subprocess.run(
                meter.argv([sys.executable, "-m", "workbench", *base, *args, "--workspace", str(workspace)]),
                capture_output=True, text=True, env=env,
            )  # fmt: skip
            taken[name].append(time.perf_counter() - began)
            work[name].append(meter.seconds())
            assert done.returncode in (0, 1), done.stderr[-2000:]
            records = [json.loads(p.read_text()) for p in workspace.glob("iteration-1/*/*/run-*/run.json")]
            assert len(records) == count and all(r["status"] == "done" for r in records), done.stderr[-2000:]
    plain = min(taken["--sandbox none"]) / count * 1000
    plain_work = min(work["--sandbox none"]) / count * 1000
    print(f"  per dispatch, whole `workbench run` processes of {count} dispatches at -j 4 (best of 2, alternating);")
    print(f"  wall time, and CPU time of the whole process tree ({CpuMeter.HOW}; steadier on a busy machine):")
    for name in modes:
        each, cpu = min(taken[name]) / count * 1000, min(work[name]) / count * 1000
        extra = f"   {each - plain:+6.1f} ms wall, {cpu - plain_work:+6.1f} ms CPU beside --sandbox none"
        print(f"    {name:38s} {each:6.1f} ms wall {cpu:6.1f} ms CPU{extra if name != '--sandbox none' else ''}")


if __name__ == "__main__":
    main()
