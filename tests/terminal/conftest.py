"""Fixtures for the terminal layer: the real app in tmux (see harness.py)."""

from __future__ import annotations

import ctypes
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import Terminal, copy_demo


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


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@pytest.fixture()
def busy() -> Iterator[None]:
    """Two busy loops beside the app (the machines have two cores): what is typed
    must land the same under load."""
    # Each loop dies with the test's process (kill -9 of pytest, a worker lost): two orphaned loops
    # once slowed a whole later suite run to twice its time.
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"], preexec_fn=_die_with_parent) for _ in range(2)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
