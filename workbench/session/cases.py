"""What a person does to a suite's cases: add one, duplicate it, delete it, move it, accept a drafted one.
Each is worked out here as the edits it makes (an unsaved change, undone with ctrl+z in its file) and
where the editor goes next; the screen only applies them and shows the result. A case is never born
with an id its suite already has."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.formats import pointer as ptr
from workbench.formats.drafts import is_drafts, suite_of
from workbench.formats.edits import Insert, Move, Operation, Remove
from workbench.formats.fields import case_spec, copy_of

if TYPE_CHECKING:
    from workbench.session import SkillFile, SkillSession

DOCUMENT = ""  # the file itself, when no case is left to go to


class CaseRefused(Exception):
    """The operation cannot be done here; the message says why, for a person. severity: how the screen says it."""

    def __init__(self, message: str, severity: str = "warning") -> None:
        super().__init__(message)
        self.severity = severity


@dataclass(frozen=True)
class Selected:
    """The case a pointer selects: its file, the list holding it, that list's pointer and its index."""

    file: SkillFile
    cases: list[Any]
    list_pointer: str
    index: int


@dataclass(frozen=True)
class Change:
    """One edit of one file, and the place to open after it (None: stay where the editor is)."""

    file: SkillFile
    operation: Operation
    then: str | None


def selected(skill_file: SkillFile | None, pointer: str | None) -> Selected | None:
    """The case at pointer in the file, or None: no file, no case selected, or it is no longer there
    (the file does not parse now, or its text was edited)."""
    if skill_file is None or skill_file.document is None or pointer is None or pointer == DOCUMENT:
        return None
    tokens = ptr.split(pointer)
    try:
        index = int(tokens[-1])
        cases = ptr.resolve(skill_file.document.data, tokens[:-1])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    if not isinstance(cases, list) or not 0 <= index < len(cases):
        return None
    return Selected(skill_file, cases, ptr.join(tokens[:-1]), index)


def _list_at(data: Any, pointer: str) -> list[Any] | None:
    """The list at pointer in a document's data; None when there is none there."""
    try:
        found = ptr.resolve(data, ptr.split(pointer))
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return found if isinstance(found, list) else None


def new_case(skill_file: SkillFile, pointer: str | None) -> Change:
    """A blank case after the selected one (else at the end of the file's first case list), with a fresh id
    when the format has one. Raises CaseRefused when the file has no case list to add to."""
    fmt = skill_file.format
    if skill_file.document is None or fmt is None or not fmt.cases:
        raise CaseRefused("This file holds no cases.")
    where = selected(skill_file, pointer)
    list_pointer = where.list_pointer if where else fmt.cases[0].pointer
    cases = _list_at(skill_file.document.data, list_pointer)
    if cases is None:  # missing, or not an array (the schema says so): nothing to insert into
        raise CaseRefused("This suite has no case list to add to.")
    index = where.index + 1 if where else len(cases)
    spec = case_spec(fmt, list_pointer)
    blank = spec.blank()
    id_spec = spec.field("id")
    if id_spec is not None:  # a fresh id, so the new case is not born a duplicate
        taken = {c.get("id") for c in cases if isinstance(c, dict)}
        if id_spec.kind == "integer":
            blank["id"] = max([i for i in taken if isinstance(i, int)], default=0) + 1
        else:
            number = 1
            while f"new-case-{number}" in taken:
                number += 1
            blank["id"] = f"new-case-{number}"
    at = ptr.child(list_pointer, index)
    return Change(skill_file, Insert(at, blank), at)


def duplicate(case: Selected) -> Change:
    """A copy right after the case, with an id of its own (never a duplicate-id error at once)."""
    at = ptr.child(case.list_pointer, case.index + 1)
    return Change(case.file, Insert(at, copy_of(case.cases[case.index], case.cases)), at)


def delete(case: Selected) -> Change:
    """The case removed; the editor goes to the case now at its place (the one before, when it was last)."""
    remaining = len(case.cases) - 1
    then = ptr.child(case.list_pointer, min(case.index, remaining - 1)) if remaining > 0 else DOCUMENT
    return Change(case.file, Remove(ptr.child(case.list_pointer, case.index)), then)


def move(case: Selected, step: int) -> Change | None:
    """The case moved `step` places (None past either end); the editor follows it."""
    to = case.index + step
    if not 0 <= to < len(case.cases):
        return None
    return Change(case.file, Move(ptr.child(case.list_pointer, case.index), to), ptr.child(case.list_pointer, to))


@dataclass(frozen=True)
class Accepted:
    """A drafted case accepted: added at the end of its suite, removed from the drafts (two unsaved edits)."""

    into_suite: Change
    out_of_drafts: Change
    renamed: tuple[str, str] | None  # (its drafted id, its id in the suite) when the drafted id was taken there


def accept_draft(session: SkillSession, case: Selected | None) -> Accepted:
    """The selected drafted case into its suite, with an id of its own there. Raises CaseRefused."""
    if case is None or not is_drafts(case.file.rel):
        raise CaseRefused("Select a drafted case first (in a .drafts.json file).")
    suite = session.file(suite_of(Path(case.file.rel)).as_posix())
    cases_at = suite.format.cases[0].pointer if suite is not None and suite.format and suite.format.cases else None
    if case.list_pointer != cases_at:  # an assertion or a turn of a draft is not a case of the suite
        raise CaseRefused("Select a drafted case itself (not a part of one) to accept it.")
    if suite is None or suite.document is None:
        raise CaseRefused(f"The suite of {case.file.rel} is not open here (missing, or it does not parse).", "error")
    cases = _list_at(suite.document.data, case.list_pointer)
    if cases is None:
        raise CaseRefused(f"{suite.rel} has no case list at {case.list_pointer}.", "error")
    drafted = case.cases[case.index]
    taken = {c.get("id") for c in cases if isinstance(c, dict) and isinstance(c.get("id"), (str, int))}
    accepted, renamed = drafted, None
    if isinstance(drafted, dict) and isinstance(drafted.get("id"), (str, int)) and drafted.get("id") in taken:
        accepted = copy_of(drafted, cases)  # never a duplicate id in the suite
        renamed = (str(drafted.get("id")), str(accepted.get("id")))
    at = ptr.child(case.list_pointer, len(cases))
    return Accepted(
        Change(suite, Insert(at, accepted), at),
        Change(case.file, Remove(ptr.child(case.list_pointer, case.index)), None),
        renamed,
    )
