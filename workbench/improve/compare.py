"""The blind A/B comparator (evaluate --decide comparator): for every eval both
versions ran, the judge compares one run of each, shown as A and B in a random
order, three times; the majority of the three names the eval's winner, and the
version that wins more evals wins. Each comparison is written as
eval-<id>/comparison-N.json in seed 003's shape, with the A/B assignment."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from workbench.formats import artifacts
from workbench.formats.regular import read_regular_text
from workbench.grading.artifact import write_artifact
from workbench.grading.grade import read_events, read_outputs
from workbench.grading.judges import Judge, JudgeCase
from workbench.runs.runner import WITH
from workbench.workspace import layout

ROUNDS = 3


@dataclass
class Comparison:
    result: str  # won | lost | tie
    wins: int  # evals the new version won
    losses: int
    ties: int
    files: list[Path]

    def evidence(self, judge: str, new: str, best: str) -> str:
        return (
            f"blind comparator ({judge}), majority of {ROUNDS} per eval: {new} preferred on {self.wins} "
            f"eval(s), {best} on {self.losses}, {self.ties} undecided -> {self.result}"
        )


def _case(run: Path) -> JudgeCase:
    patch = run / layout.DIFF
    try:
        diff = read_regular_text(patch, errors="replace")
    except OSError:  # none (not graded, or nothing changed), or not a file: no diff to judge
        diff = ""
    return JudgeCase("", read_events(run / layout.TRANSCRIPT), diff, read_outputs(run / layout.OUTPUTS))


def _runs(iteration: Path, eval_folder: str, configuration: str) -> list[Path]:
    """The finished runs of one eval in one configuration, in run order."""
    return [
        Path(run.path)
        for run in layout.runs(iteration, eval_folder)
        if run.configuration == configuration and (Path(run.path) / layout.RUN_RECORD).exists()
    ]


def compare(
    judge: Judge,
    iteration: Path,
    new: str,
    best: str,
    best_iteration: Path,
    best_configuration: str,
    prompts: dict[str, str],
    rng: random.Random | None = None,
) -> Comparison:
    """prompts: eval folder name -> the task prompt."""
    rng = rng or random.Random()
    wins = losses = ties = 0
    files = []
    for name in layout.eval_folders(iteration):
        eval_folder = iteration / name
        mine = _runs(iteration, name, WITH)
        theirs = _runs(best_iteration, name, best_configuration)
        if not mine or not theirs:
            continue
        votes = {new: 0, best: 0}
        for number in range(1, ROUNDS + 1):
            ours, other = mine[(number - 1) % len(mine)], theirs[(number - 1) % len(theirs)]
            new_is_a = rng.random() < 0.5
            runs = {"A": ours, "B": other} if new_is_a else {"A": other, "B": ours}
            verdict = judge.compare(prompts.get(eval_folder.name, ""), _case(runs["A"]), _case(runs["B"]))
            assignment = {"A": new if new_is_a else best, "B": best if new_is_a else new}
            if verdict["winner"] in ("A", "B"):
                votes[assignment[verdict["winner"]]] += 1
            path = eval_folder / f"comparison-{number}.json"
            write_artifact(
                path,
                artifacts.COMPARISON,
                {**verdict, "assignment": assignment, "runs": {side: str(run) for side, run in runs.items()}},
            )
            files.append(path)
        if votes[new] * 2 > ROUNDS:
            wins += 1
        elif votes[best] * 2 > ROUNDS:
            losses += 1
        else:
            ties += 1
    result = "won" if wins > losses else ("lost" if losses > wins else "tie")
    return Comparison(result, wins, losses, ties, files)
