from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
SEEDS = SHARED / "seeds"
DEMO = REPO / "demo" / "changelog-entry"
MISTAKES = REPO / "demo" / "mistakes" / "changelog-entry"

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"the seeds are not at {SEEDS}")


@pytest.fixture(autouse=True)
def private_config(tmp_path, monkeypatch):
    """Every test gets its own config folder: theme choices and trust never leak
    between tests, or into the user's own config."""
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    """A private copy of the demo skill, safe to edit."""
    target = tmp_path / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target
