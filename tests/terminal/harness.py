"""The real app in a real terminal: one tmux session per app, keys sent the way a
keyboard sends them (without waiting for the app), the screen read back as text.

Shared by every test in tests/terminal. Everything waits on what the screen
shows, with a timeout, rather than sleeping a fixed time."""

from __future__ import annotations

import ctypes
import json
import re
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.process import command as workbench_command

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo" / "changelog-entry"

needs_tmux = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (tests/run.sh installs it with apt when run as root)"
)

# What the app prints when something went wrong (Textual prints tracebacks on exit;
# Python prints these for a coroutine dropped on the floor or an error in a finaliser).
CRASH_MARKS = ("Traceback", "never awaited", "Exception ignored", "Task exception was never retrieved")
ANSI = re.compile(
    r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78DEHMNOc]"
)


class Terminal:
    """One tmux session running `python -m workbench SKILL`. Its exit status goes to
    a file (absent while the app runs); everything it writes to the terminal is
    logged (tmux pipe-pane), so a traceback printed on the way out is seen."""

    def __init__(self, tmp_path: Path, skill: Path, size: tuple[int, int] = (120, 40), watch: bool = True) -> None:
        self.name = f"wb-{uuid.uuid4().hex[:10]}"
        # A tmux server of its own: on a shared one, a new session started as the last one's server
        # exits (the test before closing its app) fails with "server exited unexpectedly".
        self.tmux = ["tmux", "-L", self.name]
        self.skill = skill
        self.config = tmp_path / "config"
        self.exit_file = tmp_path / f"{self.name}.exit-status"
        self.log_file = tmp_path / f"{self.name}.terminal.log"
        env = f"PYTHONPATH={ROOT} WORKBENCH_CONFIG_DIR={self.config} PYTHONFAULTHANDLER=1"
        app = " ".join(workbench_command(skill)) + ("" if watch else " --no-watch")
        # Textual draws on stderr, so it is not redirected: the pane log has it all. The
        # app starts only once the log is attached (tmux wait-for), so nothing escapes it.
        command = f"tmux wait-for {self.name}-go; cd {tmp_path} && {env} {app}; echo $? > {self.exit_file}; sleep 600"
        size_args = ["-x", str(size[0]), "-y", str(size[1])]
        subprocess.run([*self.tmux, "new-session", "-d", "-s", self.name, *size_args, command], check=True)
        subprocess.run([*self.tmux, "pipe-pane", "-t", self.name, f"cat >> {self.log_file}"], check=True)
        subprocess.run([*self.tmux, "wait-for", "-S", f"{self.name}-go"], check=True)

    # ------------------------------------------------------------ typing

    def keys(self, *keys: str) -> None:
        """Named keys (tmux names: Up, PageDown, BTab, C-s, Escape...), all in one go."""
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        """Literal text, all in one go (as a paste or a fast typist's burst arrives)."""
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, "-l", text], check=True)

    def send(self, chunks: Sequence[tuple[str, str]]) -> None:
        """Several chunks in one tmux call, so they reach the app together: each is
        ("keys", "Up Up C-s") or ("text", "literal text")."""
        argv = list(self.tmux)
        for kind, payload in chunks:
            if len(argv) > len(self.tmux):
                argv.append(";")
            if kind == "keys":
                argv += ["send-keys", "-t", self.name, *payload.split()]
            else:
                argv += ["send-keys", "-t", self.name, "-l", payload]
        if len(argv) > len(self.tmux):
            subprocess.run(argv, check=True)

    def at_rate(self, keys: Sequence[str], per_second: float) -> None:
        """Keys one at a time at a steady rate (a typist, or a keyboard's auto-repeat).
        A key is a tmux key name, or a single character (sent literally)."""
        gap = 1 / per_second
        start = time.monotonic()
        for index, key in enumerate(keys):
            if len(key) == 1:
                self.type(key)
            else:
                self.keys(key)
            pause = start + (index + 1) * gap - time.monotonic()
            if pause > 0:
                time.sleep(pause)

    # ------------------------------------------------------------ reading

    def screen(self) -> str:
        return subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-t", self.name], capture_output=True, text=True, check=True
        ).stdout

    def rows(self) -> list[str]:
        return self.screen().split("\n")

    def wait_until(self, test: Callable[[str], object], seconds: float = 20) -> str | None:
        """The first screen for which test(screen) is true, or None after `seconds`."""
        deadline = time.monotonic() + seconds
        while True:
            screen = self.screen()
            if test(screen):
                return screen
            if time.monotonic() > deadline or not self.running:
                return None
            time.sleep(0.05)

    def wait_for(self, text: str, seconds: float = 20) -> bool:
        return self.wait_until(lambda screen: text in screen, seconds) is not None

    def wait_gone(self, text: str, seconds: float = 20) -> bool:
        return self.wait_until(lambda screen: text not in screen, seconds) is not None

    def wait_steady(self, quiet: float = 0.6, seconds: float = 20) -> str:
        """The screen once it has not changed for `quiet` seconds: the keys sent so
        far have been handled (a blinking cursor is not drawn in a capture)."""
        deadline = time.monotonic() + seconds
        last, since = self.screen(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self.screen()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                break
        return last

    @property
    def running(self) -> bool:
        return not self.exit_file.exists()

    def exit_status(self, seconds: float = 20) -> int | None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.exit_file.exists():
                text = self.exit_file.read_text().strip()
                if text:
                    return int(text)
            time.sleep(0.05)
        return None

    def printed(self) -> str:
        """Everything the app wrote to the terminal, escape sequences removed."""
        try:
            raw = self.log_file.read_bytes().decode("utf-8", errors="replace")
        except FileNotFoundError:
            raw = ""
        return ANSI.sub("", raw)

    def after_exit(self) -> str:
        """The terminal's normal screen and scrollback: what was printed once the app
        left its full-screen mode (where Textual prints a traceback)."""
        return subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-S", "-", "-t", self.name], capture_output=True, text=True, check=True
        ).stdout

    def crash_marks(self) -> list[str]:
        text = self.printed() + "\n" + (self.after_exit() if not self.running else "")
        return [mark for mark in CRASH_MARKS if mark in text]

    def rescue_files(self) -> list[Path]:
        return sorted([*self.skill.rglob("*.unsaved-*"), *self.config.rglob("*.unsaved-*")])

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@contextmanager
def busy_loops() -> Iterator[None]:
    """Two busy loops beside the app (the machines have two cores) while the block runs: what is
    typed must land the same under load."""
    # Each loop dies with the test's process (kill -9 of pytest, a worker lost): two orphaned loops
    # once slowed a whole later suite run to twice its time.
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"], preexec_fn=_die_with_parent) for _ in range(2)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


# ---------------------------------------------------------------- reading the editor


def status_line(screen: str) -> str:
    """The header (the status bar): skill · dialect · file [● unsaved] │ counts."""
    return screen.split("\n", 1)[0]


def shows_unsaved(screen: str) -> bool:
    return "unsaved" in status_line(screen)


RAW_TITLE = re.compile(r"─ (\S+) \(text\) ─")
RAW_ROW = re.compile(r"▊ *(\d+)  (.*)▎")
SCROLLBAR = "▁▂▃▄▅▆▇█▀▔▉▊▋▌▍▎▏ "  # a scrollbar's glyphs (never in a suite's text), and padding


def raw_view(screen: str) -> tuple[str, dict[int, str]] | None:
    """The raw view as shown: the file it shows and its visible lines by number
    (each as much as fits), or None when the raw view is not on screen."""
    title = RAW_TITLE.search(screen)
    if title is None:
        return None
    lines: dict[int, str] = {}
    for row in screen.split("\n"):
        match = RAW_ROW.search(row)
        if match:
            lines[int(match.group(1))] = match.group(2).rstrip(SCROLLBAR)
    return title.group(1), lines


def raw_matches(shown: dict[int, str], text: str) -> bool:
    """The visible lines are the file's lines, cut to the view's width, with the
    same horizontal scroll for every line. The width is the longest visible text:
    a line cut at the edge is that long, and if none is cut every line fits."""
    if not shown:
        return False
    file_lines = text.split("\n")
    if max(shown) > len(file_lines):
        return False
    width = max(len(part) for part in shown.values())
    longest = max(len(line) for line in file_lines)
    for offset in range(0, max(1, longest)):
        if all(file_lines[number - 1][offset : offset + width].rstrip() == part for number, part in shown.items()):
            return True
    return False


def parses(path: Path) -> str | None:
    """None when the file parses as what its name says, else why not."""
    text = path.read_text("utf-8")
    try:
        if path.suffix == ".json":
            json.loads(text)
        elif path.suffix in (".yaml", ".yml") or path.name == "SKILL.md":
            from ruamel.yaml import YAML

            body = text
            if path.name == "SKILL.md":
                if not text.startswith("---"):
                    return "SKILL.md has no frontmatter"
                body = text.split("---", 2)[1]
            YAML(typ="safe").load(body)
    except Exception as exc:  # noqa: BLE001 - any failure to parse is the answer
        return f"{type(exc).__name__}: {exc}"
    return None


def copy_demo(tmp_path: Path) -> Path:
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    return skill
