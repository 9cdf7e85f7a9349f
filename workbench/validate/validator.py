"""Validation of one document or one case: schema, then lint, then positions.

validate_document is what `workbench validate` and the editor call on load;
validate_case is what the editor calls after an edit to one case."""

from __future__ import annotations

from pathlib import Path

from workbench.formats import detect
from workbench.formats import pointer as ptr
from workbench.formats.dialect import EVALS, Format
from workbench.formats.document import Document, SyntaxProblem, load, syntax_for
from workbench.validate import lint, schema_check
from workbench.validate.diagnostic import ERROR, WARNING, Diagnostic, FileReport


def validate_document(doc: Document, fmt: Format, locate_all: bool = True) -> list[Diagnostic]:
    """All diagnostics of a document. locate_all=False leaves line and column unset:
    for data edited in memory, whose text on disk no longer matches it."""
    ctx = lint.LintContext(doc.path)
    found = schema_check.check(fmt, doc.data)
    if fmt.name == "skill-md":
        found += lint.skill_md_document(doc.data, ctx, getattr(doc, "body", ""), getattr(doc, "body_line", 1))
    else:
        found += lint.lint_document(fmt, doc.data, ctx)
    return locate(doc, found) if locate_all else found


def validate_case(
    doc: Document, fmt: Format, case_pointer: str, locate_all: bool = True, ctx: lint.LintContext | None = None
) -> list[Diagnostic]:
    """Diagnostics of the one case at case_pointer (e.g. "/evals/12"), as after an edit
    to it. Cross-case rules (duplicate ids) are checked by validate_document."""
    tokens = ptr.split(case_pointer)
    list_pointer = ptr.join(tokens[:-1])
    case_list = next((c for c in fmt.cases if c.pointer == list_pointer), None)
    if case_list is None:
        raise ValueError(f"{case_pointer} is not a case of a {fmt.title}")
    case = ptr.resolve(doc.data, tokens)
    found = schema_check.check(fmt, case, case_list.item_schema, tokens)
    found += lint.lint_case(fmt, case, tokens, ctx or lint.LintContext(doc.path))
    return locate(doc, found) if locate_all else found


def locate(doc: Document, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    for diagnostic in diagnostics:
        if diagnostic.line is None:
            diagnostic.line, diagnostic.column = doc.position(ptr.split(diagnostic.path))
    diagnostics.sort(key=lambda d: (d.line or 0, d.column or 0, d.severity != ERROR))
    return diagnostics


def syntax_diagnostic(problem: SyntaxProblem) -> Diagnostic:
    return Diagnostic(ERROR, "", problem.message, problem.line, problem.column)


def validate_file(
    path: Path, dialect: str | None = None, shown: str | None = None, explicit: bool = True
) -> FileReport:
    """Detect, parse and validate one file. `dialect` names an evals dialect that
    overrides detection: always for a file named explicitly, and for files found
    in a walk when their content shows an eval suite. Raises OSError when the
    file cannot be read."""
    shown = shown or str(path)
    forced = detect.EVALS_DIALECTS.get(dialect) if dialect else None
    place = detect.by_place(path)
    if not (forced and explicit) and place is None and syntax_for(path) == "markdown":
        return FileReport(shown, None, skipped=detect.NOT_OURS)
    parsed = load(path)
    if isinstance(parsed, SyntaxProblem):
        fmt = detect.place_default(place)
        if forced and (explicit or detect.is_suite_place(place)):
            fmt = forced
        if fmt is None and not explicit:  # found in a walk: not ours to judge
            return FileReport(shown, None, skipped=f"{detect.NOT_OURS} (and not parseable)")
        # A file the person named is always checked: that it does not parse is the answer.
        return FileReport(shown, fmt.name if fmt else None, [syntax_diagnostic(parsed)])
    found = detect.detect(place, parsed.data)
    if forced and (explicit or (found and found.format.family == EVALS)):
        return FileReport(shown, forced.name, validate_document(parsed, forced), detected="--dialect")
    if found is None:
        return FileReport(shown, None, skipped=detect.not_ours(place, parsed.data))
    if found.problem:
        # Checking the items as a suite would bury the one real mistake under many false ones.
        return FileReport(shown, found.format.name, [Diagnostic(ERROR, "", found.problem, 1, 1)], detected=found.why)
    found_diagnostics = validate_document(parsed, found.format)
    if found.mixed:
        other = next(name for name in detect.EVALS_DIALECTS if name not in (found.format.name, "chock"))
        found_diagnostics.insert(
            0,
            Diagnostic(
                WARNING,
                "",
                f"read as {found.format.name} ({found.why}) though it also looks like {other} "
                f"({found.mixed}); pass --dialect {other} to read it as that",
                1,
                1,
            ),
        )
    return FileReport(shown, found.format.name, found_diagnostics, detected=found.why)
