"""Every problem of the open file; choosing one jumps to its field."""

from __future__ import annotations

from typing import Any

from textual.geometry import Size
from textual.message import Message
from textual.reactive import Reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from workbench.validate.diagnostic import Diagnostic


def friendly(pointer: str) -> str:
    return " › ".join(pointer.strip("/").split("/")) if pointer.strip("/") else "(file)"


class DiagnosticsPane(OptionList):
    """Of a fixed height (CSS): its problems are replaced in place. OptionList counts its
    lines again on each change and sets its virtual size, which asks for a layout of
    the whole screen; here it only repaints, and a layout comes only when the
    scrollbar comes or goes (or the height follows the content: a short screen)."""

    virtual_size: Reactive[Size] = Reactive(Size(0, 0))  # Widget's asks for a layout on each change

    class Jump(Message):
        def __init__(self, diagnostic: Diagnostic) -> None:
            super().__init__()
            self.diagnostic = diagnostic

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._shown: list[tuple] | None = None
        self._diagnostics: list[Diagnostic] = []

    def show(self, diagnostics: list[Diagnostic]) -> None:
        ordered = sorted(diagnostics, key=lambda d: (d.severity != "error", d.line or 0, d.path))
        key = [(d.severity, d.path, d.message, d.line) for d in ordered]
        if key == self._shown:
            return  # nothing changed: keep the cursor and skip the redraw
        self._shown, self._diagnostics = key, ordered
        scrolled = self.show_vertical_scrollbar
        self.clear_options()
        self.set_class(not ordered, "-empty")  # a short screen: one line, no frame (the room goes to the form)
        options = []
        for index, d in enumerate(ordered):
            colour = "red" if d.severity == "error" else "yellow"
            where = f"{d.line}:{d.column} " if d.line else ""
            options.append(
                Option(f"[{colour}]{d.severity:<7}[/] [dim]{where}{friendly(d.path)}[/]\n  {d.message}", id=f"d{index}")
            )
        self.add_options(options or [Option("[green]✓ No problems in this file.[/]", disabled=True)])
        lines = self.virtual_size.height
        if self.styles.auto_dimensions or (lines > self.scrollable_content_region.height) != scrolled:
            self.refresh(layout=True)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_id and event.option_id.startswith("d"):
            self.post_message(self.Jump(self._diagnostics[int(event.option_id[1:])]))
