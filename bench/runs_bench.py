"""Run orchestration speed as the user waits for it: whole `workbench run` processes beside a bare loop of the
same agent command, measured in one sitting.

    .venv/bin/python bench/runs_bench.py [--pairs N] [--modes none,open,model,relayed] [--compare DIR] [--json]

The figure (issue 26, DESIGN.md section 7): orchestration per dispatch = (a whole `workbench run` process's wall
time - the bare loop's wall time) / dispatches, for 200 dispatches of an instant command agent at -j 4. The bare
loop, the anchor, is `xargs -P 4` starting the same command 200 times, 4 at a time, each fed the prompt on stdin as
the workbench feeds it. Budget: <= 10 ms a dispatch, sandboxed and not. The run and its anchor alternate (run,
loop, run, loop ...), each pair gives its own difference, and the median of the pairs is the figure: a machine
whose speed drifts moves both sides of a pair alike. The machine's load average is printed beside every figure.

Each sandboxed mode has a second row beside its first, with a second anchor from the same pairs: the same loop with
each command started in a bare bubblewrap of the same namespaces (the machine read-only, its own /proc, /dev,
/tmp). It splits the first figure: bubblewrap's own start and end (namespaces made and torn down by the kernel)
is the anchor's; what the second row gives is what the workbench adds beyond it (its mounts, bounds and relay).
The first row stays the figure the user meets.

Modes: --sandbox none; bubblewrap with the machine's network (--network open); bubblewrap with the confined network
and nothing to reach (--network model, no relay: the demo agent's case); the confined network relaying to a model
endpoint (every real agent's case). The bounds (cgroups, rlimits, the watch) are in force in every sandboxed mode.

Each measured workbench keeps its compiled modules in a private cache (-X pycache_prefix under the sitting's
folder, PYTHONDONTWRITEBYTECODE dropped), as an installed workbench has them; the warm-up run of each checkout fills
it. The cache is the workbench process's own: its agents get the environment the bare loop's commands get. Given to
them as PYTHONPYCACHEPREFIX (as this bench did until round 3 of issue 26), it named a folder the sandbox does not
show, so a sandboxed agent's Python compiled every module it imported from source at every turn: ~75 ms of CPU a
dispatch, the +25 -> +85 ms the bwrap row gained in one day, on every checkout alike.

--compare DIR: another checkout of the project (an earlier commit, say) run in the same sitting, its pairs
alternating with this one's, so a before and after are measured side by side.

Each measured run's workspace is kept until the sitting ends, then removed with it. This machine's ext4 has no
journal, and such a filesystem, allocating an inode, skips the ones freed in the last one or two minutes
(fs/ext4/ialloc.c, recently_deleted), looking each up on the way. Removed after each run, as this bench did until
round 10, the 12,500 files of a 200-dispatch workspace made the next run pay for its clean-up: ~+10 ms a
dispatch of kernel time, where the bare loop, which makes no file, paid nothing. The row "after removing a
previous run's workspace" measures that case on its own, as a user meets it who removes a workspace and runs
again at once.

Also printed: a second iteration with one line of the skill changed dispatches half the runs (the cache), and the
final table's cost for 5,000 dispatches (in process: rendering the summary, not a whole process).
The last line is `BENCH-RESULT <json>`, which bench/run_all.py reads.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DISPATCHES = 200  # 100 evals x (with_skill, without_skill)
JOBS = 4
FIXTURE = "fixtures/export-json/CHANGELOG.md"
BUDGET_MS = 10.0
INSTANT = (
    f"{sys.executable} -S -c \"import json;print(json.dumps({{'type':'result','result':'ok','session_id':'s',"
    f"'usage':{{'input_tokens':1}}}}))\""
)
MODES = {
    "none": ("--sandbox none", ["--sandbox", "none"], False),
    "open": ("--sandbox bwrap --network open", ["--sandbox", "bwrap", "--network", "open"], False),
    "model": ("--sandbox bwrap --network model, nothing to reach", ["--sandbox", "bwrap"], False),
    "relayed": ("--sandbox bwrap --network model, relayed", ["--sandbox", "bwrap"], True),
}


class CpuMeter:
    """The CPU time of a whole process tree, sandboxes included: a cpuacct cgroup of its own where one can be
    made (cgroup v1, as root: counts every process, whatever pid namespace it is in); else None. Steadier
    than wall time on a busy machine: it says the work done, not the wait for a core."""

    ROOT = Path("/sys/fs/cgroup/cpuacct")

    def __init__(self) -> None:
        self.folder: Path | None = None
        if os.access(self.ROOT, os.W_OK):
            self.folder = Path(tempfile.mkdtemp(prefix="runs-bench-", dir=self.ROOT))

    def argv(self, argv: list[str]) -> list[str]:
        if self.folder is None:
            return argv
        return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(self.folder), *argv]

    def seconds(self) -> float | None:
        if self.folder is None:
            return None
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


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def make_skill(tmp: Path) -> Path:
    skill = tmp / "skills" / "changelog-entry"
    shutil.copytree(ROOT / "demo" / "changelog-entry", skill)
    cases = [
        {"id": f"case-{i:03d}", "prompt": f"case {i}", "expected_output": "ok", "files": [FIXTURE]}
        for i in range(DISPATCHES // 2)
    ]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "changelog-entry", "evals": cases}))
    return skill


def bubblewrap(mode: str) -> list[str]:
    """A bare bubblewrap around each command of the second anchor of a sandboxed mode: the namespaces the
    workbench's sandbox makes (its network too, for model and relayed), the machine read-only, its own /proc,
    /dev and /tmp; none of the workbench's per-turn choices (what it shows, its bounds, its relay)."""
    from workbench.runs import sandbox

    args = ["bwrap", *sandbox.CONTAINMENT, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    return [*args, *(["--unshare-net"] if mode in ("model", "relayed") else []), "--"]


def bare_loop(tmp: Path, wrapper: list[str] | None = None) -> tuple[float, float | None]:
    """The anchor: the same command, the same number of times, 4 at a time, the prompt on its stdin; with a
    wrapper, each started inside it. (wall seconds, CPU seconds of the whole tree or None)"""
    script = f"printf 'case %s' \"$0\" | {' '.join(wrapper or [])} {INSTANT} > /dev/null"
    meter = CpuMeter()
    began = time.perf_counter()
    subprocess.run(
        meter.argv(["xargs", "-P", str(JOBS), "-n", "1", "sh", "-c", script]),
        input="\n".join(str(i) for i in range(DISPATCHES)) + "\n", text=True, check=True, cwd=tmp,
        env=agents_environment(),
    )  # fmt: skip
    return time.perf_counter() - began, meter.seconds()


def agents_environment() -> dict[str, str]:
    """The environment the agent command gets, on both sides of a pair: the bare loop's, and the measured
    workbench's (it passes its own to its agents). PYTHONDONTWRITEBYTECODE is dropped so that the workbench
    keeps its compiled modules (bytecode())."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def bytecode(tmp: Path) -> list[str]:
    """The interpreter's options for a measured workbench: it keeps its compiled modules, as an installed
    workbench has them (pip compiles them), in a private cache under the sitting's folder, so nothing is
    written into a checkout. Where PYTHONDONTWRITEBYTECODE is set (this project's machines set it), every run
    compiled the workbench's own ~100 modules from source again: ~0.8 s of CPU a run, 4 ms a dispatch that no
    user meets. An option, not PYTHONPYCACHEPREFIX: the variable would reach the agents, and inside the
    sandbox it names a folder they cannot see (the module's docstring)."""
    return [sys.executable, "-X", f"pycache_prefix={tmp / 'bytecode'}"]


def workbench_run(source: Path, skill: Path, tmp: Path, mode: str, workspace: Path, agent: str = INSTANT):
    """(argv, environment, cwd) of one measured `workbench run` of `source`: started from the checkout, so its
    own `workbench` package is the one imported (sys.path's first entry), with nothing added to the
    environment its agents inherit but the run's config folder."""
    _title, args, relayed = MODES[mode]
    config = tmp / ("config-relayed" if relayed else "config")
    config.mkdir(exist_ok=True)
    if relayed:  # an endpoint to reach, so the relay runs: the sandbox's first process bridges to it
        (config / "config.json").write_text(json.dumps({"network_allow": ["127.0.0.1:59999"]}))
    argv = [*bytecode(tmp), "-m", "workbench", "run", str(skill), "--executor", "command", "--agent-command", agent]
    argv += ["--baseline", "without_skill", "--judge", "demo", "-j", str(JOBS), "--trust", "--yes", *args]
    argv += ["--workspace", str(workspace)]
    return argv, {**agents_environment(), "WORKBENCH_CONFIG_DIR": str(config)}, source


def whole_run(source: Path, skill: Path, tmp: Path, mode: str, label: str) -> tuple[float, float | None]:
    """One whole `workbench run` process into a fresh workspace, checked: every dispatch done.
    (wall seconds, CPU seconds of the whole tree or None)"""
    workspace = Path(tempfile.mkdtemp(prefix=f"ws-{label}-{mode}-", dir=tmp))
    shutil.rmtree(workspace)
    argv, env, cwd = workbench_run(source, skill, tmp, mode, workspace)
    meter = CpuMeter()
    began = time.perf_counter()
    done = subprocess.run(meter.argv(argv), capture_output=True, text=True, env=env, cwd=cwd)
    taken = time.perf_counter() - began
    cpu = meter.seconds()
    records = [json.loads(p.read_text()) for p in workspace.glob("iteration-1/*/*/run-*/run.json")]
    if done.returncode not in (0, 1) or len(records) != DISPATCHES or any(r["status"] != "done" for r in records):
        raise SystemExit(
            f"runs_bench: the {mode} run of {source} did not finish its dispatches:\n{done.stderr[-3000:]}"
        )
    return taken, cpu  # the workspace stays until the sitting ends (the module's docstring)


def orchestration(sources: dict[str, Path], modes: list[str], pairs: int, tmp: Path) -> list[dict]:
    """For each source and mode: `pairs` pairs (the run, then the bare loop), alternating between sources and
    modes round by round; the median of each pair's (run - loop) / dispatches."""
    skill = make_skill(tmp)
    seconds: dict[tuple[str, str], list[tuple[float, float]]] = {(s, m): [] for s in sources for m in modes}
    cpus: dict[tuple[str, str], list[float]] = {(s, m): [] for s in sources for m in modes}
    loads: list[float] = []
    for source in sources.values():  # caches warmed (the bytecode of each checkout among them), not counted
        whole_run(source, skill, tmp, modes[0], "warm-up")
    bare_loop(tmp)
    boxed: dict[tuple[str, str], list[tuple[float, float]]] = {k: [] for k in seconds if k[1] != "none"}
    for _round in range(pairs):
        for mode in modes:
            for label, source in sources.items():
                ran, ran_cpu = whole_run(source, skill, tmp, mode, label)
                loop, loop_cpu = bare_loop(tmp)
                seconds[(label, mode)].append((ran, loop))
                if mode != "none":  # the second anchor: what bubblewrap's own start costs, without the workbench
                    boxed[(label, mode)].append((ran, bare_loop(tmp, bubblewrap(mode))[0]))
                if ran_cpu is not None and loop_cpu is not None:
                    cpus[(label, mode)].append((ran_cpu - loop_cpu) / DISPATCHES * 1000)
                loads.append(os.getloadavg()[0])
    rows = []
    for (label, mode), measured in seconds.items():
        per = statistics.median((ran - loop) / DISPATCHES * 1000 for ran, loop in measured)
        rows.append(
            {
                "figure": f"orchestration per dispatch, {MODES[mode][0]}" + (f" ({label})" if len(sources) > 1 else ""),
                "value": round(per, 1),
                "unit": "ms",
                "anchor": f"xargs -P {JOBS} loop of the same command: {statistics.median(m[1] for m in measured):.2f} s"
                f" for {DISPATCHES}",
                "whole": f"workbench run: {statistics.median(m[0] for m in measured):.2f} s"
                f" (median of {len(measured)})",
                "budget": f"<= {BUDGET_MS:g} ms",
                "ok": per <= BUDGET_MS,
                "cpu": round(statistics.median(cpus[(label, mode)]), 1) if cpus[(label, mode)] else None,
                "load": round(statistics.median(loads), 2),
            }
        )
        if boxed.get((label, mode)):
            inside = boxed[(label, mode)]
            beyond = statistics.median((ran - loop) / DISPATCHES * 1000 for ran, loop in inside)
            rows.append(
                {
                    "figure": f"  the same, beyond the command in a bare bubblewrap, {MODES[mode][0]}"
                    + (f" ({label})" if len(sources) > 1 else ""),
                    "value": round(beyond, 1),
                    "unit": "ms",
                    "anchor": f"xargs -P {JOBS} loop, each command in bubblewrap (its namespaces, / read-only): "
                    f"{statistics.median(m[1] for m in inside):.2f} s for {DISPATCHES}",
                    "whole": f"workbench run: {statistics.median(m[0] for m in inside):.2f} s",
                    "budget": f"<= {BUDGET_MS:g} ms",
                    "ok": beyond <= BUDGET_MS,
                    "cpu": None,
                    "load": round(statistics.median(loads), 2),
                }
            )
    return rows


def after_removal(source: Path, tmp: Path) -> dict:
    """One pair for --sandbox none begun right after removing a workspace of this sitting (a 200-dispatch run's
    files): what a user meets who removes a workspace and runs again at once (the module's docstring)."""
    skill = tmp / "skills" / "changelog-entry"
    if not skill.is_dir():
        skill = make_skill(tmp)
    kept = sorted(tmp.glob("ws-*")) or [None]
    if kept[0] is None:  # none kept yet (no pair was measured): one made to be removed
        whole_run(source, skill, tmp, "none", "removed")
        kept = sorted(tmp.glob("ws-*"))
    shutil.rmtree(kept[0])
    ran, _ = whole_run(source, skill, tmp, "none", "after-removal")
    loop, _ = bare_loop(tmp)
    return {
        "figure": "  the same, right after removing a previous run's workspace, --sandbox none (one pair)",
        "value": round((ran - loop) / DISPATCHES * 1000, 1),
        "unit": "ms",
        "anchor": f"xargs -P {JOBS} loop of the same command: {loop:.2f} s for {DISPATCHES}",
        "whole": f"workbench run: {ran:.2f} s",
        "budget": "none: the filesystem's cost of the removal (the bench's docstring)",
        "ok": None,
        "load": round(os.getloadavg()[0], 2),
    }


def table_cost() -> dict:
    """The final table of a 5,000-dispatch run, rendered to a file-like console (in process)."""
    import io

    from rich.console import Console

    cli_run = importlib.import_module("workbench.cli.run")
    from workbench.runs.cases import RunCase
    from workbench.runs.runner import DONE, Dispatch

    with tempfile.TemporaryDirectory() as tmp:
        dispatches = []
        for i in range(2500):
            for configuration in ("with_skill", "without_skill"):
                folder = Path(tmp) / f"eval-{i}" / configuration / "run-1"
                folder.mkdir(parents=True)
                (folder / "run.json").write_text(json.dumps({"status": DONE, "turns": 1, "cost_usd": 0.01}))
                (folder / "timing.json").write_text(json.dumps({"total_tokens": 12, "total_duration_seconds": 0.1}))
                case = RunCase(id=f"case-{i:04d}", eval_id=f"case-{i:04d}", name="", prompt="p")
                dispatches.append(Dispatch(case, configuration, 1, None, folder, status=DONE))
        console = Console(file=io.StringIO(), width=120)
        began, cpu = time.perf_counter(), time.process_time()
        cli_run.print_summary(console, dispatches)
        taken, used = time.perf_counter() - began, time.process_time() - cpu
    return {
        "figure": "final table of 5,000 dispatches, CPU (in process)",
        "value": round(used * 1000),
        "unit": "ms",
        "anchor": f"rich's table: ~1 ms of CPU a row, 5,000 ms (issue 26); wall here {taken * 1000:.0f} ms",
        "budget": "<= 500 ms",
        "ok": used <= 0.5,
        "load": round(os.getloadavg()[0], 2),
    }


def cache_halves(tmp: Path) -> dict:
    """A second iteration with the skill changed: the without_skill half is reused, not dispatched again."""
    import asyncio

    from workbench.runs import executors
    from workbench.runs.launch import prepare_launch, run_launch
    from workbench.runs.runner import DONE, REUSED, RunOptions

    skill = make_skill(tmp / "cache")
    executor = executors.make("command", INSTANT)
    options = RunOptions(jobs=JOBS, timeout=60)
    asyncio.run(run_launch(prepare_launch(skill, executor, options), executor, options))
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nOne more line.\n")
    second = prepare_launch(skill, executor, options)
    asyncio.run(run_launch(second, executor, options))
    ran = sum(d.status == DONE for d in second.dispatches)
    reused = sum(d.status == REUSED for d in second.dispatches)
    return {
        "figure": "second iteration, skill changed: dispatched",
        "value": ran,
        "unit": f"of {len(second.dispatches)} ({reused} reused)",
        "anchor": f"half dispatched ({len(second.dispatches) // 2})",
        "budget": f"<= {len(second.dispatches) // 2}",
        "ok": ran <= len(second.dispatches) // 2,
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3, help="pairs (run, bare loop) per mode (default 3)")
    parser.add_argument("--modes", default="none,open,model,relayed", help="of: " + ", ".join(MODES))
    parser.add_argument("--compare", type=Path, help="another checkout, measured in the same sitting")
    parser.add_argument("--json", action="store_true", help="print only the BENCH-RESULT line")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from workbench.runs import sandbox

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"--modes: {unknown[0]} is not one of {', '.join(MODES)}")
    why = sandbox.unavailable()
    skipped = [m for m in modes if m != "none"] if why else []
    modes = [m for m in modes if m not in skipped]
    sources = {"this": ROOT, **({"compared": args.compare.resolve()} if args.compare else {})}
    say = (lambda *_: None) if args.json else print
    say(f"workbench run: whole processes beside a bare loop, {DISPATCHES} instant dispatches at -j {JOBS} ({load()})")
    with tempfile.TemporaryDirectory(prefix="runs-bench-") as tmp:
        rows = orchestration(sources, modes, args.pairs, Path(tmp))
        for row in rows:
            say(f"  {row['figure']:62s} {row['value']:+7.1f} ms   budget {row['budget']}   load {row['load']}")
            cpu = f"; CPU of the whole tree beyond the loop's: {row['cpu']:+.1f} ms a dispatch" if row["cpu"] else ""
            say(f"      {row['whole']}; anchor: {row['anchor']}{cpu}")
        if "none" in modes:
            rows.append(after_removal(ROOT, Path(tmp)))
            say(f"  {rows[-1]['figure']} {rows[-1]['value']:+7.1f} ms   load {rows[-1]['load']}")
            say(f"      {rows[-1]['whole']}; anchor: {rows[-1]['anchor']}")
        for mode in skipped:
            say(f"  {MODES[mode][0]}: not measured ({why})")
        rows.append(cache_halves(Path(tmp)))
        say(f"  {rows[-1]['figure']}: {rows[-1]['value']} {rows[-1]['unit']}   anchor: {rows[-1]['anchor']}")
    rows.append(table_cost())
    say(f"  {rows[-1]['figure']}: {rows[-1]['value']} ms   budget {rows[-1]['budget']}   anchor: {rows[-1]['anchor']}")
    print("BENCH-RESULT " + json.dumps({"bench": "runs", "rows": rows, "load": load()}))


if __name__ == "__main__":
    main()
