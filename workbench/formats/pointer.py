"""JSON Pointers (RFC 6901): the one address of a place in a document, shared by
diagnostics, edits and source maps. Tokens are always strings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def escape(token: object) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def join(tokens: Iterable[object]) -> str:
    return "".join("/" + escape(t) for t in tokens)


def split(pointer: str) -> tuple[str, ...]:
    if not pointer:
        return ()
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON Pointer: {pointer!r}")
    return tuple(unescape(t) for t in pointer[1:].split("/"))


def child(pointer: str, token: object) -> str:
    return pointer + "/" + escape(token)


def resolve(data: object, tokens: Sequence[str]) -> object:
    """The value at tokens; raises KeyError/IndexError/TypeError when absent."""
    node = data
    for token in tokens:
        if isinstance(node, list):
            node = node[int(token)]
        elif isinstance(node, dict):
            node = node[token]
        else:
            raise TypeError(f"cannot descend into {type(node).__name__}")
    return node
