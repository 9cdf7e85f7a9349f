"""Widgets whose styles are worked out once, when they are mounted.

Textual works out a widget's styles whenever one of its classes changes, mounted or
not, and a widget's constructor often changes some: an Input's value sets -valid or
-invalid, a Button's look sets -style-default, a footer key its -compact. Mounting
works them all out again, so for a widget built before it is mounted (every widget
of a form) the first time was for nothing: about a hundred times before the first
form was painted, each leaving its styles' parts behind for the collector."""

from __future__ import annotations

from textual.widgets import Button

from workbench.tui.compat import FooterKey


class StyledWhenMounted:
    """Mixin for a widget: a class changed before it is mounted waits for the mount."""

    def update_node_styles(self, animate: bool = True) -> None:
        if self.parent is not None:  # type: ignore[attr-defined]  # mounted: styles follow classes at once
            super().update_node_styles(animate)  # type: ignore[misc]


class FormButton(StyledWhenMounted, Button):
    pass


class HintKey(StyledWhenMounted, FooterKey):
    pass
