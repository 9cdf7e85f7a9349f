"""Editor speed, each figure beside its anchor, measured in one run.

    .venv/bin/python bench/tui_bench.py

Budgets (DESIGN.md section 7): keystroke -> diagnostics on screen <= 16 ms median
on a 1,000-case suite; external save -> diagnostics <= 300 ms; cold start to
interactive <= 1.3x a bare Textual app of the same widgets (measured here, in
the same run); a 10,000-case suite stays responsive.
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


async def typing(skill: Path, pointer: str, widget: str) -> tuple[list[float], float]:
    """Latency from a key event reaching the field to the diagnostics pane updated."""
    from textual.widgets import Input, TextArea

    from workbench.tui.app import WorkbenchApp
    from workbench.tui.widgets.diagnostics import DiagnosticsPane

    started = time.perf_counter()
    app = WorkbenchApp([skill], watch=False, blink=False)
    keys: list[float] = []
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
        original_key, original_show = kind._on_key, DiagnosticsPane.show

        async def on_key(self, event):
            keys.append(time.perf_counter())
            return await original_key(self, event)

        def show(self, diagnostics):
            original_show(self, diagnostics)
            shown.append(time.perf_counter())

        kind._on_key, DiagnosticsPane.show = on_key, show
        try:
            for char in "the quick brown fox jumps over the lazy dog " * 2:
                await pilot.press("space" if char == " " else char)
                await pilot.pause()
        finally:
            kind._on_key, DiagnosticsPane.show = original_key, original_show
    latencies = [(s - k) * 1000 for k, s in zip(keys, shown, strict=True)]
    return latencies, opened


async def external_save(skill: Path) -> list[float]:
    from workbench.tui.app import WorkbenchApp

    app = WorkbenchApp([skill], watch=True, blink=False)
    times = []
    path = skill / "evals" / "evals.json"
    async with app.run_test(size=(140, 44)) as pilot:
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
        latencies, _ = asyncio.run(typing(skill, "/evals/500/id", "input"))
        row("keystroke -> diagnostics updated (typing an id)", statistics.median(latencies), "budget 16 ms")
        latencies, _ = asyncio.run(typing(skill, "/evals/0/prompt", "textarea"))
        row("keystroke -> diagnostics updated (typing a prompt)", statistics.median(latencies), "budget 16 ms")
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
        print("\n10,000-case suite")
        latencies, opened = asyncio.run(typing(big, "/evals/5000/id", "input"))
        row("open to the first form (in process)", opened, "(responsive: cases paged, loaded once)")
        row("keystroke -> diagnostics updated (typing an id)", statistics.median(latencies), "(no budget)")
        row("slowest keystroke", max(latencies), "(no budget)")


def external_save_copy(root: Path, skill: Path) -> list[float]:
    import shutil

    copy = root / "watched" / skill.name
    shutil.copytree(skill, copy)
    return asyncio.run(external_save(copy))


if __name__ == "__main__":
    main()
