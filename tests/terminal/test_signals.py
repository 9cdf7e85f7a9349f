"""The real app killed by a signal (SIGTERM, or SIGHUP when its terminal closes):
the unsaved edit is rescued first, and the terminal says where."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import DEMO

from terminal.test_typing_speed import Terminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _app_pid(terminal: Terminal) -> int:
    shell = subprocess.run(
        [*terminal.tmux, "display-message", "-p", "-t", terminal.name, "#{pane_pid}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    children = subprocess.run(["ps", "-o", "pid=", "--ppid", shell], capture_output=True, text=True).stdout.split()
    assert len(children) == 1, children
    return int(children[0])


def _with_an_unsaved_edit(tmp_path: Path) -> tuple[Terminal, Path]:
    """The app in tmux on a copy of the demo, "zz" typed at the end of the first case's id."""
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    terminal = Terminal(tmp_path, skill)
    assert terminal.wait_for("^s Save", 30), terminal.screen()  # the editor is up
    terminal.wait_steady(0.5)
    terminal.keys("Tab")  # into the first case's id
    terminal.wait_steady(0.5)
    terminal.keys("End", "z", "z")
    assert terminal.wait_for("unsaved"), terminal.screen()
    return terminal, skill


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_rescues_the_unsaved_edit_and_says_where(tmp_path, signum):
    terminal, skill = _with_an_unsaved_edit(tmp_path)
    try:
        os.kill(_app_pid(terminal), signum)
        deadline = time.monotonic() + 20
        while terminal.running and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not terminal.running, terminal.screen()
        assert terminal.exit_file.read_text().strip() == str(128 + signum)
        [rescued] = [p for p in (skill / "evals").iterdir() if p.name.startswith("evals.json.unsaved-")]
        assert json.loads(rescued.read_text())["evals"][0]["id"].endswith("zz")
        assert json.loads((skill / "evals" / "evals.json").read_text())["evals"][0]["id"] == "export-json-flag"
        if signum == signal.SIGTERM:  # after SIGHUP there is no terminal to say it on
            assert terminal.wait_for(f"your unsaved edits were written to {rescued}"[:60]), terminal.screen()
        assert "Traceback" not in terminal.screen()
    finally:
        terminal.close()


def test_closing_the_terminal_while_the_app_draws_rescues_and_leaves_no_process(tmp_path):
    # Once the terminal is gone, Textual's output thread dies on it, and its 31st
    # queued write blocked the app's shutdown forever: a closed terminal left a
    # process behind. Close it mid-drawing, with an unsaved edit.
    terminal, skill = _with_an_unsaved_edit(tmp_path)
    try:
        pid = _app_pid(terminal)
        terminal.keys("S-Tab")
        terminal.keys(*["Down", "Up"] * 40)  # drawing hard when the terminal goes
        subprocess.run([*terminal.tmux, "kill-session", "-t", terminal.name], capture_output=True)
        deadline = time.monotonic() + 15
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), f"pid {pid} is still running after its terminal closed"
        assert [p for p in (skill / "evals").iterdir() if p.name.startswith("evals.json.unsaved-")]
    finally:
        terminal.close()


def _alive(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().split()[2]
    except OSError:
        return False
    return state != "Z"
