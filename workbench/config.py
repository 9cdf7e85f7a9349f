"""The user's config folder and file (theme choice, user themes). Core: no Textual."""

from __future__ import annotations

import json
import os
from pathlib import Path

from workbench.formats.save import atomic_write

APP_NAME = "skill-workbench"


def config_dir() -> Path:
    """WORKBENCH_CONFIG_DIR when set (tests, CI), else the platform's config folder."""
    override = os.environ.get("WORKBENCH_CONFIG_DIR")
    if override:
        return Path(override)
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME))


def read_config() -> dict:
    path = config_dir() / "config.json"
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_config(**changes) -> None:
    data = read_config()
    data.update(changes)
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / "config.json", json.dumps(data, indent=2) + "\n")


def bundled(folder: str) -> Path | None:
    """A folder shipped beside the package (themes/, demo/) in a source checkout."""
    candidate = Path(__file__).resolve().parent.parent / folder
    return candidate if candidate.is_dir() else None
