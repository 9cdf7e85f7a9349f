"""`workbench init`: a new skill from nothing. A SKILL.md per the Agent Skills
specification and a first suite in the dialect chosen, with one example of each
of its assertion kinds (chock: a trigger, a negative_trigger and a behavior
case), all valid as written, for the author to make their own. Nothing that
exists is overwritten."""

from __future__ import annotations

import json
import re
from pathlib import Path

from workbench.errors import Refused
from workbench.formats import detect
from workbench.formats.save import atomic_write

DIALECTS = tuple(detect.EVALS_DIALECTS)  # the formats registered in formats/detect.py, slow-powers first

SKILL_MD = """---
name: {name}
description: Use when the user asks for {words}. Says what the skill does and when to use it, in one or two sentences.
---

# {title}

What this skill is for, in a sentence or two.

## Steps

1. The first thing to do, and why.
2. The next thing.
3. How to check the result before saying it is done.
"""


NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # the Agent Skills spec's name, at most 64 characters


# The first case's one fixture: what `files` does, shown (it lands in the agent's workspace as notes.md).
FIXTURE = "fixtures/first-case/notes.md"
FIXTURE_TEXT = """# Notes

The agent finds this file in its workspace: a case's `files` are copied in before it starts.
Put the files your case needs under evals/fixtures/<case>/ and list them in the case's `files`.
"""


def suggested(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-") or "my-skill"


def slow_powers(name: str) -> dict:
    return {
        "skill_name": name,
        "evals": [
            {
                "id": "first-case",
                "prompt": "A request a user of this skill would make.",
                "expected_output": "What the agent should do with the skill, in a sentence.",
                "files": [FIXTURE],
                "assertions": [
                    {
                        "id": "reads-before-writing",
                        "type": "transcript_check",
                        "check": "tool_invocation_matches",
                        "pattern": "^Read ",
                        "must_precede": "first_write",
                    },
                    {
                        "id": "notes-kept",
                        "type": "command_check",
                        "command": "test -s notes.md",
                        "expect_exit_code": 0,
                    },
                    {"id": "small-change", "type": "diff_scope", "max_files_touched": 2},
                    {
                        "id": "touches-only-what-was-asked",
                        "type": "llm_judge",
                        "rubric": "Did the agent leave alone every file the request did not ask about (no file was "
                        "changed beyond what was asked)? PASS or FAIL, naming any other file it changed.",
                    },
                ],
            },
            {
                "id": "not-for-this-skill",
                "prompt": "A request that looks close but is not this skill's job.",
                "expected_output": "The agent answers without using the skill.",
                "skill_should_trigger": False,
                "assertions": [{"id": "changes-nothing", "type": "diff_scope", "max_files_touched": 0}],
            },
        ],
    }


def skill_creator(name: str) -> dict:
    return {
        "skill_name": name,
        "evals": [
            {
                "id": 1,
                "prompt": "A request a user of this skill would make.",
                "expected_output": "What the agent should do with the skill, in a sentence.",
                "files": [],
                "expectations": [
                    "The agent read what it needed before changing anything",
                    "The final reply says what was done, in the user's words",
                ],
            }
        ],
    }


CHOCK = """# A chock suite: trigger and negative_trigger cases check when the skill fires,
# behavior cases check what it does.
eval_suite:
  id: {name}-tests-v1
  skill_id: {name}
  description: "When {name} fires, and what it does"
  metrics:
    pass_rate:
      type: binary
      direction: higher_is_better
      production_threshold: 1.0
      staging_threshold: 0.8

  test_cases:
    - id: tc-001-trigger
      category: trigger
      description: "A request this skill is for fires it"
      input:
        prompt: "A request a user of this skill would make."
      expected_behavior: "{name} activates and does its job."

    - id: tc-002-negative-trigger
      category: negative_trigger
      description: "A request that only looks close does not fire it"
      input:
        prompt: "A request that looks close but is not this skill's job."
      expected_behavior: "{name} does not activate."

    - id: tc-003-behavior
      category: behavior
      description: "What the skill's answer must hold"
      input:
        prompt: "A request a user of this skill would make."
      expected_behavior: "The reply says what was done."
      structural_checks:
        - "done"
"""


SUITE_FILES = {"slow-powers": "evals.json", "skill-creator": "evals.json", "chock": "suite.yaml"}


def suite_text(name: str, dialect: str) -> str:
    """A first suite for the skill `name`, valid as written."""
    if dialect not in DIALECTS:
        raise Refused(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    if dialect == "chock":
        return CHOCK.format(name=name)
    data = slow_powers(name) if dialect == "slow-powers" else skill_creator(name)
    return json.dumps(data, indent=2) + "\n"


def free_suite_name(skill_dir: Path, dialect: str) -> str:
    """The dialect's usual file name under evals/, numbered when that one is taken."""
    stem, suffix = SUITE_FILES[dialect].split(".")
    taken = {p.name for p in (skill_dir / "evals").iterdir()} if (skill_dir / "evals").is_dir() else set()
    number = 1
    while (name := f"{stem}.{suffix}" if number == 1 else f"{stem}-{number}.{suffix}") in taken:
        number += 1
    return name


def new_suite(skill_dir: Path, name: str, dialect: str, file_name: str | None = None) -> Path:
    """Write a first suite into skill_dir/evals/; refuses a name that is taken or not a
    plain file name of the dialect's format (never overwrites)."""
    file_name = file_name or free_suite_name(skill_dir, dialect)
    yaml = dialect == "chock"
    if "/" in file_name or "\\" in file_name or file_name.startswith("."):
        raise Refused(f"{file_name!r}: give a file name only; the suite goes into {skill_dir / 'evals'}")
    if not file_name.endswith((".yaml", ".yml") if yaml else (".json",)):
        raise Refused(f"{file_name!r}: a {dialect} suite is {'YAML (.yaml)' if yaml else 'JSON (.json)'}")
    suite = skill_dir / "evals" / file_name
    if suite.exists() or suite.is_symlink():
        raise Refused(f"{suite} already there; nothing was written (a new suite never overwrites)")
    text = suite_text(name if NAME.match(name) else suggested(name), dialect)
    suite.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(suite, text)
    _write_fixture(skill_dir, dialect)
    return suite


def _write_fixture(skill_dir: Path, dialect: str) -> Path | None:
    """The slow-powers first case's fixture, unless a file is there already (never overwritten)."""
    fixture = skill_dir / "evals" / FIXTURE
    if dialect != "slow-powers" or fixture.exists() or fixture.is_symlink():
        return None
    fixture.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(fixture, FIXTURE_TEXT)
    return fixture


def init(folder: Path, name: str | None = None, dialect: str = "slow-powers") -> list[Path]:
    """Write the new skill's files; returns them. The skill's folder is `folder`, or
    `folder/NAME` when a name other than the folder's is given (a skill's folder
    bears its name, as the spec says). Refuses over any file that exists."""
    if dialect not in DIALECTS:
        raise Refused(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    folder = folder.resolve()
    if name and name != folder.name:
        folder = folder / name
    name = folder.name
    if not NAME.match(name) or len(name) > 64:
        raise Refused(
            f"{name!r} is not a skill name: lowercase letters, digits and single hyphens, at most 64 "
            f"(a skill's folder bears its name); try --name {suggested(name)}"
        )
    suite = folder / "evals" / SUITE_FILES[dialect]
    files = [folder / "SKILL.md", suite]
    there = [str(f) for f in files if f.exists() or f.is_symlink()]
    if there:
        raise Refused(f"{', '.join(there)} already there; nothing was written (init never overwrites)")
    suite.parent.mkdir(parents=True, exist_ok=True)
    title = name.replace("-", " ").capitalize()
    atomic_write(files[0], SKILL_MD.format(name=name, words=name.replace("-", " "), title=title))
    atomic_write(suite, suite_text(name, dialect))
    fixture = _write_fixture(folder, dialect)
    return files + ([fixture] if fixture else [])
