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
        if compat.footer_ready(self) and screen is self.screen and self.is_attached:
            hints = self._hints()
            if hints == self._shown or (screen.app.app_focus and self._relabel(hints)):
                return
        super().bindings_changed(screen)

    def _relabel(self, hints: tuple) -> bool:
        """The new hints shown by the keys on screen, in place (a Tab into or out of the form): each takes
        its new hint's key, texts and action, keys past the new count go, missing ones are added before the
        palette's. Composed again, the footer mounted every key anew and the screen was laid out three
        times: ~50 ms of CPU a Tab into or out of the demo's case form. False (compose again) when the
        palette's key comes or goes."""
        fitted, palette, left_out = hints
        shown = [key for key in self.children if key.display]  # not those still being removed
        keys = [key for key in shown if isinstance(key, HintKey)]
        if len(keys) != len(shown):
            return False
        last = keys[-1] if keys and keys[-1].has_class("-command-palette") else None
        if (last is None) != (palette is None):
            return False
        plain = keys[:-1] if last is not None else keys
        for key, (binding, enabled, tooltip) in zip(plain, fitted, strict=False):
            compat.relabel_hint(
                key,
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                not enabled,
                tooltip,
            )
        for key in plain[len(fitted) :]:
            key.remove()
        if len(fitted) > len(plain):
            added = [self._key(*hint) for hint in fitted[len(plain) :]]
            for key in added:
                key.compact = self.compact
            self.mount_all(added, before=last)
        if last is not None and palette is not None:
            binding, enabled, _tooltip = palette
            compat.relabel_hint(
                last,
                binding.key,
                self.app.get_key_display(binding),
                MORE if left_out else binding.description,
                binding.action,
                not enabled,
                self._palette_tooltip(binding, left_out),
            )
        self._shown = hints
        return True

    def _key(self, binding: Binding, enabled: bool, tooltip: str) -> HintKey:
        return HintKey(
            binding.key,
            self.app.get_key_display(binding),
            binding.description,
            binding.action,
            disabled=not enabled,
            tooltip=tooltip,
        )

    @staticmethod
    def _palette_tooltip(binding: Binding, left_out: bool) -> str:
        return "Every command, the keys not shown here included" if left_out else binding.tooltip

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
            yield self._key(binding, enabled, tooltip).data_bind(compact=Footer.compact)
        if palette is not None:
            binding, enabled, _tooltip = palette
            yield HintKey(
                binding.key,
                self.app.get_key_display(binding),
                MORE if left_out else binding.description,
                binding.action,
                classes="-command-palette",
                disabled=not enabled,
                tooltip=self._palette_tooltip(binding, left_out),
            )

    def _width_of(self, binding: Binding, description: str) -> int:
        """Its cells in the compact style: key, a space, the description, and a margin of one."""
        return cell_len(self.app.get_key_display(binding)) + 1 + cell_len(description) + 1
