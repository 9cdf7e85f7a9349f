"""No cyclic garbage collection while many small objects are built. Apart from
document.py, so a reader (a report) uses it without the YAML loader's imports."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while many small, acyclic objects are built
    (parsed JSON): the collector would walk them again and again for nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
