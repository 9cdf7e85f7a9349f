"""skill-creator's trigger eval set: a top-level array of {"query", "should_trigger"}
(its SKILL.md, "Generate trigger eval queries"; read by scripts/run_eval.py). It
tests whether a skill's description makes the agent consult it: each query is a
case. Other keys are kept: skill-creator's review page may add its own."""

from __future__ import annotations

from typing import Any

from workbench.formats.dialect import CaseList, Format

NAME = "trigger-set"
TRIGGERS = "triggers"  # a family of its own: its cases are queries, not evals to run
DEFAULT_FILE = "evals/trigger-evals.json"

KEYS = ("query", "should_trigger")


def looks_like(data: Any) -> bool:
    """Every object in a non-empty array has query or should_trigger, and none has a prompt
    (a bare array of evals is a different mistake)."""
    if not isinstance(data, list) or not data:
        return False
    items = [item for item in data if isinstance(item, dict)]
    return bool(items) and all(set(KEYS) & set(item) and "prompt" not in item for item in items)


FORMAT = Format(
    name=NAME,
    title="trigger eval set",
    family=TRIGGERS,
    schema_file="trigger-set.schema.json",
    cases=(CaseList("", "/items", id_field="query"),),
    sniff=looks_like,
)
