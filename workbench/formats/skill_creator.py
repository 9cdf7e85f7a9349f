"""The skill-creator dialect: evals/evals.json with integer ids and expectation
strings (seed 003); `assertions` is accepted as the newer name of the same list."""

from __future__ import annotations

from typing import Any

from workbench.formats.dialect import EVALS, CaseList, Format
from workbench.formats.slow_powers import evals_dialect

NAME = "skill-creator"

FILE_FIELDS = ("files/*",)


def sniff(data: Any) -> bool:
    return evals_dialect(data) == NAME


FORMAT = Format(
    name=NAME,
    title="skill-creator eval suite",
    family=EVALS,
    schema_file="skill-creator.evals.schema.json",
    cases=(CaseList("/evals", "/definitions/eval"),),
    sniff=sniff,
)
