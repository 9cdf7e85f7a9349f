"""Running the app on skills, and saying where unsaved edits went once it has closed:
shared by `workbench open` and the entry's own quick way to it (workbench/launch.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.tui.collector import pause_collector


def run_app(skills: list[Path], watch: bool) -> None:
    pause_collector()
    from workbench.tui.app import WorkbenchApp

    app = WorkbenchApp(skills, watch=watch)
    try:
        app.run()
    finally:
        # Whatever ended the app (a confirmed quit rescues nothing), then say where.
        app.rescue_unsaved()
        for path in app.rescued:
            try:
                print(f"workbench: your unsaved edits were written to {path}", file=sys.stderr, flush=True)
            except OSError:  # the terminal is gone (SIGHUP): the files are there all the same
                break
    if app.return_code:
        sys.exit(app.return_code)
