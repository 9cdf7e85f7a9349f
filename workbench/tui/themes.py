"""Theme files (themes/*.json and the user's own) loaded into Textual themes."""

from __future__ import annotations

import json
from pathlib import Path

from textual.theme import Theme

from workbench.config import bundled, config_dir

FIELDS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)


def read_theme(path: Path) -> Theme | str:
    """A Theme, or why the file is not one."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        return f"{path}: not readable JSON ({exc})"
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or "primary" not in data:
        return f"{path}: a theme needs at least a name and a primary colour"
    try:
        return Theme(
            name=data["name"],
            dark=bool(data.get("dark", True)),
            variables={str(k): str(v) for k, v in (data.get("variables") or {}).items()},
            **{key: data[key] for key in FIELDS if key in data},
        )
    except Exception as exc:  # a bad colour: the theme is skipped, not the app
        return f"{path}: {exc}"


def theme_files() -> list[Path]:
    folders = [bundled("themes"), config_dir() / "themes"]
    files = []
    for folder in folders:
        if folder and folder.is_dir():
            files.extend(sorted(folder.glob("*.json")))
    return files


def load_themes() -> tuple[list[Theme], list[str]]:
    themes, problems = {}, []
    for path in theme_files():
        theme = read_theme(path)
        if isinstance(theme, str):
            problems.append(theme)
        else:
            themes[theme.name] = theme  # the user's folder comes last and wins
    return list(themes.values()), problems
