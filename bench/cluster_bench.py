"""Runs on a Dask cluster beside the local pool: whole `workbench run` processes, alternating, in one run.

    .venv/bin/python bench/cluster_bench.py [--rounds N] [--cases N] [--json]
    (needs the extra: pip install -e '.[cluster]')

A local cluster of separate processes is started with the plain `dask` commands (a scheduler and two
workers of 2 threads each). The same iteration of an instant command agent (--cases evals, with_skill and
without_skill: twice as many dispatches) is then run, each time by a whole `workbench run` process into a
fresh workspace: with the local pool (-j 4, the anchor) and with --cluster (-j 4 as well, so both have 4
slots), alternating, --rounds times each; the medians are kept, and the figure is their difference per
dispatch: what the cluster adds (budget: +15 ms). The same command in a bare loop, 4 at a time, is timed in
the same rounds, beside them (the anchor of bench/runs_bench.py). The machine's load is printed with the
figures: on a busy machine the difference swings.

Beside the wall figures, the CPU each side spent per dispatch, where (Linux: /proc): the `workbench run`
process with its children (the agents, for the local pool), and the scheduler's and the workers' processes
with theirs (the agents, on the cluster). It says where the cluster's extra goes; it moves with the machine's
load too (70-91 ms a cluster dispatch at load 4-12 on 2026-12-02), less than the wall figure.

Then, in process and labelled so: the submitting process's CPU per cluster dispatch, which bounds what one
workbench can feed however many workers there are.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import installed  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
INSTANT = (
    f"{sys.executable} -c \"import json;print(json.dumps({{'type':'result','result':'ok','session_id':'s',"
    f"'usage':{{'input_tokens':1}}}}))\""
)
SLOTS = 4
BUDGET_MS = 15.0


def start_cluster(logs: Path) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and two workers, separate processes, as docs/cluster.md starts them."""
    dask = str(Path(sys.executable).parent / "dask")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    # Long-lived: they compile what they import once, before the first timed run, and write nothing into
    # the checkout (the interpreter option of installed.python() would not reach a worker's own process).
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    commands = [[dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]]
    commands += [[dask, "worker", address, "--nworkers", "1", "--nthreads", "2", "--no-dashboard"]] * 2
    processes = []
    for number, command in enumerate(commands):
        with open(logs / f"dask-{number}.log", "wb") as log:
            processes.append(subprocess.Popen(command, stdout=log, stderr=log, env=env, start_new_session=True))
        if number == 0:
            time.sleep(1.5)
    from distributed import Client

    with Client(address, timeout=30) as client:
        client.wait_for_workers(2, timeout=60)
    return address, processes


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def suite(skill: Path, count: int) -> None:
    cases = [
        {
            "id": f"case-{i:03d}",
            "prompt": f"case {i}",
            "expected_output": "ok",
            "files": ["fixtures/export-json/CHANGELOG.md"],
        }
        for i in range(count)
    ]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "changelog-entry", "evals": cases}))


def whole_run(skill: Path, workspace: Path, cluster: str, config: Path) -> float:
    """Wall seconds of one whole `workbench run` process; every dispatch must have run."""
    argv = [*installed.python(), "-m", "workbench", "run", str(skill), "--executor", "command", "--agent-command"]
    argv += [INSTANT, "--judge", "demo", "-j", str(SLOTS), "--sandbox", "none", "--trust", "--yes"]
    argv += ["--cluster", cluster, "--workspace", str(workspace)]
    env = {**os.environ, "WORKBENCH_CONFIG_DIR": str(config), "PYTHONPATH": str(ROOT)}
    began = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    taken = time.perf_counter() - began
    records = [json.loads(p.read_text()) for p in workspace.glob("iteration-1/*/*/run-*/run.json")]
    if done.returncode not in (0, 1) or not records or any(r["status"] != "done" for r in records):
        raise SystemExit(f"the run in {workspace} did not finish every dispatch:\n{done.stderr[-3000:]}")
    return taken


def bare_loop(count: int) -> float:
    def bare(_: int) -> None:
        subprocess.run(INSTANT, shell=True, capture_output=True, input=b"prompt")

    began = time.perf_counter()
    with ThreadPoolExecutor(SLOTS) as pool:
        list(pool.map(bare, range(count)))
    return time.perf_counter() - began


def submitting_cpu(skill: Path, workspace: Path, address: str) -> tuple[float, int]:
    """In process: the submitting process's CPU seconds for one cluster iteration, and its dispatches."""
    from workbench.runs import executors
    from workbench.runs.launch import prepare_launch, run_launch
    from workbench.runs.runner import RunOptions

    executor = executors.make("command", INSTANT)
    options = RunOptions(jobs=SLOTS, timeout=60, cluster=address)
    cpu = time.process_time()
    launch = prepare_launch(skill, executor, options, workspace=workspace)
    asyncio.run(run_launch(launch, executor, options))
    return time.process_time() - cpu, len(launch.dispatches)


def cluster_cpu(processes: list[subprocess.Popen]) -> float | None:
    """CPU seconds so far of every process in the cluster's process groups, with their waited-for children
    (the agents run on the workers); None without /proc."""
    total = 0.0
    try:
        for process in processes:
            for pid in (p for p in os.listdir("/proc") if p.isdigit()):
                try:
                    if os.getpgid(int(pid)) != process.pid:
                        continue
                    with open(f"/proc/{pid}/stat") as handle:
                        fields = handle.read().rsplit(")", 1)[1].split()
                except (OSError, ProcessLookupError):
                    continue
                total += sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return None
    return total


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_medians(rows: list[tuple[float, float | None]]) -> tuple[float, float | None]:
    there = [row[1] for row in rows if row[1] is not None]
    return statistics.median(row[0] for row in rows), statistics.median(there) if there else None


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="whole runs of each, alternating (default 3)")
    parser.add_argument("--cases", type=int, default=100, help="evals in the suite: twice as many dispatches")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    installed.python()  # the workbench's processes start compiled, as installed (the workers: at their start)
    say = (lambda *_: None) if args.json else print

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        skill = root / "skills" / "changelog-entry"
        shutil.copytree(ROOT / "demo" / "changelog-entry", skill)
        config = root / "config"
        config.mkdir()
        suite(skill, args.cases)
        count = 2 * args.cases
        address, processes = start_cluster(root)
        try:
            before = load()
            whole_run(skill, root / "warm", address, config)  # the workers import the workbench once: not counted
            taken: dict[str, list[float]] = {"local": [], "cluster": [], "bare": []}
            # CPU ms a dispatch: (the workbench process with its children, the cluster's processes).
            spent: dict[str, list[tuple[float, float | None]]] = {"local": [], "cluster": []}
            for number in range(args.rounds):  # alternating, so that neither gets the quieter minute
                for side, where in (("local", "local"), ("cluster", address)):
                    mine, theirs = children_cpu(), cluster_cpu(processes)
                    taken[side].append(whole_run(skill, root / f"{side}-{number}", where, config))
                    after_theirs = cluster_cpu(processes)
                    remote_cpu = None if theirs is None or after_theirs is None else after_theirs - theirs
                    spent[side].append(
                        (
                            (children_cpu() - mine) / count * 1000,
                            None if remote_cpu is None else remote_cpu / count * 1000,
                        )
                    )
                taken["bare"].append(bare_loop(count))
            after = load()
            cpu, counted = submitting_cpu(skill, root / "in-process", address)
        finally:
            stop(processes)

    local, remote, bare = (statistics.median(taken[name]) for name in ("local", "cluster", "bare"))
    pairs = [(c - lo) / count * 1000 for lo, c in zip(taken["local"], taken["cluster"], strict=True)]
    added = (remote - local) / count * 1000
    say(f"workbench run --cluster beside the local pool: whole processes, {count} dispatches of an instant agent")
    say(f"  4 slots each (local -j 4; 2 workers x 2 threads), {args.rounds} rounds alternating, medians")
    say(f"  machine: {before} before, {after} after")
    say(f"    local pool (anchor):  {local * 1000:7.0f} ms   {local / count * 1000:6.1f} ms a dispatch")
    say(f"    cluster:              {remote * 1000:7.0f} ms   {remote / count * 1000:6.1f} ms a dispatch")
    say(f"    bare loop, 4 at once: {bare * 1000:7.0f} ms   {bare / count * 1000:6.1f} ms a dispatch")
    say(f"  each round's cluster minus local, per dispatch: {', '.join(f'{p:+.1f}' for p in pairs)} ms")
    cpu_of = {side: _cpu_medians(rows) for side, rows in spent.items()}
    for side, (here, there) in cpu_of.items():
        what = "idle beside the local run" if side == "local" else "with the agents"
        there_said = "n/a" if there is None else f"{there:5.1f} ms"
        say(f"  CPU a dispatch, {side}: workbench and its children {here:5.1f} ms, cluster ({what}) {there_said}")
    say(f"  in process: the submitting process's CPU per cluster dispatch {cpu / counted * 1000:.1f} ms")
    met = added <= BUDGET_MS
    if args.json:
        print(
            json.dumps(
                {
                    "dispatches": count,
                    "local_ms": round(local * 1000, 1),
                    "cluster_ms": round(remote * 1000, 1),
                    "bare_ms": round(bare * 1000, 1),
                    "added_ms_per_dispatch": round(added, 2),
                    "pairs_ms_per_dispatch": [round(p, 2) for p in pairs],
                    "budget_ms": BUDGET_MS,
                    "submitting_cpu_ms_per_dispatch_in_process": round(cpu / counted * 1000, 2),
                    "cpu_ms_per_dispatch": {
                        side: {"workbench": round(here, 2), "cluster": None if there is None else round(there, 2)}
                        for side, (here, there) in cpu_of.items()
                    },
                    "load_before": before,
                    "load_after": after,
                    "budget_met": met,
                }
            )
        )
        return
    # The last line: one stable summary (bench/run_all.py reads it).
    print(
        f"cluster: {added:+.1f} ms a dispatch beside the local pool (anchor {local / count * 1000:.1f} ms a dispatch), "
        f"budget +{BUDGET_MS:.0f} ms: {'met' if met else 'NOT met'} ({after})"
    )


if __name__ == "__main__":
    main()
