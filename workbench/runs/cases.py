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
                    files=_fixtures(case.get("files", []), evals_dir),
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
