"""Which format a file is in. Its `$schema`/`$id` when present; otherwise its
content's shape decides, and its name and place (evals/evals.json,
evals/suite.yaml, evals/trigger-evals.json, history.json, ...) only break ties:
other runners keep files of their own under those names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.formats import (
    artifacts,
    chock,
    eval_magic,
    shapes,
    skill_creator,
    skill_md,
    slow_powers,
    trigger_set,
    workspace_files,
)
from workbench.formats.dialect import EVALS, Format

EVALS_DIALECTS = {f.name: f for f in (slow_powers.FORMAT, skill_creator.FORMAT, chock.FORMAT)}
ALL_FORMATS: tuple[Format, ...] = (
    *EVALS_DIALECTS.values(),
    trigger_set.FORMAT,
    *eval_magic.FORMATS,
    *artifacts.FORMATS,
    *workspace_files.FORMATS,
    skill_md.FORMAT,
)
NOT_OURS = "not a format the workbench reads"

_EVALS_FILE = re.compile(r"(evals|.+\.evals|evals\..+)\.json")
_SUITE_FILE = re.compile(r"suite\.(ya?ml|json)")
# skill-creator leaves the name to the user: trigger-evals.json (our default), trigger_eval_set.json, ...
_TRIGGER_FILE = re.compile(r"(.*[-_.])?trigger[-_]?evals?([-_.].*)?\.json", re.IGNORECASE)
# Another runner's result written under an artifact's name.
_RESULTS_TWIN = {"grading": eval_magic.GRADING, "benchmark": eval_magic.BENCHMARK}


@dataclass(frozen=True)
class Detection:
    """What a document was read as, and why (for the diagnostics of a doubtful file)."""

    format: Format
    why: str
    mixed: str = ""  # evidence for another dialect that was outweighed
    problem: str = ""  # the shape is one of ours but not a document of it (a bare array of evals)


def by_place(path: Path) -> Format | str | None:
    """The format a file's name and folder suggest: a Format, "evals-json" for an
    evals.json of either JSON dialect, or None. A suggestion, not a verdict."""
    name = path.name
    if name == "SKILL.md":
        return skill_md.FORMAT
    if _TRIGGER_FILE.fullmatch(name):
        return trigger_set.FORMAT
    if path.parent.name == "evals":
        if _EVALS_FILE.fullmatch(name):
            return "evals-json"
        if _SUITE_FILE.fullmatch(name):
            return chock.FORMAT
    return artifacts.by_file_name(name) or workspace_files.BY_FILE_NAME.get(name)


def is_suite_place(place: Format | str | None) -> bool:
    """A place where a person keeps a suite or trigger set: its syntax errors are theirs to fix."""
    return place == "evals-json" or (isinstance(place, Format) and place.family in (EVALS, trigger_set.TRIGGERS))


def by_schema_id(data: Any) -> Format | None:
    if not isinstance(data, dict):
        return None
    for key in ("$schema", "$id"):
        value = data.get(key)
        if isinstance(value, str):
            for fmt in ALL_FORMATS:
                if fmt.schema_id and value.rstrip("#") == fmt.schema_id:
                    return fmt
    return None


def detect(place: Format | str | None, data: Any) -> Detection | None:
    """The format parsed data is in, judged by its content; `place` is what its
    name and folder suggest (see by_place). None: not a format the workbench reads."""
    if place is skill_md.FORMAT:  # Markdown with frontmatter: no other format is, whatever its keys
        return Detection(skill_md.FORMAT, "its name, SKILL.md")
    declared = by_schema_id(data)
    if declared:
        return Detection(declared, f"its $schema names the {declared.title} schema")
    if isinstance(data, list) and (found := _array(place, data)):
        return found
    if shapes.is_chock(data, at_place=place is chock.FORMAT):
        return Detection(chock.FORMAT, "a chock suite: `eval_suite` or `suite` with a chock suite's keys")
    if shapes.is_evals(data, at_place=place == "evals-json"):
        weighed = shapes.weigh(data.get("evals"))
        return Detection(EVALS_DIALECTS[weighed.dialect], weighed.why, weighed.against)
    if isinstance(place, Format) and place.family not in (EVALS, trigger_set.TRIGGERS):
        return _named_artifact(place, data)
    for fmt in (*eval_magic.FORMATS, *artifacts.FORMATS, *workspace_files.FORMATS):
        if fmt.sniff(data):
            return Detection(fmt, f"its keys are those of a {fmt.title}")
    return None


def _array(place: Format | str | None, data: list) -> Detection | None:
    # A trigger set is an array by design; a suite never is. Tell them apart by their items.
    if trigger_set.looks_like(data) or (not data and place is trigger_set.FORMAT):
        return Detection(trigger_set.FORMAT, "an array of {query, should_trigger}")
    if shapes.is_bare_evals(data):
        weighed = shapes.weigh(data)
        dialect = EVALS_DIALECTS[weighed.dialect]
        return Detection(
            dialect,
            weighed.why,
            problem=f"a bare array of {len(data)} evals; expected a suite object "
            '{"skill_name": ..., "evals": [...]} with these evals as its "evals"',
        )
    return None


def _named_artifact(place: Format, data: Any) -> Detection | None:
    if place in workspace_files.FORMATS:
        # plan.json and run.json are common names: ours only with our keys.
        return Detection(place, f"a workbench {place.title}") if place.sniff(data) else None
    twin = _RESULTS_TWIN.get(place.name)
    if twin and twin.sniff(data):
        return Detection(twin, f"its keys are those of an {twin.title}")
    return Detection(place, f"its name, {place.title}")


def refine(place: Format | str | None, data: Any) -> Format | None:
    """The format of parsed data whose name and folder suggest `place`."""
    found = detect(place, data)
    return found.format if found else None


def by_structure(data: Any) -> Format | None:
    """The format of data found anywhere, by its content alone."""
    return refine(None, data)


def not_ours(place: Format | str | None, data: Any) -> str:
    """Why a parsed file is skipped; at one of our places, what its content lacks."""
    if data is None:
        return f"{NOT_OURS} (it is empty)"
    if isinstance(data, list) and is_suite_place(place):
        return f"{NOT_OURS}: a top-level array whose items are neither {{query, should_trigger}} nor eval cases"
    if place == "evals-json":
        return f"{NOT_OURS}: no skill_name, and no `evals` list of cases with a prompt (another runner's file?)"
    if place is chock.FORMAT:
        return (
            f"{NOT_OURS}: no `eval_suite` (skill_id, test_cases) or `suite` (policy_id, cases) "
            "as chock writes them (another runner's file?)"
        )
    if place is trigger_set.FORMAT:
        return f"{NOT_OURS}: expected an array of {{query, should_trigger}}"
    return NOT_OURS


def place_default(place: Format | str | None) -> Format | None:
    """The format to report a file's syntax errors under, before it could be parsed."""
    if place == "evals-json":
        return slow_powers.FORMAT
    return place if isinstance(place, Format) else None
