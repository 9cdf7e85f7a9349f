"""What a cold start does before the first form is painted (issue 26: cold start <= 1 s
on the 1,000-case bench suite). The class: work before the first paint that the first
screen does not need. Each test counts one kind of it, as a person starts the editor
(`workbench FOLDER`, a fresh process) or as the app opens a big suite:

- garbage collections: the imports, the suite and the form are a million objects that
  live as long as the app; the collector walked them ~250 times, a full pass among them;
- styles worked out for widgets not yet mounted (mounting works them out again);
- the case list: a message for each case opened, each case's label drawn again to
  measure the list's width at every change of its lines or styles."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from textual.css.stylesheet import Stylesheet
from textual.screen import Screen
from textual.widgets import Input, Tree

from tui.helpers import SIZE, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.navigator import Navigator

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from suite_gen import write_suite  # noqa: E402

FIRST_FIELD = "/evals/0/id"


@pytest.fixture(scope="module")
def bench_suite(tmp_path_factory) -> Path:
    """The bench's 1,000-case suite (bench/suite_gen.py)."""
    return write_suite(tmp_path_factory.mktemp("cold"), 1000, "suite-1000").parent.parent


def _first_field_shown(screen: Screen) -> bool:
    return any(getattr(w, "pointer", None) == FIRST_FIELD for w in screen.query(Input))


# `workbench FOLDER` as a person starts it (launch.main), the app run headless: the
# collections of each generation from the process's start to the first form painted,
# then whether the collector runs again once the start-up is over.
ENTRY = """
import asyncio, gc, json, sys
collections = [0, 0, 0]
gc.callbacks.append(lambda phase, info: phase == "start" and collections.__setitem__(
    info["generation"], collections[info["generation"]] + 1))
import workbench.tui.start as start
seen = {}

def run_app(skills, watch):
    from textual.screen import Screen
    from workbench.tui.app import WorkbenchApp
    original = Screen._compositor_refresh

    def painted(self):
        original(self)
        if "first" not in seen and any(getattr(w, "pointer", None) == FIRST for w in self.query("Input")):
            seen["first"] = list(collections)

    Screen._compositor_refresh = painted

    async def opened():
        app = WorkbenchApp(skills, watch=False, blink=False)
        async with app.run_test(size=(140, 44)) as pilot:
            while "first" not in seen:
                await pilot.pause(0.05)
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            seen["enabled"], seen["frozen"] = gc.isenabled(), gc.get_freeze_count()

    asyncio.run(opened())
    print(json.dumps(seen))

start.run_app = run_app
sys.argv = ["workbench", SKILL, "--no-watch"]
from workbench.launch import main
collections[:] = [0, 0, 0]  # from the entry on
main()
"""


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_cold_start_collects_no_garbage_before_the_first_form(bench_suite):
    code = ENTRY.replace("FIRST", repr(FIRST_FIELD)).replace("SKILL", repr(str(bench_suite)))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["first"] == [0, 0, 0], f"collections of generations 0, 1, 2 before the first form: {seen['first']}"
    # Once started, the collector runs again, and never walks what the start-up built.
    assert seen["enabled"] is True
    assert seen["frozen"] > 100_000, f"{seen['frozen']} objects frozen"


@pytest.fixture
def until_first_paint(monkeypatch):
    """Calls counted until the first paint that shows the first form's first field."""
    counting = {"on": True}
    original = Screen._compositor_refresh

    def painted(self):
        original(self)
        if counting["on"] and _first_field_shown(self):
            counting["on"] = False

    monkeypatch.setattr(Screen, "_compositor_refresh", painted)
    return counting


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_no_styles_are_worked_out_for_widgets_not_mounted(bench_suite, monkeypatch, until_first_paint):
    """An Input's value, a Button's look, a footer key's size set in its constructor made
    Textual work out its styles at once, before it was mounted, where they were worked
    out again: about a hundred times before the first paint."""
    unmounted: list[str] = []
    original = Stylesheet.apply

    def apply(self, node, *args, **kwargs):
        if until_first_paint["on"] and node.parent is None and node is not node.app and not isinstance(node, Screen):
            unmounted.append(type(node).__name__)
        return original(self, node, *args, **kwargs)

    monkeypatch.setattr(Stylesheet, "apply", apply)
    app = WorkbenchApp([bench_suite], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    assert unmounted == [], f"{len(unmounted)} styles worked out before mounting: {sorted(set(unmounted))}"


async def test_the_case_list_posts_no_message_per_case(bench_suite, monkeypatch, until_first_paint):
    """The case list opens every file and page with all it holds: Tree's expand_all posted
    a NodeExpanded for every node, each case's too (a thousand messages through the list's
    queue and the screen's before the first paint), though a case has nothing to open."""
    expanded: list[object] = []
    original = Tree.NodeExpanded.__init__

    def counted(self, node):
        if until_first_paint["on"]:
            expanded.append(node)
        original(self, node)

    monkeypatch.setattr(Tree.NodeExpanded, "__init__", counted)
    app = WorkbenchApp([bench_suite], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        navigator = app.screen.query_one(Navigator)
        # Every file and page is open, each case shown.
        assert all(node.is_expanded for node in _openable(navigator.root))
        assert len(navigator._tree_lines) > 1000
    assert len(expanded) <= 20, f"{len(expanded)} NodeExpanded messages before the first paint"


async def test_the_case_list_draws_each_label_once_to_measure_it(bench_suite, monkeypatch, until_first_paint):
    """Tree measures its width by drawing every line's label, again at each change of its
    lines: every case of the 1,000, five times over before the first paint. Each is drawn
    once now (and again if shown); the width is still the widest line's, as Tree measures it."""
    drawn: Counter[object] = Counter()
    original = Navigator.render_label

    def render_label(self, node, base_style, style):
        if until_first_paint["on"]:
            drawn[node] += 1
        return original(self, node, base_style, style)

    monkeypatch.setattr(Navigator, "render_label", render_label)
    app = WorkbenchApp([bench_suite], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        navigator = app.screen.query_one(Navigator)
        widest = max(
            original(navigator, line.node, navigator.rich_style, navigator.rich_style).cell_len
            + line._get_guide_width(navigator.guide_depth, navigator.show_root)
            for line in navigator._tree_lines
        )
        assert navigator.virtual_size.width == widest
    most = max(drawn.values())
    assert most <= 2, f"a label drawn {most} times before the first paint"


async def test_the_case_list_is_laid_out_once_when_filled(bench_suite, monkeypatch, until_first_paint):
    """Tree forgets its lines and asks for a layout of the screen at each node added: a
    thousand times as the 1,000 cases were listed, before the first paint."""
    invalidated: list[int] = []
    original = Tree._invalidate

    def counted(self):
        if until_first_paint["on"] and isinstance(self, Navigator):
            invalidated.append(1)
        original(self)

    monkeypatch.setattr(Tree, "_invalidate", counted)
    app = WorkbenchApp([bench_suite], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert len(app.screen.query_one(Navigator)._tree_lines) > 1000
    assert len(invalidated) <= 10, f"the case list's lines forgotten {len(invalidated)} times before the first paint"


def _openable(node):
    for child in node.children:
        if child.children:
            yield child
            yield from _openable(child)


async def test_a_file_shown_as_text_ends_the_start_up_at_once(tmp_path):
    """No form is coming when the open file can only be shown as text: the start-up ends
    once it is painted, not at the fallback's timer (which, were it the end of every
    start-up, would freeze a slow machine's suite before its first form was built)."""
    skill = tmp_path / "broken-skill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: broken-skill\ndescription: A skill.\n---\nDo it.\n")
    (skill / "evals" / "evals.json").write_text('{"skill_name": "broken-skill", "evals": [\n')
    app = WorkbenchApp([skill], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert app.screen.query_one("#raw").display, "the broken suite is shown as text"
        assert app._start_up_over
