"""What the editor loads before its first form (issue 26: cold start). Running agents,
grading them and the cluster are loaded when a run starts, never to open a skill:
each module below costs start-up time and none is used by the first form."""

from __future__ import annotations

import subprocess
import sys

NOT_AT_START = (
    "workbench.runs.runner",
    "workbench.runs.cluster",
    "workbench.runs.workspace",
    "workbench.improve.proposal",
)


def test_the_editor_loads_nothing_that_runs_agents():
    code = f"import sys, workbench.tui.app\nprint(' '.join(m for m in {NOT_AT_START!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == [], f"opening the editor loads {loaded}"
