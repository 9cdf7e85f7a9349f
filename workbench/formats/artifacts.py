"""skill-creator's artifacts (seed 003) and the two files its viewer writes.

Each is recognised by its file name first and by its top-level keys second."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from workbench.formats.configurations import CONFIGURATION_PAIRS as CONFIGURATION_PAIRS
from workbench.formats.dialect import ARTIFACT, Format, keys_of

# A version's name: exactly "v" and ASCII digits (no revision syntax such as v1~1,
# no trailing newline, no other scripts' digits). One rule for the CLI, git and history.json.
VERSION_NAME = re.compile(r"v([0-9]+)")


def _has(*required: str) -> Callable[[Any], bool]:
    def sniff(data: Any) -> bool:
        return set(required) <= keys_of(data)

    return sniff


HISTORY = Format("history", "history.json", ARTIFACT, "history.schema.json", sniff=_has("iterations", "current_best"))
GRADING = Format("grading", "grading.json", ARTIFACT, "grading.schema.json", sniff=_has("expectations", "summary"))
METRICS = Format(
    "metrics", "metrics.json", ARTIFACT, "metrics.schema.json", sniff=_has("tool_calls", "total_tool_calls")
)
TIMING = Format(
    "timing",
    "timing.json",
    ARTIFACT,
    "timing.schema.json",
    sniff=lambda d: (
        bool({"executor_start", "executor_duration_seconds"} & keys_of(d))
        or {"total_tokens", "duration_ms"} <= keys_of(d)
    ),
)
BENCHMARK = Format(
    "benchmark",
    "benchmark.json",
    ARTIFACT,
    "benchmark.schema.json",
    sniff=_has("metadata", "runs", "run_summary"),
    hints={"properties/runs/items/required": "skill-creator's viewer reads these names exactly"},
)
COMPARISON = Format(
    "comparison", "comparison.json", ARTIFACT, "comparison.schema.json", sniff=_has("winner", "reasoning")
)
ANALYSIS = Format("analysis", "analysis.json", ARTIFACT, "analysis.schema.json", sniff=_has("comparison_summary"))
EVAL_METADATA = Format(
    "eval_metadata", "eval_metadata.json", ARTIFACT, "eval_metadata.schema.json", sniff=_has("eval_id", "prompt")
)
FEEDBACK = Format(
    "feedback",
    "feedback.json",
    ARTIFACT,
    "feedback.schema.json",
    sniff=lambda d: isinstance(d, dict) and isinstance(d.get("reviews"), list),
)


FORMATS = (HISTORY, GRADING, METRICS, TIMING, BENCHMARK, COMPARISON, ANALYSIS, EVAL_METADATA, FEEDBACK)

_BY_NAME = {f.title: f for f in FORMATS}
_COMPARISON_NAME = re.compile(r"comparison(-\d+)?\.json")


def by_file_name(name: str) -> Format | None:
    if _COMPARISON_NAME.fullmatch(name):
        return COMPARISON
    return _BY_NAME.get(name)
