"""The brief a proposer gets (docs/improve.md, "workbench improve"): the current
best's files, its failed expectations with their evidence, the notes a person
wrote in feedback.json, short excerpts of the failing runs' conversations, and
what earlier rounds tried and how they scored. Everything is bounded: a brief
never grows with the number of runs."""

from __future__ import annotations

from pathlib import Path

from workbench.grading.feedback import Feedback
from workbench.grading.review import Failure, load_review
from workbench.grading.run_files import excerpt
from workbench.improve.history import load_history, read_evaluations
from workbench.improve.standing import standing
from workbench.runs.runner import WITH
from workbench.workspace import layout
from workbench.workspace.versions import VersionStore

FAILURES = 30  # failed expectations listed
EVIDENCE = 400  # characters of each one's evidence
EXCERPTS = 4  # failing runs whose conversation is excerpted
EXCERPT = 1_500  # characters of each excerpt
FILE_TEXT = 20_000  # characters of SKILL.md shown


def failures_of(workspace: Path, version: str) -> tuple[Path | None, str, list[Failure]]:
    """The iteration the version was last measured in, its configuration there, and its failed
    expectations (none when it was never measured)."""
    record = read_evaluations(workspace).get(version) or {}
    number = record.get("iteration")
    if not isinstance(number, int):
        return None, WITH, []
    iteration = layout.iteration_dir(workspace, number)
    configuration = str(record.get("measured_as") or WITH)
    review = load_review(iteration)
    return iteration, configuration, [f for f in review.failures if f.configuration == configuration]


def build(
    workspace: Path,
    store: VersionStore,
    best: str,
    skill_name: str,
    earlier: list[dict],
    measured: tuple[Path, str] | None = None,
) -> str:
    """The brief for improving `best` (the version improved from, most often the current best; the brief
    says when it is not); `measured`: (iteration, configuration) whose failures to show instead of the ones
    of its own evaluation (the Results screen's "improve from these failures")."""
    files = store.files(best)
    iteration: Path | None
    if measured is not None:
        iteration, configuration = measured
        failed = [f for f in load_review(iteration).failures if f.configuration == configuration]
    else:
        iteration, configuration, failed = failures_of(workspace, best)
    record = read_evaluations(workspace).get(best) or {}
    rate = record.get("pass_rate")
    rated = f"pass rate {rate:.0%} on its evals" if isinstance(rate, (int, float)) else ""
    history = load_history(workspace, store)
    where = standing(workspace, history, best) if history is not None else None
    if where is None or where.is_best:
        said = f"{best}, the current best version" + (f" ({rated})." if rated else ".")
    else:  # improved from another version than the best: said, not passed off as the best
        best_rate = f", {where.best_rate:.0%}" if where.best_rate is not None else ""
        said = f"{best}" + (f" ({rated})" if rated else "") + f", not the best ({where.best}{best_rate})."
    lines = [
        f"# Improve the skill `{skill_name}`",
        "",
        f"The working folder holds the skill's files as of {said}",
        "Edit them so that the failed expectations below pass, without breaking what passes.",
        "Rules: change only the skill's files in this folder; do not create `evals/` (the evals test the",
        "skill and are not yours to change); keep SKILL.md under 500 lines; keep its front matter valid.",
        "When done, say in one paragraph what you changed and why.",
        "",
        "## The skill's files",
        "",
    ]
    lines += [f"- `{name}` ({len(data):,} bytes)" for name, data in sorted(files.items())]
    skill_md = files.get("SKILL.md", b"").decode("utf-8", "replace")
    lines += ["", "### SKILL.md", "", "```markdown", skill_md[:FILE_TEXT], "```", ""]
    if iteration is None:
        lines += ["## What failed", "", f"{best} has not been measured yet: no failures to show.", ""]
    else:
        whose = f"the runs of {iteration.name}" if measured is not None else f"{best}'s runs in {iteration.name}"
        lines += [f"## What failed ({whose}, {configuration})", ""]
        if not failed:
            lines.append("Nothing failed: every expectation passed.")
        for f in failed[:FAILURES]:
            evidence = " ".join(f.evidence.split())[:EVIDENCE]
            lines.append(f"- eval `{f.eval_id}`, run {f.run_number}, assertion `{f.id}`: {f.text}")
            lines.append(f"  evidence: {evidence}")
        if len(failed) > FAILURES:
            lines.append(f"- … and {len(failed) - FAILURES} more")
        lines.append("")
        notes = Feedback(iteration).reviews
        written = [(run, str(r.get("feedback", ""))) for run, r in notes.items() if r.get("feedback")]
        if written:
            lines += ["## What the person noted", ""]
            lines += [f"- {run}: {text}" for run, text in written[:FAILURES]]
            lines.append("")
        folders = list(dict.fromkeys(f.folder for f in failed if f.folder))[:EXCERPTS]
        if folders:
            lines += ["## Excerpts of failing runs", ""]
            for folder in folders:
                quoted = excerpt(iteration / folder, EXCERPT)
                lines += [f"### {folder}", "", "```", quoted or "(no conversation recorded)", "```", ""]
    if earlier:
        lines += ["## Earlier rounds", ""]
        for entry in earlier:
            lines.append(
                f"- round {entry['round']}: {entry.get('version') or 'no version'} from {entry['from']}: "
                f"{entry['outcome']}"
            )
        lines.append("")
    return "\n".join(lines)
