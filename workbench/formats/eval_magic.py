"""eval-magic's own results (as in slow-powers' evals/baseline/): recognised and
read as what they are, so they are never reported as broken skill-creator files."""

from __future__ import annotations

from workbench.formats.dialect import RESULTS, Format, keys_of

GRADING = Format(
    "eval-magic-grading",
    "eval-magic grading",
    RESULTS,
    "eval-magic.grading.schema.json",
    sniff=lambda d: "assertion_results" in keys_of(d),
)
BENCHMARK = Format(
    "eval-magic-benchmark",
    "eval-magic benchmark",
    RESULTS,
    "eval-magic.benchmark.schema.json",
    sniff=lambda d: "conditions_compared" in keys_of(d),
)

FORMATS = (GRADING, BENCHMARK)
