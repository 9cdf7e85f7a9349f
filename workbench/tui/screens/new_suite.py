"""New suite: a first eval suite for a skill that has none (or one more), in the
dialect picked, with the same first cases `workbench init` writes
(workbench/app/new_skill.py). Never overwrites: a name that is taken is refused in
the dialog, which stays open."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from workbench.app.new_skill import DIALECTS, free_suite_name, new_suite
from workbench.errors import WorkbenchError
from workbench.tui.widgets.keys import OrderedInput

WHAT = {
    "slow-powers": "JSON, typed assertions",
    "skill-creator": "JSON, expectations in words",
    "chock": "YAML, trigger and behavior cases",
}


class NewSuiteDialog(ModalScreen[Path | None]):
    """Dismisses with the suite written, or None when cancelled."""

    AUTO_FOCUS = "#dialect"
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", tooltip="Write nothing", id="new-suite-cancel")]

    def __init__(self, skill_dir: Path, skill_name: str) -> None:
        super().__init__()
        self.skill_dir, self.skill_name = skill_dir, skill_name
        self.offered = free_suite_name(skill_dir, DIALECTS[0])  # replaced on a dialect change unless edited

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(f"[b]New suite[/b] for {escape(self.skill_name)}: pick its dialect", id="question")
            with RadioSet(id="dialect"):
                for index, dialect in enumerate(DIALECTS):
                    yield RadioButton(f"{dialect} — {WHAT[dialect]}", value=index == 0, name=dialect)
            yield Label("File in evals/", classes="field-name")
            yield OrderedInput(self.offered, id="suite-file")
            yield Static("", id="new-suite-problem", classes="field-problem", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Create", id="create", variant="primary", tooltip="Write the suite and open it")
                yield Button("Cancel", id="cancel", tooltip="Write nothing")

    def dialect(self) -> str:
        pressed = self.query_one(RadioSet).pressed_button
        return pressed.name if pressed is not None and pressed.name else DIALECTS[0]

    @on(RadioSet.Changed)
    def dialect_changed(self) -> None:
        field = self.query_one("#suite-file", Input)
        if field.value.strip() in ("", self.offered):  # not the person's own name: follow the dialect
            self.offered = free_suite_name(self.skill_dir, self.dialect())
            field.value = self.offered
        self.query_one("#new-suite-problem", Static).update("")

    @on(Input.Submitted, "#suite-file")
    @on(Button.Pressed, "#create")
    def create(self) -> None:
        name = self.query_one("#suite-file", Input).value.strip()
        try:
            written = new_suite(self.skill_dir, self.skill_name, self.dialect(), name or None)
        except WorkbenchError as exc:
            self.query_one("#new-suite-problem", Static).update(str(exc))
            return
        except OSError as exc:  # a read-only folder, a full disk: said, and nothing is lost
            self.query_one("#new-suite-problem", Static).update(f"Could not write the suite: {exc}")
            return
        self.dismiss(written)

    @on(Button.Pressed, "#cancel")
    def cancel(self) -> None:
        self.dismiss(None)
