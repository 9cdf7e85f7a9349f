"""Reading one run's grading.json strictly: a grading that is missing, truncated,
empty or of the wrong shape is an error of that run, never a run skipped (which
would leave only the passing runs to count) and never a traceback.

The check is by hand, not by the schema: it runs for every run of an iteration
(10,000 of them in a big one), and it also checks what a schema cannot say:
that the summary agrees with the expectations it summarises."""

from __future__ import annotations

from pathlib import Path

import orjson

from workbench.formats.regular import read_regular

TYPE_CHECKING = False  # not typing's: a report starts faster without importing it
if TYPE_CHECKING:
    from typing import Any


def read_grading(path: str) -> dict:
    """The run's grading, or a stand-in with no expectations whose `run_error`
    says what is wrong with the file (file:line:column where known)."""
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return unusable(f"{path}: missing: the run has not been graded (run `workbench grade` on its iteration)")
    except OSError as exc:
        return unusable(f"{path}: cannot be read: {exc.strerror or exc}")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return unusable(syntax_problem(path))
    problem = shape_problem(data)
    if problem:
        return unusable(f"{path}: {problem}")
    return data


def unusable(why: str) -> dict:
    return {
        "expectations": [],
        "summary": {"passed": 0, "failed": 0, "total": 0, "pass_rate": 0.0},
        "run_error": f"grading unusable: {why}",
        "unusable": True,
    }


def syntax_problem(path: str) -> str:
    """Where and why the text does not parse, from the loader that reports positions."""
    from workbench.formats.document import SyntaxProblem, load  # here: only a broken file needs it

    try:
        parsed = load(Path(path))
    except OSError as exc:
        return f"{path}: cannot be read: {exc.strerror or exc}"
    if isinstance(parsed, SyntaxProblem):
        return f"{path}:{parsed.line}:{parsed.column}: {parsed.message}"
    return f"{path}: does not parse as JSON"  # orjson is stricter than the loader (never expected)


def shape_problem(data: Any) -> str | None:
    """What makes a parsed grading unusable, or None. It runs for every run a report reads
    (50,000 of them): one pass over the expectations, no generator or comprehension per run."""
    if not isinstance(data, dict):
        return f"expected an object with expectations and summary, found {_kind(data)}"
    expectations = data.get("expectations")
    if not isinstance(expectations, list):
        return f"expected `expectations` to be an array, found {_kind(expectations)}"
    passed = 0
    for index, e in enumerate(expectations):
        verdict = e.get("passed") if isinstance(e, dict) else None
        if (verdict is not True and verdict is not False) or not isinstance(e.get("text"), str):
            return f"expectations[{index}]: expected an object with a string `text` and a boolean `passed`"
        passed += verdict
    summary = data.get("summary")
    if not isinstance(summary, dict):
        return f"expected `summary` to be an object, found {_kind(summary)}"
    said, failed, total = summary.get("passed"), summary.get("failed"), summary.get("total")
    for count in (said, failed, total):
        if not (isinstance(count, int) and count is not True and count is not False and count >= 0):
            return "summary: expected whole numbers passed, failed and total"
    if said != passed or total != len(expectations) or failed != len(expectations) - passed:
        return (
            f"summary says {said} of {total} passed but its expectations say "
            f"{passed} of {len(expectations)}; expected them to agree"
        )
    number = data.get("run_number")
    if number is not None and not (isinstance(number, int) and not isinstance(number, bool)):
        return f"expected `run_number` to be a whole number, found {_kind(number)}"
    eval_id = data.get("eval_id")
    if eval_id is not None and (isinstance(eval_id, bool) or not isinstance(eval_id, (str, int))):
        return f"expected `eval_id` to be a string or a number, found {_kind(eval_id)}"
    if "triggering" in data and not (
        isinstance(data["triggering"], dict) and isinstance(data["triggering"].get("invoked"), bool)
    ):
        return "expected `triggering` to be an object with a boolean `invoked`"
    for key, numbers in _NUMBERS:
        held = data.get(key)
        if held is None and key not in data:
            continue
        if not isinstance(held, dict):
            return f"expected `{key}` to be an object, found {_kind(held)}"
        for name in numbers:
            value = held.get(name)
            if value is not None and not (isinstance(value, (int, float)) and value is not True and value is not False):
                return f"{key}.{name}: expected a number, found {_kind(value)}"
    return None


# The figures the benchmark adds up, by the object that holds them.
_NUMBERS = (
    ("timing", ("executor_duration_seconds", "total_duration_seconds", "total_tokens")),
    ("execution_metrics", ("total_tool_calls", "errors_encountered")),
)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if _number(value) else type(value).__name__
    )
