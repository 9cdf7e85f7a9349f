"""Regexes in the formats are Rust `regex` syntax: no lookaround, no
backreferences, linear time. RE2 has the same design, so a pattern RE2 refuses
is one the Rust crate refuses too (see docs/regex.md for the small differences)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Protocol

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # failures are reported as diagnostics, not to stderr


class Match(Protocol):
    """What a compiled pattern's search finds (the re2 binding has no type hints)."""

    def group(self, group: int = 0, /) -> str: ...


class Pattern(Protocol):
    """What compile returns (an re2 pattern): the methods the workbench calls."""

    def search(self, text: str, /) -> Match | None: ...


_LOOKAROUND = re.compile(r"\(\?<?[=!]")
_BACKREFERENCE = re.compile(r"\\[1-9]|\\k<")


@lru_cache(maxsize=4096)
def problem(pattern: str) -> str | None:
    """Why pattern is not a valid Rust regex, or None when it is."""
    try:
        re2.compile(pattern, _OPTIONS)
        return None
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
    except Exception as exc:  # the binding raises other kinds for odd input (e.g. NUL)
        reason = str(exc) or type(exc).__name__
    if _LOOKAROUND.search(pattern):
        return f"lookaround such as (?=...) or (?<!...) is not supported by Rust regex ({reason})"
    if _BACKREFERENCE.search(pattern):
        return f"backreferences such as \\1 are not supported by Rust regex ({reason})"
    return f"not a valid Rust regex: {reason}"


def compile(pattern: str) -> Pattern:
    """A compiled pattern with Rust-like semantics; raises re2.error when invalid."""
    return re2.compile(pattern, _OPTIONS)
