"""A workspace in skill-creator's legacy Improve mode, exactly as its SKILL.md and
references/schemas.md lay it out: `<skill>-workspace/` right beside the skill,
history.json at its root (seed 003's shape, as its example), and one folder per
version holding that version's copy of the skill, `vN/skill/`. No versions.git."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import DEMO
from test_artifacts import HISTORY as SKILL_CREATOR_HISTORY

DRAFT = DEMO.parent / "draft" / "changelog-entry" / "SKILL.md"

# skill-creator's example history.json (schemas.md), the one test_artifacts checks, for this skill.
HISTORY = {**SKILL_CREATOR_HISTORY, "skill_name": "changelog-entry"}


def legacy_workspace(base: Path) -> tuple[Path, Path]:
    """(skill, workspace): the skill at base/skills/changelog-entry (its final text,
    v2), its workspace beside it. v0 is the draft; v1 the draft with one step fixed."""
    skill = base / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    workspace = base / "skills" / "changelog-entry-workspace"
    draft = DRAFT.read_text()
    texts = {
        "v0": draft,
        "v1": draft.replace("guess (", "ask one short question ("),
        "v2": (DEMO / "SKILL.md").read_text(),
    }
    assert texts["v1"] != draft
    for version, text in texts.items():
        folder = workspace / version / "skill"
        shutil.copytree(DEMO, folder)  # skill-creator copies the whole skill, evals/ too
        (folder / "SKILL.md").write_text(text)
        (workspace / version / "notes.md").write_text(f"what I changed in {version}\n")  # theirs, never touched
    (workspace / "history.json").write_text(json.dumps(HISTORY, indent=2) + "\n")
    return skill, workspace


def snapshot(workspace: Path) -> dict[str, bytes]:
    """Every file of the user's (history.json and the version folders) with its bytes."""
    out = {"history.json": (workspace / "history.json").read_bytes()}
    for version in ("v0", "v1", "v2"):
        for path in sorted((workspace / version).rglob("*")):
            if path.is_file():
                out[str(path.relative_to(workspace))] = path.read_bytes()
    return out
