"""Fixtures for the terminal layer: the real app in tmux (see harness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import Terminal, busy_loops, copy_demo


@pytest.fixture()
def open_app(tmp_path: Path) -> Iterator:
    """open_app(skill=None, size=(120, 40), watch=True) -> a Terminal showing the
    editor (a copy of the demo skill unless given); closed after the test."""
    opened: list[Terminal] = []

    def start(skill: Path | None = None, size: tuple[int, int] = (120, 40), watch: bool = True) -> Terminal:
        terminal = Terminal(tmp_path, skill or copy_demo(tmp_path), size=size, watch=watch)
        opened.append(terminal)
        assert terminal.wait_for("^s Save", 30), terminal.screen()  # the editor is up
        return terminal

    yield start
    for terminal in opened:
        terminal.close()


@pytest.fixture()
def busy() -> Iterator[None]:
    """busy_loops() for the whole test."""
    with busy_loops():
        yield
