"""Every kind of field, in all three dialects, edited through its widget."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import CORPUS, needs_corpus
from textual.widgets import Button, Input, Select, Switch

from tui.helpers import SIZE, field_at, focused, settle
from workbench.formats.document import load
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.navigator import DOCUMENT, Place


def _button(app, action, pointer, *rest):
    wanted = [action, pointer, *rest]
    return next(b for b in app.screen.query(Button) if b.name and json.loads(b.name)[: len(wanted)] == wanted)


async def _open(pilot, rel, pointer):
    pilot.app.screen.open_place(Place(rel, pointer))
    await settle(pilot)


async def _type(pilot, widget, text, replace=True):
    widget.focus()
    if replace:
        widget.value = ""
    await pilot.press(*["space" if c == " " else c for c in text])
    await pilot.pause()


@pytest.mark.slow  # 107 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_slow_powers_everyfield_at(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        data = lambda: screen.current.document.data["evals"]  # noqa: E731

        # switch
        await _open(pilot, "evals/evals.json", "/evals/2")
        (await focused(pilot, field_at(app, Switch, "/evals/2/skill_should_trigger"))).toggle()
        await pilot.pause()
        assert data()[2]["skill_should_trigger"] is True
        # enum
        (await focused(pilot, field_at(app, Select, "/evals/2/isolation"))).value = "isolated"
        await settle(pilot)
        assert data()[2]["isolation"] == "isolated"
        # integer with bounds
        await _open(pilot, "evals/evals.json", "/evals/1")
        await _type(pilot, field_at(app, Input, "/evals/1/runs"), "3")
        assert data()[1]["runs"] == 3
        # list of strings: edit, add, remove
        await _open(pilot, "evals/evals.json", "/evals/0")
        _button(app, "append", "/evals/0/files").press()
        await settle(pilot)
        await _type(pilot, field_at(app, Input, "/evals/0/files/2"), "fixtures/export-json/CHANGELOG.md")
        assert data()[0]["files"][2] == "fixtures/export-json/CHANGELOG.md"
        _button(app, "remove", "/evals/0/files/2").press()
        await settle(pilot)
        assert len(data()[0]["files"]) == 2
        # key/value: edit a value, add an entry, rename its key
        await _type(pilot, field_at(app, Input, "/evals/0/assertions/1/env/SECTION"), "Fixed")
        assert data()[0]["assertions"][1]["env"] == {"SECTION": "Fixed"}
        _button(app, "set", "/evals/0/assertions/1/env/KEY1").press()
        await settle(pilot)
        key = next(w for w in app.screen.query(Input) if getattr(w, "rename_of", None) == "KEY1")
        await _type(pilot, key, "LANG")
        await pilot.press("enter")
        await settle(pilot)
        assert list(data()[0]["assertions"][1]["env"]) == ["SECTION", "LANG"]
        await _type(pilot, field_at(app, Input, "/evals/0/assertions/1/env/LANG"), "C")
        assert data()[0]["assertions"][1]["env"]["LANG"] == "C"
        # key/value whose values are lists (matrix)
        _button(app, "append", "/evals/0/assertions/1/matrix/CHECK").press()
        await settle(pilot)
        await _type(pilot, field_at(app, Input, "/evals/0/assertions/1/matrix/CHECK/3"), "extra")
        assert data()[0]["assertions"][1]["matrix"]["CHECK"][-1] == "extra"
        # list of objects: move, duplicate, delete
        ids = lambda: [a["id"] for a in data()[0]["assertions"]]  # noqa: E731
        before = ids()
        _button(app, "move", "/evals/0/assertions/0", 1).press()  # the ↓ button
        await settle(pilot)
        assert ids() == [before[1], before[0], *before[2:]]
        _button(app, "copy", "/evals/0/assertions/3").press()  # duplicate the last one: a unique id
        await settle(pilot)
        assert ids()[-1] == f"{ids()[-2]}-copy" and screen.current.counts() == (0, 0)
        _button(app, "remove", "/evals/0/assertions/4").press()
        await settle(pilot)
        assert len(ids()) == 4 and screen.current.counts() == (0, 0)


@pytest.mark.slow  # 28 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_skill_creator_fields(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open(pilot, "evals/skill-creator.evals.json", "/evals/1")
        await _type(pilot, field_at(app, Input, "/evals/1/id"), "7")
        document = app.screen.current.document
        assert document.data["evals"][1]["id"] == 7
        _button(app, "append", "/evals/1/expectations").press()
        await settle(pilot)
        await _type(pilot, field_at(app, Input, "/evals/1/expectations/1"), "It wrote nothing before asking")
        assert document.data["evals"][1]["expectations"][-1] == "It wrote nothing before asking"
        await _open(pilot, "evals/skill-creator.evals.json", DOCUMENT)
        await _type(pilot, field_at(app, Input, "/skill_name"), "other-name")
        assert any(d.path == "/skill_name" and d.severity == "warning" for d in app.screen.current.diagnostics)


@pytest.mark.slow  # 24 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_chock_yaml_fields_and_save_keeps_comments(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _open(pilot, "evals/suite.yaml", "/eval_suite/test_cases/1")
        (await focused(pilot, field_at(app, Select, "/eval_suite/test_cases/1/category"))).value = "edge"
        await settle(pilot)
        assert any("no negative_trigger case" in d.message for d in app.screen.current.diagnostics)
        (await focused(pilot, field_at(app, Select, "/eval_suite/test_cases/1/category"))).value = "negative_trigger"
        await settle(pilot)
        await _type(pilot, field_at(app, Input, "/eval_suite/test_cases/1/input/prompt"), "Is a changelog useful?")
        await _open(pilot, "evals/suite.yaml", DOCUMENT)
        await _type(pilot, field_at(app, Input, "/eval_suite/metrics/pass_rate/production_threshold"), "0.9")
        await pilot.press("ctrl+s")
        await settle(pilot)
    text = (skill / "evals" / "suite.yaml").read_text()
    assert "# Released sections are history" in text and "production_threshold: 0.9" in text
    data = load(skill / "evals" / "suite.yaml").data["eval_suite"]
    assert data["test_cases"][1]["input"] == {"prompt": "Is a changelog useful?"}


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@needs_corpus
async def test_chock_legacy_object_field_is_added_from_its_button(tmp_path):
    target = tmp_path / "eval"
    shutil.copytree(CORPUS / "chock" / "skills" / "eval", target)
    app = WorkbenchApp([target], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _button(app, "set", "/suite/cases/0/execute").press()
        await settle(pilot)
        assert app.screen.current.document.data["suite"]["cases"][0]["execute"] == {"expect": "block"}
        (await focused(pilot, field_at(app, Select, "/suite/cases/0/execute/expect"))).value = "allow"
        await settle(pilot)
        await _type(pilot, field_at(app, Input, "/suite/cases/0/execute/command"), "git status")
        assert app.screen.current.document.data["suite"]["cases"][0]["execute"] == {
            "expect": "allow",
            "command": "git status",
        }
        assert app.screen.current.counts()[0] == 0
