"""Choosing a skill, and the moment while it loads."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Label, LoadingIndicator, OptionList
from textual.widgets.option_list import Option

from workbench.formats.skill_md import read_name


class SkillPicker(Screen[Path]):
    BINDINGS = [("escape", "app.quit", "Quit")]

    def __init__(self, skills: list[Path]) -> None:
        super().__init__()
        self.skills = skills

    def compose(self) -> ComposeResult:
        yield Label(f"[b]{len(self.skills)} skills here.[/b] Choose one to open:", id="picker-title")
        yield OptionList(
            *[
                Option(f"{read_name(p / 'SKILL.md') or p.name}  [dim]{p}[/]", id=str(i))
                for i, p in enumerate(self.skills)
            ],
            id="skills",
        )
        yield Footer()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.skills[event.option_index])  # the options are the skills, in order


class LoadingScreen(Screen):
    BINDINGS = [("ctrl+q", "app.quit", "Quit")]

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def compose(self) -> ComposeResult:
        yield Label(f"Reading and checking [b]{self.root}[/b] …", id="picker-title")
        yield LoadingIndicator()
        yield Footer()

    def failed(self, why: str) -> None:
        """The skill could not be opened: say so (never a spinner forever)."""
        self.query_one(LoadingIndicator).display = False
        self.query_one("#picker-title", Label).update(
            Text.assemble(("Could not open ", ""), (str(self.root), "bold"), (f": {why}\nPress ctrl+q to quit.", ""))
        )
