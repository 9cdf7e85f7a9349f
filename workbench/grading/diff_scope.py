"""diff_scope: how much the agent changed against the dispatch's baseline commit.
Renames count as a delete plus an add, binary files count 0 lines, the staged
skill and framework files are left out. The patch is written beside grading.json."""

from __future__ import annotations

from pathlib import Path

from workbench.formats.save import atomic_write
from workbench.grading.verdict import Verdict
from workbench.runs import safe_git
from workbench.runs.workspace import NOT_CHANGES


def measure(repo_dir: Path, baseline: str, patch: Path | None = None) -> tuple[list[str], int]:
    """(files touched, lines added plus removed) since the baseline."""
    safe_git.scrub(repo_dir)  # the agent could have written its .git/config
    safe_git.run(["add", "-A"], repo_dir)
    excluded = [f":(exclude){folder}" for folder in NOT_CHANGES]
    files, lines = [], 0
    diff = ["diff", *safe_git.DIFF_SAFE, "--no-renames"]
    for row in safe_git.run([*diff, "--numstat", baseline, "--", ".", *excluded], repo_dir).splitlines():
        added, removed, name = row.split("\t", 2)
        files.append(name)
        if added != "-":  # "-" marks a binary file: it counts as touched, with 0 lines
            lines += int(added) + int(removed)
    if patch is not None:
        atomic_write(patch, safe_git.run([*diff, "--binary", baseline, "--", ".", *excluded], repo_dir) + "\n")
    return files, lines


def grade(assertion: dict, files: list[str], lines: int) -> Verdict:
    problems = []
    most_files, most_lines = assertion.get("max_files_touched"), assertion.get("max_lines_changed")
    if most_files is not None and len(files) > most_files:
        problems.append(f"{len(files)} files touched, more than {most_files}")
    if most_lines is not None and lines > most_lines:
        problems.append(f"{lines} lines changed, more than {most_lines}")
    shown = ", ".join(files[:10]) + (" …" if len(files) > 10 else "") if files else "none"
    facts = f"{len(files)} file(s) touched ({shown}); {lines} line(s) added plus removed"
    return Verdict(not problems, "; ".join(problems) + f" — {facts}" if problems else facts)
