"""history.json at the workspace root, in seed 003's shape exactly:
{started_at, skill_name, current_best, iterations[{version, parent,
expectation_pass_rate, grading_result, is_current_best}]}.

Loading checks the schema and the invariants (exactly one current best and it is
current_best; parents exist and come earlier; no cycles) and that the versions
are the git tags with the same parents. A broken file is reported as
diagnostics with lines; nothing is repaired. A version that has not been
evaluated yet is a tag without an entry (v0 has one from the start: it is the
baseline)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from workbench.formats import artifacts
from workbench.formats.document import SyntaxProblem, load
from workbench.grading.artifact import render_artifact
from workbench.validate.diagnostic import Diagnostic, FileProblems
from workbench.validate.validator import locate, syntax_diagnostic, validate_document
from workbench.workspace import journal, legacy
from workbench.workspace.layout import default_workspace
from workbench.workspace.versions import VersionError, VersionStore

FILE = "history.json"
EVALUATIONS = "evaluations.json"  # ours, beside it: what each version was measured on


class HistoryBroken(FileProblems):
    """history.json (or evaluations.json beside it) breaks its format or its
    invariants; diagnostics say where."""


def read_evaluations(workspace: Path) -> dict[str, dict]:
    """evaluations.json: version -> what it was measured on; {} when there is none.
    One that does not parse or has another shape raises HistoryBroken: read as
    empty, the next evaluation would overwrite every record in it."""
    path = workspace / EVALUATIONS
    try:
        parsed = load(path)
    except FileNotFoundError:
        return {}
    if isinstance(parsed, SyntaxProblem):
        raise HistoryBroken(path, [syntax_diagnostic(parsed)])
    data = parsed.data
    found = _record_problem(data)
    if found is not None:
        wrong, expected = found
        line, column = parsed.position(tuple(p for p in wrong.split("/")[1:] if p))
        raise HistoryBroken(path, [Diagnostic("error", wrong, expected, line, column)])
    return data


def _record_problem(data: object) -> tuple[str, str] | None:
    """Where evaluations.json is not what evaluate writes, and what was expected
    there: the figures a decision is made from are checked before it is made."""
    if not isinstance(data, dict):
        return "/", "expected an object of versions, each an object of what it was measured on"
    for version, record in data.items():
        here = f"/{version}"
        if not isinstance(record, dict):
            return here, "expected an object of what the version was measured on"
        iteration = record.get("iteration")
        if iteration is not None and (isinstance(iteration, bool) or not isinstance(iteration, int) or iteration < 1):
            return f"{here}/iteration", "expected the number of an iteration (1, 2, ...)"
        rates = record.get("evals")
        if rates is not None and not isinstance(rates, dict):
            return f"{here}/evals", "expected an object of eval ids and pass rates"
        for eval_id, rate in (rates or {}).items():
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
                return f"{here}/evals/{eval_id}", "expected a pass rate from 0 to 1"
        rate = record.get("pass_rate")
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1):
            return f"{here}/pass_rate", "expected a pass rate from 0 to 1"
    return None


@dataclass
class History:
    path: Path
    data: dict = field(default_factory=dict)

    @property
    def iterations(self) -> list[dict]:
        return self.data.setdefault("iterations", [])

    @property
    def current_best(self) -> str:
        return self.data.get("current_best", "")

    def entry(self, version: str) -> dict | None:
        return next((i for i in self.iterations if i.get("version") == version), None)

    def record(self, version: str, parent: str | None, rate: float | None, result: str) -> dict:
        entry = self.entry(version)
        if entry is None:
            entry = {
                "version": version,
                "parent": parent,
                "expectation_pass_rate": rate,
                "grading_result": result,
                "is_current_best": False,
            }
            self.iterations.append(entry)
        else:
            entry.update(expectation_pass_rate=rate, grading_result=result)
        return entry

    def promote(self, version: str) -> None:
        if self.entry(version) is None:
            raise ValueError(f"{version} has not been evaluated; evaluate it before promoting it")
        self.data["current_best"] = version
        for item in self.iterations:
            item["is_current_best"] = item.get("version") == version

    def text(self) -> str:
        """The file's new text, checked against its schema; journal.commit() writes it."""
        return render_artifact(self.path, artifacts.HISTORY, self.data)


def start(workspace: Path, skill_name: str) -> History:
    """A new history with v0 as the baseline (not written: new_version commits it with v0's tag)."""
    return History(
        workspace / FILE,
        {
            "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "skill_name": skill_name,
            "current_best": "v0",
            "iterations": [
                {
                    "version": "v0",
                    "parent": None,
                    "expectation_pass_rate": None,
                    "grading_result": "baseline",
                    "is_current_best": True,
                }
            ],
        },
    )


def load_history(workspace: Path, store: VersionStore | None = None) -> History | None:
    """The workspace's history, checked; None when there is none. Raises HistoryBroken."""
    path = workspace / FILE
    if not path.exists():
        return None
    parsed = load(path)
    if isinstance(parsed, SyntaxProblem):
        raise HistoryBroken(path, [syntax_diagnostic(parsed)])
    read_evaluations(workspace)  # broken beside a good history is broken too: said now, not overwritten later
    problems = [d for d in validate_document(parsed, artifacts.HISTORY) if d.severity == "error"]
    if not problems and store is not None:
        problems = locate(parsed, _against_tags(parsed.data, store))
    if problems:
        raise HistoryBroken(path, problems)
    return History(path, parsed.data)


def _against_tags(data: dict, store: VersionStore) -> list[Diagnostic]:
    tags = set(store.versions())
    out = []
    for index, item in enumerate(data.get("iterations", [])):
        version = item.get("version")
        if not tags and legacy.pending(store.workspace):
            # Imported under the workspace's lock (journal.recover); a writer held it just now.
            return [
                Diagnostic(
                    "error",
                    f"/iterations/{index}/version",
                    f"{version} is in skill-creator's legacy layout ({version}/{legacy.SKILL}/) and not imported "
                    "into versions.git yet: another writer holds the workspace; run this again when it is done",
                )
            ]
        if version not in tags:
            out.append(
                Diagnostic(
                    "error",
                    f"/iterations/{index}/version",
                    f'version "{version}" has no git tag in {store.path}; expected the versions '
                    f"of history.json to be tags there ({', '.join(sorted(tags)) or 'none'})",
                )
            )
            continue
        parent = store.parent_of(version)
        if item.get("parent") != parent:
            out.append(
                Diagnostic(
                    "error",
                    f"/iterations/{index}/parent",
                    f'parent of "{version}" is "{item.get("parent")}" here but {parent or "none"} '
                    "in git; expected them to agree",
                )
            )
    return out


def best_folder(skill_dir: Path, workspace: Path | None = None) -> Path | None:
    """The current best version's files (for --baseline old_skill); None without
    versions. Raises HistoryBroken."""
    workspace = (workspace or default_workspace(skill_dir)).resolve()
    journal.recover_now(workspace, skill_dir)  # a legacy workspace is imported first (legacy.py)
    store = VersionStore(workspace)
    history = load_history(workspace, store)
    return store.export(history.current_best) if history is not None else None


def new_version(
    workspace: Path,
    store: VersionStore,
    skill_dir: Path,
    skill_name: str,
    parent: str | None = None,
    wait: bool = False,
    say: Callable[[str], None] | None = None,
) -> tuple[str, str | None]:
    """Snapshot the skill folder as the next version: (version, its parent). The
    first is v0 and starts history.json, in one change with its tag; later ones
    come from `parent`, by default the current best. Holds the workspace's lock.
    Raises VersionError (no such parent, identical to it), HistoryBroken, WorkspaceBusy."""
    with journal.writing(workspace, "version new", wait, say, skill_dir):
        history = load_history(workspace, store)
        if history is None and store.versions():
            raise VersionError(
                f"{workspace / FILE} is missing but {store.path} has versions ({', '.join(store.versions())}); "
                "restore history.json first"
            )
        if history is None:
            if parent:
                raise VersionError("there are no versions yet; the first snapshot is v0, the baseline (no --from)")
            version, commit = store.commit(skill_dir, None)
            journal.commit(workspace, {FILE: start(workspace, skill_name).text()}, tags={version: commit})
            return version, None
        parent = parent or history.current_best
        store.commit_of(parent)
        version, commit = store.commit(skill_dir, parent)
        journal.commit(workspace, tags={version: commit})
        return version, parent


def history_rows(workspace: Path, store: VersionStore, history: History | None) -> list[dict]:
    """Every version (tag), in tree order, with what history.json and evaluations.json say of it."""
    evaluations = read_evaluations(workspace)
    rows = []
    for version in store.versions():
        entry = (history.entry(version) if history else None) or {}
        record = evaluations.get(version, {})
        rows.append(
            {
                "version": version,
                "parent": store.parent_of(version),
                "expectation_pass_rate": entry.get("expectation_pass_rate"),
                "grading_result": entry.get("grading_result"),
                "is_current_best": bool(entry.get("is_current_best")),
                "evaluated": bool(entry),
                "iteration": record.get("iteration"),
                "passed": record.get("passed"),
                "total": record.get("total"),
                "decision": (record.get("decision") or {}).get("evidence"),
                # The best run again beside a later version: its rate there, which history.json keeps apart.
                "measured_as": record.get("measured_as"),
                "measured_rate": record.get("pass_rate"),
            }
        )
    return rows
