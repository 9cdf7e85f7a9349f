"""bench/run_all.py's table says which tui figures are whole processes read in tmux and which
were timed in process (issue 26): the tmux rows were all labelled [in process] before."""

from __future__ import annotations

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import run_all  # noqa: E402
import tui_bench  # noqa: E402


def test_tmux_rows_are_whole_processes_and_in_process_rows_say_so():
    out = io.StringIO()
    figures = tui_bench.Figures(out)
    figures.say('keystroke -> painted (X in a case id -> "1 error" on screen)', 34.7, "budget 33 ms; p95 40 ms",
                kind="tmux", budget="<= 33 ms", ok=False)  # fmt: skip
    figures.say("case switch (Down -> next case painted), p95", 90.0, "floor + 7 ms; budget floor + 50 ms",
                kind="tmux", budget="<= floor + 50 ms (133 ms)", ok=True)  # fmt: skip
    figures.say("keys at 30/s landing in a case id, valid/invalid flips (tmux)", 100.0, "budget 100 %", "%",
                kind="tmux", budget=">= 100 %", ok=True)  # fmt: skip
    figures.say("in process: case switch, median", 12.0, "")
    text = "workbench TUI, 1,000-case suite (load 1.00)\n" + out.getvalue() + figures.result_line(1.0) + "\n"
    rows = {row.figure: row for row in run_all.parse("tui", text, "1.00")}
    assert list(rows) == [
        'keystroke -> painted (X in a case id -> "1 error" on screen) [tmux, whole process]',
        "case switch (Down -> next case painted), p95 [tmux, whole process]",
        "keys at 30/s landing in a case id, valid/invalid flips (tmux) [tmux, whole process]",
        "case switch, median [in process]",
    ]
    assert [row.verdict for row in rows.values()] == ["over", "ok", "ok", "–"]
