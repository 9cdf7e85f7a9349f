"""eval-magic's own checks beyond its schema (its current release refuses these
at load), and where fixtures and the agent's starting repository come from:
files_root and a path codebase are paths taken from data, so they must stay
inside the evals folder (the folder trust covers and a run snapshots).

Written against data that may not match the schema: types are checked first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from workbench.formats import paths
from workbench.formats import pointer as ptr
from workbench.formats.slow_powers import RUNNABLE_FIELDS, TRANSCRIPT_CHECKS
from workbench.validate.diagnostic import Diagnostic, did_you_mean, error, warning

# Checks that read a conversation's assistant messages: eval-magic refuses them on an eval without turns.
CONVERSATION_CHECKS = ("assistant_message_matches",)


def case_rules(case: Any, base: tuple[str, ...], evals_dir: Path | None) -> list[Diagnostic]:
    if not isinstance(case, dict):
        return []
    out = _runnable(case, base)
    out += _conversation_checks(case, base)
    out += _blank_turns(case, base)
    out += _env_names(case, base)
    out += _setup_overlaps(case, base)
    out += files_root_problems(case, base, evals_dir)
    if "codebase" in case:
        out += codebase_problems(case["codebase"], base + ("codebase",), evals_dir)
    return out


def _runnable(case: dict, base: tuple[str, ...]) -> list[Diagnostic]:
    """What the schema lets through but no run can grade: an empty id, check, command or rubric (the
    schema's minLength says "" for some; blanks and the others are said here), and a check no runner
    knows. Said at the field, so `validate`, the form and `run` refuse it before anything is spent.
    (Run on every case at every load: written to cost little when all is well.)"""
    out: list[Diagnostic] = []
    checks = case.get("assertions")
    for index, check in enumerate(checks if isinstance(checks, list) else ()):
        if not isinstance(check, dict):
            continue
        kind = check.get("type")
        fields = RUNNABLE_FIELDS.get(kind, ()) if isinstance(kind, str) else ()
        for name in fields:
            value = check.get(name)
            if isinstance(value, str) and not value.strip() and (value or name not in ("command", "rubric")):
                out.append(error(_at(base, index, name), f"{name} is empty; expected {_EXPECTED[name]}"))
        if kind != "transcript_check":
            continue
        named = check.get("check")
        if isinstance(named, str) and named not in TRANSCRIPT_CHECKS and named.strip():
            out.append(
                error(
                    _at(base, index, "check"),
                    f'unknown check "{named}"{did_you_mean(named, TRANSCRIPT_CHECKS)}; expected ' + _EXPECTED["check"],
                )
            )
        if "pattern" not in check:
            what = "assistant message" if named == "assistant_message_matches" else "tool invocation"
            out.append(warning(_at(base, index), f"no pattern: any {what} matches; expected a pattern (a Rust regex)"))
    return out


_EXPECTED = {
    "id": "a name for its result, unique in the eval (e.g. reads-before-writing)",
    "check": "one of " + ", ".join(TRANSCRIPT_CHECKS),
    "command": "the command to run",
    "rubric": "the question the judge answers",
}


def _at(base: tuple[str, ...], index: int, *rest: str) -> str:
    return ptr.join((*base, "assertions", str(index), *rest))


def _conversation_checks(case: dict, base: tuple[str, ...]) -> list[Diagnostic]:
    if isinstance(case.get("turns"), list) and case["turns"]:
        return []
    out = []
    for index, check in _assertions(case):
        if check.get("type") == "transcript_check" and check.get("check") in CONVERSATION_CHECKS:
            out.append(
                error(
                    ptr.join(base + ("assertions", str(index), "check")),
                    f"{check['check']} reads the replies of a scripted conversation, and this eval has no "
                    "turns; expected turns on the eval, or check: tool_invocation_matches",
                )
            )
    return out


def _blank_turns(case: dict, base: tuple[str, ...]) -> list[Diagnostic]:
    turns = case.get("turns")
    out = []
    for index, turn in enumerate(turns if isinstance(turns, list) else []):
        prompt = turn.get("prompt") if isinstance(turn, dict) else None
        if isinstance(prompt, str) and prompt and not prompt.strip():
            out.append(
                error(
                    ptr.join(base + ("turns", str(index), "prompt")),
                    "the turn's prompt is only blanks; expected words the user says",
                )
            )
    return out


def _env_names(case: dict, base: tuple[str, ...]) -> list[Diagnostic]:
    out = []
    for index, check in _assertions(case):
        for field in ("env", "matrix"):  # matrix names are environment variables too
            names = check.get(field)
            for name in names if isinstance(names, dict) else {}:
                if "=" in name:
                    out.append(
                        error(
                            ptr.join(base + ("assertions", str(index), field, name)),
                            f'environment variable name "{name}" contains "="; expected a name without it '
                            "(NAME=value cannot be set as a name)",
                        )
                    )
    return out


def _setup_overlaps(case: dict, base: tuple[str, ...]) -> list[Diagnostic]:
    """Held-out setup files land in the repository after the agent ran: one at (or
    above, or below) a visible fixture's place would overwrite what the agent saw."""
    files = case.get("files")
    visible = {_norm(v): v for v in files if isinstance(v, str) and v} if isinstance(files, list) else {}
    out = []
    for index, check in _assertions(case):
        setup = check.get("setup_files")
        for position, value in enumerate(setup if isinstance(setup, list) else []):
            if not isinstance(value, str) or not value:
                continue
            held = _norm(value)
            for place, shown in visible.items():
                if held == place or _under(held, place) or _under(place, held):
                    out.append(
                        error(
                            ptr.join(base + ("assertions", str(index), "setup_files", str(position))),
                            f'setup file "{value}" overlaps the visible fixture "{shown}"; expected held-out '
                            "setup files apart from the files the agent is given",
                        )
                    )
                    break
    return out


def files_root_problems(case: dict, base: tuple[str, ...], evals_dir: Path | None) -> list[Diagnostic]:
    root = case.get("files_root")
    if not isinstance(root, str) or not root:
        return []
    where = ptr.join(base + ("files_root",))
    problem = paths.relative_problem(root, "files_root")
    if problem:
        return [error(where, f"files_root: {problem}")]
    if evals_dir is None:
        return []
    target = Path(os.path.normpath(evals_dir / root))
    if not target.is_dir():
        return [error(where, f'files_root "{root}" is not a folder; expected it at {evals_dir.name}/{root}')]
    if not paths.inside(os.path.realpath(target), os.path.realpath(evals_dir)):
        return [error(where, f'files_root "{root}" is a link that leads outside {evals_dir.name}/; refused')]
    return []


def codebase_problems(codebase: Any, base: tuple[str, ...], evals_dir: Path | None) -> list[Diagnostic]:
    """A path codebase is a folder the agent's repository starts as. As in eval-magic,
    a relative path resolves against the evals folder and may lead out of it, or be
    absolute: a run lists such a folder for trust before it copies it. Only a .git
    is refused (git would run what it holds), and links out of the folder."""
    if not isinstance(codebase, dict) or not isinstance(codebase.get("path"), str) or not codebase["path"]:
        return []
    value = codebase["path"]
    where = ptr.join(base + ("path",))
    if any(paths.is_git_name(part) for part in Path(value).parts):
        return [error(where, f'codebase: "{value}" names .git; the workbench never copies a .git')]
    if evals_dir is None:
        return []
    target = Path(os.path.normpath(evals_dir / os.path.expanduser(value)))
    if not target.is_dir():
        shown = value if os.path.isabs(value) else f"{evals_dir.name}/{value}"
        # A folder on another machine (eval-magic's examples name /srv/...): valid, but this machine cannot run it.
        return [warning(where, f'codebase path "{value}" is not a folder here ({shown}); a run of this eval fails')]
    # Its own .git is never copied (a run makes the repository), so only links out matter.
    out = paths.links_out(target)
    if out:
        return [error(where, f"codebase: {out[0]} is a link that leads outside the codebase; links out are refused")]
    return []


def _assertions(case: dict) -> list[tuple[int, dict]]:
    checks = case.get("assertions")
    return [(i, c) for i, c in enumerate(checks if isinstance(checks, list) else []) if isinstance(c, dict)]


def _norm(value: str) -> str:
    return os.path.normpath(value.replace("\\", "/")).strip("/")


def _under(inner: str, outer: str) -> bool:
    return inner.startswith(outer + "/")
