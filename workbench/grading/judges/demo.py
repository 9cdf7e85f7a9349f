"""The demo judge: an offline heuristic for the demo skill, NOT a model. Every
verdict it gives says so. It knows a few shapes of expectation that the demo's
suites use and reads the run for them:
- "rather than naming files/functions" / "not which file or function changed":
  the lines the agent added must not name code (file.py, snake_case names, or
  the names the rubric lists after "such as");
- "before writing/editing" with "read" or "ask": a Read of the named file, or a
  question, before the first write;
- "without asking": a write, and no question before the first one;
- "decline" / "refuse": no file changed and a final message that says it will
  not ("won't", "will not", "rather not", "cannot", "can't"); when the rubric
  speaks of Unreleased, the message must name it too (the offer of a new entry);
- "no file was changed" / "only X changed": the changed files;
- "a new line under ### Kind": an added bullet inside that section of the file;
- anything else: the rubric's distinctive words must appear in the agent's final
  message or its added lines."""

from __future__ import annotations

import re

from workbench.grading.judges.base import Judge, JudgeCase
from workbench.grading.verdict import Verdict, written
from workbench.runs.transcript import ASSISTANT, TOOL_USE, WRITE_TOOLS

LABEL = "demo judge (offline heuristic, not a model)"
RESPONDER_LABEL = "demo judge as simulated user (scripted answers, not a model)"
# What it says, in order, each time the agent asks something; then it has nothing left to say.
SCRIPTED_ANSWERS = (
    "Take the option you recommend.",
    "Yes, go ahead with that.",
    "That is all I need, thanks.",
)
CODE_NAME = re.compile(r"\b[\w-]+\.(?:py|js|ts|go|rs|rb|java|c|h)\b|\b[a-z]+_[a-z_]+\b")
COMMON = set(
    """does did the a an and or of to in on for with what which that this there their them they
user users file files function functions code answer final explain explains says say said rather than naming
new line lines pass fail quoting quote sentences sentence few agent whether about into from changed change
before after only other something such example instead""".split()
)


class DemoJudge(Judge):
    name = "demo"
    label = LABEL

    def decide(self, case: JudgeCase) -> Verdict:
        passed, evidence = _decide(case)
        return Verdict(passed, f"[{LABEL}] {evidence}")

    def simulate_user(self, prompt: str, opening: str, replies: list[str], last_agent: str, token: str) -> str:
        """As a responder's simulated user it answers from a scripted list, not from reading; its answer
        carries the question's token like any judge's."""
        from workbench.runs.responder import scripted_answer  # runs import grading, not the other way at load

        return scripted_answer(SCRIPTED_ANSWERS, replies, last_agent, RESPONDER_LABEL, token)

    def compare(self, task: str, a: JudgeCase, b: JudgeCase) -> dict:
        """Prefers the run that changed fewer files and named less code in what it added."""
        scores = {side: _tidiness(case) for side, case in (("A", a), ("B", b))}
        winner = "TIE" if scores["A"] == scores["B"] else min(scores, key=lambda side: scores[side])
        return {
            "winner": winner,
            "reasoning": f"[{LABEL}] (files changed, code names added): A {scores['A']}, "
            f"B {scores['B']}; fewer is better",
        }


def _tidiness(case: JudgeCase) -> tuple[int, int]:
    added = _added(case.diff)
    return len(_changed_files(case.diff)), sum(len(CODE_NAME.findall(line)) for line in added)


def _added(diff: str) -> list[str]:
    return [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]


def _changed_files(diff: str) -> list[str]:
    return re.findall(r"^diff --git a/(\S+)", diff, flags=re.M)


def _decide(case: JudgeCase) -> tuple[bool, str]:
    text = case.expectation.lower()
    added = _added(case.diff)
    if "rather than naming" in text or "not which file or function" in text or "not the code" in text:
        listed = re.search(r"such as ([^)]*)\)", case.expectation)
        names = [n.strip(" `'\"") for n in re.split(r",| or ", listed.group(1))] if listed else []
        bullets = [line for line in added if line.strip().startswith("- ")] or added
        if not bullets:
            return False, "the agent added no line to judge"
        for line in bullets:
            named = [n for n in names if n and n in line] or CODE_NAME.findall(line)
            if named:
                return False, f"the added line names code ({', '.join(named)}): {written(line.strip())}"
        return True, f"the added line speaks of what the user can do: {written(bullets[0].strip())}"
    if "without asking" in text:
        first_write = next((i for i, e in enumerate(case.events) if e.kind == TOOL_USE and e.name in WRITE_TOOLS), None)
        if first_write is None:
            return False, "nothing was written"
        asked = next((e for e in case.events[:first_write] if e.kind == ASSISTANT and "?" in e.text), None)
        return (
            asked is None,
            f"asked before writing: {written(asked.text)}"
            if asked
            else f"wrote without a question first: {case.events[first_write].rendered[:160]}",
        )
    if "decline" in text or "refuse" in text:
        changed = _changed_files(case.diff)
        reply = case.final_message.strip()
        declined = re.search(r"\b(won't|will not|rather not|cannot|can't)\b", reply.lower())
        offers = "unreleased" not in text or "unreleased" in reply.lower()
        if changed:
            return False, f"it made the change: changed files {', '.join(changed)}"
        said = "declines" if declined else "does not decline"
        return (
            bool(declined) and offers,
            f"changed no file; the reply {said}"
            f"{'' if offers else ' and offers nothing under Unreleased'}: {written(reply[:200])}",
        )
    if "before" in text and ("writ" in text or "edit" in text) and ("read" in text or "ask" in text):
        first_write = next(
            (i for i, e in enumerate(case.events) if e.kind == TOOL_USE and e.name in WRITE_TOOLS), len(case.events)
        )
        earlier = case.events[:first_write]
        if "ask" in text:
            asked = next((e for e in earlier if e.kind == ASSISTANT and "?" in e.text), None)
            return (
                asked is not None,
                f"asked before writing: {written(asked.text)}" if asked else "no question came before the first write",
            )
        target = re.search(r"read ([\w.-]+\.\w+)", text)
        wanted = target.group(1) if target else ""
        read = next(
            (e for e in earlier if e.kind == TOOL_USE and e.name == "Read" and wanted in e.rendered.lower()), None
        )
        return (
            read is not None,
            f"read before the first write: {read.rendered[:160]}"
            if read
            else f"no Read of {wanted or 'the file'} before the first write",
        )
    changed = _changed_files(case.diff)
    if "no file was changed" in text or "no file changes" in text or "nothing changed" in text:
        return not changed, f"changed files: {', '.join(changed) or 'none'}"
    only = re.search(r"only ([\w./-]+) changed", text)
    if only:
        others = [f for f in changed if f.lower() != only.group(1)]
        return (bool(changed) and not others, f"changed files: {', '.join(changed) or 'none'}")
    section = re.search(r"new line under .*?### (\w+)", case.expectation)
    if section:
        return _line_in_section(case, added, section.group(1))
    words = sorted({w for w in re.findall(r"[a-z]{5,}", text) if w not in COMMON})
    seen = (case.final_message + "\n" + "\n".join(added)).lower()
    found = [w for w in words if w in seen]
    passed = bool(words) and len(found) * 2 >= len(words)
    return passed, f"{len(found)}/{len(words)} of the expectation's key words in the run ({', '.join(found) or 'none'})"


def _line_in_section(case: JudgeCase, added: list[str], kind: str) -> tuple[bool, str]:
    bullets = [line for line in added if line.startswith("- ")]
    for name, text in case.outputs.items():
        match = re.search(rf"^### {kind}\n(.*?)(?=^##|\Z)", text, flags=re.M | re.S)
        if not match:
            continue
        inside = [b for b in bullets if b in match.group(1).splitlines()]
        if inside:
            return True, f"{name} has the new line under ### {kind}: {written(inside[0])}"
    return False, f"no added line under a ### {kind} section (added: {bullets[:2] or 'nothing'})"
