"""What grading needs from the suite an iteration was run from: its cases (read
fresh, so a corrected assertion can be re-graded without re-running agents),
the evals folder for setup files, the chock policy, and which commands from the
evals file would run (for trust)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from workbench.formats import chock
from workbench.grading import chock_replay, command_check
from workbench.runs import layout, trust
from workbench.runs.cases import RunCase, run_cases
from workbench.runs.launch import checked_suite


@dataclass
class GradingSuite:
    suite: Path
    dialect: str
    skill_name: str
    executor: str
    cases: dict[str, RunCase]
    policy: chock_replay.Policy | None = None
    replays: dict = field(default_factory=dict)  # case id -> Verdict: a replay does not depend on the agent

    @property
    def evals_dir(self) -> Path:
        return self.suite.parent

    def commands(self) -> list[str]:
        """Exactly what would run from the evals file, for a person to trust."""
        out = []
        for case in self.cases.values():
            for assertion in case.assertions:
                if isinstance(assertion, dict) and assertion.get("type") == "command_check":
                    env = " ".join(f"{k}={v}" for k, v in (assertion.get("env") or {}).items())
                    for cell in command_check.cells(assertion):
                        extra = " ".join(f"{k}={v}" for k, v in cell.items())
                        prefix = " ".join(p for p in (env, extra) if p)
                        out.append(f"{prefix + ' ' if prefix else ''}{assertion.get('command')}  (eval {case.id})")
        out += chock_replay.guard_commands(self.policy, [c.raw for c in self.cases.values()])
        return out

    def trust_content(self) -> bytes:
        """The suite and every script its commands use: trust covers these bytes."""
        parts = [self.suite.read_bytes()]
        for case in self.cases.values():
            for assertion in case.assertions:
                if isinstance(assertion, dict):
                    for relative in assertion.get("setup_files") or []:
                        path = self.evals_dir / relative
                        parts.append(path.read_bytes() if path.is_file() else b"missing")
        if self.policy is not None and self.policy.guard is not None:
            parts.append(self.policy.guard.read_bytes())
        return b"\0".join(parts)

    def trusted(self) -> bool:
        return not self.commands() or trust.is_trusted(self.trust_content())

    def trust(self) -> None:
        trust.trust(self.trust_content(), f"commands of {self.suite}")


def load_suite(suite: Path, skill_name: str, executor: str = "") -> GradingSuite:
    fmt, data = checked_suite(suite)
    cases = {c.id: c for c in run_cases(fmt, data, suite)}
    policy = chock_replay.policy_of(suite) if fmt.name == chock.NAME else None
    return GradingSuite(suite, fmt.name, skill_name, executor, cases, policy)


def suite_of_iteration(iteration: Path) -> GradingSuite:
    """The suite named in an iteration's plan.json."""
    try:
        plan = json.loads((iteration / layout.PLAN).read_text())
    except (OSError, ValueError) as exc:
        raise FileNotFoundError(
            f"{iteration}: no readable plan.json; is this an iteration folder (<workspace>/iteration-N)?"
        ) from exc
    suite = Path(plan.get("suite_file", ""))
    if not suite.is_file():
        raise FileNotFoundError(f"{iteration}: the suite it was run from, {suite}, is gone")
    return load_suite(suite, plan.get("skill", ""), plan.get("executor", ""))
