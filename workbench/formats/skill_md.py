"""SKILL.md: YAML frontmatter between `---` lines, then the instructions (the body),
per the Agent Skills specification."""

from __future__ import annotations

import re
from pathlib import Path

from workbench.formats.dialect import SKILL, Format

NAME = "skill-md"

ALLOWED_KEYS = ("name", "description", "license", "allowed-tools", "metadata", "compatibility")
NAME_PATTERN = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
BODY_LINES_MAX = 500

_FENCE = re.compile(r"---[ \t]*\r?$")
_CLOSE = re.compile(r"(---|\.\.\.)[ \t]*\r?$")

FORMAT = Format(name=NAME, title="SKILL.md", family=SKILL)
FORM_SCHEMA = "skill-md.form.schema.json"  # the editor's form only; validation is the rules in lint


class FrontmatterMissing(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def split_frontmatter(text: str) -> tuple[str, str, int]:
    """(frontmatter YAML, body, 1-based line where the body starts)."""
    lines = text.split("\n")
    if not _FENCE.match(lines[0].lstrip("\ufeff")):
        raise FrontmatterMissing(
            "expected SKILL.md to start with YAML frontmatter: a '---' line, name and description, "
            "then a closing '---' line",
            1,
        )
    for index in range(1, len(lines)):
        if _CLOSE.match(lines[index]):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    raise FrontmatterMissing("the frontmatter is not closed: expected a '---' line after it", len(lines))


def bounds(text: str) -> tuple[int, int, int]:
    """Offsets of the frontmatter's start and end and of the body's start."""
    frontmatter, body, _ = split_frontmatter(text)
    start = text.index("\n") + 1
    end = start + len(frontmatter) + (1 if frontmatter else 0)
    return start, end, len(text) - len(body)


def read_name(skill_md: Path) -> str | None:
    """The name in a SKILL.md's frontmatter, or None when it has none readable."""
    try:
        text = skill_md.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        frontmatter, _, _ = split_frontmatter(text)
    except FrontmatterMissing:
        return None
    match = re.search(r"^name:[ \t]*['\"]?([^'\"\n#]*?)['\"]?[ \t]*(#.*)?$", frontmatter, re.M)
    return match.group(1) if match else None
