"""transcript_check: a Rust regex over rendered tool invocations
(tool_invocation_matches) or assistant messages (assistant_message_matches),
optionally before a point of the run (must_precede)."""

from __future__ import annotations

from workbench.formats.slow_powers import TRANSCRIPT_CHECKS
from workbench.grading.verdict import Verdict, written
from workbench.runs.transcript import ASSISTANT, TOOL_USE, WRITE_TOOLS, Event
from workbench.validate import rust_regex

KINDS = dict(zip(TRANSCRIPT_CHECKS, (TOOL_USE, ASSISTANT), strict=True))


def grade(assertion: dict, events: list[Event]) -> Verdict:
    check = assertion.get("check")
    if check not in KINDS:
        named = f"unknown check {written(check)}" if isinstance(check, str) and check else "no check given"
        return Verdict(False, f"{named}; expected {' or '.join(TRANSCRIPT_CHECKS)}")
    pattern = rust_regex.compile(assertion.get("pattern") or "")
    where = assertion.get("must_precede", "any")
    limit, limit_words = len(events), "anywhere in the run"
    if where == "completion_claim":
        last = max((i for i, e in enumerate(events) if e.kind == ASSISTANT), default=None)
        if last is None:
            return Verdict(False, "the agent never answered, so nothing can come before its completion claim")
        limit, limit_words = last, f"before the final assistant message (event {last + 1})"
    elif where == "first_write":
        first = next((i for i, e in enumerate(events) if e.kind == TOOL_USE and e.name in WRITE_TOOLS), None)
        if first is None:
            # eval-magic's rule: first_write passes when the run writes nothing.
            return Verdict(True, "no write happened in the run, so nothing was written before it")
        limit, limit_words = first, f"before the first write (event {first + 1}: {events[first].rendered[:120]})"
    kind = KINDS[check]
    for index, event in enumerate(events[:limit]):
        if event.kind == kind and pattern.search(event.rendered):
            return Verdict(
                True, f"matched event {index + 1} (turn {event.turn}), {limit_words}: {event.rendered[:200]}"
            )
    later = next(
        (i for i in range(limit, len(events)) if events[i].kind == kind and pattern.search(events[i].rendered)), None
    )
    if later is not None:
        return Verdict(False, f"matched only at event {later + 1}, not {limit_words}: {events[later].rendered[:200]}")
    seen = sum(1 for e in events if e.kind == kind)
    given = assertion.get("pattern")  # as the suite wrote it
    return Verdict(
        False,
        f"no {'tool invocation' if kind == TOOL_USE else 'assistant message'} of {seen} "
        + (f"matched {written(given)}" if isinstance(given, str) else "happened (no pattern: any would match)"),
    )
