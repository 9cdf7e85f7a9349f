"""The cyclic garbage collector paused while the app starts: its own module, so that the
entry (workbench/launch.py), the app and start.py reach it without importing each other."""

from __future__ import annotations

import gc

_paused = False  # the collector was paused here for the start-up


def pause_collector() -> None:
    """No cyclic garbage collection until the app's start-up is over (resume_collector): its
    imports, the suite and the first form are ~250,000 objects that live as long as the app,
    and the collector walked them ~260 times, two full passes among them, before the first
    form of the 1,000-case bench suite was painted (a sixth of a cold start's CPU)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collector() -> None:
    """Start-up is over (the first form is on screen): its garbage is collected, once (a
    tenth of its objects; frozen, they would be kept for good), what it built is frozen (the
    collector never walks it again, mid-keystroke or mid-switch) and the collector, if paused
    here, collects again."""
    global _paused
    gc.collect()
    gc.freeze()
    if _paused:
        _paused = False
        gc.enable()
