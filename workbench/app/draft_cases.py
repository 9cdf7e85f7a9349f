"""draft-cases, prepared once: the proposer made and held as every flow holds its agents, checked to start, the
suite found and known to be draftable for, what needs trust; then the drafting, written beside the suite (never
into it) for the person to accept case by case."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from workbench.app import preflight
from workbench.app import trust as app_trust
from workbench.app.choices import Proposer
from workbench.app.placement import hold
from workbench.errors import Refused
from workbench.formats.drafts import drafts_path
from workbench.improve import drafts
from workbench.runs import sandbox
from workbench.runs.executors import Executor
from workbench.runs.launch import default_suite

WORKS_ON = "a private copy of SKILL.md, drafting cases"


@dataclass(frozen=True)
class DraftRequest:
    skill_dir: Path
    suite: Path | None = None  # None: the skill's own evals file
    count: int = 5
    examples: tuple[str, ...] = ()  # prompts the person gave as examples (--example)
    proposer: Proposer = field(default_factory=Proposer)
    sandbox: str = sandbox.AUTO


@dataclass(frozen=True)
class Drafted:
    written: Path  # the drafts file beside the suite
    cases: list[dict]
    cost_usd: float | None
    taken: set[object]  # the suite's ids: a draft with one of them gets a fresh one when accepted


@dataclass
class PreparedDrafts:
    request: DraftRequest
    agent: Executor
    mode: sandbox.Holding
    suite: Path

    @property
    def written_to(self) -> Path:
        return drafts_path(self.suite)

    def untrusted(self) -> list[str]:
        return app_trust.asks([self.request.proposer.program(WORKS_ON)])

    def trust(self) -> None:
        app_trust.trust([self.request.proposer.program(WORKS_ON)])

    def draft(self) -> Drafted:
        """The drafting itself (untrusted() empty, or trust() said). Raises WorkbenchError."""
        ask = self.request
        skill_dir = ask.skill_dir.resolve()
        written, cases, spent = drafts.draft(skill_dir, self.suite, self.agent, ask.count, [*ask.examples], self.mode)
        return Drafted(written, cases, spent, drafts.taken_ids(self.suite))


def prepare(request: DraftRequest) -> PreparedDrafts:
    """Everything checked before anything runs or is spent. Raises WorkbenchError (Refused for a proposer that
    cannot be made, a suite that is not there)."""
    skill_dir = request.skill_dir.resolve()
    try:
        agent = request.proposer.executor()  # its command absolute: it runs in a private copy
        mode = hold(request.sandbox, None, agent)
        suite = (request.suite or default_suite(skill_dir)).resolve()
        preflight.check(preflight.of_executor(agent, "proposer", mode.sandbox))
        drafts.brief(skill_dir, suite, request.count, [*request.examples], "")  # the suite can be drafted for
    except (ValueError, FileNotFoundError) as exc:
        raise Refused(str(exc)) from None
    return PreparedDrafts(request, agent, mode, suite)
