"""Drafting eval cases with an agent (docs/improve.md, "Drafting eval cases").

From SKILL.md, the suite's dialect (one of its cases as the example of the
shape) and optionally a few example prompts a person typed, the proposer
drafts new cases and says them as JSON, {"cases": [...]}, in its last message.
They are written to a drafts file beside the suite, `<suite>.drafts.json`, in
the suite's own shape so it is validated like everything else, and never into
the suite: a case joins the suite only when a person accepts it (the editor's
"Accept draft")."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import Refused
from workbench.formats import detect, pointer
from workbench.formats.dialect import Format
from workbench.formats.document import SyntaxProblem, load
from workbench.formats.drafts import drafts_path
from workbench.formats.json_text import TOKEN, answer, new_token, untokened
from workbench.formats.regular import read_regular_text
from workbench.formats.save import atomic_write

if TYPE_CHECKING:  # the editor reads drafts files (is_drafts) before anything runs: it never loads the runner
    from workbench.runs import sandbox
    from workbench.runs.executors import Executor

MOST = 20  # cases one draft asks for at most


def _suite(suite: Path) -> tuple[Format, Any, str]:
    """The suite's format, data and its case list's pointer; Refused when drafts cannot be written for it."""
    if suite.suffix != ".json":
        raise Refused(f"{suite.name}: drafting writes JSON suites (evals.json) only, for now")
    parsed = load(suite)
    if isinstance(parsed, SyntaxProblem):
        raise Refused(f"{suite}:{parsed.line}:{parsed.column}: {parsed.message}; fix the suite first")
    fmt = detect.refine(detect.by_place(suite), parsed.data)
    if fmt is None or not fmt.cases:
        raise Refused(f"{suite}: not an eval suite the workbench can draft cases for")
    return fmt, parsed.data, fmt.cases[0].pointer


def taken_ids(suite: Path) -> set[object]:
    """The ids the suite's cases have."""
    try:
        _fmt, data, where = _suite(suite)
        cases = pointer.resolve(data, pointer.split(where))
    except (Refused, KeyError, IndexError, TypeError, ValueError):
        return set()
    return {c.get("id") for c in cases if isinstance(c, dict)} if isinstance(cases, list) else set()


def brief(skill_dir: Path, suite: Path, count: int, examples: list[str], token: str) -> str:
    fmt, data, where = _suite(suite)
    cases = pointer.resolve(data, pointer.split(where))
    example = cases[0] if isinstance(cases, list) and cases else None
    skill_md = read_regular_text(skill_dir / "SKILL.md", errors="replace")
    lines = [
        f"# Draft eval cases for the skill in this folder ({fmt.title})",
        "",
        f"Draft {count} new eval case(s) that test whether an agent follows the skill below: realistic",
        "prompts a user would type, what a good answer does, and checks that tell a good run from a bad one.",
        "Cover what the existing cases miss. Do not change any file.",
        f'Reply with one JSON object and nothing else: {{"{TOKEN}": "{token}", "cases": [ ... {count} case(s) ... ]}},',
        f'with "{TOKEN}": "{token}" exactly as written here (an object without it is read as a quote, not as',
        f"your answer), and each case in exactly the shape of the {fmt.title} suite, like this one:",
        "",
        "```json",
        json.dumps(example, indent=2, ensure_ascii=False) if example is not None else "{}",
        "```",
        "",
        "## SKILL.md",
        "",
        "```markdown",
        skill_md[:20_000],
        "```",
    ]
    if isinstance(cases, list):
        ids = [str(c.get("id")) for c in cases if isinstance(c, dict) and "id" in c]
        if ids:
            lines += ["", f"Ids already taken: {', '.join(ids)}."]
    if examples:
        lines += ["", "## Example prompts from the person", ""] + [f"- {e}" for e in examples]
    return "\n".join(lines) + "\n"


def _has_cases(value: dict) -> bool:
    return isinstance(value.get("cases"), list)


def parse(text: str, token: str) -> list[dict]:
    """The drafted cases: the last JSON object with the brief's token and a "cases" list in the proposer's
    answer (a suite it quotes, from SKILL.md or anywhere, is not its answer)."""
    found = answer(text, token, _has_cases)
    if found is None:
        raise Refused(
            f'no {{"{TOKEN}": <the brief\'s>, "cases": [...]}} in the proposer\'s answer'
            f"{untokened(text, token, _has_cases)}: {text.strip()[:200]!r}"
        )
    return [c for c in found["cases"] if isinstance(c, dict)]


def write(suite: Path, drafted: list[dict]) -> Path:
    """Add the drafts to `<suite>.drafts.json` (made in the suite's shape, with no case of its own),
    written atomically; the suite itself is never touched."""
    _fmt, data, where = _suite(suite)
    target = drafts_path(suite)
    if target.is_symlink():
        raise Refused(f"{target}: a link; drafts are written to a file of the skill's own, never through a link")
    if target.exists():
        parsed = load(target)
        if isinstance(parsed, SyntaxProblem):
            raise Refused(f"{target}:{parsed.line}:{parsed.column}: {parsed.message}; fix or remove it first")
        shell = parsed.data
    else:
        shell = copy.deepcopy(data)
        tokens = pointer.split(where)
        holder = pointer.resolve(shell, tokens[:-1])
        if not isinstance(holder, dict) or not tokens:
            raise Refused(f"{suite}: its case list at {where} is not a member of an object")
        holder[tokens[-1]] = []  # the suite's shape, none of its cases
    try:
        existing = pointer.resolve(shell, pointer.split(where))
    except (KeyError, IndexError, TypeError, ValueError):
        existing = None
    if not isinstance(existing, list):
        raise Refused(f"{target}: its case list at {where} is not a list")
    existing.extend(drafted)
    atomic_write(target, json.dumps(shell, indent=2, ensure_ascii=False) + "\n")
    return target


def draft(
    skill_dir: Path,
    suite: Path,
    proposer: Executor,
    count: int,
    examples: list[str],
    mode: str | sandbox.Holding,
    timeout: float = 900.0,
) -> tuple[Path, list[dict], float | None]:
    """Ask the proposer for `count` cases; (the drafts file, the cases added, what it cost)."""
    token = new_token()
    text = brief(skill_dir, suite, min(count, MOST), examples, token)
    with tempfile.TemporaryDirectory(prefix="workbench-drafting-") as private:
        folder = Path(private) / skill_dir.name
        folder.mkdir()
        (folder / "SKILL.md").write_text(read_regular_text(skill_dir / "SKILL.md", errors="replace"), "utf-8")
        from workbench.improve.proposal import run_proposer

        ran = run_proposer(proposer, folder, text, mode, timeout)
    if isinstance(ran, str):
        raise Refused(ran)
    outcome, stdout = ran
    drafted = parse(outcome.last_assistant_text or stdout, token)
    if not drafted:
        raise Refused("the proposer drafted no case")
    return write(suite, drafted), drafted, outcome.cost_usd
