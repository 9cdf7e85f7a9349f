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
from workbench.validate.diagnostic import ERROR, Diagnostic, FileReport


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


def case_of(fmt: Format, pointer: str) -> str | None:
    """The case a pointer lies in ("/evals/3" for "/evals/3/turns/0"), if any."""
    tokens = ptr.split(pointer)
    for case_list in fmt.cases:
        prefix = ptr.split(case_list.pointer)
        if tokens[: len(prefix)] == prefix and len(tokens) > len(prefix) and tokens[len(prefix)].isdigit():
            return ptr.join(tokens[: len(prefix) + 1])
    return None


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
    in a walk when they were detected as an eval suite. Raises OSError when the
    file cannot be read."""
    shown = shown or str(path)
    forced = detect.EVALS_DIALECTS.get(dialect) if dialect else None
    place = detect.by_place(path)
    if not (forced and explicit) and place is None and syntax_for(path) == "markdown":
        return FileReport(shown, None, skipped="not a format the workbench reads")
    parsed = load(path)
    if isinstance(parsed, SyntaxProblem):
        fmt = detect.place_default(place)
        if forced and (explicit or (fmt and fmt.family == EVALS)):
            fmt = forced
        if fmt is None and not explicit:  # found in a walk: not ours to judge
            return FileReport(shown, None, skipped="not a format the workbench reads (and not parseable)")
        # A file the person named is always checked: that it does not parse is the answer.
        return FileReport(shown, fmt.name if fmt else None, [syntax_diagnostic(parsed)])
    fmt = detect.refine(place, parsed.data)
    if forced and (explicit or (fmt and fmt.family == EVALS)):
        fmt = forced
    if fmt is None:
        return FileReport(shown, None, skipped="not a format the workbench reads")
    return FileReport(shown, fmt.name, validate_document(parsed, fmt))
