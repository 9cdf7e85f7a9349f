"""The real app in a real terminal (tmux), typed at human and auto-repeat speed.
Pilot waits for every key to be handled, so it cannot see what a held arrow key
does; this layer sends keys the way a keyboard does, without waiting."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import DEMO

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (tests/run.sh installs it with apt when run as root)"
)


class Terminal:
    """One tmux session running the workbench on a skill."""

    def __init__(self, tmp_path: Path, skill: Path, size: tuple[int, int] = (120, 40)) -> None:
        self.name = f"wb-{uuid.uuid4().hex[:8]}"
        self.exit_file = tmp_path / "exit-status"
        env = f"PYTHONPATH={ROOT} WORKBENCH_CONFIG_DIR={tmp_path / 'config'}"
        app = f"{sys.executable} -m workbench {skill} --no-watch"  # Textual draws on stderr: not redirected
        command = f"cd {tmp_path} && {env} {app}; echo $? > {self.exit_file}; sleep 60"
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", self.name, "-x", str(size[0]), "-y", str(size[1]), command], check=True
        )

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True, check=True
        ).stdout

    def wait_for(self, text: str, seconds: float = 20) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if text in self.screen():
                return True
            time.sleep(0.1)
        return False

    @property
    def running(self) -> bool:
        return not self.exit_file.exists()

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


@pytest.fixture()
def terminal(tmp_path):
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    opened = Terminal(tmp_path, skill)
    try:
        assert opened.wait_for("evals/evals.json"), opened.screen()
        yield opened
    finally:
        opened.close()


def _hold(terminal: Terminal, key: str, seconds: float, rate: float = 30.0) -> None:
    """A held key: auto-repeat at `rate` keys a second, sent without waiting for the app."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        terminal.keys(*[key] * 3)  # what a keyboard sends in 1/10 s at 30 a second
        time.sleep(3 / rate)


def test_holding_an_arrow_key_in_the_case_list_keeps_the_app_and_the_edit(terminal):
    terminal.keys("Down")
    time.sleep(0.5)
    terminal.keys("Down")
    time.sleep(0.8)
    terminal.keys("Tab")  # into the case's first field: its id
    time.sleep(0.5)
    terminal.keys("End", "x")  # an unsaved edit
    assert terminal.wait_for("unsaved"), terminal.screen()
    terminal.keys("BTab")  # back to the case list
    time.sleep(0.5)
    for key in ("Down", "Up", "Down", "Up"):
        _hold(terminal, key, 2.5)  # ten seconds of auto-repeat, both ways
    time.sleep(2)
    assert terminal.running, terminal.screen()  # on the old code: exit 0, "coroutine ... was never awaited"
    terminal.keys("C-q")  # quitting asks: the edit is still there, unsaved
    assert terminal.wait_for("Unsaved edits"), terminal.screen()
    assert terminal.running
