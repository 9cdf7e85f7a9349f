"""What `workbench report` reads, and what it leaves unread: it starts without the other
commands' imports; it trusts benchmark.json while its folders and runs are as they were
aggregated (checked without listing every folder), reads one over the ordinary 64 MB
limit, and says so when it is over its own; a page holds the contents of a bounded
number of runs, the failing ones first, and names the others' folders."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import copy_prepared
from support.process import ENTRY

from workbench.grading import benchmark, report_html
from workbench.grading.benchmark import results_from_benchmark
from workbench.grading.review import load_review
from workbench.workspace import layout


def _cli(*args, **kwargs):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=120, **kwargs)


@pytest.fixture
def iteration(demo_run_made, tmp_path) -> Path:
    """A private copy of the demo run, benchmark.json up to date as `run` left it."""
    copy_prepared(demo_run_made.parent.parent, tmp_path / "made")
    copy = tmp_path / "made" / "changelog-entry-workspace" / "iteration-1"
    assert results_from_benchmark(copy) is not None
    return copy


# What report never needs: the other commands, the registries their options list, the
# sandbox's process machinery, the YAML loader and the page's templates (but for a page);
# nor typing (annotations only), the artifact formats and their dialect (benchmark.json's
# writer's) or threading (the judge's bill, grading/judge_bill.py): each a part of a
# 1,000-run report's whole time.
NOT_FOR_A_REPORT = (
    "workbench.cli",
    "workbench.grading.judges",
    "workbench.grading.judge_bill",
    "workbench.runs.processes",
    "asyncio",
    "ruamel",
    "typing",
    "threading",
    "workbench.formats.artifacts",
    "workbench.formats.dialect",
)


@pytest.mark.parametrize("fmt", ["json", "text", "junit"])
def test_report_starts_without_the_other_commands(iteration, fmt):
    done = _cli("-X", "importtime", *ENTRY, "report", iteration, "--format", fmt)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    heavy = sorted(m for m in imported if any(m == n or m.startswith(n + ".") for n in NOT_FOR_A_REPORT))
    assert not heavy, heavy
    assert "jinja2" not in imported


@pytest.mark.parametrize("fmt", ["json", "text", "junit", "html"])
def test_the_report_is_the_same_through_the_workbench_group(iteration, fmt):
    """`workbench report` alone (its own entry) and as a command of the group print the same."""
    alone = _cli(*ENTRY, "report", iteration, "--format", fmt)
    grouped = _cli("-c", "from workbench.cli import main; main()", "report", iteration, "--format", fmt)
    assert (alone.returncode, alone.stdout, alone.stderr) == (grouped.returncode, grouped.stdout, grouped.stderr)
    assert alone.stdout


def test_report_help_and_usage_errors_read_as_before(iteration):
    done = _cli(*ENTRY, "report", "-h")
    assert done.returncode == 0 and "Usage: workbench report [OPTIONS] ITERATION" in done.stdout
    assert "--fail-under" in done.stdout and "--eval-fail-under" in done.stdout
    bad = _cli(*ENTRY, "report", iteration, "--format", "pdf")
    grouped = _cli("-c", "from workbench.cli import main; main()", "report", iteration, "--format", "pdf")
    assert bad.returncode == 2 and "Invalid value for '--format'" in bad.stderr and "Traceback" not in bad.stderr
    assert (bad.returncode, bad.stderr) == (grouped.returncode, grouped.stderr)


def test_a_benchmark_json_over_64_mb_is_used(iteration):
    """The ordinary read limit (64 MB) is about 43,000 runs of benchmark.json: such an iteration
    was silently read from its gradings, so an up-to-date benchmark.json made it slower."""
    path = iteration / layout.BENCHMARK
    data = orjson.loads(path.read_bytes())
    data["notes"].append("x" * (65 * 1024 * 1024))
    path.write_bytes(orjson.dumps(data))
    assert path.stat().st_size > 64 * 1024 * 1024
    assert results_from_benchmark(iteration) is not None


def test_a_benchmark_json_over_its_own_limit_is_said(iteration, monkeypatch, capsys):
    monkeypatch.setattr(benchmark, "BENCHMARK_LIMIT", 1000)
    review = load_review(iteration)
    [note] = getattr(review, "notes", [""])
    assert note.startswith(f"{iteration / layout.BENCHMARK}: ") and "every run's grading.json was read instead" in note
    assert review.rate("with_skill") == 1.0  # read from the gradings, the same
    from workbench.report_cli import report_command

    assert report_command(iteration, "text", None, None) == 0
    assert f"workbench report: {note}" in capsys.readouterr().err


def test_a_run_folder_added_with_its_times_set_back_makes_benchmark_json_stale(iteration):
    """No folder is listed to trust benchmark.json: a configuration folder's time says one was added."""
    run = next(Path(r.path) for r in layout.runs(iteration) if r.configuration == "without_skill")
    before = run.parent.stat()
    added = run.parent / "run-9"
    shutil.copytree(run, added)  # a copy keeps the files' times: older than benchmark.json
    os.utime(added, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.utime(run.parent, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert results_from_benchmark(iteration) is None
    assert len(load_review(iteration).results) == len(layout.runs(iteration))


@pytest.mark.parametrize("where", ["an eval folder", "a configuration folder"])
def test_a_folder_added_makes_benchmark_json_stale(iteration, where):
    run = next(Path(r.path) for r in layout.runs(iteration))
    if where == "an eval folder":
        shutil.copytree(run.parent.parent, iteration / "eval-added")
    else:
        shutil.copytree(run.parent, run.parent.parent / "old_skill")
    assert results_from_benchmark(iteration) is None


def test_a_benchmark_json_that_leaves_out_a_run_is_not_trusted(iteration):
    path = iteration / layout.BENCHMARK
    data = json.loads(path.read_text())
    dropped = next(run for run in data["runs"] if run["result"]["failed"])
    data["runs"].remove(dropped)
    path.write_text(json.dumps(data))
    assert results_from_benchmark(iteration) is None
    assert any(f.folder == dropped["folder"] for f in load_review(iteration).failures)


def test_a_benchmark_json_from_another_iteration_is_not_trusted(iteration, tmp_path):
    """Its folders have other times: an iteration copied over another of the same evals."""
    other = tmp_path / "other"
    shutil.copytree(iteration, other)  # copytree keeps the folders' times: made anew here
    for folder in [other, *other.glob("eval-*"), *other.glob("eval-*/*")]:
        os.utime(folder)
    benchmark.write_benchmark(other)
    shutil.copy(other / layout.BENCHMARK, iteration / layout.BENCHMARK)
    (iteration / layout.BENCHMARK).touch()
    assert results_from_benchmark(iteration) is None


def test_a_page_holds_the_contents_of_a_bounded_number_of_runs_failing_first(iteration, monkeypatch):
    monkeypatch.setattr(report_html, "RUNS_SHOWN", 2)
    review = load_review(iteration)
    page = report_html.render_html(review, iteration)
    assert page.count("<summary>Conversation (") == 2
    failing = [r for r in review.results if r.grading["summary"]["failed"]]
    assert len(failing) >= 2
    shown = [r.folder for r in review.results if f'<p class="meta mono">{r.folder}</p>' in page]
    assert len(shown) == len(review.results)  # every run is on the page, its contents or its folder
    left = len(review.results) - 2
    assert f"the other {left} name their folder" in page
    # the contents shown are those of failing runs
    for block in page.split('<details class="run"')[1:]:
        if "<summary>Conversation (" in block:
            assert 'class="bad"' in block.split("</summary>")[0]


def test_a_page_to_standard_output_is_the_page_written_to_a_file(iteration, tmp_path):
    printed = _cli(*ENTRY, "report", iteration, "--format", "html")
    written = _cli(*ENTRY, "report", iteration, "--format", "html", "--output", tmp_path / "page.html")
    assert printed.returncode == written.returncode == 0
    assert printed.stdout == (tmp_path / "page.html").read_text()


def test_a_large_benchmark_json_is_written_on_one_line_and_read_back(iteration, monkeypatch):
    """Indentation is a third of a large benchmark.json, and all of it is held while it is parsed."""
    monkeypatch.setattr(benchmark, "COMPACT_FROM", 1)
    benchmark.write_benchmark(iteration)
    text = (iteration / layout.BENCHMARK).read_text()
    assert text.count("\n") == 1 and json.loads(text)["runs"]
    assert results_from_benchmark(iteration) is not None


# Runs `workbench report ITERATION --format json` in this process's interpreter and prints, on
# standard error, the files it opened under the iteration (every open: the audit hook sees them all).
OPENED = """
import os, sys
iteration = sys.argv[1]
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
def say():
    sys.stderr.write("\\n".join(sorted(p[len(iteration) + 1:] for p in opened if p.startswith(iteration + "/"))))
    sys.stderr.flush()
end = os._exit  # report ends so once all is written
os._exit = lambda code: (say(), end(code))
from workbench.launch import main
sys.argv = ["workbench", "report", iteration, "--format", "json"]
try:
    main()
except SystemExit:
    say()
"""


def _opened(iteration: Path) -> list[str]:
    done = _cli("-c", OPENED, iteration)
    assert done.stdout.startswith("{"), done.stderr[-2000:]
    return done.stderr.splitlines()


def test_a_report_from_benchmark_json_opens_no_file_per_run_or_eval(iteration):
    """With benchmark.json up to date, a report opens it and plan.json, whatever the runs and evals:
    each run is a stat of its files, and each eval's prompt is in benchmark.json (it opened every
    eval_metadata.json, a file per eval). Without it, a file or two per run; the prompts are the same."""
    with_it = _opened(iteration)
    assert sorted(set(with_it)) == [layout.BENCHMARK, layout.PLAN], with_it
    assert with_it.count(layout.PLAN) == 1, with_it  # read once: its runs and its `stopped` (at 1,000 runs, 3%)
    fresh = _cli(*ENTRY, "report", iteration, "--format", "json").stdout
    (iteration / layout.BENCHMARK).unlink()
    without = _opened(iteration)
    runs = [r for r in without if r.endswith("/" + layout.GRADING)]
    assert without.count(layout.PLAN) == 1, without
    assert runs and len(without) <= 2 * len(runs) + len({r.split("/")[0] for r in runs}) + 2, without
    read = _cli(*ENTRY, "report", iteration, "--format", "json").stdout
    prompts = [e["prompt"] for e in json.loads(fresh)["evals"]]
    assert any(prompts) and prompts == [e["prompt"] for e in json.loads(read)["evals"]]


def test_a_benchmark_json_without_prompts_still_gives_them(iteration):
    """A benchmark.json written before the prompts were kept in it: each eval_metadata.json says."""
    path = iteration / layout.BENCHMARK
    expected = _cli(*ENTRY, "report", iteration, "--format", "json").stdout
    data = orjson.loads(path.read_bytes())
    del data[benchmark.PROMPTS]
    times = path.stat()
    path.write_bytes(orjson.dumps(data))
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert results_from_benchmark(iteration) is not None
    assert any(name.endswith(layout.EVAL_METADATA) for name in _opened(iteration))
    assert _cli(*ENTRY, "report", iteration, "--format", "json").stdout == expected


# Runs `workbench report ITERATION --format json` in this process's interpreter and prints, on
# standard error, the classes that @dataclass built and the folders listed (audit events) while it ran.
BUILT = """
import dataclasses, os, sys
iteration = sys.argv[1]
built, listed = [], []
process = dataclasses._process_class
def spy(cls, *args, **kwargs):
    built.append(f"{cls.__module__}.{cls.__qualname__}")
    return process(cls, *args, **kwargs)
dataclasses._process_class = spy
sys.addaudithook(lambda event, args: listed.append(str(args[0])) if event in ("os.scandir", "os.listdir") else None)
def say():
    sys.stderr.write("built " + " ".join(built) + "\\nlisted " + " ".join(p for p in listed if p.startswith(iteration)))
    sys.stderr.flush()
end = os._exit
os._exit = lambda code: (say(), end(code))
from workbench.launch import main
sys.argv = ["workbench", "report", iteration, "--format", "json"]
main()
"""


def _built_and_listed(iteration: Path) -> tuple[list[str], list[str]]:
    done = _cli("-c", BUILT, iteration)
    assert done.stdout.startswith("{"), done.stderr[-2000:]
    built, listed = done.stderr.splitlines()[-2:]
    return built.split()[1:], listed.split()[1:]


def test_a_report_builds_no_dataclass(iteration):
    """@dataclass writes and compiles each class's methods at import: the ten on a report's path cost
    it more than reading 100 runs. Its records are plain classes (workbench/formats/record.py)."""
    for gone in (False, True):
        if gone:
            (iteration / layout.BENCHMARK).unlink()
        built, _ = _built_and_listed(iteration)
        assert built == [], built


def test_a_report_without_benchmark_json_lists_no_folder_that_holds_just_its_planned_runs(iteration):
    """The link counts of the iteration's, eval and configuration folders say they hold the planned
    subfolders and no other: a report lists none of them (it listed every one: 1 + evals x 3)."""
    (iteration / layout.BENCHMARK).unlink()
    expected = _cli(*ENTRY, "report", iteration, "--format", "json").stdout
    _, listed = _built_and_listed(iteration)
    assert listed == [], listed
    assert (
        expected == _cli("-c", "from workbench.cli import main; main()", "report", iteration, "--format", "json").stdout
    )


def test_a_run_folder_beside_the_planned_ones_is_still_read(iteration):
    """A folder that holds more than the plan's (its count says so) is listed: the extra run counts."""
    (iteration / layout.BENCHMARK).unlink()
    runs = len(layout.runs(iteration))
    run = next(Path(r.path) for r in layout.runs(iteration) if r.configuration == "with_skill")
    shutil.copytree(run, run.parent / "run-9")
    assert len(benchmark.read_results(iteration)) == runs + 1
    _, listed = _built_and_listed(iteration)
    assert listed == [str(run.parent)], listed  # that configuration's folder only


def test_a_planned_run_folder_replaced_by_another_is_seen(iteration):
    """The counts hold when a planned run's folder is renamed to an unplanned one: the run found
    missing makes the report list every folder, so the renamed one counts, and the missing one too."""
    (iteration / layout.BENCHMARK).unlink()
    runs = len(layout.runs(iteration))
    run = next(Path(r.path) for r in layout.runs(iteration) if r.configuration == "with_skill")
    run.rename(run.parent / "run-7")
    results = benchmark.read_results(iteration)
    assert len(results) == runs + 1
    folders = {r.folder: r for r in results}
    missing = folders[str(run.relative_to(iteration))]
    assert "planned in plan.json but not finished" in missing.grading["run_error"]
    assert str((run.parent / "run-7").relative_to(iteration)) in folders


def test_a_small_file_is_read_with_a_buffer_of_its_size(tmp_path, monkeypatch):
    """The first read asks for the size fstat gives and one byte more (a 64 KB buffer for each of an
    iteration's 1 KB files was most of their reads' cost); a file longer than fstat said (it grew)
    is still read whole, in further reads."""
    from workbench.formats import regular

    path = tmp_path / "grading.json"
    path.write_bytes(b"x" * 1000)
    asked: list[int] = []
    read = os.read
    monkeypatch.setattr(regular.os, "read", lambda fd, n: (asked.append(n), read(fd, n))[1])
    assert regular.read_regular(path) == b"x" * 1000
    assert asked == [1001]
    fstat = os.fstat
    shorter = lambda fd: os.stat_result((*fstat(fd)[:6], 10, *fstat(fd)[7:]))  # noqa: E731
    monkeypatch.setattr(regular.os, "fstat", shorter)
    asked.clear()
    assert regular.read_regular(path) == b"x" * 1000
    assert asked[0] == 11 and len(asked) >= 2
    assert regular.read_regular(path, limit=500, cut=True) == b"x" * 500


def test_a_report_says_why_runs_were_left_unstarted_from_the_plan_it_read(iteration):
    """`incomplete` (json) and INCOMPLETE (text) come from plan.json's `stopped` as the report read the
    plan with its runs, from benchmark.json or from the gradings alike, and say nothing without one."""
    plan = iteration / layout.PLAN
    times = plan.stat()
    for stopped in ("the budget of $1.00 was reached", None):
        data = json.loads(plan.read_text())
        data.pop("stopped", None)
        if stopped:
            data["stopped"] = stopped
        plan.write_text(json.dumps(data))
        os.utime(plan, ns=(times.st_atime_ns, times.st_mtime_ns))  # older than benchmark.json, as it was
        for fresh in (True, False):
            if fresh:
                assert results_from_benchmark(iteration) is not None
            else:
                shutil.copy(iteration / layout.BENCHMARK, iteration.parent / "kept.json")
                (iteration / layout.BENCHMARK).unlink()
            said = json.loads(_cli(*ENTRY, "report", iteration, "--format", "json").stdout)["incomplete"]
            text = _cli(*ENTRY, "report", iteration).stdout
            assert said == stopped, (fresh, said)
            assert (f"INCOMPLETE: {stopped}." in text) == bool(stopped) and ("INCOMPLETE" in text) == bool(stopped)
            if not fresh:
                shutil.copy(iteration.parent / "kept.json", iteration / layout.BENCHMARK)
