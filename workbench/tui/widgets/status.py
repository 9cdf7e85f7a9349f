"""The header line: skill, dialect, file, unsaved marker, and the problem counts,
shortened to the width (least needed first) so it is never cut."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from workbench.session import SkillFile, SkillSession, count_words


class StatusBar(Static):
    def show(self, session: SkillSession, skill_file: SkillFile | None) -> None:
        name = f"[b]{session.name}[/b]"
        dialect, file_part, file_counts = "", "", "no file open"
        if skill_file is not None:
            dialect = skill_file.format.name if skill_file.format else "unknown format"
            file_part = skill_file.rel + (" [b]● unsaved[/b]" if skill_file.dirty else "")
            file_counts = f"file: {count_words(*skill_file.counts())}"
        skill_counts = f"skill: {count_words(*session.counts())}"
        self._parts = (name, dialect, file_part, file_counts, skill_counts)
        self._fit()

    def on_resize(self) -> None:
        if getattr(self, "_parts", None):
            self._fit()

    def _fit(self) -> None:
        name, dialect, file_part, file_counts, skill_counts = self._parts
        width = self.content_region.width or self.app.size.width - 2
        head = [p for p in (name, dialect, file_part) if p]
        # Longest first; each next one leaves out what is least needed: the dialect, then the
        # skill's counts; the file and its counts stay.
        tries = [
            " · ".join(head) + f"   [dim]│[/] {file_counts}   [dim]│[/] {skill_counts}",
            " · ".join(p for p in head if p != dialect) + f"   [dim]│[/] {file_counts}   [dim]│[/] {skill_counts}",
            " · ".join(p for p in head if p != dialect) + f" [dim]│[/] {file_counts}",
            " · ".join(p for p in (name, file_part) if p),
        ]
        text = next((t for t in tries if Text.from_markup(t).cell_len <= width), tries[-1])
        if text != getattr(self, "_text", None):
            self._text = text
            self.update(text, layout=False)  # one line, always (CSS): nothing to lay out
