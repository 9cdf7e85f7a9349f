"""The real app in a real terminal (tmux), typed at human and auto-repeat speed.
Pilot waits for every key to be handled, so it cannot see what a held arrow key
does; this layer sends keys the way a keyboard does, without waiting.

One test per finding of issue 12 that needs real typing speed."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .harness import Terminal, copy_demo, needs_tmux, shows_unsaved, status_line

pytestmark = needs_tmux

FIRST_ID = "export-json-flag"  # the demo suite's first case; the second is:
SECOND_ID = "ambiguous-timeout-change"


def _hold(terminal: Terminal, key: str, seconds: float, rate: float = 30.0) -> None:
    """A held key: auto-repeat at `rate` keys a second, sent without waiting for the app."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        terminal.keys(*[key] * 3)  # what a keyboard sends in 1/10 s at 30 a second
        time.sleep(3 / rate)


def _field(screen: str, label: str) -> str | None:
    """The text shown in the form's input under `label` (the part that fits)."""
    rows = screen.split("\n")
    edge = next((row.find("╮╭") + 1 for row in rows if "╮╭" in row), 0)  # where the form's pane starts
    right = [row[edge:] for row in rows]
    scrollbar = " │▁▂▃▄▅▆▇█▔"  # the pane's border and scrollbar: its thumb can sit on any row
    for index, row in enumerate(right):
        if row.strip("│ ").lstrip("█ ").rstrip(scrollbar).rstrip("* ") == label:  # █: the field has a problem
            for below in right[index + 1 : index + 4]:
                inner = below.split("▊", 1)[1].rsplit("▎", 1)[0] if "▊" in below and "▎" in below else ""
                if inner and "▔" not in inner and "▁" not in inner:
                    return inner.strip()
    return None


def _into_first_id(terminal: Terminal, end: bool = True) -> None:
    """From the case list (the editor opens on the first case) into that case's id
    field; Textual selects a field's text on focus, so End puts the cursor after it."""
    first = _ids(terminal.skill)[0]
    assert terminal.wait_until(lambda s: _field(s, "id") == first, 30), terminal.screen()
    terminal.wait_steady(1)
    terminal.keys("Tab")
    terminal.wait_steady(1)
    if end:
        terminal.keys("End")
        terminal.wait_steady(0.5)


def _ids(skill: Path) -> list[str]:
    return [case["id"] for case in json.loads((skill / "evals" / "evals.json").read_text())["evals"]]


def _quit_saving(terminal: Terminal) -> None:
    """ctrl+q, which must ask (there are unsaved edits), then "Save and quit"."""
    terminal.keys("C-q")
    assert terminal.wait_for("Unsaved edits", 10), "ctrl+q with unsaved edits did not ask:\n" + terminal.screen()
    terminal.keys("Tab")  # the dialog opens on Cancel; the first button is "Save and quit"
    terminal.wait_steady(0.3)
    terminal.keys("Enter")
    assert terminal.exit_status() == 0, terminal.screen()
    assert not terminal.crash_marks(), terminal.after_exit()


def test_holding_an_arrow_key_in_the_case_list_keeps_the_app_and_the_edit(open_app):
    terminal = open_app()
    _into_first_id(terminal)
    terminal.keys("x")  # an unsaved edit
    assert terminal.wait_until(shows_unsaved, 10), terminal.screen()
    terminal.keys("BTab")  # back to the case list
    terminal.wait_steady()
    for key in ("Down", "Up", "Down", "Up"):
        _hold(terminal, key, 2.5)  # ten seconds of auto-repeat, both ways
    terminal.wait_steady(1)
    assert terminal.running, terminal.screen()  # on the old code: exit 0, "coroutine ... was never awaited"
    assert not terminal.crash_marks(), terminal.printed()[-3000:]
    _quit_saving(terminal)  # quitting asks: the edit is still there, unsaved
    assert _ids(terminal.skill)[0] == FIRST_ID + "x"


def test_an_arrow_pressed_three_times_a_second_keeps_the_app_and_the_edit(open_app):
    terminal = open_app()
    _into_first_id(terminal)
    terminal.keys("y")
    assert terminal.wait_until(shows_unsaved, 10), terminal.screen()
    terminal.keys("BTab")
    terminal.wait_steady()
    for key in ("Down", "Up"):  # down the case list and back, a case each third of a second
        terminal.at_rate([key] * 12, per_second=3)
    terminal.wait_steady(1)
    assert terminal.running, terminal.screen()
    assert not terminal.crash_marks(), terminal.printed()[-3000:]
    _quit_saving(terminal)
    assert _ids(terminal.skill)[0] == FIRST_ID + "y"


def test_a_burst_into_a_field_that_flips_between_valid_and_invalid_lands_as_typed(open_app):
    """The `CHANOPECHANG` finding: one burst (a paste, or keys sent in one go) into the
    case's id, its old text selected (as Tab leaves it): the id becomes a duplicate of
    the next case's id (invalid), then unique (valid), then not kebab-case (invalid)."""
    terminal = open_app()
    _into_first_id(terminal, end=False)
    word = SECOND_ID + "-and-then-SOME-more"
    terminal.type(word)
    screen = terminal.wait_until(lambda s: _field(s, "id") == word, 15)
    assert screen is not None, f"the id field should read {word!r}:\n{terminal.wait_steady()}"
    terminal.keys("C-s")
    assert terminal.wait_until(lambda s: not shows_unsaved(s), 10), terminal.screen()
    assert _ids(terminal.skill)[0] == word
    assert terminal.running and not terminal.crash_marks()


def test_a_burst_of_deletions_then_letters_into_a_field_lands_in_order(open_app):
    """Backspace over the whole id (empty: invalid), then the next case's id (a
    duplicate: invalid) and more (valid), all as one burst: the keys apply in the
    order they were typed."""
    terminal = open_app()
    _into_first_id(terminal)
    word = SECOND_ID + "-and-more"
    terminal.send([("keys", " ".join(["BSpace"] * len(FIRST_ID))), ("text", word)])
    screen = terminal.wait_until(lambda s: _field(s, "id") == word, 15)
    assert screen is not None, f"the id field should read {word!r}, reads {_field(terminal.wait_steady(), 'id')!r}"
    assert terminal.running and not terminal.crash_marks()


def _big_suite(tmp_path: Path, cases: int) -> Path:
    skill = copy_demo(tmp_path)
    suite = skill / "evals" / "evals.json"
    data = json.loads(suite.read_text())
    base = data["evals"]
    data["evals"] = [dict(base[i % len(base)], id=f"{base[i % len(base)]['id']}-{i}") for i in range(cases)]
    suite.write_text(json.dumps(data, indent=2) + "\n")
    return skill


def test_keys_at_thirty_a_second_into_a_text_field_all_arrive(open_app, tmp_path):
    """Three seconds of typing at 30 keys a second into a case's id on a 300-case
    suite (every key is an edit the app validates): every key lands, in order."""
    skill = _big_suite(tmp_path, 300)
    terminal = open_app(skill)
    first = _ids(skill)[0]
    _into_first_id(terminal)
    typed = "thekeysofaquicktypistatthirtyasecond-" * 2 + "end"
    terminal.at_rate(list(typed), per_second=30)
    terminal.wait_steady(1)
    terminal.keys("C-s")
    assert terminal.wait_until(lambda s: not shows_unsaved(s), 15), terminal.screen()
    got = _ids(skill)[0]
    assert got == first + typed, f"the id was {first!r}, {len(typed)} keys were typed after it, it is {got!r}"
    assert terminal.running and not terminal.crash_marks()


def test_ctrl_q_with_unsaved_edits_in_a_field_asks(open_app):
    terminal = open_app()
    _into_first_id(terminal)
    terminal.keys("z")
    assert terminal.wait_until(shows_unsaved, 10), terminal.screen()
    terminal.keys("C-q")
    assert terminal.wait_for("Unsaved edits", 10), terminal.screen()
    terminal.keys("Escape")  # Cancel: back to editing, nothing lost
    assert terminal.wait_gone("Unsaved edits", 10), terminal.screen()
    assert terminal.running
    assert shows_unsaved(terminal.screen()), status_line(terminal.screen())
    _quit_saving(terminal)
    assert _ids(terminal.skill)[0] == FIRST_ID + "z"


def test_ctrl_q_with_raw_text_that_does_not_parse_asks(open_app):
    """Raw view (ctrl+r): text that does not parse is an unsaved edit, and ctrl+q asks."""
    terminal = open_app()
    terminal.wait_steady()
    terminal.keys("C-r")  # the raw view, focus in its text
    assert terminal.wait_for("evals/evals.json (text)", 10), terminal.screen()
    terminal.wait_steady()
    terminal.type("{{")  # at the top of the file: no longer JSON
    screen = terminal.wait_until(lambda s: "1  {{{" in s, 10)
    assert screen is not None, "the typed text never reached the raw view's text:\n" + terminal.wait_steady()
    terminal.wait_steady()
    terminal.keys("C-q")
    assert terminal.wait_for("Unsaved edits", 10), f"running={terminal.running}\n" + terminal.screen()
    assert terminal.running


def test_saving_right_after_another_program_wrote_the_file_does_not_overwrite_it(open_app):
    """Another program writes the suite, and ctrl+s comes a moment later, before the
    file watcher has said anything: the save must see the difference (the conflict
    dialog), not write over the other program's edit."""
    terminal = open_app()
    _into_first_id(terminal)
    terminal.keys("q")
    assert terminal.wait_until(shows_unsaved, 10), terminal.screen()
    terminal.wait_steady()
    suite = terminal.skill / "evals" / "evals.json"
    data = json.loads(suite.read_text())
    data["evals"][5]["prompt"] = "written by another program"
    temporary = suite.with_name("evals.json.other-program")
    temporary.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(temporary, suite)
    terminal.keys("C-s")
    shown = terminal.wait_until(lambda s: "changed on disk" in s, 10)
    on_disk = json.loads(suite.read_text())
    assert on_disk["evals"][5]["prompt"] == "written by another program", "the save wrote over the other edit"
    assert shown is not None, "no conflict dialog:\n" + terminal.screen()
    assert terminal.running


def test_browsing_the_case_list_fast_changes_nothing(open_app):
    # Found by a newcomer: bursts of arrows across the suites' boundaries wrote one
    # suite's case values (id, files) into another's, and holding Down past the last
    # case walked into the form and changed a dropdown. Browsing is reading.
    terminal = open_app()
    before = {p.name: p.read_bytes() for p in (terminal.skill / "evals").iterdir() if p.is_file()}
    for _ in range(6):
        terminal.send([("keys", " ".join(["Down"] * 12))])
        time.sleep(0.15)
        terminal.send([("keys", " ".join(["Up"] * 12))])
        time.sleep(0.15)
    terminal.at_rate(["Down"] * 60, per_second=30)
    terminal.at_rate(["Up"] * 60, per_second=30)
    screen = terminal.wait_steady(1)
    assert terminal.running, screen
    assert not shows_unsaved(screen), screen
    assert "no such place" not in terminal.printed() and "no such place" not in screen, screen
    terminal.keys("C-q")  # nothing is unsaved: no dialog, the app leaves
    assert terminal.exit_status() == 0, terminal.screen()
    after = {p.name: p.read_bytes() for p in (terminal.skill / "evals").iterdir() if p.is_file()}
    assert after == before


def test_a_save_right_after_typing_saves_every_key(open_app):
    # ctrl+s acts in the app's turn: typed keys still on their way to the session were
    # left out of the save (found by the soak: "saved", then "unsaved", file without them).
    terminal = open_app()
    _into_first_id(terminal)
    terminal.send([("text", "zfast"), ("keys", "C-s")])  # one go, as a quick typist does
    assert terminal.wait_for("Saved evals/evals.json", 10), terminal.screen()
    screen = terminal.wait_steady(0.5)
    assert not shows_unsaved(screen), screen
    assert _ids(terminal.skill)[0] == FIRST_ID + "zfast"
    suite = terminal.skill / "evals" / "evals.json"
    lines = suite.read_text().count("\n")
    terminal.keys("C-r")
    terminal.wait_steady(0.5)
    terminal.send([("keys", "Enter"), ("keys", "C-s")])  # a line typed in the text view, then save
    deadline = time.monotonic() + 10
    while suite.read_text().count("\n") == lines and time.monotonic() < deadline:
        time.sleep(0.1)
    assert suite.read_text().count("\n") == lines + 1, terminal.screen()
    assert not shows_unsaved(terminal.wait_steady(0.5)), terminal.screen()
