"""The editor's speed as a person sees it: whole processes in a real terminal (tmux),
timed from the keys sent (or the launch) to the screen that first shows the result,
beside a minimal Textual app doing the same single thing, pairs alternated in the
same run.

Each tmux call is a process of its own (a few ms); the screen is read as fast as
tmux answers, so a figure is at most one read late. Both sides pay the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import installed

ROOT = Path(__file__).resolve().parent.parent
SIZE = (140, 44)


class Pane:
    """One program in its own tmux session, on a tmux server private to this bench
    (other people's sessions and settings never touch it)."""

    def __init__(self, server: str, command: str) -> None:
        self.server = server
        self.name = f"p-{uuid.uuid4().hex[:8]}"
        self.started = time.perf_counter()
        self.tmux("new-session", "-d", "-s", self.name, "-x", str(SIZE[0]), "-y", str(SIZE[1]), command)

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.server, *args], capture_output=True, text=True).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> float:
        """Sends named keys; the time just before they were sent."""
        now = time.perf_counter()
        self.tmux("send-keys", "-t", self.name, *keys)
        return now

    def text(self, text: str) -> float:
        now = time.perf_counter()
        self.tmux("send-keys", "-t", self.name, "-l", text)
        return now

    def until(self, test: Callable[[str], bool], seconds: float = 30) -> float:
        """The time the first screen passing test was read (polling as fast as tmux answers)."""
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            if test(self.screen()):
                return time.perf_counter()
        raise TimeoutError(f"the screen did not show what was waited for in {seconds} s:\n{self.screen()}")

    def steady(self, quiet: float = 0.4, seconds: float = 10) -> None:
        """Waits until the screen has not changed for `quiet` seconds."""
        deadline = time.perf_counter() + seconds
        last, since = self.screen(), time.perf_counter()
        while time.perf_counter() < deadline and time.perf_counter() - since < quiet:
            time.sleep(0.02)
            now = self.screen()
            if now != last:
                last, since = now, time.perf_counter()

    def close(self) -> None:
        self.tmux("kill-session", "-t", self.name)


class Server:
    """A private tmux server, up before the first figure so no figure pays its start."""

    def __init__(self) -> None:
        self.name = f"tuibench-{os.getpid()}"
        self.holder = Pane(self.name, "sleep 3600")

    def pane(self, command: str) -> Pane:
        return Pane(self.name, command)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True)


# ------------------------------------------------------------ the anchors: minimal Textual apps

ONE_INPUT = """
from textual.app import App
from textual.widgets import Input, Static


class Minimal(App):
    def compose(self):
        yield Input("case-00000", id="box")
        yield Static("0 errors", id="count")

    def on_input_changed(self, event):
        self.query_one("#count", Static).update("1 error" if "X" in event.value else "0 errors")


Minimal().run()
"""

# The anchor of a Tab between the case list and the form: the hints of the focused widget's keys in a
# footer, Textual's own, which follows the focus as ours does (the list's "Duplicate" hint goes in the field).
TWO_HINTS = """
from textual.app import App
from textual.binding import Binding
from textual.widgets import Footer, Input, Static


class List(Static, can_focus=True):
    BINDINGS = [Binding("ctrl+d", "nothing", "Duplicate"), Binding("ctrl+n", "nothing", "New case")]


class Field(Input):
    BINDINGS = [Binding("ctrl+n", "nothing", "New case")]


class Minimal(App):
    BINDINGS = [Binding("ctrl+s", "nothing", "Save")]

    def compose(self):
        yield List("case-00000")
        yield Field()
        yield Footer()

    def action_nothing(self):
        pass


Minimal().run()
"""

# The anchor of a structural edit in the form: a minimal app whose keys add a titled row (a heading, an
# Input) to a scroll and take it away, as "+ add turn", undo and redo do to the workbench's form.
ONE_ROW = """
from textual.app import App
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Static


class Minimal(App):
    BINDINGS = [Binding("ctrl+z", "take", "Undo", priority=True), Binding("ctrl+y", "add", "Redo", priority=True)]

    def compose(self):
        with VerticalScroll():
            yield Static("turn 1")
            yield Static("turn 2")
            yield Button("+ add turn", id="add")

    def on_button_pressed(self, event):
        self.action_add()

    def action_add(self):
        scroll = self.query_one(VerticalScroll)
        scroll.mount(Horizontal(Static("turn 3"), Input(), classes="added"), before=self.query_one("#add"))

    def action_take(self):
        self.query(".added").remove()


Minimal().run()
"""

IN_PLACE = """
import json, sys
from textual import containers, widgets
from textual.app import App
from textual.containers import VerticalScroll
from textual.widgets import Tree

TREE = json.load(open({tree!r}))
IDS = json.load(open({ids!r}))


def build(node, title):
    kind = node["type"]
    make = getattr(widgets, kind, None) or getattr(containers, kind)
    options = dict(id=node["id"], classes=" ".join(node["classes"]) or None)
    if "form-title" in node["classes"]:
        return make(title, **options)
    if kind in ("Input", "TextArea", "Static", "Label"):
        return make(node.get("text", ""), **options)
    if kind == "Select":
        return make([], **options)
    if kind in ("Button", "Switch", "OptionList", "Footer"):
        return make(**options)
    if kind == "Tree":
        return make("skill", **options)
    return make(*[build(child, title) for child in node["children"]], **options)


def form(index):
    return [build(child, "evals/evals.json · case " + IDS[index]) for child in TREE["children"]]


class InPlace(App):
    CSS_PATH = {css!r}
    shown = 0

    def compose(self):
        yield widgets.Static("skill · evals/evals.json", id="status")
        cases = Tree("skill", id="navigator")
        cases.show_root = False
        for index, name in enumerate(IDS):
            cases.root.add_leaf(name, index)
        cases.root.expand()
        with containers.Horizontal(id="main"):
            yield cases
            with containers.Vertical(id="editor"):
                yield VerticalScroll(*form(0), id="form")
        yield widgets.OptionList("No problems in this file.", id="diagnostics")
        yield widgets.Footer()

    def on_mount(self):
        tree = self.query_one(Tree)
        tree.focus()
        tree.cursor_line = 0  # on the first case, as the workbench opens

    def on_tree_node_highlighted(self, event):
        # The least a case switch can cost: the same widgets, their texts set in place.
        index = event.node.data
        if index is None or not self.is_mounted:
            return
        name = IDS[index]
        form = self.query_one("#form")
        for widget in form.query(".form-title"):
            widget.update("evals/evals.json · case " + name)
        for widget in form.query(widgets.Input):
            widget.value = widget.value.replace(IDS[self.shown], name)
        for widget in form.query(widgets.TextArea):
            widget.text = widget.text.replace(f"Case {{self.shown}}:", f"Case {{index}}:")
        self.shown = index


InPlace().run()
"""


def _script(text: str) -> str:
    handle = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, prefix="tui-anchor-")
    with handle:
        handle.write(textwrap.dedent(text))
    return handle.name


def _command(argv: str, config: str) -> str:
    env = f"PYTHONPATH={ROOT} WORKBENCH_CONFIG_DIR={config} TERM=xterm-256color"
    return f"cd {ROOT} && {env} {argv}"


def _python(script: str) -> str:
    """An anchor's command: its Python started as the workbench's is, its modules compiled (installed.py)."""
    return f"{installed.command()} {script}"


def workbench_command(skill: Path, config: str) -> str:
    """The `workbench` entry as installed beside this Python (the one a person starts), run by that
    Python with the bench's bytecode cache (installed.py)."""
    entry = Path(sys.executable).parent / "workbench"
    program = _python(str(entry) if entry.exists() else "-m workbench")
    return _command(f"{program} {skill} --no-watch", config)


def first_form(screen: str) -> bool:
    return "· case case-00000" in screen and "Problems" in screen or "No problems" in screen


# ------------------------------------------------------------ the three figures


def cold_starts(server: Server, skill: Path, config: str, pairs: int = 5) -> tuple[list[float], list[float]]:
    """Launch -> the first form painted (the workbench) and launch -> the one Input
    painted (the anchor), alternated: anchor, workbench, anchor, ..."""
    anchor = _command(_python(_script(ONE_INPUT)), config)
    ours: list[float] = []
    bare: list[float] = []
    for _ in range(pairs):
        for command, test, into in (
            (anchor, lambda s: "case-00000" in s and "0 errors" in s, bare),
            (workbench_command(skill, config), lambda s: "· case case-00000" in s and "No problems" in s, ours),
        ):
            pane = server.pane(command)
            try:
                into.append((pane.until(test) - pane.started) * 1000)
            finally:
                pane.close()
    return ours, bare


def _typing(pane: Pane, count: int) -> tuple[list[float], list[float]]:
    """X at the end of the field until "1 error" shows, then Backspace until it goes."""
    wrong: list[float] = []
    right: list[float] = []
    for _ in range(count):
        sent = pane.text("X")
        wrong.append((pane.until(lambda s: "1 error" in s, 10) - sent) * 1000)
        time.sleep(0.1)  # a typist's gap: the next key finds the app idle
        sent = pane.keys("BSpace")
        right.append((pane.until(lambda s: "1 error" not in s, 10) - sent) * 1000)
        time.sleep(0.1)
    return wrong, right


def keystrokes(
    server: Server, skill: Path, config: str, count: int = 30
) -> tuple[tuple[list[float], list[float]], tuple[list[float], list[float]]]:
    """Keystroke -> diagnostic painted, in the first case's id (the workbench) and in a
    minimal app's one Input whose label says "1 error" while it holds an X (the anchor).
    The two alternate in rounds of five keys, both apps open side by side."""
    ours_pane = server.pane(workbench_command(skill, config))
    bare_pane = server.pane(_command(_python(_script(ONE_INPUT)), config))
    try:
        ours_pane.until(lambda s: "· case case-00000" in s and "No problems" in s, 60)
        bare_pane.until(lambda s: "case-00000" in s, 60)
        ours_pane.steady(1.0)
        ours_pane.keys("Tab")  # from the case list into the first field: the case's id
        ours_pane.steady(0.5)
        ours_pane.keys("End")  # a field selects its text on focus: End puts the cursor after it
        bare_pane.keys("End")
        ours_pane.steady(0.5)
        ours: tuple[list[float], list[float]] = ([], [])
        bare: tuple[list[float], list[float]] = ([], [])
        for _ in range(0, count, 5):
            for pane, into in ((bare_pane, bare), (ours_pane, ours)):
                wrong, right = _typing(pane, 5)
                into[0].extend(wrong)
                into[1].extend(right)
        return ours, bare
    finally:
        ours_pane.close()
        bare_pane.close()


def tabs(server: Server, skill: Path, config: str, count: int = 20) -> tuple[tuple[list[float], list[float]], ...]:
    """Tab from the case list into the form -> the footer's hints for the field painted (the list's
    "Duplicate" gone), and shift+Tab back -> the list's painted, in the workbench and in a minimal app
    whose footer follows the focus between a list-like widget and an Input (the anchor). Rounds of
    five, alternated, both apps open side by side. Returns ((ours in, ours back), (anchor's in, back))."""
    ours_pane = server.pane(workbench_command(skill, config))
    bare_pane = server.pane(_command(_python(_script(TWO_HINTS)), config))
    try:
        ours_pane.until(lambda s: "· case case-00000" in s and "No problems" in s and "Duplicate" in s, 60)
        bare_pane.until(lambda s: "Duplicate" in s, 60)
        ours_pane.steady(1.0)
        bare_pane.steady(0.5)
        ours: tuple[list[float], list[float]] = ([], [])
        bare: tuple[list[float], list[float]] = ([], [])
        for _ in range(0, count, 5):
            for pane, into in ((bare_pane, bare), (ours_pane, ours)):
                for _ in range(5):
                    sent = pane.keys("Tab")
                    into[0].append((pane.until(lambda s: "Duplicate" not in _footer(s), 10) - sent) * 1000)
                    time.sleep(0.3)
                    sent = pane.keys("BTab")
                    into[1].append((pane.until(lambda s: "Duplicate" in _footer(s), 10) - sent) * 1000)
                    time.sleep(0.3)
        return ours, bare
    finally:
        ours_pane.close()
        bare_pane.close()


# Tabs from the case list of the bench suite's first case to its "+ add turn" (its two turns' fields and tools).
TABS_TO_ADD_TURN = 14


def structural_edits(
    server: Server, skill: Path, config: str, count: int = 10
) -> tuple[tuple[list[float], ...], tuple[list[float], ...]]:
    """Enter on the first case's "+ add turn" -> its third turn painted, then, alternated, ctrl+z -> the
    turn gone and ctrl+y -> the turn painted again: each a structural edit of the form, in the workbench
    and in a minimal app whose keys add and take away a titled row (the anchor). Returns ((ours: add,
    undo, redo), (the anchor's))."""
    ours_pane = server.pane(workbench_command(skill, config))
    bare_pane = server.pane(_command(_python(_script(ONE_ROW)), config))
    shown = lambda s: "turn 3" in s  # noqa: E731
    try:
        ours_pane.until(lambda s: "· case case-00000" in s and "No problems" in s, 60)
        bare_pane.until(lambda s: "+ add turn" in s, 60)
        ours_pane.steady(1.0)
        bare_pane.steady(0.5)
        measured = []
        for pane, tabs in ((bare_pane, 1), (ours_pane, TABS_TO_ADD_TURN)):
            pane.keys(*["Tab"] * tabs)
            pane.steady(0.5)
            sent = pane.keys("Enter")
            try:
                added = [(pane.until(shown, 10) - sent) * 1000]
            except TimeoutError:
                raise SystemExit(f"tui_bench: Enter after {tabs} Tab(s) added no turn:\n{pane.screen()}") from None
            measured.append((added, [], []))
        for _ in range(0, count, 5):
            for pane, (_added, undone, redone) in zip((bare_pane, ours_pane), measured, strict=True):
                for _ in range(5):
                    time.sleep(0.3)
                    sent = pane.keys("C-z")
                    undone.append((pane.until(lambda s: not shown(s), 10) - sent) * 1000)
                    time.sleep(0.3)
                    sent = pane.keys("C-y")
                    redone.append((pane.until(shown, 10) - sent) * 1000)
        return measured[1], measured[0]
    finally:
        ours_pane.close()
        bare_pane.close()


def _footer(screen: str) -> str:
    return screen.rstrip("\n").rsplit("\n", 1)[-1]


def case_switches(
    server: Server, skill: Path, tree: dict, config: str, count: int = 30
) -> tuple[list[float], list[float]]:
    """Down in the case list -> the next case's form painted (its title shows the id),
    in the workbench and in a minimal app showing the same widgets, which sets their
    texts in place on each Down (the floor: no case switch can cost less; one that
    removed and mounted them took seconds a switch here). Rounds of five, alternated."""
    ids = [case["id"] for case in json.loads((skill / "evals" / "evals.json").read_text())["evals"]][:200]
    form = _find(tree, "form")
    folder = Path(tempfile.mkdtemp(prefix="tui-switch-"))
    (folder / "form.json").write_text(json.dumps(form))
    (folder / "ids.json").write_text(json.dumps(ids))
    css = ROOT / "workbench" / "tui" / "workbench.tcss"
    floor = IN_PLACE.format(tree=str(folder / "form.json"), ids=str(folder / "ids.json"), css=str(css))
    ours_pane = server.pane(workbench_command(skill, config))
    bare_pane = server.pane(_command(_python(_script(floor)), config))
    at = {id(ours_pane): 0, id(bare_pane): 0}
    try:
        ours_pane.until(lambda s: "· case case-00000" in s and "No problems" in s, 60)
        bare_pane.until(lambda s: "· case case-00000" in s, 60)
        ours_pane.steady(1.0)
        bare_pane.steady(0.5)
        ours: list[float] = []
        bare: list[float] = []
        for _ in range(0, count, 5):
            for pane, into in ((bare_pane, bare), (ours_pane, ours)):
                for _ in range(5):
                    at[id(pane)] += 1
                    title = f"· case {ids[at[id(pane)]]}"
                    sent = pane.keys("Down")
                    into.append((pane.until(lambda s, title=title: title in s, 10) - sent) * 1000)
                    time.sleep(0.1)
        return ours, bare
    finally:
        ours_pane.close()
        bare_pane.close()


def _find(node: dict, id: str) -> dict:
    if node.get("id") == id:
        return node
    for child in node.get("children", []):
        found = _find(child, id)
        if found:
            return found
    return {}


def available() -> bool:
    return shutil.which("tmux") is not None
