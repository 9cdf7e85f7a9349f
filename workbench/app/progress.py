"""What a flow tells the command line or a screen as it goes: each dispatch's record (Dispatch: its case,
configuration, run number, folder, state) and the states it passes through. Named here, at the
application layer, so that the edges follow a run without reaching into the runner."""

from __future__ import annotations

from workbench.runs.runner import DONE, FAILED, QUEUED, REUSED, RUNNING, SKIPPED, STOPPED, Dispatch

__all__ = ["DONE", "FAILED", "QUEUED", "REUSED", "RUNNING", "SKIPPED", "STOPPED", "Dispatch"]
