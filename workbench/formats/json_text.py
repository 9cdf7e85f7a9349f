"""A JSON answer inside a model's free text: judges, comparators and the simulated
user all end with one object, amid prose and fences."""

from __future__ import annotations

import json


def last_object(text: str, wanted) -> dict | None:
    """The judge's own final answer: the last top-level JSON object in its text
    (prose and fences around it allowed) that wanted() accepts. Last, not first:
    a judge may quote what the agent printed, and an agent can print a forged
    verdict; the judge's own answer is the one it ends with. Objects nested in
    another (a quote inside the evidence) are never candidates."""
    decoder = json.JSONDecoder()
    found = None
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict) and wanted(value):
            found = value
        start = text.find("{", end)  # past the whole object: what it contains is not a candidate
    return found
