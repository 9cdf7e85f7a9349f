"""An open skill: its files, their edits, their diagnostics, and what happens when
a file changes on disk. The TUI is a view of this; it holds no state of its own
about documents, so everything here is testable without a screen."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from workbench import config
from workbench.formats import detect, save, skill_md, trigger_set
from workbench.formats import pointer as ptr
from workbench.formats.dialect import EVALS, Format
from workbench.formats.document import (
    Document,
    MarkdownDocument,
    SyntaxProblem,
    decode,
    load,
    parse,
    read_bytes,
    syntax_for,
)
from workbench.formats.editable import EditableDocument, SkillMdDocument, open_document
from workbench.formats.edits import Batch, Operation
from workbench.validate import lint, schema_check
from workbench.validate.diagnostic import ERROR, WARNING, Diagnostic
from workbench.validate.validator import locate, syntax_diagnostic, validate_case

OK, DELETED, UNPARSED = "ok", "deleted", "unparsed"
SUITE_FAMILIES = (EVALS, trigger_set.TRIGGERS)  # what a skill's evals/ folder holds for a person to edit

# What an external change did to an open file.
RELOADED, CONFLICT, ECHO, GONE, UNCHANGED = "reloaded", "conflict", "echo", "gone", "unchanged"


class SaveConflict(Exception):
    """The file on disk is not the text we loaded or last saved: someone else wrote
    it. Saving over it would lose their edit, so nothing was written."""

    def __init__(self, rel: str) -> None:
        super().__init__(f"{rel} changed on disk since it was loaded; nothing was written")
        self.rel = rel


@dataclass
class Merged:
    """A three-way merge of the loaded text, ours and the disk's: the merged text,
    or why there is none (the edits overlap, or the result does not parse)."""

    text: str | None
    problem: str | None = None


def read_exact(path: Path) -> str:
    """The file's text, every byte kept: bytes that are not UTF-8 survive as
    surrogate escapes, so two different files never compare equal. Raises OSError."""
    return path.read_bytes().decode("utf-8", errors="surrogateescape")


def _shown(text: str) -> str:
    """Text safe to show on screen: undecodable bytes as U+FFFD (display only)."""
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


@dataclass
class SkillFile:
    """One file of the skill as the workbench holds it."""

    path: Path
    rel: str
    format: Format | None
    document: EditableDocument | None = None
    problem: Diagnostic | None = None  # the file does not parse
    state: str = OK
    disk_text: str | None = None  # the text last read from or written to disk (exact: see read_exact)
    raw_text: str | None = (
        None  # typed in the text view and not in the data: it does not parse, or the file has no data
    )
    raw_problem: Diagnostic | None = None  # why raw_text does not parse
    refused: str | None = None  # why the text cannot be edited here (not UTF-8): never re-encoded
    case_diagnostics: dict[str, list[Diagnostic]] = field(default_factory=dict)
    other_diagnostics: list[Diagnostic] = field(default_factory=list)  # outside cases, and cross-case rules
    shell_diagnostics: list[Diagnostic] = field(default_factory=list)  # the schema, outside cases

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every problem of the file. Cached: big suites ask for it several times
        per keystroke; revalidation resets it."""
        if self.raw_problem:
            return [self.raw_problem]
        if self.problem:
            return [self.problem]
        cached = self.__dict__.get("_all")
        if cached is None:
            cached = list(self.other_diagnostics)
            for found in self.case_diagnostics.values():
                cached.extend(found)
            self.__dict__["_all"] = cached
        return cached

    def changed(self) -> None:
        self.__dict__.pop("_all", None)

    @property
    def dirty(self) -> bool:
        return self.raw_text is not None or bool(self.document and self.document.dirty)

    def unsaved_text(self) -> str:
        """What saving would write: the typed text, else the data in the file's own text."""
        if self.raw_text is not None:
            return self.raw_text
        if self.document is not None:
            return self.document.render()
        return _shown(self.disk_text or "")

    def shown_text(self) -> str:
        """The text the text view shows."""
        return self.unsaved_text()

    def position_shown(self, diagnostic: Diagnostic) -> tuple[int, int] | None:
        """Where a problem is in the text the text view shows. With unsaved edits,
        positions from the last saved text are stale, and new problems have none:
        they are located in the rendered text."""
        if diagnostic is self.raw_problem or self.raw_text is not None:
            return (diagnostic.line, diagnostic.column or 1) if diagnostic.line else None
        document = self.document
        if document is None or (not document.dirty and diagnostic.line):
            return (diagnostic.line, diagnostic.column or 1) if diagnostic.line else None
        parsed = parse(document.render(), document.syntax, self.path)
        if isinstance(parsed, SyntaxProblem):
            return None
        tokens = ptr.split(diagnostic.path) if diagnostic.path.startswith("/") else ()
        if isinstance(parsed, MarkdownDocument):
            if tokens[:1] == ("body",):
                return parsed.body_line, 1
            tokens = tokens[1:]
        return parsed.position(tokens)

    def counts(self) -> tuple[int, int]:
        found = self.diagnostics
        errors = sum(d.severity == ERROR for d in found)
        return errors, len(found) - errors

    def cases(self) -> list[tuple[str, object]]:
        """(pointer, case) for every case of the suite, in order."""
        if not (self.document and self.format):
            return []
        out: list[tuple[str, object]] = []
        for case_list in self.format.cases:
            try:
                items = ptr.resolve(self.document.data, ptr.split(case_list.pointer))
            except (KeyError, IndexError, TypeError, ValueError):
                continue
            if isinstance(items, list):
                out.extend((f"{case_list.pointer}/{index}", case) for index, case in enumerate(items))
        return out

    def case_problems(self, case_pointer: str) -> tuple[int, int]:
        found = list(self.case_diagnostics.get(case_pointer, ()))
        found += [d for d in self.other_diagnostics if d.path == case_pointer or d.path.startswith(case_pointer + "/")]
        return sum(d.severity == ERROR for d in found), sum(d.severity == WARNING for d in found)


def count_words(errors: int, warnings: int) -> str:
    return f"{errors} error{'' if errors == 1 else 's'} · {warnings} warning{'' if warnings == 1 else 's'}"


def _ours(skill_file: SkillFile) -> bool:
    """Not another runner's file at a suite's place: it parsed, and in no format of ours."""
    return skill_file.format is not None or skill_file.state != OK


class SkillSession:
    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.files: list[SkillFile] = [f for f in map(self._open, self.discover()) if _ours(f)]

    @property
    def name(self) -> str:
        skill = self.file("SKILL.md")
        if skill and skill.document is None and skill.path.exists():
            return skill_md.read_name(skill.path) or self.root.name
        return self.root.name

    def discover(self) -> list[Path]:
        """SKILL.md, then every eval suite and trigger set under evals/, sorted (evals.json first).
        A file at a suite's place is listed; __init__ drops it when its content is another runner's."""
        found = [self.root / "SKILL.md"] if (self.root / "SKILL.md").is_file() else []
        evals = self.root / "evals"
        suites = []
        if evals.is_dir():
            for path in sorted(evals.iterdir()):
                if path.is_dir() or path.suffix.lower() not in (".json", ".yaml", ".yml"):
                    continue
                place = detect.by_place(path)
                if not path.is_file() and place is None:
                    continue  # not a regular file, and its name promises no suite: not ours
                # A FIFO, device or broken link named like a suite is listed, with why it cannot be read.
                if detect.is_suite_place(place):
                    suites.append(path)
                elif place is None:
                    parsed = load(path)
                    if not isinstance(parsed, SyntaxProblem):
                        fmt = detect.by_structure(parsed.data)
                        if fmt and fmt.family in SUITE_FAMILIES:
                            suites.append(path)
        suites.sort(key=lambda p: (p.name != "evals.json", p.name))
        return found + suites

    def file(self, rel: str) -> SkillFile | None:
        return next((f for f in self.files if f.rel == rel), None)

    def primary(self) -> SkillFile | None:
        """The file a skill opens on: its first eval suite, else SKILL.md."""
        suites = [f for f in self.files if f.rel != "SKILL.md"]
        return suites[0] if suites else (self.files[0] if self.files else None)

    def counts(self) -> tuple[int, int]:
        errors = warnings = 0
        for skill_file in self.files:
            e, w = skill_file.counts()
            errors, warnings = errors + e, warnings + w
        return errors, warnings

    # ------------------------------------------------------------ loading

    def _open(self, path: Path) -> SkillFile:
        skill_file = SkillFile(path, path.relative_to(self.root).as_posix(), None)
        self._load_into(skill_file)
        return skill_file

    def _load_into(self, skill_file: SkillFile) -> None:
        skill_file.changed()
        path = skill_file.path
        skill_file.raw_text = skill_file.raw_problem = skill_file.refused = None
        try:
            raw = read_bytes(path)  # bounded: a FIFO, a device or a huge file is a problem, not a hang
        except FileNotFoundError:
            skill_file.state, skill_file.document, skill_file.problem = DELETED, None, None
            skill_file.disk_text = None
            return
        if isinstance(raw, SyntaxProblem):
            skill_file.refused = f"{skill_file.rel} {raw.message}: it is not opened for editing"
            skill_file.format = skill_file.format or detect.place_default(detect.by_place(path))
            skill_file.state, skill_file.document, skill_file.disk_text = UNPARSED, None, None
            skill_file.problem = syntax_diagnostic(raw)
            skill_file.case_diagnostics, skill_file.other_diagnostics, skill_file.shell_diagnostics = {}, [], []
            return
        skill_file.disk_text = raw.decode("utf-8", errors="surrogateescape")
        decoded = decode(raw)
        if isinstance(decoded, SyntaxProblem):
            # Editing it would write it back as UTF-8: different bytes than the user's.
            skill_file.refused = (
                f"{skill_file.rel} is not UTF-8 (line {decoded.line}, column {decoded.column}): it is shown "
                "read-only; convert it to UTF-8 to edit it here (the workbench never re-encodes a file)"
            )
            parsed: Document | SyntaxProblem = decoded
        else:
            parsed = parse(decoded, syntax_for(path), path)
        place = detect.by_place(path)
        if isinstance(parsed, SyntaxProblem):
            skill_file.format = skill_file.format or detect.place_default(place)
            skill_file.state, skill_file.document = UNPARSED, None
            skill_file.problem = syntax_diagnostic(parsed)
            skill_file.case_diagnostics, skill_file.other_diagnostics, skill_file.shell_diagnostics = {}, [], []
            return
        skill_file.format = detect.refine(place, parsed.data) or skill_file.format
        skill_file.state, skill_file.problem = OK, None
        skill_file.document = open_document(path, skill_file.format, parsed)
        self.revalidate(skill_file)

    # ------------------------------------------------------------ validation

    def revalidate(self, skill_file: SkillFile, operation: Operation | None = None) -> None:
        """Re-check after an edit: just the touched case when the edit stays inside
        one, every case otherwise; the document's own rules (duplicate ids, ...) and
        the schema outside the cases as needed."""
        skill_file.changed()
        document = skill_file.document
        if document is None or skill_file.format is None:
            return
        fmt = skill_file.format
        current = document.current()
        clean = not document.dirty
        if isinstance(document, SkillMdDocument):
            skill_file.other_diagnostics = self._skill_md_diagnostics(document, clean)
            return
        touched = None  # the one known case the edit stays inside, if any (not the whole case itself)
        if operation is not None:
            touched = fmt.case_of(operation.pointer)
            if touched == operation.pointer or touched not in skill_file.case_diagnostics:
                touched = None
        if touched is not None:
            skill_file.case_diagnostics[touched] = validate_case(current, fmt, touched, locate_all=clean)
        else:
            # One schema pass over the whole document (its fast path when valid),
            # each problem filed under its case; then each case's own rules.
            cases = skill_file.cases()
            buckets: dict[str, list[Diagnostic]] = {pointer: [] for pointer, _ in cases}
            shell: list[Diagnostic] = []
            for diagnostic in schema_check.check(fmt, current.data):
                owner = fmt.case_of(diagnostic.path)
                (buckets[owner] if owner in buckets else shell).append(diagnostic)
            ctx = lint.LintContext(current.path)  # shared: fixture checks are memoised in it
            for pointer, case in cases:
                buckets[pointer] += lint.lint_case(fmt, case, ptr.split(pointer), ctx)
                if clean and buckets[pointer]:
                    locate(current, buckets[pointer])
            skill_file.shell_diagnostics = locate(current, shell) if clean else shell
            skill_file.case_diagnostics = buckets
        rules = lint.DOCUMENT_RULES.get(fmt.name)
        found = rules(current.data, lint.LintContext(current.path)) if rules else []
        skill_file.other_diagnostics = skill_file.shell_diagnostics + (locate(current, found) if clean else found)

    @staticmethod
    def _skill_md_diagnostics(document: SkillMdDocument, clean: bool) -> list[Diagnostic]:
        """The Agent Skills rules on the frontmatter and body being edited; pointers
        are those of the form (/frontmatter/name, /body)."""
        data = document.data
        saved = document.source
        found = lint.skill_md_document(
            data.get("frontmatter"), lint.LintContext(document.path), data.get("body") or "", saved.body_line
        )
        for diagnostic in found:
            if diagnostic.line is not None:  # a problem of the body: its own line
                diagnostic.path = "/body"
                if not clean:
                    diagnostic.line = diagnostic.column = None
                continue
            if clean:
                diagnostic.line, diagnostic.column = saved.position(ptr.split(diagnostic.path))
            diagnostic.path = "/frontmatter" + diagnostic.path
        return found

    # ------------------------------------------------------------ editing

    def apply(self, skill_file: SkillFile, operation: Operation, coalesce: bool = False) -> None:
        assert skill_file.document is not None
        skill_file.document.apply(operation, coalesce)
        self.revalidate(skill_file, operation)

    def undo(self, skill_file: SkillFile) -> Operation | None:
        """Undo the file's last edit; returns the operation applied, or None."""
        return self._step(skill_file, "undo")

    def redo(self, skill_file: SkillFile) -> Operation | None:
        return self._step(skill_file, "redo")

    def _step(self, skill_file: SkillFile, which: str) -> Operation | None:
        if skill_file.document is None:
            return None
        operation = getattr(skill_file.document, which)()
        if operation is not None:
            self.revalidate(skill_file, operation)
        return operation

    def save(self, skill_file: SkillFile) -> None:
        """Write the file's unsaved edits: the typed text exactly when there is one
        (the caller asks first when it does not parse), else the data in the file's
        own text. Raises SaveConflict when the disk no longer holds what we loaded
        or saved (nothing written), OSError when writing fails (every edit kept)."""
        if skill_file.refused or (skill_file.document is None and skill_file.raw_text is None):
            return
        self.check_disk(skill_file)
        if skill_file.raw_text is not None:
            save.atomic_write(skill_file.path, skill_file.raw_text, through_link=True)
            self._load_into(skill_file)  # the file is now what was typed, parsed or not
            return
        assert skill_file.document is not None
        skill_file.disk_text = skill_file.document.save()
        skill_file.state = OK  # a file deleted on disk is written back by saving it
        self.revalidate(skill_file)  # positions are now those of the saved text

    def check_disk(self, skill_file: SkillFile) -> None:
        """Compare the file on disk with the text last loaded or saved, right before
        writing: the watcher may not have told us yet (or at all)."""
        try:
            on_disk = read_exact(skill_file.path)
        except FileNotFoundError:
            return  # deleted: saving writes it back, over nobody's edit
        if on_disk != skill_file.disk_text:
            raise SaveConflict(skill_file.rel)

    # ------------------------------------------------------------ the text view

    def raw_edit(self, skill_file: SkillFile, text: str) -> Batch | None:
        """Text typed in the text view. While it parses, it flows into the data (the
        operation applied is returned); while it does not, it is held as typed, an
        unsaved edit with its syntax error, and the data keeps its last good state."""
        if skill_file.refused:
            return None
        skill_file.changed()
        syntax = skill_file.document.syntax if skill_file.document else syntax_for(skill_file.path)
        parsed = parse(text, syntax, skill_file.path)
        if isinstance(parsed, SyntaxProblem):
            skill_file.raw_text, skill_file.raw_problem = text, syntax_diagnostic(parsed)
            return None
        skill_file.raw_problem = None
        document = skill_file.document
        if document is None:  # nothing to flow into: the text is the edit
            skill_file.raw_text = None if text == skill_file.disk_text else text
            return None
        skill_file.raw_text = None
        new = {"frontmatter": parsed.data, "body": parsed.body} if isinstance(parsed, MarkdownDocument) else parsed.data
        operation = document.replace_data(new)
        if operation.operations:
            self.apply(skill_file, operation)
        document.set_typed(text)  # a comment or spacing typed there is saved as typed
        skill_file.changed()
        return operation if operation.operations else None

    def discard_raw_text(self, skill_file: SkillFile) -> None:
        """Drop the text typed in the text view that does not parse: the file is its
        data again, with every edit that parsed (the form's and the text's)."""
        skill_file.changed()
        if skill_file.document is not None:
            skill_file.raw_text = skill_file.raw_problem = None

    # ------------------------------------------------------------ merging

    def merge_both(self, skill_file: SkillFile) -> Merged:
        """Our edits and the disk's, three-way from the text we loaded: offered only
        when they do not touch the same lines and the result parses."""
        base = skill_file.document.text if skill_file.document else skill_file.disk_text
        try:
            theirs = read_exact(skill_file.path)
        except OSError:
            return Merged(None, "the file is gone from disk: there is nothing to merge with")
        if base is None:
            return Merged(None, "there is no loaded text to merge from")
        text = save.merge_texts(base, skill_file.unsaved_text(), theirs)
        if text is None:
            return Merged(None, "your edits and the file's change touch the same lines")
        parsed = parse(text, syntax_for(skill_file.path), skill_file.path)
        if isinstance(parsed, SyntaxProblem):
            return Merged(
                None, f"the merged text does not parse (line {parsed.line}, column {parsed.column}: {parsed.message})"
            )
        return Merged(text)

    def take_merged(self, skill_file: SkillFile, text: str) -> None:
        """The disk's text becomes what we loaded, and the merge an unsaved edit on
        it (one undo step back to the disk's version)."""
        self._load_into(skill_file)
        document = skill_file.document
        if document is None:
            skill_file.raw_text = text
            return
        parsed = parse(text, document.syntax, skill_file.path)
        assert not isinstance(parsed, SyntaxProblem)  # merge_both only offers a text that parses
        new = {"frontmatter": parsed.data, "body": parsed.body} if isinstance(parsed, MarkdownDocument) else parsed.data
        operation = document.replace_data(new)
        if operation.operations:
            self.apply(skill_file, operation)

    # ------------------------------------------------------------ rescuing

    def rescue(self) -> list[Path]:
        """Write every unsaved edit to a file of its own: beside the file, or where
        that fails (a read-only folder) in the config folder. Returns where."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        found: list[Path] = []
        for skill_file in self.dirty_files():
            target = self.rescue_one(skill_file, stamp)
            if target is not None:
                found.append(target)
        return found

    def rescue_one(self, skill_file: SkillFile, stamp: str | None = None) -> Path | None:
        stamp = stamp or time.strftime("%Y%m%d-%H%M%S")
        try:
            text = skill_file.unsaved_text()
        except Exception:  # noqa: BLE001 - rendering failed: the typed text or nothing
            if skill_file.raw_text is None:
                return None
            text = skill_file.raw_text
        name = f"{skill_file.path.name}.unsaved-{stamp}"
        folder = re.sub(r"[^A-Za-z0-9._-]+", "-", self.name) or "skill"
        fallback = config.config_dir() / "rescued" / folder / Path(skill_file.rel).parent / name
        for target in (skill_file.path.with_name(name), fallback):
            try:
                save.atomic_write(target, text)
            except (OSError, ValueError):
                continue
            return target
        return None

    def dirty_files(self) -> list[SkillFile]:
        return [f for f in self.files if f.dirty]

    # ------------------------------------------------------------ the disk

    def disk_changed(self, path: Path) -> tuple[SkillFile | None, str]:
        """React to a change of path on disk. Returns the file and what happened:
        RELOADED, CONFLICT (unsaved edits and a different text on disk: the caller
        asks the user), ECHO (our own write), GONE (deleted or renamed) or UNCHANGED."""
        path = Path(path).resolve()
        # A symlinked file changes at its target: either path names it.
        skill_file = next((f for f in self.files if f.path == path or f.path.resolve() == path), None)
        if skill_file is None:
            if path.parent == self.root / "evals" or path == self.root / "SKILL.md":
                if path.is_file() and path in self.discover():
                    opened = self._open(path)
                    if _ours(opened):
                        self.files.append(opened)
                        return opened, RELOADED
            return None, UNCHANGED
        try:
            text = read_exact(skill_file.path)
        except FileNotFoundError:
            skill_file.state = DELETED
            skill_file.disk_text = None
            return skill_file, GONE
        except OSError:
            return skill_file, UNCHANGED
        if text == skill_file.disk_text and skill_file.state != DELETED:
            return skill_file, ECHO
        if skill_file.dirty:
            return skill_file, CONFLICT
        self._load_into(skill_file)
        return skill_file, RELOADED

    def keep_mine(self, skill_file: SkillFile) -> None:
        """Resolve a conflict for our edits; the next save writes them over the disk."""
        try:
            skill_file.disk_text = read_exact(skill_file.path)
        except OSError:
            skill_file.disk_text = None

    def take_theirs(self, skill_file: SkillFile) -> None:
        self._load_into(skill_file)

    def theirs(self, skill_file: SkillFile) -> str:
        try:
            return _shown(read_exact(skill_file.path))
        except OSError:
            return ""
