"""On and off said by a character as well as a colour (a colour alone is lost on
a monochrome terminal, to colour blindness, and in a copied screen)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox

ON, OFF = "✓", " "


class MarkedCheckbox(Checkbox):
    """A checkbox whose box holds ✓ when on, and is empty when off."""

    @property
    def _button(self) -> Content:
        self.BUTTON_INNER = ON if self.value else OFF  # Textual draws the box with this character
        return super()._button
