"""Rules of a trigger eval set beyond its schema. skill-creator's run_eval.py keys
results by query, so a repeated query merges two items into one score; and a set
with one class only cannot show a description that triggers too often (or too rarely)."""

from __future__ import annotations

from typing import Any

from workbench.validate.diagnostic import Diagnostic, error, warning

QUERY_MAX = 100_000  # characters: the command protocol passes the prompt in the environment too


def trigger_case(case: Any, tokens: tuple[str, ...], ctx: object) -> list[Diagnostic]:
    query = case.get("query") if isinstance(case, dict) else None
    where = "/".join(("",) + tokens + ("query",))
    if isinstance(query, str) and query and not query.strip():
        return [error(where, "empty query (only spaces); expected a user prompt")]
    if isinstance(query, str) and "\x00" in query:
        return [error(where, "the query holds a NUL character, which no agent can be given; remove it")]
    if isinstance(query, str) and len(query) > QUERY_MAX:
        return [error(where, f"the query is {len(query):,} characters; expected at most {QUERY_MAX:,} (a user prompt)")]
    return []


def trigger_document(data: Any, ctx: object) -> list[Diagnostic]:
    if not isinstance(data, list):
        return []
    out: list[Diagnostic] = []
    first: dict[str, int] = {}
    classes: set[bool] = set()
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("should_trigger"), bool):
            classes.add(item["should_trigger"])
        query = item.get("query")
        if not isinstance(query, str) or not query.strip():
            continue
        key = " ".join(query.split()).casefold()  # what a person would call the same query
        if key in first:
            out.append(
                error(
                    f"/{index}/query",
                    f"duplicate query: /{first[key]}/query asks the same; run_eval.py would merge "
                    "their results, so each query must be unique",
                )
            )
        else:
            first[key] = index
    if data and len(classes) == 1:
        (only,) = classes
        missing = "false" if only else "true"
        out.append(
            warning(
                "",
                f"every query has should_trigger: {str(only).lower()}; add queries with should_trigger: "
                f"{missing} so the set tests triggering both ways",
            )
        )
    return out
