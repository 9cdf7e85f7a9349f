"""Editor speed, each figure beside its anchor, measured in one run.

    .venv/bin/python bench/tui_bench.py

Budgets (DESIGN.md section 7): keystroke -> diagnostics on screen <= 16 ms median
on a 1,000-case suite; external save -> diagnostics <= 300 ms; cold start to
interactive <= 1.3x a bare Textual app of the same widgets (measured here, in
the same run); a 10,000-case suite stays responsive. Issue 12: switching cases
<= 50 ms median on a 1,000-case suite, beside a bare Textual app swapping the
same widgets; keystrokes at 30 a second never lost (a real terminal, tmux),
beside a bare Textual app's Input.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("WORKBENCH_CONFIG_DIR", tempfile.mkdtemp(prefix="bench-config-"))

from suite_gen import write_suite  # noqa: E402


def row(label: str, value: float, anchor: str, unit: str = "ms") -> None:
    print(f"  {label:<58} {value:>9.1f} {unit}   {anchor}")


async def typing(skill: Path, pointer: str, widget: str) -> tuple[list[float], list[float], float]:
    """Latency to the diagnostics pane updated: from the key reaching the field, and
    from the key reaching the app (its wait in the key queue and its way to the
    field included: what a person waits for)."""
    from textual import events
    from textual.widgets import Input, TextArea

    from workbench.tui.app import WorkbenchApp
    from workbench.tui.keystrokes import Keystrokes
    from workbench.tui.widgets.diagnostics import DiagnosticsPane

    started = time.perf_counter()
    app = WorkbenchApp([skill], watch=False, blink=False)
    keys: list[float] = []
    received: list[float] = []
    shown: list[float] = []
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        opened = (time.perf_counter() - started) * 1000
        from workbench.tui.widgets.navigator import Place
        from workbench.validate.validator import case_of

        screen = app.screen
        screen.open_place(Place(screen.current.rel, case_of(screen.current.format, pointer)))
        await app.workers.wait_for_complete()
        await pilot.pause()
        kind = Input if widget == "input" else TextArea
        field = next(w for w in app.screen.query(kind) if getattr(w, "pointer", None) == pointer)
        field.focus()
        await pilot.pause()
        original_key, original_show, original_take = kind._on_key, DiagnosticsPane.show, Keystrokes.take

        async def on_key(self, event):
            keys.append(time.perf_counter())
            return await original_key(self, event)

        def show(self, diagnostics):
            original_show(self, diagnostics)
            shown.append(time.perf_counter())

        def take(self, event):
            now = time.perf_counter()
            waits = original_take(self, event)  # True for a key from the terminal (not once let through)
            if waits and isinstance(event, events.Key):
                received.append(now)
            return waits

        kind._on_key, DiagnosticsPane.show, Keystrokes.take = on_key, show, take  # type: ignore[method-assign]
        try:
            for char in "the quick brown fox jumps over the lazy dog " * 2:
                await pilot.press("space" if char == " " else char)
                await pilot.pause()
        finally:
            kind._on_key, DiagnosticsPane.show, Keystrokes.take = original_key, original_show, original_take  # type: ignore[method-assign]
    from_field = [(s - k) * 1000 for k, s in zip(keys, shown, strict=True)]
    from_app = [(s - k) * 1000 for k, s in zip(received, shown, strict=True)]
    return from_field, from_app, opened


async def external_save(skill: Path) -> list[float]:
    from workbench.tui.app import WorkbenchApp

    app = WorkbenchApp([skill], watch=True, blink=False)
    times = []
    path = skill / "evals" / "evals.json"
    async with app.run_test(size=(140, 44)) as pilot:
        while getattr(app.screen, "current", None) is None:  # the editor is up (a loaded machine takes a while)
            await pilot.pause(0.1)
        await pilot.pause(1.0)  # the watcher is up
        good = path.read_text()
        for attempt in range(6):
            broken = attempt % 2 == 0
            text = good.replace('"runs": 1,', '"runs": 0,', 1) if broken else good
            started = time.perf_counter()
            path.write_text(text)
            while time.perf_counter() - started < 3:
                if bool(app.screen.current.diagnostics) == broken:
                    break
                await asyncio.sleep(0.002)
            times.append((time.perf_counter() - started) * 1000)
            await pilot.pause(0.3)
    return times


class Painted:
    """Times from a key to the first frame painted after the new form is in place:
    the same clock for the workbench and the bare app."""

    def __init__(self) -> None:
        from textual.screen import Screen

        self.started: float | None = None
        self.ready = False
        self.times: list[float] = []
        self._original = Screen._on_timer_update
        clock = self

        def on_timer_update(screen) -> None:
            clock._original(screen)
            if clock.ready and clock.started is not None:
                clock.times.append((time.perf_counter() - clock.started) * 1000)
                clock.started, clock.ready = None, False

        Screen._on_timer_update = on_timer_update  # type: ignore[method-assign]

    def close(self) -> None:
        from textual.screen import Screen

        Screen._on_timer_update = self._original  # type: ignore[method-assign]


async def _switches(app, pilot, clock: Painted, count: int) -> None:
    from textual.widgets import Tree

    tree = app.screen.query_one(Tree)
    tree.focus()
    await pilot.pause()
    original = type(tree).action_cursor_down

    def cursor_down(self) -> None:
        clock.started, clock.ready = time.perf_counter(), False
        original(self)

    type(tree).action_cursor_down = cursor_down
    try:
        for _ in range(count):
            await pilot.press("down")
            await app.workers.wait_for_complete()
            await pilot.pause(0.05)
    finally:
        type(tree).action_cursor_down = original


async def case_switch(skill: Path, count: int = 60) -> list[float]:
    """Down in the case list of a 1,000-case suite: key -> the next case's form painted."""
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.widgets.form import FormView

    app = WorkbenchApp([skill], watch=False, blink=False)
    clock = Painted()
    original = FormView._after_build

    def after_build(self, *args) -> None:
        original(self, *args)
        clock.ready = True

    FormView._after_build = after_build  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(140, 44)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            await _switches(app, pilot, clock, count)
    finally:
        FormView._after_build = original  # type: ignore[method-assign]
        clock.close()
    return clock.times


async def bare_case_switch(skill: Path, count: int = 60) -> list[float]:
    """The anchor: a bare Textual app with the same case list and the same widgets of
    a case form (plain Textual classes, the workbench's CSS), which swaps them
    (remove, mount) on each Down, as a form without reuse would."""
    import json

    from textual.app import App
    from textual.containers import VerticalScroll
    from textual.widgets import Tree

    tree = await widget_tree(skill)
    form = _find(tree, "form")
    path = skill / "evals" / "evals.json"
    ids = [case["id"] for case in json.loads(path.read_text())["evals"]][:200]  # the workbench's first page
    css = str(Path(__file__).resolve().parent.parent / "workbench" / "tui" / "workbench.tcss")
    clock = Painted()

    class Bare(App):
        CSS_PATH = css

        def compose(self):
            cases: Tree[int] = Tree("skill", id="navigator")
            for index, name in enumerate(ids):
                cases.root.add_leaf(name, index)
            cases.root.expand()
            yield cases
            yield VerticalScroll(*[_build(child) for child in form["children"]], id="form")

        async def on_tree_node_highlighted(self, event) -> None:
            pane = self.query_one("#form")
            async with pane.batch():
                await pane.remove_children()
                await pane.mount_all([_build(child) for child in form["children"]])
            clock.ready = True

    app = Bare()
    try:
        async with app.run_test(size=(140, 44)) as pilot:
            await pilot.pause()
            await _switches(app, pilot, clock, count)
    finally:
        clock.close()
    return clock.times


def _find(node: dict, id: str) -> dict:
    if node.get("id") == id:
        return node
    for child in node.get("children", []):
        found = _find(child, id)
        if found:
            return found
    return {}


def _build(node: dict):
    """A plain Textual widget of a dumped workbench widget (BARE below does the same)."""
    from textual import containers, widgets

    kind = node["type"]
    make = getattr(widgets, kind, None) or getattr(containers, kind)
    options = dict(id=node["id"], classes=" ".join(node["classes"]) or None)
    if kind in ("Input", "TextArea", "Static", "Label"):
        return make(node.get("text", ""), **options)
    if kind == "Select":
        return make([], **options)
    if kind in ("Button", "Switch", "OptionList", "Footer", "Tree"):
        return make(**options) if kind != "Tree" else make("skill", **options)
    return make(*[_build(child) for child in node["children"]], **options)


KEYSTROKE_APP = """
import sys
from textual.app import App
from textual.widgets import Input

class Bare(App):
    def compose(self):
        yield Input(id="box")

    def on_input_changed(self, event):
        open({out!r}, "w").write(event.value)

Bare().run()
"""


def keystrokes(skill: Path, text: str, rate: float = 30.0) -> tuple[float, float] | None:
    """Keys typed at `rate` a second in a real terminal (tmux) into the id of the
    first case, then saved: the share that reached the file. Beside it, the same
    keys into a bare Textual app's Input. None: no tmux here."""
    import json
    import shutil
    import uuid

    if shutil.which("tmux") is None:
        return None

    def run(command: str, keys: list[str], wait_for: str, result) -> float:
        name = f"bench-{uuid.uuid4().hex[:8]}"
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "140", "-y", "44", command], check=True)
        try:
            deadline = time.monotonic() + 30
            while wait_for not in _screen(name) and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(0.5)
            for key in keys:
                subprocess.run(["tmux", "send-keys", "-t", name, *key.split(" ")], check=True)
            for char in text:
                subprocess.run(["tmux", "send-keys", "-t", name, "-l", char], check=True)
                time.sleep(1 / rate)
            time.sleep(1.0)
            return result(name)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)

    root = Path(__file__).resolve().parent.parent
    env = f"PYTHONPATH={root} WORKBENCH_CONFIG_DIR={os.environ['WORKBENCH_CONFIG_DIR']} TERM=xterm-256color"
    path = skill / "evals" / "evals.json"
    before = json.loads(path.read_text())["evals"][0]["id"]

    def saved(name: str) -> float:
        subprocess.run(["tmux", "send-keys", "-t", name, "C-s"], check=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            now = json.loads(path.read_text())["evals"][0]["id"]
            if now != before:
                break
            time.sleep(0.1)
        landed = now[len(before) :] if now.startswith(before) else ""
        return _share(landed, text)

    ours = run(f"{env} {sys.executable} -m workbench {skill} --no-watch", ["Tab", "End"], "evals.json", saved)
    out = Path(tempfile.mkdtemp()) / "typed"
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(textwrap.dedent(KEYSTROKE_APP.format(out=str(out))))
    bare = run(
        f"TERM=xterm-256color {sys.executable} {handle.name}",
        [],
        "▔",
        lambda name: _share(out.read_text() if out.exists() else "", text),
    )
    return ours, bare


def _share(landed: str, sent: str) -> float:
    """The share of the keys sent that landed, in order (100: every one)."""
    return 100.0 * len(landed) / len(sent) if landed == sent[: len(landed)] else 0.0


def _screen(name: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


CONTAINERS = {
    "Vertical",
    "Horizontal",
    "VerticalScroll",
    "HorizontalScroll",
    "Container",
    "Grid",
    "Center",
    "Middle",
    "ScrollableContainer",
}


async def widget_tree(skill: Path) -> dict:
    """The workbench's first screen as plain Textual widgets: the "bare app of the
    same widgets" is built from this, so both sides mount the same tree."""
    from textual.widget import Widget
    from textual.widgets import Input, Label, Static, TextArea, Tree

    from workbench.tui.app import WorkbenchApp

    app = WorkbenchApp([skill], watch=False, blink=False)

    def base(widget: Widget) -> str:
        return next(c.__name__ for c in type(widget).__mro__ if c.__module__.startswith("textual."))

    def dump(widget: Widget) -> dict:
        node = {"type": base(widget), "id": widget.id, "classes": sorted(widget.classes), "children": []}
        if isinstance(widget, Tree):
            node["labels"] = [str(n.label) for n in widget.root.children for n in [n, *n.children]]
        elif isinstance(widget, (Input,)):
            node["text"] = widget.value
        elif isinstance(widget, TextArea):
            node["text"] = widget.text
        elif isinstance(widget, (Static, Label)):
            node["text"] = str(widget.render())
        if node["type"] in CONTAINERS:  # a leaf widget builds its own insides
            node["children"] = [dump(child) for child in widget.children]
        return node

    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        return {"children": [dump(child) for child in app.screen.children]}


BARE = """
import json, sys
from textual import widgets, containers
from textual.app import App

TREE = json.load(open({tree!r}))

def build(node):
    kind = node["type"]
    make = getattr(widgets, kind, None) or getattr(containers, kind)
    options = dict(id=node["id"], classes=" ".join(node["classes"]) or None)
    children = [build(child) for child in node["children"]]
    if kind == "Tree":
        tree = widgets.Tree("skill", **options)
        for label in node["labels"]:
            tree.root.add_leaf(label)
        return tree
    if kind in ("Input", "TextArea"):
        return make(node.get("text", ""), **options)
    if kind in ("Static", "Label"):
        return make(node.get("text", ""), **options)
    if kind in ("Select",):
        return make([], **options)
    if kind in ("Button", "Switch", "OptionList", "Footer"):
        return make(**options)
    return make(*children, **options)

class Bare(App):
    CSS_PATH = {css!r}

    def compose(self):
        for node in TREE["children"]:
            yield build(node)

    def on_mount(self):
        self.call_after_refresh(self.exit)

Bare().run(headless=True)
"""

WORKBENCH = """
import sys
from pathlib import Path
from workbench.tui.app import WorkbenchApp

class Ready(WorkbenchApp):
    def on_form_view_rendered(self):
        super().on_form_view_rendered()
        self.call_after_refresh(self.exit)

Ready([Path({skill!r})], watch=False).run(headless=True)
"""


def cold_start(script: str, runs: int = 5) -> float:
    times = []
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(textwrap.dedent(script))
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, handle.name], check=True, capture_output=True, env={**os.environ, "TERM": "xterm-256color"}
        )
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        skill = write_suite(root, 1000, "suite-1000").parent.parent
        big = write_suite(root, 10000, "suite-10000").parent.parent
        print("workbench TUI: speed beside its anchors (medians)")
        print("\n1,000-case suite")
        latencies, waited, _ = asyncio.run(typing(skill, "/evals/500/id", "input"))
        row("keystroke -> diagnostics updated (typing an id)", statistics.median(waited), "budget 16 ms")
        row(
            "  the same, from the key reaching the field",
            statistics.median(latencies),
            "(as measured before the key queue)",
        )
        latencies, waited, _ = asyncio.run(typing(skill, "/evals/0/prompt", "textarea"))
        row("keystroke -> diagnostics updated (typing a prompt)", statistics.median(waited), "budget 16 ms")
        row(
            "  the same, from the key reaching the field",
            statistics.median(latencies),
            "(as measured before the key queue)",
        )
        saves = external_save_copy(root, skill)
        row("external save -> diagnostics updated (real watcher)", statistics.median(saves), "budget 300 ms")
        tree_file = root / "first-screen.json"
        import json

        tree_file.write_text(json.dumps(asyncio.run(widget_tree(skill))))
        css = str(Path(__file__).resolve().parent.parent / "workbench" / "tui" / "workbench.tcss")
        bare = cold_start(BARE.format(tree=str(tree_file), css=css))
        ours = cold_start(WORKBENCH.format(skill=str(skill)))
        row("cold start, bare Textual app of the same widgets", bare, "the anchor")
        row(
            "cold start, workbench to the first form",
            ours,
            f"budget {bare * 1.3:,.0f} ms (1.3x); ratio {ours / bare:.2f}",
        )
        ours_switch = asyncio.run(case_switch(skill))
        bare_switch = asyncio.run(bare_case_switch(skill))
        row(
            "case switch, bare app swapping the same widgets",
            statistics.median(bare_switch),
            "the anchor",
        )
        row("case switch, bare app, p95", _p95(bare_switch), "the anchor")
        row(
            "case switch (Down in the case list -> next case painted)",
            statistics.median(ours_switch),
            f"budget 50 ms; {statistics.median(ours_switch) / statistics.median(bare_switch):.2f}x the bare app",
        )
        row("case switch, p95", _p95(ours_switch), "(no budget)")
        # ids take lowercase letters, digits and hyphens: a hyphen run and a capital flip it invalid and back
        typed = keystrokes(skill, "-a-b--cHANGE-x" * 4)
        if typed is None:
            print("  keystrokes at 30/s: tmux is not installed, not measured")
        else:
            row("keys at 30/s landing in a bare Textual Input (tmux)", typed[1], "the anchor", unit="%")
            row("keys at 30/s landing in a case id, valid/invalid flips (tmux)", typed[0], "budget 100 %", unit="%")
        print("\n10,000-case suite")
        latencies, waited, opened = asyncio.run(typing(big, "/evals/5000/id", "input"))
        row("open to the first form (in process)", opened, "(responsive: cases paged, loaded once)")
        row("keystroke -> diagnostics updated (typing an id)", statistics.median(waited), "(no budget)")
        row("slowest keystroke", max(waited), "(no budget)")


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def external_save_copy(root: Path, skill: Path) -> list[float]:
    import shutil

    copy = root / "watched" / skill.name
    shutil.copytree(skill, copy)
    return asyncio.run(external_save(copy))


if __name__ == "__main__":
    main()
