"""Description optimization's parts (docs/triggers.md, "optimize-description"):
the stratified, seeded split of a trigger set into train and held-out
queries; the proposer's brief, which shows only the train queries; and the
check that a proposal changed the description and nothing else.

The held-out queries are never shown to the proposer and are the only score
a candidate is selected by: a description fitted to the train queries' words
shows as a train score that rises while the held-out one does not."""

from __future__ import annotations

import random
from pathlib import Path

from workbench.formats import skill_md
from workbench.formats.document import SyntaxProblem, parse_skill_md
from workbench.grading.trigger_results import QueryResult, listed

DEFAULT_HOLDOUT = 0.4


def split(classes: list[bool], holdout: float, seed: int) -> tuple[list[int], list[int]]:
    """(train, held-out) indices: in each class (should trigger or not) a share `holdout` of its queries,
    drawn with `seed`, is held out; at least one of a class of two or more, never all of it."""
    rng = random.Random(seed)
    train: list[int] = []
    held: list[int] = []
    for value in (True, False):
        members = [i for i, c in enumerate(classes) if c is value]
        rng.shuffle(members)
        take = round(holdout * len(members))
        if len(members) >= 2:
            take = min(max(take, 1), len(members) - 1)
        else:
            take = 0
        held += members[:take]
        train += members[take:]
    return sorted(train), sorted(held)


def frontmatter_of(text: str) -> tuple[dict, str] | None:
    """(frontmatter mapping, body) of a SKILL.md's text, or None when it cannot be read."""
    parsed = parse_skill_md(text)
    if isinstance(parsed, SyntaxProblem) or not isinstance(parsed.data, dict):
        return None
    return dict(parsed.data), parsed.body


def description_only(before: bytes, after: bytes, changed: list[str]) -> tuple[str | None, str | None]:
    """(the new description, None), or (None, why the proposal is refused): it must change SKILL.md's
    description and nothing else (another file, the body, another key)."""
    others = [name for name in changed if name != "SKILL.md"]
    if others:
        return None, f"it changed {', '.join(others[:5])}: a description proposal changes only the description"
    if "SKILL.md" not in changed:
        return None, "it changed nothing"
    old = frontmatter_of(before.decode("utf-8", "replace"))
    new = frontmatter_of(after.decode("utf-8", "replace"))
    if old is None or new is None:
        return None, "SKILL.md's frontmatter cannot be read after it"
    (old_keys, old_body), (new_keys, new_body) = old, new
    if old_body != new_body:
        return None, "it changed SKILL.md's body: a description proposal changes only the description"
    moved = sorted(
        k for k in set(old_keys) | set(new_keys) if k != "description" and old_keys.get(k) != new_keys.get(k)
    )
    if moved:
        return None, f"it changed {', '.join(moved)} in the frontmatter: only the description may change"
    description = new_keys.get("description")
    if not isinstance(description, str) or description == old_keys.get("description"):
        return None, "the description is the same"
    if "<" in description or ">" in description:
        # The spec's packagers refuse them; a lint warning for a person, a refusal for a proposal.
        return None, "the description holds angle brackets (< or >), which the Agent Skills packagers refuse"
    return description, None


def brief(name: str, description: str, train: list[QueryResult], tried: list[str]) -> str:
    """What the proposer is asked: a better description from the train queries that went wrong."""
    wrong = [q for q in listed(train) if q.kind in ("miss", "false trigger")]
    lines = [
        f"# Improve the description of the skill {name}",
        "",
        "An agent decides from a skill's description alone whether to use the skill for a request. Some",
        "requests below used the skill when they should not have, or did not use it when they should.",
        "",
        "Edit only the `description:` value in the frontmatter of SKILL.md in the current folder; change",
        "nothing else (no other key, not the body, no other file). The description must say what the",
        f"skill does and when to use it, in at most {skill_md.DESCRIPTION_MAX} characters, without angle brackets.",
        "Describe the kind of request in general words: do not copy the requests below, other requests",
        "decide whether your description is kept.",
        "",
        "## The description now",
        "",
        description,
        "",
        "## Requests it got wrong",
        "",
    ]
    for q in wrong:
        what = "should use the skill, did not" if q.kind == "miss" else "should not use the skill, did"
        lines.append(f"- {q.kind.upper()} ({what}: {q.triggered}/{q.runs} runs used it): {q.query}")
    if not wrong:
        lines.append("- none: make it no broader than it is")
    right = [q for q in train if q.kind == "ok"]
    if right:
        lines += ["", "## Requests it got right (keep them right)", ""]
        lines += [f"- {'uses' if q.should_trigger else 'does not use'} the skill: {q.query}" for q in right]
    if tried:
        lines += ["", "## Descriptions tried before and not kept", ""] + [f"- {t}" for t in tried[-5:]]
    return "\n".join(lines) + "\n"


def read_skill_md(folder: Path) -> bytes:
    try:
        return (folder / "SKILL.md").read_bytes()
    except OSError:
        return b""
