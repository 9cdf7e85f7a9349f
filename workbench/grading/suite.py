"""What grading needs from the suite an iteration was run from: its cases (read
fresh, so a corrected assertion can be re-graded without re-running agents),
the evals folder for setup files, the chock policy, and which commands from the
evals file would run (for trust)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from workbench.errors import Refused
from workbench.formats import chock, skill_md
from workbench.formats.regular import read_json
from workbench.grading import chock_replay, command_check
from workbench.grading.kinds import judged
from workbench.runs import trust
from workbench.runs.cases import RunCase, outside, run_cases
from workbench.runs.launch import checked_suite
from workbench.workspace import layout


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

    @property
    def trust_root(self) -> Path:
        """What trust covers as a whole: the evals folder, or for a chock policy the
        policy folder (its guard script may read anything in it)."""
        return self.policy.folder if self.policy is not None else self.evals_dir

    @cached_property
    def _tree(self) -> tuple[str, int]:
        """The trust root's digest and file count, taken once: trust and the snapshot are checked against it."""
        try:
            return trust.tree_digest(self.trust_root)
        except (trust.TreeChanged, OSError) as exc:
            raise Refused(f"cannot trust {self.trust_root}: {exc}") from None

    def commands(self) -> list[str]:
        """Everything the evals file makes the workbench run or write, for a person to trust."""
        out = []
        for case in self.cases.values():
            for assertion in case.assertions:
                if isinstance(assertion, dict) and assertion.get("type") == "command_check":
                    env = " ".join(f"{k}={v}" for k, v in (assertion.get("env") or {}).items())
                    for cell in command_check.cells(assertion):
                        extra = " ".join(f"{k}={v}" for k, v in cell.items())
                        prefix = " ".join(p for p in (env, extra) if p)
                        out.append(f"{prefix + ' ' if prefix else ''}{assertion.get('command')}  (eval {case.id})")
                    for relative in assertion.get("setup_files") or []:
                        kind = "folder" if (self.evals_dir / str(relative)).is_dir() else "file"
                        out.append(
                            f"copy setup {kind} {relative} into the workspace before the check  (eval {case.id})"
                        )
        codebases: dict[Path, int] = {}
        for case in self.cases.values():
            if case.codebase is not None and outside(case.codebase, self.evals_dir):
                codebases[case.codebase] = codebases.get(case.codebase, 0) + 1
        for folder, count in codebases.items():
            out.append(
                f"copy {folder} (a codebase outside {self.evals_dir.name}/) into the agent's repository "
                f" ({count} eval(s))"
            )
        raws = [c.raw for c in self.cases.values()]
        guards = chock_replay.guard_commands(self.policy, raws)
        out += guards
        if guards and self.policy is not None and self.policy.guard is not None:
            out.append(f"{self.policy.guard.name} may read any file in {self.policy.folder} (trusted as a whole)")
        out += chock_replay.gate_replays(self.policy, [(c.id, c.raw) for c in self.cases.values()])
        if out:
            digest, count = self._tree
            out.insert(
                0,
                f"everything in {self.trust_root} as it is now ({count} files, sha256 {digest[:12]}); "
                "the run uses a private copy of exactly this",
            )
        return out

    def needs_judge(self, only: frozenset[str] | set[str] | None = None) -> bool:
        """Whether grading this suite (these evals of it) asks the judge: a rubric, an expectation, chock's
        expected behaviour, or a responder eval's simulated user (a run with none of these never starts it)."""
        for case in self.cases.values():
            if only and case.id not in only:
                continue
            if case.responder is not None:
                return True
            if self.dialect == chock.NAME:
                if case.expected_output:
                    return True
            elif any(not isinstance(a, dict) or judged(str(a.get("type"))) for a in case.assertions):
                return True
        return False

    def trust_content(self) -> bytes:
        """What trust covers: the whole trust root (every file's path and bytes, links
        as links), which holds the suite, its commands, setup files, fixtures and guards."""
        return f"tree:{self._tree[0]}".encode()

    def trusted(self) -> bool:
        return not self.commands() or trust.is_trusted(self.trust_content())

    def trust(self) -> None:
        trust.trust(self.trust_content(), f"everything in {self.trust_root}")

    def snapshot(self, into: Path) -> GradingSuite:
        """This suite, read again from a private copy of its trust root made in `into`.

        Why a copy and not a second look at the digest: whatever is checked and then
        read again from the user's folder can be swapped in between (a file, a link, a
        setup folder). The copy is written from the very bytes that are hashed, then
        compared with the digest taken when the run was prepared (and trusted); after
        that, checks, setup files, fixtures, guards and replays are read from the copy
        only, which nothing but the workbench writes. A mismatch refuses the run."""
        root = into / "policy" if self.policy is not None else into / "skill" / self.evals_dir.name
        try:
            digest, _ = trust.tree_digest(self.trust_root, root)
        except (trust.TreeChanged, OSError) as exc:
            raise Refused(f"cannot copy {self.trust_root}: {exc}") from None
        if digest != self._tree[0]:
            raise Refused(
                f"{self.trust_root} changed after it was checked for trust; nothing ran. Start the run again "
                "to see (and trust) what it holds now."
            )
        copy = root / self.suite.relative_to(self.trust_root)
        snapshot = load_suite(copy, self.skill_name, self.executor)
        snapshot.__dict__["_tree"] = self._tree
        for case_id, case in snapshot.cases.items():  # one outside the trusted tree is where it was, not in the copy
            original = self.cases.get(case_id)
            if original is not None and outside(original.codebase, self.evals_dir):
                case.codebase = original.codebase
        return snapshot


def load_suite(suite: Path, skill_name: str, executor: str = "") -> GradingSuite:
    fmt, data = checked_suite(suite)
    cases = {c.id: c for c in run_cases(fmt, data, suite)}
    policy = chock_replay.policy_of(suite) if fmt.name == chock.NAME else None
    return GradingSuite(suite, fmt.name, skill_name, executor, cases, policy)


def suite_of_iteration(iteration: Path) -> GradingSuite:
    """The suite named in an iteration's plan.json; for one skill-creator made (no
    plan.json), the skill's evals/evals.json beside its `<skill>-workspace`."""
    if not os.path.lexists(iteration / layout.PLAN):
        made = _skill_creator_suite(iteration)
        if made is not None:
            return made
    try:
        plan = read_json(iteration / layout.PLAN)
    except (OSError, ValueError, RecursionError) as exc:
        raise FileNotFoundError(
            f"{iteration}: no readable plan.json; is this an iteration folder (<workspace>/iteration-N)?"
        ) from exc
    if not isinstance(plan, dict):
        raise FileNotFoundError(f"{iteration / layout.PLAN}: not a plan (expected the object the run wrote)")
    suite = Path(plan.get("suite_file", ""))
    if not suite.is_file():
        raise FileNotFoundError(f"{iteration}: the suite it was run from, {suite}, is gone")
    return load_suite(suite, plan.get("skill", ""), plan.get("executor", ""))


WORKSPACE_SUFFIX = "-workspace"


def _skill_creator_suite(iteration: Path) -> GradingSuite | None:
    """skill-creator's SKILL.md puts results in `<skill-name>-workspace/` beside the
    skill, iterations in it, and the evals in `<skill>/evals/evals.json`."""
    workspace = iteration.resolve().parent
    if not workspace.name.endswith(WORKSPACE_SUFFIX) or not layout.runs(iteration):
        return None
    skill = workspace.parent / workspace.name[: -len(WORKSPACE_SUFFIX)]
    suite = skill / "evals" / "evals.json"
    if not suite.is_file():
        raise FileNotFoundError(
            f"{iteration}: no plan.json, and no {suite} (skill-creator keeps a skill's evals there, beside "
            f"its {workspace.name}); is this an iteration folder?"
        )
    return load_suite(suite, skill_md.read_name(skill / "SKILL.md") or skill.name)
