"""The slow-powers dialect: evals/evals.json as eval-magic runs it (seed 002)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.formats.dialect import EVALS, CaseList, Format

NAME = "slow-powers"

# Fields holding Rust regexes and fixture paths, relative to one case.
REGEX_FIELDS = ("turns/*/agent_response_matches", "assertions/*/pattern", "assertions/*/expect_stdout")
FILE_FIELDS = ("files/*", "assertions/*/setup_files/*")
# The checks a transcript_check may name: eval-magic's runner knows these two and no other.
TRANSCRIPT_CHECKS = ("tool_invocation_matches", "assistant_message_matches")
# The text fields each assertion type cannot run without (the id names its result).
RUNNABLE_FIELDS = {
    "transcript_check": ("id", "check"),
    "llm_judge": ("id", "rubric"),
    "command_check": ("id", "command"),
    "diff_scope": ("id",),
}


def fixtures_root(case: Any, evals_dir: Path | None) -> tuple[Path | None, str]:
    """Where a case's `files` are read from: evals/, or evals/<files_root> when set
    (eval-magic 'files_root'; the lint and the run refuse one that climbs out)."""
    root = case.get("files_root") if isinstance(case, dict) else None
    if evals_dir is None or not isinstance(root, str) or not root:
        return evals_dir, "evals folder"
    return evals_dir / root, f"files_root ({evals_dir.name}/{root})"


def sniff(data: Any) -> bool:
    return evals_dialect(data) == NAME


def evals_dialect(data: Any) -> str | None:
    """slow-powers or skill-creator, for a document shaped like {skill_name, evals}.

    The two share a file name; they differ in ids (kebab strings vs integers) and in
    what a check is (typed assertion objects vs expectation strings). Ties go to
    slow-powers, whose schema is the stricter contract."""
    if not isinstance(data, dict) or "evals" not in data:
        return None
    creator = powers = 0
    cases = data["evals"] if isinstance(data["evals"], list) else []
    for case in cases:
        if not isinstance(case, dict):
            continue
        case_id = case.get("id")
        if isinstance(case_id, int) and not isinstance(case_id, bool):
            creator += 1
        elif isinstance(case_id, str):
            powers += 1
        if "expectations" in case:
            creator += 1
        checks = case.get("assertions")
        if isinstance(checks, list) and checks:
            if all(isinstance(c, str) for c in checks):
                creator += 1
            elif any(isinstance(c, dict) for c in checks):
                powers += 1
        if any(
            k in case
            for k in ("turns", "responder", "files_root", "codebase", "skill_should_trigger", "runs", "isolation")
        ):
            powers += 1
    return "skill-creator" if creator > powers else NAME


FORMAT = Format(
    name=NAME,
    title="slow-powers eval suite",
    family=EVALS,
    schema_file="slow-powers.evals.schema.json",
    cases=(CaseList("/evals", "/definitions/eval"),),
    sniff=sniff,
    hints={
        "definitions/scriptedTurn/allOf/0/then/not": "agent_response_matches is only for turns with "
        "deliver_when: agent_asks; remove it or change deliver_when",
        "definitions/diffScope/anyOf": "diff_scope needs a limit: max_files_touched, max_lines_changed, or both",
        "definitions/eval/properties/id/pattern": "expected a kebab-case id: lowercase letters, digits and hyphens, "
        "not starting with a hyphen",
    },
)
