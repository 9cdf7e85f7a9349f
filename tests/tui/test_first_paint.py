"""The editor's first form is painted before the whole of it is built (issue 26: cold
start to the first form <= 1 s).

A case of the 1,000-case bench suite is a form of ~370 widgets; mounting them all,
restyling them and laying them all out came before anything of the form was
painted (most of a 2-second start). The class: nothing below the first screenful
is built before the first screenful is painted. Each test counts the form's
widgets on screen at the first paint that shows the form, then checks the whole
form is there once the app is still (the tests' settle waits for it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from textual._compositor import Compositor
from textual.screen import Screen
from textual.widgets import Input

from tui.helpers import SIZE, field_at, focused, settle
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.form import FormView

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from suite_gen import write_suite  # noqa: E402


@pytest.fixture
def big_cases(tmp_path) -> Path:
    """Five cases of the bench suite's shape (turns, five assertions: ~370 widgets each);
    the fourth one's last assertion allows 987 lines changed (a value seen nowhere else)."""
    suite = write_suite(tmp_path, 5, "suite-5")
    data = json.loads(suite.read_text())
    data["evals"][3]["assertions"][4]["max_lines_changed"] = 987
    suite.write_text(json.dumps(data, indent=2))
    return suite.parent.parent


def _form_widgets(screen: Screen) -> int:
    form = next(iter(screen.query(FormView)), None)
    return 0 if form is None else len(list(form.walk_children()))


def _first_field_shown(screen: Screen) -> bool:
    """The case's first field (its id) is mounted: the form is on screen, not just its frame."""
    return any(getattr(w, "pointer", None) == "/evals/0/id" for w in screen.query(Input))


@pytest.fixture
def first_paint(monkeypatch):
    """The number of the form's widgets at the first paint that shows its first field."""
    seen: list[int] = []
    original = Screen._compositor_refresh

    def painted(self):
        original(self)
        if not seen and _first_field_shown(self):
            seen.append(_form_widgets(self))

    monkeypatch.setattr(Screen, "_compositor_refresh", painted)
    return seen


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_the_first_paint_holds_a_screenful_not_the_whole_form(big_cases, first_paint):
    app = WorkbenchApp([big_cases], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        whole = _form_widgets(app.screen)
        form = app.screen.query_one(FormView)
        assert whole > 300, "the bench suite's case is the big form this is about"
        assert first_paint and first_paint[0] <= whole // 3, f"{first_paint[0]} of {whole} widgets built first"
        # Once still, the whole form is there: the last assertion's field, its problems marked.
        assert "/evals/0/assertions/4/max_lines_changed" in {
            w.pointer for w in form.query(Input) if hasattr(w, "pointer")
        }
        assert form.virtual_size.height > form.size.height


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_keys_typed_while_the_rest_is_built_land_in_the_first_field(big_cases):
    """The first field is on screen first; keys typed there at once are kept, in order."""
    app = WorkbenchApp([big_cases], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = await focused(pilot, field_at(app, Input, "/evals/0/id"))
        await pilot.press("end", "x", "y")
        await settle(pilot)
        assert box.value == "case-00000xy"
        assert app.screen.current.document.data["evals"][0]["id"] == "case-00000xy"


@pytest.fixture
def whole_arrangements(monkeypatch):
    """Counts the arrangements of every widget of the screen, the ones out of sight
    included: a layout (Compositor.reflow) or the compositor's full map built again."""
    counted: list[int] = []
    original = Compositor._arrange_root

    def arrange(self, root, size, visible_only=True):
        if not visible_only:
            counted.append(1)
        return original(self, root, size, visible_only)

    monkeypatch.setattr(Compositor, "_arrange_root", arrange)
    return counted


@pytest.mark.slow  # 19 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_case_switch_arranges_only_what_is_in_sight(big_cases, whole_arrangements):
    """Down in the case list shows the next case in the same widgets. Their texts changed
    below the fold made Textual arrange all ~370 of them again before painting (a
    widget refreshed out of sight may be a new one, for all it knows): most of a switch."""
    app = WorkbenchApp([big_cases], watch=False, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#navigator").focus()
        await settle(pilot)
        await pilot.pause(0.1)
        whole_arrangements.clear()
        for case in range(1, 4):
            await pilot.press("down")
            await settle(pilot)
            assert app.screen.query_one(FormView).title.endswith(f"case-0000{case}")
        assert whole_arrangements == [], f"{len(whole_arrangements)} arrangements of the whole form in 3 switches"
        # What was out of sight shows the case now open once scrolled to.
        form = app.screen.query_one(FormView)
        last = field_at(app, Input, "/evals/3/assertions/4/max_lines_changed")
        form.scroll_to_widget(last, animate=False)
        await settle(pilot)
        assert last.value == "987"
        assert "987" in "".join(strip.text for strip in app.screen._compositor.render_strips())
