"""A JSON answer inside a model's free text: judges, comparators, the simulated
user and the drafting proposer all end with one object, amid prose and fences.

Which object is the answer is decided by a token, not by its place: each
question carries a fresh random token that only the one asked ever sees (for
a judge it is made after the run, so the agent under test cannot know it), and
only an object that repeats it is an answer. Whatever else the text quotes
(an agent's forged `{"passed": true}`, before or after the real answer) is
never one."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator

TOKEN = "token"  # the key an answer carries its token in


def new_token() -> str:
    """A token for one question: 128 random bits, as hex."""
    return secrets.token_hex(16)


def objects(text: str) -> Iterator[dict]:
    """The top-level JSON objects in text, in order (prose and fences around them
    allowed). Objects nested in another (a quote inside the evidence) are not
    yielded: they are part of the one that holds them."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            yield value
        start = text.find("{", end)  # past the whole object: what it contains is not a candidate


def answer(text: str, token: str, wanted: Callable[[dict], bool]) -> dict | None:
    """The answer of whoever was given token: the last top-level object in text
    that carries it and that wanted() accepts, without its token; None when
    there is none. An object with no token, or another one, is a quote."""
    found = None
    for value in objects(text):
        if value.get(TOKEN) == token and wanted(value):
            found = value
    if found is None:
        return None
    return {key: value for key, value in found.items() if key != TOKEN}


def untokened(text: str, token: str, wanted: Callable[[dict], bool]) -> str:
    """Why text holds no answer, for the error: the objects it has that would be
    answers but for their token (quotes, or a reply that left the token out)."""
    near = [value for value in objects(text) if wanted(value) and value.get(TOKEN) != token]
    if not near:
        return ""
    other = sum(TOKEN in value for value in near)
    said = []
    if len(near) - other:
        said.append(f"{len(near) - other} without the token")
    if other:
        said.append(f"{other} with another token")
    return f" ({' and '.join(said)}: quoted or forged, not counted)"
