"""The text view in a real terminal, beside two busy loops (issue 25): with text
that does not parse, ctrl+z undid the last form edit (the case list flipped back
to the old id) and left the text as typed, with the cursor on line 1 (the next
key showed as `Q{{`); after F6 the focus could land on a field of the hidden
form, and typing renamed the case while the text did not change."""

from __future__ import annotations

from .harness import raw_view
from .test_typing_speed import FIRST_ID, _into_first_id, pytestmark  # noqa: F401  (skipped without tmux)


def _line(screen: str, number: int) -> str | None:
    shown = raw_view(screen)
    return shown[1].get(number, "").strip() if shown else None


def _listed(screen: str, name: str) -> bool:
    """The case list shows a case of that name (its row in the navigator)."""
    return any(f" {name} " in row.split("││", 1)[0] + " " for row in screen.split("\n"))


def _edited_then_text(terminal) -> None:
    _into_first_id(terminal)
    terminal.type("XY")
    assert terminal.wait_until(lambda s: _listed(s, FIRST_ID + "XY"), 30), terminal.screen()
    terminal.wait_steady(0.5)
    terminal.keys("C-r")
    assert terminal.wait_until(lambda s: _line(s, 1) == "{", 30), terminal.screen()
    terminal.wait_steady(0.5)


def test_undo_in_the_text_view_undoes_the_text_not_the_form(open_app, busy):
    terminal = open_app()
    _edited_then_text(terminal)
    terminal.type("{")  # at the start: the text no longer parses
    assert terminal.wait_until(lambda s: _line(s, 1) == "{{", 30), terminal.screen()
    terminal.wait_steady(0.5)
    terminal.keys("C-z")
    assert terminal.wait_until(lambda s: _line(s, 1) == "{", 30), terminal.screen()
    terminal.wait_steady(0.5)
    terminal.type("Q")  # where the undone edit was
    screen = terminal.wait_until(lambda s: _line(s, 1) == "Q{", 30)
    assert screen is not None, terminal.screen()
    assert _listed(screen, FIRST_ID + "XY") and not _listed(screen, FIRST_ID), screen
    assert terminal.running and not terminal.crash_marks()


def test_f6_in_the_text_view_never_reaches_the_hidden_form(open_app, busy):
    terminal = open_app()
    _edited_then_text(terminal)
    for _ in range(3):  # the problems, the case list, the editor pane: each then a letter
        terminal.keys("F6")
        terminal.wait_steady(0.5)
    terminal.type("Z")
    screen = terminal.wait_until(lambda s: _line(s, 1) == "Z{", 30)
    assert screen is not None, terminal.screen()
    assert _listed(screen, FIRST_ID + "XY") and not _listed(screen, FIRST_ID + "XYZ"), screen


def test_leaving_the_text_view_with_text_that_does_not_parse_asks(open_app, busy):
    terminal = open_app()
    _edited_then_text(terminal)
    terminal.type("{")
    assert terminal.wait_until(lambda s: _line(s, 1) == "{{", 30), terminal.screen()
    terminal.wait_steady(0.5)
    terminal.keys("C-r")
    assert terminal.wait_for("does not parse", 30), terminal.screen()
    assert terminal.wait_for("Keep editing", 10), terminal.screen()
    terminal.keys("Escape")  # keep editing: the text as typed
    assert terminal.wait_until(lambda s: "Keep editing" not in s and _line(s, 1) == "{{", 30), terminal.screen()
    terminal.keys("C-r")
    assert terminal.wait_for("Keep editing", 30), terminal.screen()
    terminal.keys("BTab")  # from "Keep editing" to "Discard the text edit"
    terminal.wait_steady(0.3)
    terminal.keys("Enter")
    screen = terminal.wait_until(lambda s: raw_view(s) is None and "Keep editing" not in s, 30)
    assert screen is not None, terminal.screen()
    assert _listed(screen, FIRST_ID + "XY"), screen  # the form's edit stays: only the text edit went
