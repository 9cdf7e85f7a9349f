"""The `workbench` command's entry. `workbench report` starts alone: on a small iteration,
importing every other command (their registries, the sandbox, asyncio) would cost more
than the report itself; a plain command line skips click too (workbench/reporting.py)."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:2] == ["report"]:
        from workbench.reporting import run

        run(sys.argv[2:])  # exits, unless click is to read the command line
        from workbench.report_cli import report

        report(args=sys.argv[2:], prog_name="workbench report")
    else:
        from workbench.cli import main as workbench

        workbench()
