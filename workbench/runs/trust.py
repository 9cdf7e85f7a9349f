"""Trust: a command the workbench did not write (an evals file's command_check or
chock execute, a custom executor) runs only after the user trusted exactly that
content. Trust is remembered per content hash, so a changed file asks again."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from workbench.config import config_dir
from workbench.formats.save import atomic_write


def _store() -> Path:
    return config_dir() / "trusted.json"


def digest(content: str | bytes) -> str:
    return hashlib.sha256(content.encode() if isinstance(content, str) else content).hexdigest()


def _trusted() -> dict:
    try:
        data = json.loads(_store().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def is_trusted(content: str | bytes) -> bool:
    return digest(content) in _trusted()


def trust(content: str | bytes, label: str) -> None:
    """Remember that this exact content may run (label: what it was, for people)."""
    data = _trusted()
    data[digest(content)] = label
    atomic_write(_store(), json.dumps(data, indent=2, sort_keys=True) + "\n")
