"""The scripted decision to use a skill, shared by the scripted model server and
the scripted trigger agent, so a trigger set's recall and precision are known:
a skill is used when the request shares a word of 7 letters or more with its
description. Claude Code's own skills (listed beside ours) never count."""

from __future__ import annotations

import re

HEADER = "The following skills are available for use with the Skill tool:"
# Claude Code 2.1.332's bundled skills, as its skills listing names them.
BUILT_IN = frozenset(
    "deep-research dataviz update-config keybindings-help verify debug code-review simplify batch "
    "fewer-permission-prompts doctor loop claude-api workflow-authoring run run-skill-generator "
    "plugin-authoring init review security-review".split()
)


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 7}


def listing(text: str) -> list[tuple[str, str]]:
    """(name, description) of each skill in Claude Code's listing inside `text`."""
    if HEADER not in text:
        return []
    out = []
    for line in text.split(HEADER, 1)[1].split("\n"):
        found = re.match(r"- ([A-Za-z0-9:_-]+): (.*)", line)
        if found:
            out.append((found.group(1), found.group(2)))
        elif out and not line.strip():
            break
    return out


def chosen(query: str, skills: list[tuple[str, str]]) -> str | None:
    """The first skill (not Claude Code's own) whose description shares a long word with the query."""
    asked = words(query)
    for name, description in skills:
        if name not in BUILT_IN and asked & words(description):
            return name
    return None
