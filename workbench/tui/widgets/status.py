"""The header line: skill, dialect, file, unsaved marker, and the problem counts."""

from __future__ import annotations

from textual.widgets import Static

from workbench.session import SkillFile, SkillSession, count_words


class StatusBar(Static):
    def show(self, session: SkillSession, skill_file: SkillFile | None) -> None:
        parts = [f"[b]{session.name}[/b]"]
        if skill_file is not None:
            dialect = skill_file.format.name if skill_file.format else "unknown format"
            parts.append(dialect)
            parts.append(skill_file.rel + (" [b]● unsaved[/b]" if skill_file.dirty else ""))
            file_counts = f"file: {count_words(*skill_file.counts())}"
        else:
            file_counts = "no file open"
        skill_counts = f"skill: {count_words(*session.counts())}"
        text = " · ".join(parts) + f"   [dim]│[/] {file_counts}   [dim]│[/] {skill_counts}"
        if text != getattr(self, "_text", None):
            self._text = text
            self.update(text)
