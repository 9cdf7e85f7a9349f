"""The table `workbench run` prints at its end (issue 26): every dispatch a row, in order, with what its
run.json and timing.json say; cheap for 5,000 dispatches (rich's table took ~1 ms of CPU a row: 5 s)."""

from __future__ import annotations

import importlib
import io
import json
import time

from rich.console import Console

from workbench.runs.cases import RunCase
from workbench.runs.runner import DONE, FAILED, SKIPPED, STOPPED, Dispatch

cli_run = importlib.import_module("workbench.cli.run")  # the module: workbench.cli.run is also a command


def _dispatches(tmp_path, count: int) -> list[Dispatch]:
    made = []
    for i in range(count):
        configuration = ("with_skill", "without_skill")[i % 2]
        folder = tmp_path / f"eval-{i // 2}" / configuration / "run-1"
        folder.mkdir(parents=True)
        status = (DONE, FAILED, SKIPPED, STOPPED)[i % 4] if i < 4 else DONE
        if status != STOPPED:
            record = {"status": "failed" if status == FAILED else "done", "turns": 2, "cost_usd": 0.0123}
            if status == FAILED:
                record["error"] = "the agent exited with status 3: no key"
            (folder / "run.json").write_text(json.dumps(record))
            (folder / "timing.json").write_text(json.dumps({"total_tokens": 1234, "total_duration_seconds": 1.5}))
        case = RunCase(id=f"case-{i // 2:04d}", eval_id=i // 2, name="", prompt="p")
        made.append(Dispatch(case, configuration, 1, None, folder, status=status))
    return made


def _printed(dispatches, width=120) -> str:
    console = Console(file=io.StringIO(), width=width)
    cli_run.print_summary(console, dispatches)
    return console.file.getvalue()


def test_the_table_says_each_dispatch_in_order(tmp_path):
    text = _printed(_dispatches(tmp_path, 4), width=160)
    lines = text.splitlines()
    assert lines[0].strip() == "Runs"
    assert all(h in lines[2] for h in ("eval", "configuration", "run", "status", "turns", "stopped because"))
    rows = [line for line in lines if "case-" in line]
    assert len(rows) == 4
    assert "case-0000" in rows[0] and "with_skill" in rows[0] and "done" in rows[0] and "$0.01" in rows[0]
    assert "failed" in rows[1] and "the agent exited with status 3: no key" in rows[1] and "1234" in rows[1]
    assert "done (resumed)" in rows[2]
    assert "not run (budget)" in rows[3]
    assert len({len(line) for line in lines[1:]}) == 1  # every line of the box as wide as the others


def test_a_long_reason_is_cut_to_the_console_width(tmp_path):
    dispatches = _dispatches(tmp_path, 2)
    record = dispatches[1].folder / "run.json"
    record.write_text(json.dumps({"status": "failed", "turns": 1, "error": "why " * 100}))
    text = _printed(dispatches, width=100)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "…" in text


def test_five_thousand_dispatches_take_little_cpu(tmp_path):
    dispatches = _dispatches(tmp_path, 5000)
    began = time.process_time()  # CPU time: steady beside a CPU hog
    text = _printed(dispatches)
    used = time.process_time() - began
    assert text.count("case-") == 5000
    assert used < 1.5, f"the table of 5,000 dispatches took {used:.2f} s of CPU"


def test_the_progress_counts_follow_every_move_and_stay_cheap(tmp_path):
    """The progress bar's counts, kept as dispatches move (counting all of them at each move was
    quadratic: a 5,000-dispatch run counted statuses 100 million times)."""
    dispatches = [
        Dispatch(RunCase(id=f"c{i}", eval_id=i, name="", prompt="p"), "with_skill", 1, None, tmp_path)
        for i in range(5000)
    ]
    tally = cli_run.Tally()
    began = time.process_time()
    for status in ("running", "done"):
        for dispatch in dispatches:
            dispatch.status = status
            tally.moved(dispatch)
            tally.moved(dispatch)  # told twice (a detail changed): counted once
    assert time.process_time() - began < 0.5
    assert (tally.finished, tally.running) == (5000, 0)
    dispatches[0].status = "running"
    assert tally.moved(dispatches[0]) == (4999, 1)
    dispatches[1].status = "stopped"  # never ran: neither finished nor running
    assert tally.moved(dispatches[1]) == (4998, 1)
