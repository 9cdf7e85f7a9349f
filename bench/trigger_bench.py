"""Trigger evaluation: `workbench trigger` beside skill-creator's run_eval.py
(the anchor) on the same query set, the same real Claude Code and the same
scripted model server, whose choice to use a skill is known (a shared word of
7+ letters between the request and the skill's description:
tests/agents/trigger_rule.py). So the true recall and precision are known.

    .venv/bin/python bench/trigger_bench.py [--runs N]

Needs the Claude Code CLI (WORKBENCH_TEST_CLAUDE or `claude` on PATH) and
skill-creator's scripts at ../shared/reference/skill-creator (copied to a
temporary folder to run: run_eval.py writes a command file into its project).

Printed per tool, in two settings (a clean user config, then with a copy of the
skill installed in the user's own scope whose description matches every
query): recall and precision measured beside the truth, dispatches per query
and model calls per query (what a query costs: every call reads the agent's
whole context), and the workbench's cost as Claude Code reports it (the
scripted server's token counts are tiny, so dollars here are not a real
model's; calls are the comparable figure)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from agents.scripted_model import ScriptedServer  # noqa: E402

REFERENCE = ROOT.parent / "shared" / "reference" / "skill-creator"
QUERIES = [
    {"query": "Add a changelog line for the parser fix", "should_trigger": True},
    {"query": "Summarise the releases we shipped", "should_trigger": True},
    {"query": "Write up the deprecation of the synchronous client", "should_trigger": True},
    {"query": "Count the entries in this database table", "should_trigger": False},
    {"query": "Rename the variable in parser.py", "should_trigger": False},
    {"query": "Explain how binary search works", "should_trigger": False},
]
TRUTH = [True, True, False, True, False, False]  # what the scripted model does with the description below
DESCRIPTION = "Writes changelog entries for releases. Use when asked about a changelog."
EVERYTHING = "Use for every request about a variable, a database, a deprecation, binary search or anything else."


def scores(triggered: list[float]) -> tuple[float | None, float | None]:
    """Recall and precision over the queries' trigger rates."""
    tp = sum(r for r, q in zip(triggered, QUERIES, strict=True) if q["should_trigger"])
    fn = sum(1 - r for r, q in zip(triggered, QUERIES, strict=True) if q["should_trigger"])
    fp = sum(r for r, q in zip(triggered, QUERIES, strict=True) if not q["should_trigger"])
    return (tp / (tp + fn) if tp + fn else None), (tp / (tp + fp) if tp + fp else None)


def calls(server: ScriptedServer, since: int) -> int:
    """Model calls that carried tools (the agent's own calls, not the CLI's side requests)."""
    return sum(1 for body in server.model.requests[since:] if body.get("tools"))


def workbench(skill: Path, runs: int, server: ScriptedServer, fresh: bool) -> dict:
    since = len(server.model.requests)
    args = ["trigger", str(skill), "--executor", "claude", "--runs", str(runs), "-j", "3", "--sandbox", "none"]
    done = subprocess.run(
        [sys.executable, "-m", "workbench", *args, "--format", "json", *(["--fresh"] if fresh else [])],
        capture_output=True,
        text=True,
        timeout=900,
    )
    data = json.loads(done.stdout)
    rates = [q["rate"] or 0.0 for q in data["queries"]]
    return {
        "rates": rates,
        "dispatches": data["dispatches"],
        "calls": calls(server, since),
        "cost": data["cost_usd"],
    }


def run_eval(skill: Path, runs: int, server: ScriptedServer, scripts: Path) -> dict:
    since = len(server.model.requests)
    evals = skill / "evals" / "trigger-evals.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.run_eval",
            "--eval-set",
            str(evals),
            "--skill-path",
            str(skill),
            "--runs-per-query",
            str(runs),
            "--num-workers",
            "3",
            "--timeout",
            "60",
        ],
        cwd=scripts,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        raise SystemExit(f"run_eval.py failed: {done.stderr[-2000:]}")
    data = json.loads(done.stdout)
    by_query = {r["query"]: r["trigger_rate"] for r in data["results"]}
    return {
        "rates": [by_query[q["query"]] for q in QUERIES],
        "dispatches": sum(r["runs"] for r in data["results"]),
        "calls": calls(server, since),
        "cost": None,
    }


def line(name: str, got: dict) -> str:
    recall, precision = scores(got["rates"])
    n = len(QUERIES)
    cost = f"${got['cost'] / n:.6f}" if got["cost"] is not None else "not reported"
    return (
        f"  {name:<22} recall {recall:.2f}  precision {precision if precision is None else round(precision, 2)}  "
        f"dispatches/query {got['dispatches'] / n:.1f}  model calls/query {got['calls'] / n:.1f}  "
        f"cost/query {cost}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per query for both tools (run_eval.py's default: 3)")
    args = parser.parse_args()
    claude = os.environ.get("WORKBENCH_TEST_CLAUDE") or shutil.which("claude")
    if not claude:
        raise SystemExit("the Claude Code CLI is needed: set WORKBENCH_TEST_CLAUDE (tests/run.sh installs it)")
    if not (REFERENCE / "scripts" / "run_eval.py").is_file():
        raise SystemExit(f"skill-creator's scripts are not at {REFERENCE}")
    truth_recall, truth_precision = scores([float(t) for t in TRUTH])
    with tempfile.TemporaryDirectory(prefix="trigger-bench-") as private, ScriptedServer() as server:
        tmp = Path(private)
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "claude").symlink_to(claude)
        home = tmp / "home"
        home.mkdir()
        os.environ.update(
            {
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": "sk-scripted",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "HOME": str(home),
                "IS_SANDBOX": "1",
                "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                "WORKBENCH_CLAUDE": claude,
                "WORKBENCH_CONFIG_DIR": str(tmp / "config"),
            }
        )
        skill = tmp / "skills" / "changelog-entry"
        (skill / "evals").mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\nname: changelog-entry\ndescription: {DESCRIPTION}\n---\n\nWrite it.\n")
        (skill / "evals" / "trigger-evals.json").write_text(json.dumps(QUERIES, indent=2) + "\n")
        scripts = tmp / "skill-creator"
        shutil.copytree(REFERENCE, scripts)
        print(f"Trigger evaluation, {len(QUERIES)} queries x {args.runs} runs, Claude Code, scripted model server")
        print(f"  truth                  recall {truth_recall:.2f}  precision {truth_precision:.2f}")
        print("clean user config:")
        print(line("workbench trigger", workbench(skill, args.runs, server, fresh=False)))
        print(line("run_eval.py (anchor)", run_eval(skill, args.runs, server, scripts)))
        mine = home / ".claude" / "skills" / "changelog-entry"
        mine.mkdir(parents=True)
        (mine / "SKILL.md").write_text(f"---\nname: changelog-entry\ndescription: {EVERYTHING}\n---\n\nMine.\n")
        print("a copy installed in the user's scope (~/.claude/skills), matching every query:")
        print(line("workbench trigger", workbench(skill, args.runs, server, fresh=True)))
        print(line("run_eval.py (anchor)", run_eval(skill, args.runs, server, scripts)))


if __name__ == "__main__":
    main()
