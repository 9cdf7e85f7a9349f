"""The cases of any dialect, in the one shape runs need."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.formats import chock, paths, skill_creator, slow_powers
from workbench.formats.dialect import Format


@dataclass
class RunCase:
    id: str  # names its folder: eval-<id>
    eval_id: Any  # as the suite has it (int for skill-creator)
    name: str
    prompt: str
    expected_output: str = ""
    turns: list[dict] = field(default_factory=list)
    responder: dict | None = None  # eval-magic's simulated user (workbench/runs/responder.py), or None
    codebase: Path | None = None  # a folder the agent's repository starts as (a path codebase), or None
    files: list[tuple[Path, str]] = field(default_factory=list)  # (source, place in the workspace)
    runs: int | None = None
    skill_should_trigger: bool | None = True  # None: the suite has no such field (skill-creator)
    assertions: list = field(default_factory=list)  # typed (slow-powers) or strings (expectations)
    raw: dict = field(default_factory=dict)


def eval_metadata(case: RunCase) -> dict:
    """eval_metadata.json, as skill-creator's SKILL.md writes it."""
    return {"eval_id": case.eval_id, "eval_name": case.name, "prompt": case.prompt, "assertions": case.assertions}


def run_cases(fmt: Format, data: Any, suite_path: Path) -> list[RunCase]:
    evals_dir = suite_path.parent
    skill_dir = evals_dir.parent
    out = []
    if fmt.name == slow_powers.NAME:
        for case in data.get("evals", []):
            out.append(
                RunCase(
                    id=str(case["id"]),
                    eval_id=case["id"],
                    name=str(case["id"]),
                    prompt=case["prompt"],
                    expected_output=case.get("expected_output", ""),
                    turns=list(case.get("turns", [])),
                    responder=case.get("responder"),
                    codebase=_codebase(case.get("codebase", data.get("codebase")), evals_dir),
                    files=_slow_powers_fixtures(case, evals_dir),
                    runs=case.get("runs"),
                    skill_should_trigger=case.get("skill_should_trigger", True),
                    assertions=list(case.get("assertions", [])),
                    raw=case,
                )
            )
    elif fmt.name == skill_creator.NAME:
        for case in data.get("evals", []):
            out.append(
                RunCase(
                    id=str(case["id"]),
                    eval_id=case["id"],
                    # its own name when the case has one (skill-creator's eval_metadata calls it eval_name), else the id
                    name=str(case.get("eval_name") or case.get("name") or case["id"]),
                    prompt=case["prompt"],
                    expected_output=case.get("expected_output", ""),
                    files=_fixtures(case.get("files", []), skill_dir),
                    skill_should_trigger=None,
                    assertions=list(case.get("expectations") or case.get("assertions") or []),
                    raw=case,
                )
            )
    elif fmt.name == chock.NAME:
        suite = data.get("eval_suite") or data.get("suite") or {}
        for case in suite.get("test_cases") or suite.get("cases") or []:
            given = case.get("input") if isinstance(case.get("input"), dict) else {}
            prompt = case.get("prompt") or given.get("prompt") or case.get("description", "")
            expect = case.get("expect") or case.get("expected_behavior") or ""
            out.append(
                RunCase(
                    id=str(case["id"]),
                    eval_id=case["id"],
                    name=str(case.get("description") or case["id"]),
                    prompt=str(prompt),
                    expected_output=str(expect),
                    skill_should_trigger=case.get("category") != "negative_trigger",
                    assertions=[expect] if expect else [],
                    raw=case,
                )
            )
    return out


def _slow_powers_fixtures(case: dict, evals_dir: Path) -> list[tuple[Path, str]]:
    """With eval-magic's files_root the fixtures are read beneath it and keep their
    declared paths in the repository (docs/guides/codebase.md: an overlay)."""
    root = case.get("files_root")
    if not isinstance(root, str) or not root:
        return _fixtures(case.get("files", []), evals_dir)
    base = _inside(root, evals_dir, "files_root")
    out = []
    for relative in case.get("files", []):
        if not isinstance(relative, str):
            continue
        problem = paths.relative_problem(relative, "fixture path")
        if problem:
            raise ValueError(f"files: {problem}")
        out.append((Path(os.path.normpath(base / relative)), os.path.normpath(relative)))
    return out


def _codebase(codebase: object, evals_dir: Path) -> Path | None:
    """The folder the agent's repository starts as. As in eval-magic, a relative path
    resolves against the evals folder and may lead out of it, or be absolute ("that
    is the point of it"); one outside the evals folder is listed for trust before a
    run copies it (GradingSuite.commands), and the lint and the copy refuse links out."""
    if not isinstance(codebase, dict):
        return None
    if "path" not in codebase:  # the lint accepts a git codebase; a run cannot fetch one yet
        raise ValueError(
            f"codebase: {codebase.get('url')!r} is a git codebase; the workbench does not clone repositories "
            "yet, expected a path codebase"
        )
    value = str(codebase["path"])
    if not value or any(paths.is_git_name(part) for part in Path(value).parts):
        raise ValueError(f"codebase path: {value!r}: expected a folder, not empty and not a .git")
    return Path(os.path.normpath(evals_dir / os.path.expanduser(value)))


def outside(codebase: Path | None, evals_dir: Path) -> bool:
    """A codebase outside the evals folder: trust does not cover its place, so it is asked for."""
    return codebase is not None and not paths.inside(os.path.realpath(codebase), os.path.realpath(evals_dir))


def _inside(relative: str, evals_dir: Path, what: str) -> Path:
    """A folder named by the suite, held again where it is used: relative, no '..',
    no .git, and no link that leads out of evals/."""
    problem = paths.relative_problem(relative, what)
    if problem:
        raise ValueError(f"{what}: {problem}")
    target = Path(os.path.normpath(evals_dir / relative))
    if not paths.inside(os.path.realpath(target), os.path.realpath(evals_dir)):
        raise ValueError(f"{what}: {relative!r} leads outside {evals_dir.name}/")
    return target


def _fixtures(files: list, base: Path) -> list[tuple[Path, str]]:
    """Fixtures land at the top of the workspace by name, as eval-magic lays out its
    inputs/ (the corpus' own results show fixtures/order-bug/orderHandler.ts at
    inputs/orderHandler.ts). The lint refuses what cannot be copied safely (a path out
    of its folder, a .git, a link out, two fixtures of one name); this holds the line
    again where the paths are used."""
    out, taken = [], set()
    for relative in files:
        if not isinstance(relative, str):
            continue
        problem = paths.relative_problem(relative, "fixture path")
        if problem:
            raise ValueError(f"files: {problem}")
        source = Path(os.path.normpath(base / relative))
        if source.name in taken:
            raise ValueError(f"files: two fixtures are named {source.name}; each lands at the top of the workspace")
        taken.add(source.name)
        out.append((source, source.name))
    return out
