"""Every key lands where it was typed (issue 25): keys sent in one go are applied
in order, each to the widget and case that had the focus when it was typed, as
if they had been typed slowly; the case list's own keys (Home, End, PageUp,
PageDown) included. The terminal tests (tests/terminal/test_bursts.py) send the
same bursts through tmux under load; these are the same checks in process."""

from __future__ import annotations

import shutil

import pytest
from conftest import DEMO
from terminal.test_bursts import random_burst
from textual import events

from tui.helpers import SIZE, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.navigator import Navigator

# tmux's key names (the terminal tests') in Textual's
KEY_NAMES = {
    "Home": "home",
    "End": "end",
    "Up": "up",
    "Down": "down",
    "PageUp": "pageup",
    "PageDown": "pagedown",
    "Tab": "tab",
    "BTab": "shift+tab",
    "BSpace": "backspace",
}


def _key(name: str) -> events.Key:
    key = KEY_NAMES.get(name, name)
    return events.Key(key, name if len(name) == 1 else None)


def _burst(app, *names: str) -> None:
    """Keys sent in one go, as a paste or a fast typist's terminal does: all queued
    before the app has handled the first (Pilot's press waits for each)."""
    for name in names:
        app.post_message(_key(name))


async def _all_handled(pilot) -> None:
    for _ in range(3):
        await settle(pilot)
        await pilot.pause(0.05)


def _state(app) -> tuple:
    """What the keys did: every file's unsaved text, what is open, and where the focus is."""
    screen = app.screen
    texts = {f.rel: f.unsaved_text() for f in screen.session.files}
    focused = app.focused
    where = getattr(focused, "pointer", None) or (type(focused).__name__ if focused else None)
    return texts, screen.current.rel if screen.current else None, screen.place, where


async def _typed_slowly(skill, names: list[str]) -> tuple:
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for name in names:
            app.post_message(_key(name))
            await _all_handled(pilot)
        return _state(app)


async def _typed_in_one_go(skill, names: list[str]) -> tuple:
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _burst(app, *names)
        await _all_handled(pilot)
        return _state(app)


def _copy(tmp_path, name: str):
    target = tmp_path / name / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_home_then_downs_sent_in_one_go_move_from_the_top(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.focused, Navigator)
        _burst(app, "Home", "Down", "Down", "Down")
        await _all_handled(pilot)
        # SKILL.md, evals.json, its settings, then its first case
        assert (app.screen.current.rel, app.screen.place.pointer) == ("evals/evals.json", "/evals/0")


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_end_then_ups_sent_in_one_go_move_from_the_bottom(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.screen.query_one(Navigator)
        expected = tree.get_node_at_line(tree.last_line - 2).data
        _burst(app, "End", "Up", "Up")
        await _all_handled(pilot)
        assert app.screen.place == expected and tree.cursor_node.data == expected


@pytest.mark.slow  # 15 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_letters_after_a_burst_of_list_keys_edit_the_case_they_were_typed_in(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        ids = [case["id"] for case in app.screen.current.document.data["evals"]]
        _burst(app, "Home", "Down", "Down", "Down", "Tab", "End", "Z", "Z")
        await _all_handled(pilot)
        data = app.screen.session.file("evals/evals.json").document.data["evals"]
        assert [case["id"] for case in data] == [ids[0] + "ZZ", *ids[1:]]
        assert getattr(app.focused, "pointer", None) == "/evals/0/id"


@pytest.mark.slow  # 159 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("seed", [3, 11, 25])
async def test_a_random_burst_does_what_the_same_keys_do_typed_slowly(tmp_path, seed):
    names = random_burst(seed)
    slowly = await _typed_slowly(_copy(tmp_path, "slow"), names)
    in_one_go = await _typed_in_one_go(_copy(tmp_path, "fast"), names)
    assert in_one_go == slowly, names
