"""What a parsed document's shape says it is. Evidence is weighed, not assumed
from the file's name: other runners keep their own evals.json and suite.yaml,
and a file is read as a dialect only when its content says it is one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.formats import chock, skill_creator, slow_powers

# Keys only a slow-powers case has; typed checks are slow-powers' assertion kinds.
POWERS_KEYS = ("turns", "skill_should_trigger", "runs", "isolation")
POWERS_KINDS = {"transcript_check", "llm_judge", "command_check", "diff_scope"}
# Keys that make an object in an `evals` list one of our cases (not `input`, `vars`, ...).
CASE_KEYS = ("prompt", "expectations", "turns", "skill_should_trigger")
# What a legacy chock `suite` or a modern `eval_suite` holds besides an id.
CHOCK_SUITE_KEYS = {"policy_id", "cases"}
CHOCK_EVAL_SUITE_KEYS = {"skill_id", "test_cases"}


@dataclass(frozen=True)
class Weighed:
    """The dialect an evals document is read as, and the evidence for each."""

    dialect: str
    why: str  # the evidence for it, in a person's words
    against: str = ""  # the evidence for the other dialect, outweighed (a mixed file)


def is_chock(data: Any, at_place: bool) -> bool:
    """A chock suite: `eval_suite` or legacy `suite` holding a chock suite's own keys,
    not just any `suite` key (a generic test list may have one). At evals/suite.yaml,
    one with only keys chock knows is a chock suite too, however incomplete."""
    if not isinstance(data, dict) or "evals" in data:
        return False
    modern, legacy = data.get("eval_suite"), data.get("suite")
    if isinstance(modern, dict) and CHOCK_EVAL_SUITE_KEYS & set(modern):
        return True
    if isinstance(legacy, dict) and CHOCK_SUITE_KEYS & set(legacy):
        return True
    if at_place:
        known = chock.FORMAT.schema or {}
        for key, value in (("eval_suite", modern), ("suite", legacy)):
            allowed = set(known.get("properties", {}).get(key, {}).get("properties", {}))
            if isinstance(value, dict) and value and set(value) <= allowed:
                return True
    return False


def is_evals(data: Any, at_place: bool) -> bool:
    """{skill_name, evals} of either JSON dialect: the two keys together are ours; an
    `evals` list alone counts when its objects are cases of ours (a prompt, ...), or when
    it is empty and the file is where a suite belongs."""
    if not isinstance(data, dict) or "evals" not in data:
        return False  # skill_name alone is not enough: history.json has one too
    if "skill_name" in data:
        return True
    cases = data["evals"]
    if not isinstance(cases, list):
        return False
    if not cases:
        return at_place
    return any(isinstance(c, dict) and any(k in c for k in CASE_KEYS) for c in cases)


def is_bare_evals(data: Any) -> bool:
    """A top-level array of eval cases: someone's evals list without its suite around it."""
    if not isinstance(data, list) or not data:
        return False
    items = [c for c in data if isinstance(c, dict)]
    return bool(items) and all(
        "prompt" in c and any(k in c for k in ("id", "expectations", "assertions", "expected_output")) for c in items
    )


def weigh(cases: Any) -> Weighed:
    """slow-powers or skill-creator, by the strongest evidence. Ids weigh most:
    every case has one and the dialects disagree on its type; then the keys and
    check kinds only one dialect has; plain objects or strings as checks weigh least.
    A tie goes to slow-powers, the stricter contract, and says so."""
    counts = {"integer ids": 0, "kebab-case string ids": 0, "`expectations` lists": 0, "string assertions": 0}
    counts |= {"typed slow-powers checks": 0, "slow-powers-only keys": 0, "assertion objects": 0}
    for case in cases if isinstance(cases, list) else []:
        if not isinstance(case, dict):
            continue
        case_id = case.get("id")
        if isinstance(case_id, int) and not isinstance(case_id, bool):
            counts["integer ids"] += 1
        elif isinstance(case_id, str):
            counts["kebab-case string ids"] += 1
        if "expectations" in case:
            counts["`expectations` lists"] += 1
        checks = case.get("assertions")
        if isinstance(checks, list) and checks:
            if all(isinstance(c, str) for c in checks):
                counts["string assertions"] += 1
            elif any(isinstance(c, dict) and c.get("type") in POWERS_KINDS for c in checks):
                counts["typed slow-powers checks"] += 1
            elif any(isinstance(c, dict) for c in checks):
                counts["assertion objects"] += 1
        if any(k in case for k in POWERS_KEYS):
            counts["slow-powers-only keys"] += 1
    weights = {
        "integer ids": (skill_creator.NAME, 3),
        "kebab-case string ids": (slow_powers.NAME, 3),
        "`expectations` lists": (skill_creator.NAME, 2),
        "string assertions": (skill_creator.NAME, 1),
        "typed slow-powers checks": (slow_powers.NAME, 3),
        "slow-powers-only keys": (slow_powers.NAME, 2),
        "assertion objects": (slow_powers.NAME, 1),
    }
    score = {slow_powers.NAME: 0, skill_creator.NAME: 0}
    evidence: dict[str, list[str]] = {slow_powers.NAME: [], skill_creator.NAME: []}
    for what, n in counts.items():
        if n:
            dialect, weight = weights[what]
            score[dialect] += weight * n
            evidence[dialect].append(f"{what} ({n})")
    chosen = skill_creator.NAME if score[skill_creator.NAME] > score[slow_powers.NAME] else slow_powers.NAME
    other = skill_creator.NAME if chosen == slow_powers.NAME else slow_powers.NAME
    why = ", ".join(evidence[chosen]) or "no case says otherwise"
    if evidence[other] and score[other] == score[chosen]:
        why += "; a tie, which goes to slow-powers"
    return Weighed(chosen, why, ", ".join(evidence[other]))
