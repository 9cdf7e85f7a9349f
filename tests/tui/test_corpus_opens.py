"""Every suite in the corpus opens in the workbench, with every case's form, and no errors."""

from __future__ import annotations

import shutil

import pytest
from conftest import CORPUS, needs_corpus

from workbench.app.skills import find_skills
from workbench.session import SkillSession
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.form import FormView
from workbench.tui.widgets.navigator import DOCUMENT, Place

pytestmark = needs_corpus

SKILLS = (
    find_skills(CORPUS) + sorted(p.parent.parent for p in CORPUS.glob("chock/policies/*/evals/suite.yaml"))
    if CORPUS.is_dir()
    else []
)


def test_every_corpus_skill_is_found():
    names = {p.name for p in SKILLS}
    assert {"test-driven-development", "chock-init", "yagni", "block-no-verify"} <= names


@pytest.mark.parametrize("root", SKILLS, ids=lambda p: p.name)
def test_corpus_skill_opens_without_errors(root):
    session = SkillSession(root)
    assert session.files
    errors = [(f.rel, d.path, d.message) for f in session.files for d in f.diagnostics if d.severity == "error"]
    assert errors == []


@pytest.mark.parametrize(
    "root",
    [
        p
        for p in SKILLS
        if p.name
        in ("verifying-development-work", "hardening-plans", "block-destructive-commands", "policy-init", "yagni")
    ],
    ids=lambda p: p.name,
)
@pytest.mark.slow  # 25 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
async def test_every_case_form_renders(tmp_path, root):
    copy = tmp_path / root.name
    shutil.copytree(root, copy)
    app = WorkbenchApp([copy], watch=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        screen = app.screen
        for skill_file in screen.session.files:
            places = [Place(skill_file.rel, pointer) for pointer, _ in skill_file.cases()]
            places.append(Place(skill_file.rel, DOCUMENT if skill_file.format.cases else None))
            for place in places:
                screen.open_place(place)
                await app.workers.wait_for_complete()
                await pilot.pause()
                form = screen.query_one(FormView)
                assert form.rows, place
        assert not any(f.dirty for f in screen.session.files)  # looking never edits
