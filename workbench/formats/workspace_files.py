"""The workbench's own workspace files, so `validate` checks them as ours instead
of listing them as unknown. Their names are common ones (a plan.json of another
tool is not ours), so each is recognised by its name and its keys together."""

from __future__ import annotations

from workbench.formats.dialect import ARTIFACT, Format, keys_of

PLAN = Format(
    "workbench-plan",
    "plan.json",
    ARTIFACT,
    "workbench.plan.schema.json",
    sniff=lambda d: {"suite_file", "dispatches"} <= keys_of(d),
)
RUN = Format(
    "workbench-run",
    "run.json",
    ARTIFACT,
    "workbench.run.schema.json",
    sniff=lambda d: {"key", "configuration", "run_number", "status"} <= keys_of(d),
)

FORMATS = (PLAN, RUN)
BY_FILE_NAME = {f.title: f for f in FORMATS}
