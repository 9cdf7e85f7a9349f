"""benchmark.json and benchmark.md of an iteration, in seed 003's shape, read by
skill-creator's viewer: runs[] with `configuration` and a nested `result`,
run_summary with mean/stddev/min/max per configuration, and `delta` as new
minus baseline whatever the names sort as. runs_per_configuration is counted.
An eval whose repeats disagree is marked flaky. Zero graded runs is an error."""

from __future__ import annotations

import math
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import orjson

from workbench.errors import WorkbenchError
from workbench.formats.configurations import CONFIGURATION_PAIRS
from workbench.formats.gc_pause import gc_paused
from workbench.formats.money import money
from workbench.formats.record import Record
from workbench.formats.regular import TooBig, read_object, read_regular
from workbench.grading.artifact import write_artifact
from workbench.grading.grading_file import read_grading, shape_problem, syntax_problem, unusable
from workbench.runs.cost import dollars
from workbench.runs.stopped import said_of
from workbench.workspace import layout

TYPE_CHECKING = False  # not typing's: a report starts faster without importing it
if TYPE_CHECKING:
    from typing import Any

ORDER = ("with_skill", "new_skill", "without_skill", "old_skill")


class NoGradedRuns(WorkbenchError):
    """An iteration without a single graded run has nothing to benchmark."""


class RunResult(Record):
    """One graded run, as aggregation needs it."""

    def __init__(
        self, eval_id: object, eval_name: str, configuration: str, run_number: int, grading: dict, folder: str = ""
    ) -> None:
        self.eval_id = eval_id
        self.eval_name = eval_name
        self.configuration = configuration
        self.run_number = run_number
        self.grading = grading
        self.folder = folder

    @property
    def expectations(self) -> list[dict]:
        return self.grading.get("expectations", [])


def stats(values: list[float]) -> dict:
    """mean, sample stddev, min, max, as skill-creator's aggregator reports them."""
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    mean = sum(values) / len(values)
    stddev = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return {
        "mean": round(mean, 4),
        "stddev": round(stddev, 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def read_results(
    iteration: Path, prompts: dict[str, str] | None = None, list_all: bool = False, plan_said: dict | None = None
) -> list[RunResult]:
    """Every graded run of an iteration. grading.json names its run (eval_id,
    configuration, run_number), so one file per run is read; run.json only for
    gradings written without those names. `prompts`, when given, gets each eval
    folder's prompt (benchmark.json keeps them for the report). The run folders
    are those planned_runs() finds without listing folders (list_all: by listing
    every folder, as layout.runs). `plan_said`, when given, gets plan.json's `stopped` (_planned)."""
    out = []
    names: dict[str, str] = {}
    asserted: dict[str, int] = {}
    ids: dict[str, object] = {}
    said: dict = {} if plan_said is None else plan_said
    planned, plan_problem = _planned(iteration, said)
    if plan_problem:  # an unreadable plan cannot say which runs are missing: that is an error itself
        out.append(RunResult("plan.json", "plan.json", "with_skill", 0, unusable(plan_problem), layout.PLAN))
    # Joined by hand: os.path.join three times a run costs a tenth of reading the run's two files.
    grading_name, record_name, base = f"/{layout.GRADING}", f"/{layout.RUN_RECORD}", f"{os.fspath(iteration)}/"
    for run in layout.runs(iteration) if list_all else planned_runs(iteration, planned):
        # Every run counts: one whose grading is missing or unusable is an error of
        # that run (skipping it would leave only the runs that passed to count).
        path, eval_folder, relative = run.path, run.eval_folder, run.relative
        grading = read_grading(path + grading_name)
        if grading.get("unusable") and not list_all and not os.path.isdir(path):
            # a planned run's folder is gone, so the link counts that stood for a listing left out
            # a folder of the same number that is there: list them all
            return read_results(iteration, prompts, list_all=True, plan_said=plan_said)
        if planned.pop(relative, None) is not None:
            # A run of ours counts only with the record that says it finished, whatever its grading says.
            problem = record_problem(path + record_name, grading)
            if problem:
                grading = unusable(problem)
        if eval_folder not in names:
            metadata = read_object(f"{base}{eval_folder}/{layout.EVAL_METADATA}")
            names[eval_folder] = str(metadata.get("eval_name", "")) or eval_folder
            if prompts is not None:
                prompts[eval_folder] = prompt_of(metadata)
            listed = metadata.get("assertions")
            asserted[eval_folder] = len(listed) if isinstance(listed, list) else 0
            # skill-creator names its eval folders freely (eval-<descriptive name>): its id is in the metadata
            given = metadata.get("eval_id")
            ids[eval_folder] = given if isinstance(given, (int, str)) and not isinstance(given, bool) else None
        if not grading.get("unusable") and not grading["expectations"] and asserted[eval_folder]:
            # A grading with nothing in it would count as no failure at all.
            grading = unusable(
                f"{os.path.join(path, layout.GRADING)}: no expectations, but its eval has "
                f"{asserted[eval_folder]} assertion(s); expected a verdict for each"
            )
        if grading.get("eval_id") is None:
            # run.json names the run; with none (killed early, or skill-creator's), eval_metadata.json or the folder
            record = read_object(os.path.join(path, layout.RUN_RECORD))
            fallback = ids[eval_folder]
            grading["eval_id"] = record.get("eval_id", run.case_id if fallback is None else fallback)
            grading["run_number"] = record.get("run_number", run.number)
        number = grading.get("run_number") or run.number
        out.append(RunResult(grading["eval_id"], names[eval_folder], run.configuration, int(number), grading, relative))
    stopped = said_of(said[STOPPED]) if planned else None
    for folder, (eval_id, configuration, number) in planned.items():  # planned, never started
        name = str(
            read_object(os.path.join(iteration, folder.split("/")[0], layout.EVAL_METADATA)).get("eval_name", "")
        )
        why = f"not run: {stopped}; run the same command with a higher limit to finish it" if stopped else _UNFINISHED
        grading = unusable(f"{os.path.join(iteration, folder)}: {why}")
        out.append(RunResult(eval_id, name or folder.split("/")[0], configuration, number, grading, folder))
    return out


def planned_runs(iteration: Path, planned: dict[str, tuple[Any, str, int]]) -> list[layout.RunFolder]:
    """layout.runs(iteration), in its order, listing only the folders that may hold more than the
    plan's runs. A folder's link count is 2 plus its subfolders (ext4, xfs, tmpfs; another file
    system says 1, never a match): a folder with as many subfolders as the plan has there, each of
    them there, holds exactly those, and is not listed. Listing the eval and configuration folders
    of 10,000 runs costs a tenth of their report. A planned run's own folder is not checked here:
    read_results lists everything when one is gone. Without a plan, every folder is listed. A link
    to a folder is no subfolder in a link count: one put by hand beside a folder's planned runs,
    where the runs are all there, is not seen (a listing would read it as a run)."""
    tree: dict[str, dict[str, list[str]]] = {}
    for folder in planned:
        parts = folder.split("/")
        if len(parts) != 3 or not parts[0].startswith(layout.EVAL_PREFIX) or not parts[2].startswith(layout.RUN_PREFIX):
            return layout.runs(iteration)
        tree.setdefault(parts[0], {}).setdefault(parts[1], []).append(parts[2])
    if not tree or _subfolders(str(iteration)) != len(tree):
        return layout.runs(iteration)
    out: list[layout.RunFolder] = []
    for eval_folder in sorted(tree):
        configurations = tree[eval_folder]
        eval_path = os.path.join(iteration, eval_folder)  # as layout.runs joins it
        held = _subfolders(eval_path)
        if held < 0:
            return layout.runs(iteration)  # a planned eval folder is gone: another may stand in its count
        counts = {c: _subfolders(f"{eval_path}/{c}") for c in configurations}
        if held != len(configurations) or min(counts.values()) < 0:
            out += layout.runs(iteration, eval_folder)
            continue
        for configuration in sorted(configurations):
            base = f"{eval_path}/{configuration}"
            names = configurations[configuration]
            if counts[configuration] != len(names):
                out += _listed(base, eval_folder, configuration)
                continue
            numbered = sorted((layout.run_number(name), name) for name in names)
            out += [layout.RunFolder(f"{base}/{name}", eval_folder, configuration, k) for k, name in numbered]
    return out


def _listed(base: str, eval_folder: str, configuration: str) -> list[layout.RunFolder]:
    """The runs of one configuration folder, listed, as layout.runs finds them."""
    numbered = sorted((layout.run_number(run), run) for run in layout.folders(base, layout.RUN_PREFIX))
    if not numbered and (os.path.isdir(f"{base}/{layout.OUTPUTS}") or os.path.lexists(f"{base}/{layout.GRADING}")):
        return [layout.RunFolder(base, eval_folder, configuration, 1, flat=True)]
    return [layout.RunFolder(f"{base}/{run}", eval_folder, configuration, k) for k, run in numbered]


def _subfolders(path: str) -> int:
    """How many subfolders the folder's link count says it has; -1 when it is not there."""
    try:
        return os.stat(path).st_nlink - 2
    except OSError:
        return -1


def prompt_of(metadata: dict) -> str:
    """An eval's prompt as its eval_metadata.json has it (ours and skill-creator's write one), or ''."""
    prompt = metadata.get("prompt")
    return prompt if isinstance(prompt, str) else ""


def record_problem(path: str, grading: dict) -> str | None:
    """What keeps a planned run's run.json from saying it finished, or None: none (the run was
    stopped), not a regular file, cut short or not JSON, not a finished run's record, or the record
    of another run than the one its grading.json graded."""
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return f"{os.path.dirname(path)}: {_UNFINISHED}"
    except OSError as exc:
        return f"{path}: cannot be read: {exc.strerror or exc}; expected the run's record"
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return f"{syntax_problem(path)}; expected the run's record: {_AGAIN}"
    if not isinstance(record, dict) or record.get("status") not in FINISHED:
        said = f"status {record.get('status')!r}" if isinstance(record, dict) else "not an object"
        return f"{path}: {said}; expected the record of a finished run (status done or failed): {_AGAIN}"
    key = grading.get("run_key")
    if key is not None and key != record.get("key"):
        return (
            f"{os.path.join(os.path.dirname(path), layout.GRADING)}: the grading of another run than the one "
            f"{layout.RUN_RECORD} records (its run_key differs): grade the iteration again"
        )
    return None


FINISHED = ("done", "failed")  # what a finished run's record says (runs/runner.py)
_AGAIN = "run the same command again to run it anew"


STOPPED = "stopped"  # plan.json's word for why runs were left unstarted (runs/stopped.py)
_UNFINISHED = "planned in plan.json but not finished (the run was stopped): run the same command again to finish it"


def _planned(iteration: Path, plan_said: dict | None = None) -> tuple[dict[str, tuple[Any, str, int]], str | None]:
    """The runs plan.json says the iteration has (an iteration of ours: skill-creator's have no plan):
    folder -> (eval id, configuration, run number); and what is wrong with a plan.json that is there
    but cannot be read (a run it planned could be missing unseen). plan_said, when given, gets the
    plan's `stopped` (None without one): a report says it, and reads the plan once."""
    out: dict[str, tuple[Any, str, int]] = {}
    path = os.path.join(iteration, layout.PLAN)
    plan = read_object(path)
    if plan_said is not None:
        plan_said[STOPPED] = plan.get(STOPPED)
    if not isinstance(plan.get("dispatches"), list):
        if os.path.lexists(path):
            return out, f"{path}: unreadable or not a plan (no list of dispatches); expected the plan the run wrote"
        return out, None
    for item in plan["dispatches"]:
        try:
            configuration, number = item["configuration"], int(item["run_number"])
            if isinstance(configuration, str) and configuration.isidentifier():  # as run_dir makes it, without Paths
                eval_folder = layout.EVAL_PREFIX + layout.encode_id(str(item["eval_id"]))
                folder = f"{eval_folder}/{configuration}/{layout.RUN_PREFIX}{number}"
            else:
                folder = layout.run_dir(Path(), str(item["eval_id"]), configuration, number).as_posix()
        except (KeyError, TypeError, ValueError):
            continue
        out[folder] = (item["eval_id"], configuration, number)
    return out, None


# benchmark.json grows with the runs (about 1.6 KB each): the 64 MB every other file is read up to
# is 43,000 runs. Past this, the gradings are read instead, and the report says so.
BENCHMARK_LIMIT = 512 * 1024 * 1024
# benchmark.json's record of the folders it was aggregated from: relative path -> [modification
# time (ns), runs under it], for each eval folder and each configuration folder. A folder added
# or removed since changes its parent's time: no listing of every folder is needed to know it.
FOLDERS = "folders"
COMPACT_FROM = 5_000  # runs: benchmark.json is written without indentation from this many
# benchmark.json's eval folder -> that eval's prompt, as eval_metadata.json had it when aggregated:
# a report reads no file per eval (its eval names come from benchmark.json just the same).
PROMPTS = "prompts"


class Cache(Record):
    """What benchmark.json gives a report: the runs (None: read the gradings), its metadata, and a
    note when it is there but could not be used for a reason the person should hear."""

    def __init__(
        self,
        results: list[RunResult] | None = None,
        metadata: dict | None = None,
        note: str = "",
        prompts: dict[str, str] | None = None,  # eval folder -> prompt, with the results (None: read them)
    ) -> None:
        self.results = results
        self.metadata = metadata
        self.note = note
        self.prompts = prompts


def results_from_benchmark(iteration: Path) -> list[RunResult] | None:
    """The graded runs as an up-to-date benchmark.json has them (benchmark_cache), or None."""
    return benchmark_cache(iteration).results


def benchmark_cache(iteration: Path, plan_said: dict | None = None) -> Cache:
    """The graded runs as benchmark.json has them, when it is newer than every
    grading.json and covers them all (one 12 MB read instead of 10,000 files);
    no runs when it is missing or stale. Newer by the change time too: a grading
    edited after it, with its modification time set back, is not older. A planned
    run's run.json too must be there and older: benchmark.json was aggregated
    with it as it is (read_results checked it), so a record removed, cut or
    replaced since is read again, and is an error. Covering them all: its
    eval and configuration folders are those of the iteration, each with the
    time it had when they were listed, and holding the runs benchmark.json lists.
    `plan_said`, when given, gets plan.json's `stopped` if the plan was read (_planned)."""
    path = os.path.join(iteration, layout.BENCHMARK)
    try:
        info = os.stat(path)
        written, changed = info.st_mtime_ns, info.st_ctime_ns
        if os.stat(os.path.join(iteration, layout.PLAN)).st_mtime_ns > written:
            return Cache()  # a launch began after it was written (and may have been stopped): the runs say
    except FileNotFoundError as exc:
        if exc.filename == path:
            return Cache()
    except OSError:
        return Cache()
    planned, problem = _planned(iteration, plan_said)
    if problem:
        return Cache()  # the gradings and the plan's problem say what is wrong
    try:
        data = orjson.loads(read_regular(path, BENCHMARK_LIMIT))
    except TooBig:
        size = info.st_size / (1024 * 1024)
        return Cache(
            note=f"{path}: {size:,.0f} MB, over the {BENCHMARK_LIMIT // (1024 * 1024):,} MB read at once: "
            "every run's grading.json was read instead"
        )
    except (OSError, ValueError):
        return Cache()
    if not isinstance(data, dict):
        return Cache()
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else None
    runs = data.get("runs")
    if not isinstance(runs, list) or not all(isinstance(run, dict) and "folder" in run for run in runs):
        return Cache(metadata=metadata)
    if not _unchanged(iteration, data.get(FOLDERS), runs, changed):
        return Cache(metadata=metadata)
    base = f"{iteration}/"  # joined by hand: os.path.join 20,000 times costs more than the stats
    both, alone = (f"/{layout.GRADING}", f"/{layout.RUN_RECORD}"), (f"/{layout.GRADING}",)
    regular = stat.S_ISREG
    for run in runs:
        folder = str(run["folder"])
        for name in both if folder in planned else alone:
            try:
                info = os.stat(base + folder + name)
            except OSError:
                return Cache(metadata=metadata)  # gone since (or never there): the gradings and records say
            if info.st_mtime_ns > written or info.st_ctime_ns > changed or not regular(info.st_mode):
                return Cache(metadata=metadata)
    prompts = data.get(PROMPTS)
    if not (isinstance(prompts, dict) and all(isinstance(p, str) for p in prompts.values())):
        prompts = None  # written before they were kept, or of another shape: each eval_metadata.json says
    try:
        return Cache(_results_of(data, runs), metadata, prompts=prompts)
    except (AttributeError, KeyError, TypeError, ValueError):
        return Cache(metadata=metadata)  # a benchmark.json of another shape: the gradings say it exactly


def folder_times(iteration: Path) -> dict[str, list[int]]:
    """Each eval and configuration folder of the iteration -> [its modification time, 0]; taken
    before the runs are listed, so a folder that changes while they are read is seen as changed."""
    times: dict[str, list[int]] = {}
    for name in layout.eval_folders(iteration):
        for folder in [name] + [f"{name}/{c}" for c in layout.folders(os.path.join(iteration, name), "")]:
            try:
                times[folder] = [os.stat(os.path.join(iteration, folder)).st_mtime_ns, 0]
            except OSError:
                continue  # gone: the listing that follows does not see it either
    return times


def count_runs(times: dict[str, list[int]], folders: list[str]) -> dict[str, list[int]]:
    """folder_times with the runs under each folder counted (a run never started counts where its
    folder would be: benchmark_cache counts it so too, and finds its grading missing)."""
    for key, count in _counts(folders).items():
        if key in times:
            times[key][1] = count
    return times


def _counts(folders: list[str]) -> dict[str, int]:
    """eval folder and eval/configuration folder -> how many of these run folders are under it."""
    counted: dict[str, int] = {}
    for folder in folders:
        eval_folder, slash, rest = folder.partition("/")
        counted[eval_folder] = counted.get(eval_folder, 0) + 1
        if slash:
            configuration = f"{eval_folder}/{rest.partition('/')[0]}"
            counted[configuration] = counted.get(configuration, 0) + 1
    return counted


def _unchanged(iteration: Path, recorded: object, runs: list, changed: int) -> bool:
    """Whether the eval and configuration folders are those benchmark.json was aggregated from,
    untouched since (their times as recorded, changed no later than it) and holding its runs."""
    if not isinstance(recorded, dict):
        return False
    if {name for name in recorded if "/" not in name} != set(layout.eval_folders(iteration)):
        return False  # an eval folder added or removed
    counted = _counts([str(run["folder"]) for run in runs])
    base = f"{iteration}/"
    for folder, entry in recorded.items():
        if not (isinstance(entry, list) and len(entry) == 2) or counted.get(folder, 0) != entry[1]:
            return False
        try:
            info = os.stat(base + folder)
        except (OSError, ValueError):
            return False
        if info.st_mtime_ns != entry[0] or info.st_ctime_ns > changed:
            return False
    return all(key in recorded for key in counted)


def _results_of(data: dict, runs: list) -> list[RunResult] | None:
    """The runs of benchmark.json as RunResults. Each entry is let go once read (runs[i] = None):
    at 50,000 runs the parsed file is hundreds of MB, and the results need only its expectations."""
    judge = str((data.get("metadata") or {}).get("analyzer_model", ""))
    out = []
    for index, run in enumerate(runs):
        runs[index] = None
        result = run.get("result", {})
        grading = {
            "expectations": run.get("expectations", []),
            "summary": {
                "passed": result.get("passed", 0),
                "failed": result.get("failed", 0),
                "total": result.get("total", 0),
                "pass_rate": result.get("pass_rate", 0),
            },
            "timing": {
                "executor_duration_seconds": result.get("time_seconds", 0.0),
                "total_tokens": result.get("tokens", 0),
            },
            "execution_metrics": {
                "total_tool_calls": result.get("tool_calls", 0),
                "errors_encountered": result.get("errors", 0),
                "cost_usd": result.get("cost_usd"),
            },
            "judge": judge,
            "judge_cost_usd": result.get("judge_cost_usd"),
        }
        if "skill_invoked" in run:
            grading["triggering"] = {"invoked": run["skill_invoked"]}
            if isinstance(run.get("skill_should_trigger"), bool):
                grading["triggering"]["should_trigger"] = run["skill_should_trigger"]
        if shape_problem(grading):
            return None
        if run.get("run_error"):
            grading["run_error"] = run["run_error"]
        if run.get("grading_unusable"):
            grading["unusable"] = True
        out.append(
            RunResult(
                run.get("eval_id"),
                str(run.get("eval_name", "")),
                str(run.get("configuration")),
                int(run.get("run_number", 1)),
                grading,
                str(run["folder"]),
            )
        )
    return out


def _pair(configurations: set[str]) -> tuple[str, str] | None:
    return next(
        ((new, base) for new, base in CONFIGURATION_PAIRS if new in configurations and base in configurations),
        None,
    )


def run_pass_rate(summary: dict) -> float | None:
    """A run's pass rate: passed / total of its assertions; None for a run with no
    assertion, which has nothing to count in a mean (docs/grading.md)."""
    total = summary.get("total") or 0
    if not total:
        return None
    return (summary.get("passed") or 0) / total


def tally(counts: dict[str, list], expectations: list[dict]) -> list[tuple[str, dict]]:
    """Add a run's verdicts to k passed of N per assertion (id -> [k, N, text]);
    returns the failed ones as (id, expectation)."""
    failed = []
    for index, e in enumerate(expectations):
        name = str(e.get("id") or index)
        count = counts.get(name)
        if count is None:  # not setdefault: it would build a list for every verdict
            count = counts[name] = [0, 0, e.get("text", "")]
        count[1] += 1
        if e.get("passed"):
            count[0] += 1
        else:
            failed.append((name, e))
    return failed


def disagreeing(counts: dict[str, list]) -> list[str]:
    """The assertions that passed in some repeats and failed in others: what makes an eval flaky."""
    return sorted(name for name, (k, n, _text) in counts.items() if 0 < k < n)


def flaky(results: list[RunResult]) -> dict[tuple[str, str], list[str]]:
    """(eval id, configuration) -> the assertions whose repeats disagree."""
    per: dict[tuple[str, str], dict[str, list]] = {}
    for r in results:
        tally(per.setdefault((str(r.eval_id), r.configuration), {}), r.expectations)
    return {key: names for key, counts in per.items() if (names := disagreeing(counts))}


def aggregate(results: list[RunResult], metadata: dict) -> dict:
    if not results:
        raise NoGradedRuns("this iteration has no graded runs; run `workbench grade` on it (or run it) first")
    unstable = flaky(results)
    counts: dict[tuple[str, str], int] = {}
    runs = []
    for r in results:
        summary = r.grading.get("summary", {})
        timing = r.grading.get("timing", {})
        metrics = r.grading.get("execution_metrics", {})
        key = (str(r.eval_id), r.configuration)
        counts[key] = counts.get(key, 0) + 1
        result = {
            "pass_rate": summary.get("pass_rate", 0.0),
            "passed": summary.get("passed", 0),
            "failed": summary.get("failed", 0),
            "total": summary.get("total", 0),
            "time_seconds": timing.get("executor_duration_seconds", timing.get("total_duration_seconds", 0.0)),
            "tokens": timing.get("total_tokens", 0),
            "tool_calls": metrics.get("total_tool_calls", 0),
            "errors": metrics.get("errors_encountered", 0),
        }
        # Dollars, when known: the agent's (its metrics) and the judge's (the grading), apart.
        for name, value in (("cost_usd", metrics.get("cost_usd")), ("judge_cost_usd", r.grading.get("judge_cost_usd"))):
            if isinstance(value, (int, float)) and _dollars(value):
                result[name] = round(float(value), 6)
        run: dict[str, Any] = {
            "eval_id": r.eval_id,
            "eval_name": r.eval_name,
            "configuration": r.configuration,
            "run_number": r.run_number,
            "result": result,
            # text, passed, evidence as the viewer reads them; id, kind and error for our Results screen
            "expectations": [
                {
                    "text": e["text"],
                    "passed": e["passed"],
                    "evidence": e.get("evidence", ""),
                    **{k: e[k] for k in ("id", "kind", "error") if k in e},
                }
                for e in r.expectations
            ],
            "notes": _run_notes(r.grading),
            "folder": r.folder,
        }
        if r.grading.get("run_error"):
            run["run_error"] = r.grading["run_error"]
        if r.grading.get("unusable"):
            run["grading_unusable"] = True
        if "triggering" in r.grading:
            run["skill_invoked"] = r.grading["triggering"]["invoked"]
            if isinstance(r.grading["triggering"].get("should_trigger"), bool):  # the suite said; kept for Results
                run["skill_should_trigger"] = r.grading["triggering"]["should_trigger"]
        if key in unstable:
            run["flaky"] = True
        runs.append(run)
    configurations = sorted(
        {r.configuration for r in results}, key=lambda c: (ORDER.index(c) if c in ORDER else len(ORDER), c)
    )
    run_summary: dict = {}
    for configuration in configurations:
        mine = [run for run in runs if run["configuration"] == configuration]
        entry = {
            "pass_rate": stats([run["result"]["pass_rate"] for run in mine if run["result"]["total"]]),
            "time_seconds": stats([run["result"]["time_seconds"] for run in mine]),
            "tokens": stats([run["result"]["tokens"] for run in mine]),
        }
        spent = [run["result"]["cost_usd"] for run in mine if "cost_usd" in run["result"]]
        if spent:
            entry["cost_usd"] = {**stats(spent), "total": round(sum(spent), 6), "unknown": len(mine) - len(spent)}
        invoked = [run["skill_invoked"] for run in mine if "skill_invoked" in run]
        if invoked:
            entry["invocation_rate"] = stats([float(v) for v in invoked])
        run_summary[configuration] = entry
    pair = _pair(set(configurations))
    if pair:
        new, base = run_summary[pair[0]], run_summary[pair[1]]
        run_summary["delta"] = {
            "pass_rate": f"{new['pass_rate']['mean'] - base['pass_rate']['mean']:+.2f}",
            "time_seconds": f"{new['time_seconds']['mean'] - base['time_seconds']['mean']:+.1f}",
            "tokens": f"{new['tokens']['mean'] - base['tokens']['mean']:+.0f}",
        }
        if "cost_usd" in new and "cost_usd" in base:
            run_summary["delta"]["cost_usd"] = f"{new['cost_usd']['mean'] - base['cost_usd']['mean']:+.4f}"
    evals_run = list(dict.fromkeys(r.eval_id for r in results))
    return {
        "metadata": {
            **metadata,
            "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "evals_run": evals_run,
            "runs_per_configuration": max(counts.values()),
            "cost_usd": iteration_cost(runs),
        },
        "runs": runs,
        "run_summary": run_summary,
        "notes": _notes(results, runs, unstable, pair, metadata),
    }


def _dollars(value: Any) -> bool:
    return dollars(value) is not None


def iteration_cost(runs: list[dict]) -> dict:
    """The iteration's cost: its agents', its judge's, both; and how many runs did not say theirs."""
    ran = [run for run in runs if not run.get("grading_unusable")]  # a run never started cost nothing
    agents = [run["result"].get("cost_usd") for run in ran]
    judge = [run["result"].get("judge_cost_usd") for run in ran]
    spent_agents = sum(c for c in agents if c is not None)
    spent_judge = sum(c for c in judge if c is not None)
    return {
        "agents": round(spent_agents, 6),
        "judge": round(spent_judge, 6),
        "total": round(spent_agents + spent_judge, 6),
        "agents_unknown": sum(c is None for c in agents),
        "judge_unknown": sum(c is None for c in judge),
    }


def _signed_money(delta: object) -> str:
    """'+0.0123' (benchmark.json's delta string) as +$0.0123."""
    try:
        value = float(str(delta))
    except ValueError:
        return ""
    return ("-" if value < 0 else "+") + money(abs(value))


def cost_line(spent: dict) -> str:
    """Cost: agents $X · judge $Y · total $Z, saying how many runs did not report theirs."""
    unknown = []
    if spent.get("agents_unknown"):
        unknown.append(f"{spent['agents_unknown']} run(s) did not report the agent's cost")
    if spent.get("judge_unknown"):
        unknown.append(f"{spent['judge_unknown']} run(s) had judge calls of unknown cost")
    return (
        f"Cost: agents {money(spent.get('agents'))} · judge {money(spent.get('judge'))} · total "
        f"{money(spent.get('total'))}" + (f" (at least: {'; '.join(unknown)})" if unknown else "")
    )


class Mistrigger(Record):
    """An eval whose staged skill was invoked when it should not be, or not when it should."""

    __slots__ = ("should_trigger", "wrong", "staged")
    __hash__ = Record.frozen_hash  # type: ignore[assignment]

    def __init__(self, should_trigger: bool, wrong: int, staged: int) -> None:
        self.should_trigger = should_trigger
        self.wrong = wrong  # runs whose agent did otherwise
        self.staged = staged  # runs that had the skill staged

    def __str__(self) -> str:
        did, should = ("was not invoked", "") if self.should_trigger else ("was invoked", "not ")
        return f"the skill {did} in {self.wrong}/{self.staged} run(s) with it staged; it should {should}trigger"


def mistriggers(results: list[RunResult]) -> dict[tuple[str, str], Mistrigger]:
    """(eval id, configuration) -> how its triggering went against the suite's skill_should_trigger,
    for those where it did in any run. benchmark.md's notes and the Results screen both say this."""
    seen: dict[tuple[str, str], tuple[bool, list[bool]]] = {}  # -> (should trigger, as expected per run)
    for r in results:
        check = r.grading.get("triggering")
        if check and isinstance(check.get("should_trigger"), bool):
            expected, hits = seen.setdefault((str(r.eval_id), r.configuration), (check["should_trigger"], []))
            hits.append(check["invoked"] == expected)
    return {
        key: Mistrigger(expected, len(hits) - sum(hits), len(hits))
        for key, (expected, hits) in seen.items()
        if not all(hits)
    }


def _run_notes(grading: dict) -> list[str]:
    notes = []
    if grading.get("unusable"):
        notes.append(f"an error, not a pass: {grading['run_error']}")
    elif grading.get("run_error"):
        notes.append(f"the agent's run failed: {grading['run_error']}")
    if grading.get("grading_errors"):
        notes.append(f"{grading['grading_errors']} expectation(s) could not be graded (see their evidence)")
    for values in (grading.get("user_notes_summary") or {}).values():
        notes += [str(v) for v in values or []]
    return notes


def _notes(
    results: list[RunResult],
    runs: list[dict],
    unstable: dict[tuple[str, str], list[str]],
    pair: tuple[str, str] | None,
    metadata: dict,
) -> list[str]:
    notes = []
    for label in (metadata.get("executor_model", ""), metadata.get("analyzer_model", "")):
        if "not a model" in label:
            notes.append(f"Produced by the {label}: a demonstration, not a measurement of a model.")
    for (eval_id, configuration), names in sorted(unstable.items()):
        notes.append(f"Eval {eval_id} is flaky in {configuration}: its repeats disagree on {', '.join(names)}.")
    if pair:
        by_text: dict[str, dict[str, list[bool]]] = {}
        for r in results:
            for e in r.expectations:
                by_text.setdefault(e["text"], {}).setdefault(r.configuration, []).append(bool(e["passed"]))
        for text, seen in by_text.items():
            if all(seen.get(c) and all(seen[c]) for c in pair):
                notes.append(
                    f"Assertion {text[:80]!r} passes in every run of both {pair[0]} and {pair[1]}: "
                    "it may not tell the skill's value."
                )
    for (eval_id, _), miss in mistriggers(results).items():
        notes.append(f"Eval {eval_id}: {miss}.")
    failed = sum(1 for run in runs if any(n.startswith("the agent's run failed") for n in run["notes"]))
    if failed:
        notes.append(f"{failed} run(s) failed to complete; their expectations count as failed.")
    unusable = sum(1 for run in runs if run.get("grading_unusable"))
    if unusable:
        notes.append(f"{unusable} run(s) have no usable grading.json: errors, counted in no pass rate.")
    return notes


def markdown(benchmark: dict) -> str:
    meta = benchmark["metadata"]
    summary = benchmark["run_summary"]
    configurations = [c for c in summary if c != "delta"]
    lines = [
        f"# Benchmark: {meta.get('skill_name', '')}",
        "",
        f"{meta.get('timestamp')} · executor: {meta.get('executor_model', '?')} · judge: "
        f"{meta.get('analyzer_model', '?')} · {meta.get('runs_per_configuration')} run(s) per configuration",
        "",
        "| | " + " | ".join(configurations) + (" | delta |" if "delta" in summary else " |"),
        "|---|" + "---|" * (len(configurations) + ("delta" in summary)),
    ]
    for metric, fmt in (("pass_rate", "{:.0%}"), ("time_seconds", "{:.1f} s"), ("tokens", "{:.0f}")):
        row = [
            f"{fmt.format(summary[c][metric]['mean'])} ± {fmt.format(summary[c][metric]['stddev'])}"
            for c in configurations
        ]
        if "delta" in summary:
            row.append(summary["delta"].get(metric, ""))
        lines.append(f"| {metric.replace('_', ' ')} | " + " | ".join(row) + " |")
    if any("cost_usd" in summary[c] for c in configurations):
        row = [money(summary[c]["cost_usd"]["mean"]) if "cost_usd" in summary[c] else "—" for c in configurations]
        if "delta" in summary:
            row.append(_signed_money(summary["delta"].get("cost_usd")))
        lines.append("| cost per run | " + " | ".join(row) + " |")
    spent = meta.get("cost_usd")
    if isinstance(spent, dict):
        lines += ["", cost_line(spent)]
    lines += [
        "",
        "## Evals",
        "",
        "| eval | " + " | ".join(configurations) + " |",
        "|---|" + "---|" * len(configurations),
    ]
    cells: dict[tuple[str, str], list] = {}  # (eval, configuration) -> [passed, total, flaky]
    for r in benchmark["runs"]:
        cell = cells.setdefault((str(r["eval_id"]), r["configuration"]), [0, 0, False])
        cell[0] += r["result"]["passed"]
        cell[1] += r["result"]["total"]
        cell[2] = cell[2] or bool(r.get("flaky"))
    for eval_id in meta["evals_run"]:
        shown = []
        for c in configurations:
            counted = cells.get((str(eval_id), c))
            shown.append(f"{counted[0]}/{counted[1]}" + (" (flaky)" if counted[2] else "") if counted else "—")
        lines.append(f"| {eval_id} | " + " | ".join(shown) + " |")
    failures = [(r, e) for r in benchmark["runs"] for e in r["expectations"] if not e["passed"]]
    if failures:
        lines += ["", "## Failed expectations", ""]
        for r, e in failures:
            evidence = " ".join(e.get("evidence", "").split())[:300]
            lines.append(
                f"- eval {r['eval_id']} · {r['configuration']} · run {r['run_number']}: **{e['text']}** — {evidence}"
            )
    if benchmark.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in benchmark["notes"]]
    return "\n".join(lines) + "\n"


def iteration_metadata(iteration: Path, judge_label: str) -> dict:
    plan = read_object(iteration / layout.PLAN)
    return {
        "skill_name": plan.get("skill", ""),
        "skill_path": plan.get("skill_path", ""),
        "executor_model": plan.get("executor", ""),
        "analyzer_model": judge_label,
    }


def write_benchmark(iteration: Path, results: list[RunResult] | None = None) -> dict:
    """Aggregate the iteration's graded runs into benchmark.json and benchmark.md."""
    with gc_paused():
        times = folder_times(iteration)  # before the runs are listed: see benchmark_cache
        prompts: dict[str, str] = {}
        if results is None:
            results = read_results(iteration, prompts)
        else:
            for folder in dict.fromkeys(r.folder.split("/")[0] for r in results):
                prompts[folder] = prompt_of(read_object(os.path.join(iteration, folder, layout.EVAL_METADATA)))
        judges = sorted({r.grading.get("judge", "") for r in results} - {""})
        benchmark = aggregate(results, iteration_metadata(iteration, ", ".join(judges)))
        benchmark[FOLDERS] = count_runs(times, [run["folder"] for run in benchmark["runs"]])
        benchmark[PROMPTS] = prompts
        warnings = read_object(iteration / layout.PLAN).get("warnings")
        benchmark["notes"] += [str(w) for w in warnings or []]  # the run's own (no sandbox, a user-installed skill)
    from workbench.formats import artifacts  # here: a report only reads
    from workbench.formats.save import atomic_write

    # Indented for a person up to COMPACT_FROM runs; past that, on one line: reading it back parses
    # the whole text at once, and indentation is a third of it (at 50,000 runs, 30 MB of peak memory).
    compact = len(benchmark["runs"]) >= COMPACT_FROM
    write_artifact(iteration / layout.BENCHMARK, artifacts.BENCHMARK, benchmark, indent=not compact)
    atomic_write(iteration / layout.BENCHMARK_MD, markdown(benchmark), sync_dir=False)
    return benchmark
