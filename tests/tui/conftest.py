from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import DEMO


@pytest.fixture(autouse=True)
def private_config(tmp_path, monkeypatch):
    """Each test gets its own config folder: theme choices never leak between tests."""
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def skill(tmp_path) -> Path:
    target = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target
