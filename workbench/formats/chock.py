"""The chock dialect: a policy's or skill's evals/suite.yaml (seed 000), modern
`eval_suite` or legacy `suite`, in YAML with comments or JSON."""

from __future__ import annotations

from typing import Any

from workbench.formats.dialect import EVALS, CaseList, Format

NAME = "chock"

SUITE_CASES = "/suite/cases"
EVAL_SUITE_CASES = "/eval_suite/test_cases"
REGEX_FIELDS = ("expected_error_pattern",)
# The categories a suite needs at least one case of, to test triggering both ways
# and the behaviour itself.
REQUIRED_CATEGORIES = ("trigger", "negative_trigger", "behavior")
REFUSED_WITHOUT = ("negative_trigger", "behavior")  # chock's loader errors without these; a missing trigger warns
GATE_FIELDS = ("files", "head_files", "repo_files", "branch", "event", "push_refs")
REPLAY_FILE_FIELDS = ("head_files", "files", "repo_files")  # path -> text: the replay writes them in a repository


def sniff(data: Any) -> bool:
    return isinstance(data, dict) and bool({"suite", "eval_suite"} & set(data)) and "evals" not in data


FORMAT = Format(
    name=NAME,
    title="chock eval suite",
    family=EVALS,
    schema_file="chock.suite.schema.json",
    cases=(
        CaseList(SUITE_CASES, "/properties/suite/properties/cases/items"),
        CaseList(EVAL_SUITE_CASES, "/properties/eval_suite/properties/test_cases/items"),
    ),
    sniff=sniff,
    hints={
        "oneOf": "a chock suite has exactly one of `suite` (legacy: policy_id, cases) "
        "or `eval_suite` (skill_id, metrics, test_cases)",
    },
)
