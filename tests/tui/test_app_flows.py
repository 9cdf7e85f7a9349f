"""Launching, the command palette, several skills, $EDITOR, files deleted on disk."""

from __future__ import annotations

import shutil
import stat
import subprocess

import pytest
from conftest import DEMO
from support.process import command as workbench_command
from textual.widgets import Input

from tui.helpers import SIZE, field_at, settle
from workbench.app.skills import copy_demo, find_skills
from workbench.tui.app import WorkbenchApp
from workbench.tui.screens.editor import EditorScreen
from workbench.tui.screens.picker import SkillPicker


@pytest.mark.slow  # 19 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_every_action_is_in_the_command_palette(skill):
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        for binding in EditorScreen.BINDINGS:
            assert binding.description in titles and binding.tooltip and binding.id
        await pilot.press("ctrl+p")
        await pilot.pause()
        for char in "new case":
            await pilot.press("space" if char == " " else char)
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.current.document.data["evals"][1]["id"] == "new-case-1"
        assert app.screen.place.pointer == "/evals/1"


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_folder_of_several_skills_lists_them(tmp_path):
    for name in ("alpha-skill", "beta-skill"):
        target = tmp_path / "skills" / name
        shutil.copytree(DEMO, target)
        text = (target / "SKILL.md").read_text().replace("name: changelog-entry", f"name: {name}")
        (target / "SKILL.md").write_text(text)
    skills = find_skills(tmp_path)
    assert [p.name for p in skills] == ["alpha-skill", "beta-skill"]
    app = WorkbenchApp(skills, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SkillPicker)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, EditorScreen) and app.screen.session.root.name == "beta-skill"


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_external_editor_edits_are_reloaded(skill, tmp_path, monkeypatch):
    editor = tmp_path / "fake-editor"
    editor.write_text("#!/bin/sh\nsed -i 's/Record one change/Record a single change/' \"$1\"\n")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("VISUAL", str(editor))
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#navigator").focus()
        await pilot.press("home")
        await settle(pilot)
        assert app.screen.current.rel == "SKILL.md"
        await pilot.press("ctrl+e")
        await settle(pilot)
        assert "Record a single change" in app.screen.current.document.data["body"]
        assert not app.screen.current.dirty


@pytest.mark.slow  # 7 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_external_editor_refuses_over_unsaved_edits(skill, tmp_path, monkeypatch):
    monkeypatch.setenv("VISUAL", "false")
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = field_at(app, Input, "/evals/0/id")
        box.focus()
        await pilot.press("end", "x")
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert app.screen.current.dirty  # nothing reloaded over the edit
        assert app.screen.current.document.data["evals"][0]["id"] == "export-json-flagx"


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_file_deleted_on_disk_is_shown_and_saving_restores_it(skill):
    suite = skill / "evals" / "suite.yaml"
    app = WorkbenchApp([skill], watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = suite.read_text()
        suite.unlink()
        app.screen.disk_changed(suite)
        await pilot.pause()
        navigator = app.screen.query_one("#navigator")
        node = navigator.file_node("evals/suite.yaml")
        assert "deleted on disk" in str(node.label)
        skill_file = app.screen.session.file("evals/suite.yaml")
        app.screen.session.save(skill_file)
    assert suite.read_text() == text


def test_demo_is_a_fresh_copy_and_the_shipped_files_stay_pristine():
    first, second = copy_demo(), copy_demo()
    assert first != second and (first / "SKILL.md").read_text() == (DEMO / "SKILL.md").read_text()
    (first / "SKILL.md").write_text("changed")
    assert (DEMO / "SKILL.md").read_text() != "changed"


def test_unknown_or_unusable_paths_get_a_message_not_a_traceback(tmp_path):
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    for target, words in (
        (tmp_path / "missing", "no such folder"),
        (tmp_path / "file.txt", "not a folder"),
        (tmp_path / "empty", "no skill here"),
    ):
        result = subprocess.run(
            workbench_command(str(target)),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        assert result.returncode == 2 and words in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_a_failure_in_the_app_rescues_unsaved_edits(skill):
    app = WorkbenchApp([skill], watch=False)
    with __import__("pytest").raises(ZeroDivisionError):
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            box = field_at(app, Input, "/evals/0/id")
            box.focus()
            await pilot.press("end", "-", "k", "e", "e", "p")
            app.call_later(lambda: 1 / 0)  # a bug somewhere in a handler
            await pilot.pause()
    [rescued] = app.rescued
    assert rescued.parent == skill / "evals" and rescued.name.startswith("evals.json.unsaved-")
    assert '"export-json-flag-keep"' in rescued.read_text()
    assert '"export-json-flag-keep"' not in (skill / "evals" / "evals.json").read_text()
