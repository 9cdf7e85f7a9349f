"""Every bench of the project, each a whole process, and one table of what they measured.

    .venv/bin/python bench/run_all.py [--only runs,report,...] [--quick] [--timeout SECONDS]

Runs bench/<name>_bench.py for runs, report, adaptive, cluster, tui, validate, grading and trigger, one after
the other (never two at once: each is timed beside its own anchor, in its own sitting), and writes one table,
figure | measured | anchor | budget | verdict | load, to stdout and to bench/results.md.

How a bench's figures are read, in this order:
- a line `BENCH-RESULT {"bench": ..., "rows": [{"figure", "value", "unit", "anchor", "budget", "ok", "load"}]}`
  (the stable form: bench/runs_bench.py prints it; any bench may);
- else its printed rows as they read today: `  <label>  <number> <unit>  <anchor or budget>` lines (a budget
  written `budget N unit`, `budget N.NNx` or `goal <= N%` is checked against the number), and the few
  sentences some benches print instead (adaptive's share of dispatches, report's ratios);
- else the bench's last line, unjudged.
A bench that fails or is not installed here (the trigger bench needs Claude Code) is a row saying so.
Rows of validate, grading and tui that are not a whole process, a cold start or tmux say [in process].
The load is the machine's 1-minute load average (2 cores here) when the row was measured, or at the bench's end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BENCHES = ("runs", "report", "adaptive", "cluster", "tui", "validate", "grading", "trigger")
QUICK = {"runs": ["--pairs", "1"], "validate": ["--quick"], "adaptive": ["--trials", "200"], "trigger": ["--runs", "1"]}
MARK = "BENCH-RESULT "
IN_PROCESS = ("validate", "grading", "tui")  # benches that time functions in process beside their whole processes


@dataclass
class Row:
    bench: str
    figure: str
    value: str
    anchor: str = ""
    budget: str = ""
    verdict: str = "–"
    load: str = ""


def load_now() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def number(text: str) -> float:
    return float(text.replace(",", ""))


# `  label    12.3 ms   anchor`: the row most benches print (two spaces or more around the number).
PRINTED = re.compile(
    r"^\s+(?P<label>\S.*?)\s{2,}(?P<value>[-+]?[\d,]*\.?\d+)\s?(?P<unit>ms|s|%|x)?(?:\s{2,}(?P<rest>.*))?$"
)
BUDGET = re.compile(r"budget\s+(?:<=\s*)?(?P<limit>[\d,]*\.?\d+)\s?(?P<unit>ms|s|%|x)?")
GOAL = re.compile(r"goal\s*<=\s*(?P<limit>[\d.]+)%")
RATIO = re.compile(r"(?P<ratio>\d+\.\d+)x\s+budget\s+(?P<limit>\d+\.\d+)x")


def judged(value: float, unit: str, limit: float) -> str:
    """A percentage of keys landed must reach its budget; anything else must stay within it."""
    good = value >= limit if unit == "%" else value <= limit
    return "ok" if good else "over"


def parse(bench: str, text: str, load: str) -> list[Row]:
    rows: list[Row] = []
    for line in text.splitlines():
        if line.startswith(MARK):
            data = json.loads(line[len(MARK) :])
            for item in data.get("rows", []):
                ok = item.get("ok")
                rows.append(
                    Row(
                        bench,
                        str(item.get("figure", "")),
                        f"{item.get('value')} {item.get('unit', '')}".strip(),
                        str(item.get("anchor", "")),
                        str(item.get("budget", "")),
                        "–" if ok is None else "ok" if ok else "over",
                        str(item.get("load", load)),
                    )
                )
    if rows:
        return rows
    section = ""
    for line in text.splitlines():
        if line and not line.startswith(" "):
            section = line.strip().rstrip(":").split(" (")[0]
        ratio = RATIO.search(line)
        match = PRINTED.match(line)
        if match:
            label, unit, rest = match["label"].strip(), match["unit"] or "", (match["rest"] or "").strip()
            if bench == "report" and re.match(r"\d+\.\d+x", rest) and not ratio:  # the issue: <= 0.5x both
                ratio = RATIO.search(f"{rest.split()[0]}   budget 0.50x")
            value = number(match["value"])
            figure = f"{label} ({section})" if section and bench in ("validate", "tui") else label
            if bench in IN_PROCESS and not any(word in label for word in ("whole", "tmux", "cold start", "process")):
                figure += " [in process]"  # timed inside the bench's own process: not what a user waits for
            budget = BUDGET.search(rest)
            verdict = "–"
            if ratio:  # report: "<ms> ms   0.60x   budget 0.50x": the ratio is the figure
                verdict = "ok" if number(ratio["ratio"]) <= number(ratio["limit"]) else "over"
                rows.append(Row(bench, figure, f"{ratio['ratio']}x ({value:g} {unit})", "", f"<= {ratio['limit']}x",
                                verdict, load))  # fmt: skip
                continue
            if budget:
                verdict = judged(value, unit, number(budget["limit"]))
            anchor = "" if budget and rest.startswith("budget") else rest
            rows.append(
                Row(bench, figure, f"{value:g} {unit}".strip(), anchor, budget[0] if budget else "", verdict, load)
            )
            continue
        goal = GOAL.search(line)
        share = re.search(r"dispatches:\s*(?P<share>[\d.]+)% of fixed", line)
        if goal and share:  # adaptive: "dispatches: 59.8% of fixed (anchor: fixed design 100%, goal <= 50%)"
            verdict = "ok" if number(share["share"]) <= number(goal["limit"]) else "over"
            rows.append(Row(bench, f"--runs auto dispatches, {section}", f"{share['share']}%", "fixed design 100%",
                            f"<= {goal['limit']}%", verdict, load))  # fmt: skip
        elif "recall" in line and "precision" in line and bench == "trigger":
            rows.append(Row(bench, f"{section}: {line.strip()}", "", "", "", "–", load))
    if not rows:
        last = next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "(nothing printed)")
        rows.append(Row(bench, "(figures not read: the last line)", last, "", "", "–", load))
    return rows


def run_bench(bench: str, quick: bool, timeout: float) -> tuple[list[Row], str]:
    script = HERE / f"{bench}_bench.py"
    if not script.exists():
        return [Row(bench, "(no such bench here)", "", verdict="not run")], ""
    argv = [sys.executable, str(script), *(QUICK.get(bench, []) if quick else [])]
    began = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        said = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        rows = parse(bench, said, load_now()) if said.strip() else []
        return rows + [Row(bench, f"(stopped after {timeout:g} s)", "", verdict="not finished", load=load_now())], said
    taken = time.perf_counter() - began
    output = done.stdout + (f"\n[stderr]\n{done.stderr[-4000:]}" if done.returncode else "")
    if done.returncode != 0:
        why = next((line for line in reversed(done.stderr.splitlines()) if line.strip()), f"exit {done.returncode}")
        return [Row(bench, f"(the bench failed, exit {done.returncode})", why[:200], verdict="not run",
                    load=load_now())], output  # fmt: skip
    rows = parse(bench, done.stdout, load_now())
    rows.append(Row(bench, "(the whole bench)", f"{taken:.0f} s", load=load_now()))
    return rows, output


def table(rows: list[Row]) -> list[str]:
    head = ["bench", "figure", "measured", "anchor", "budget", "verdict", "load"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.bench, r.figure, r.value, r.anchor, r.budget, r.verdict, r.load]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(BENCHES), help="of: " + ", ".join(BENCHES))
    parser.add_argument("--quick", action="store_true", help="fewer repeats where a bench offers it")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds for each bench (default 3600)")
    parser.add_argument("--output", type=Path, default=HERE / "results.md", help="the table's file")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in BENCHES]
    if unknown:
        parser.error(f"--only: {unknown[0]} is not one of {', '.join(BENCHES)}")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    before = "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    rows: list[Row] = []
    outputs: dict[str, str] = {}
    sys.path.insert(0, str(ROOT))
    from workbench.formats.save import atomic_write

    for index, bench in enumerate(chosen):
        print(f"running {bench}_bench.py ({before if not rows else 'load ' + load_now()})", file=sys.stderr, flush=True)
        found, outputs[bench] = run_bench(bench, args.quick, args.timeout)
        rows += found
        # Written after each bench: a sitting cut short still leaves what it measured.
        atomic_write(args.output, results(rows, outputs, started, before, args.quick, chosen[index + 1 :]))
    lines = results(rows, outputs, started, before, args.quick, []).split("\n\n## What each bench printed")[0]
    print(lines.removeprefix("# Bench results\n\n"))
    print(f"\nwritten to {args.output}", file=sys.stderr)


def results(rows: list[Row], outputs: dict[str, str], started: str, before: str, quick: bool, left: list[str]) -> str:
    now = "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    heading = (
        f"Benches of {started}, {os.cpu_count()} cores; at the start {before}, at the end {now}"
        + (" (--quick)" if quick else "")
        + (f"; not run yet: {', '.join(left)}" if left else "")
    )
    text = "# Bench results\n\n" + "\n".join([heading, "", *table(rows)]) + "\n\n## What each bench printed\n"
    for bench, said in outputs.items():
        text += f"\n### {bench}\n\n```\n{said.strip()}\n```\n"
    return text


if __name__ == "__main__":
    main()
