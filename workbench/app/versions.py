"""A skill's versions as `version new`, `promote`, `history` and the History screen use them: the workspace's
history opened (a change a killed workbench left finished first), a new version snapshotted, the rows listed,
where a version stands, what writing it into the folder would do, and the promotion. One object for a skill
and its workspace, so that the edges never assemble these from the journal, the store and history.json."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.formats.regular import read_object
from workbench.improve import history as hist
from workbench.improve import promote as promoting
from workbench.improve.analysis import ANALYSIS
from workbench.improve.standing import Standing, standing
from workbench.workspace import journal, layout
from workbench.workspace.versions import VersionStore

History = hist.History
WritePlan = promoting.WritePlan
HISTORY_FILE = hist.FILE

__all__ = ["HISTORY_FILE", "History", "Standing", "Versions", "WritePlan"]


@dataclass
class Versions:
    skill_dir: Path
    workspace: Path
    store: VersionStore

    @classmethod
    def of(cls, skill_dir: Path, workspace: Path | None = None) -> Versions:
        """The skill's versions, in `workspace` or its default one (layout.default_workspace)."""
        skill_dir = skill_dir.resolve()
        place = (workspace or layout.default_workspace(skill_dir)).resolve()
        return cls(skill_dir, place, VersionStore(place))

    def recover(self) -> str | None:
        """A change a killed workbench left, finished (what was done, said in words), or None: first, before
        anything reads the history. Raises WorkbenchError (journal.json broken)."""
        return journal.recover_now(self.workspace, self.skill_dir)

    def history(self) -> History | None:
        """The checked history, or None when there is none. Raises WorkbenchError: history.json,
        evaluations.json or versions.git broken."""
        return hist.load_history(self.workspace, self.store)

    def rows(self, history: History | None) -> list[dict]:
        """Every version, in tree order, with what history.json and evaluations.json say of it."""
        return hist.history_rows(self.workspace, self.store, history)

    def new(
        self, name: str, parent: str | None = None, wait: bool = False, say: Callable[[str], None] | None = None
    ) -> tuple[str, str | None]:
        """The folder snapshotted as the next version: (version, its parent). Raises WorkbenchError."""
        return hist.new_version(self.workspace, self.store, self.skill_dir, name, parent, wait, say)

    def standing(self, history: History, version: str) -> Standing:
        """Where a version stands against the best, and why promoting it deserves a question (doubt())."""
        return standing(self.workspace, history, version)

    def plan_write(self, version: str) -> WritePlan:
        """What writing the version into the skill folder would change, or why it would lose work."""
        return promoting.plan_write(self.store, version, self.skill_dir)

    def promote(
        self,
        version: str,
        shown: WritePlan | None = None,
        wait: bool = False,
        say: Callable[[str], None] | None = None,
    ) -> list[str]:
        """The version made the current best; with `shown` (the plan a person saw), its files written into the
        folder too: the paths changed. Raises WorkbenchError."""
        written = self.skill_dir if shown is not None else None
        return promoting.promote(self.workspace, version, written, shown, wait, say, skill=self.skill_dir)

    def analysis(self, iteration: int) -> dict:
        """The analysis.json of an evaluation's iteration (why a version won or lost), or {} when there is none."""
        return read_object(layout.iteration_dir(self.workspace, iteration) / ANALYSIS)
