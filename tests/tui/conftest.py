from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import DEMO, copy_prepared


@pytest.fixture
def skill(tmp_path) -> Path:
    target = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target


@pytest.fixture(scope="session")
def graded_demo(tmp_path_factory):
    """The demo, run and graded by the demo agent and judge, once: the tests copy it."""
    from workbench.app import pipeline
    from workbench.app.choices import Agent, Placement

    base = tmp_path_factory.mktemp("graded-demo")
    skill = base / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    prepared = pipeline.prepare(pipeline.RunRequest(skill, agent=Agent("demo"), placement=Placement("none")))
    prepared.trust()
    pipeline.run(prepared)
    return base, prepared.iteration.relative_to(base)


@pytest.fixture
def graded(graded_demo, tmp_path):
    """A private copy of the graded demo: (the skill, its iteration)."""
    base, iteration = graded_demo
    copy_prepared(base, tmp_path)
    return tmp_path / "skills" / "changelog-entry", tmp_path / iteration
