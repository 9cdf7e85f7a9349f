"""The key hints: whole, in the screen's order of importance, as many as fit the
width; the rest are in the command palette, whose key then reads "more…"."""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from workbench.tui import compat
from workbench.tui.widgets.mounted import HintKey

MORE = "more…"


def hint_order(screen: object) -> tuple[str, ...]:
    """The screen's KEY_HINTS: binding ids (or actions) most wanted first."""
    return tuple(getattr(screen, "KEY_HINTS", ()))


class FittingFooter(Footer):
    """A footer that never cuts a hint: one that does not fit whole is left to the palette."""

    def __init__(self) -> None:
        super().__init__(compact=True)
        self._width = 0
        self._shown: tuple | None = None  # the hints composed last, as _hints() gives them

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._width = self.size.width
            if compat.footer_ready(self):
                self.refresh(recompose=True)

    def bindings_changed(self, screen: Screen) -> None:
        """Composed again only when the hints it would show differ. Textual's footer recomposes at every
        change of the focus (its bindings are the focused widget's): a Tab between two fields mounted the
        whole footer again and laid out the screen for the same hints."""
        if compat.footer_ready(self) and screen is self.screen and self.is_attached and self._hints() == self._shown:
            return
        super().bindings_changed(screen)

    def _hints(self) -> tuple[tuple[tuple[Binding, bool, str], ...], tuple[Binding, bool, str] | None, bool]:
        """(the hints that fit whole, in the screen's order; the palette's, or None; whether any was left out)."""
        active = self.screen.active_bindings
        seen: set[str] = set()
        hints: list[tuple[Binding, bool, str]] = []
        for _node, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in seen:  # one hint per action
                seen.add(binding.action)
                hints.append((binding, enabled, tooltip))
        order = hint_order(self.screen)

        def rank(hint: tuple[Binding, bool, str]) -> int:
            binding = hint[0]
            for name in (binding.id, binding.action, binding.action.removeprefix("app.")):
                if name in order:
                    return order.index(name)
            return len(order)

        hints.sort(key=rank)  # stable: the rest keep the order they were declared in
        found = active.get(self.app.COMMAND_PALETTE_BINDING)
        palette = (found[1], found[2], found[3]) if found is not None and self.show_command_palette else None
        width = self.size.width or self.app.size.width
        room = width - (self._width_of(found[1], MORE) + 2 if found else 0)  # + its border and padding
        fitted: list[tuple[Binding, bool, str]] = []
        for hint in hints:
            needed = self._width_of(hint[0], hint[0].description)
            if needed > room:
                break  # in order: a later, smaller hint never jumps ahead of a cut one
            room -= needed
            fitted.append(hint)
        return tuple(fitted), palette, len(fitted) < len(hints)

    def compose(self) -> ComposeResult:
        if not compat.footer_ready(self):
            return
        self._shown = self._hints()
        fitted, palette, left_out = self._shown
        for binding, enabled, tooltip in fitted:
            yield HintKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
            ).data_bind(compact=Footer.compact)
        if palette is not None:
            binding, enabled, _tooltip = palette
            yield HintKey(
                binding.key,
                self.app.get_key_display(binding),
                MORE if left_out else binding.description,
                binding.action,
                classes="-command-palette",
                disabled=not enabled,
                tooltip="Every command, the keys not shown here included" if left_out else binding.tooltip,
            )

    def _width_of(self, binding: Binding, description: str) -> int:
        """Its cells in the compact style: key, a space, the description, and a margin of one."""
        return cell_len(self.app.get_key_display(binding)) + 1 + cell_len(description) + 1
