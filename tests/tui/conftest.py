from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import DEMO


@pytest.fixture
def skill(tmp_path) -> Path:
    target = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target
