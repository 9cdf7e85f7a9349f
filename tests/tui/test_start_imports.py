"""What the editor loads before its first form (issue 26: cold start). Running agents,
grading them and the cluster are loaded when a run starts, never to open a skill:
each module below costs start-up time and none is used by the first form."""

from __future__ import annotations

import subprocess
import sys

NOT_AT_START = (
    "workbench.runs.runner",
    "workbench.runs.cluster",
    "workbench.runs.run_folder",
    "workbench.improve.proposal",
)


def test_the_editor_loads_nothing_that_runs_agents():
    code = f"import sys, workbench.tui.app\nprint(' '.join(m for m in {NOT_AT_START!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == [], f"opening the editor loads {loaded}"


def _opening(argv: list[str], cwd) -> subprocess.CompletedProcess:
    """`workbench ARGS` up to the app's start: what is loaded then, and which folder it opens."""
    code = (
        "import sys\n"
        "import workbench.tui.start as start\n"
        "def run_app(skills, watch):\n"
        "    print(' '.join(m for m in ('click', 'workbench.cli') if m in sys.modules) or '-')\n"
        "    print([s.name for s in skills], watch)\n"
        "start.run_app = run_app\n"
        f"sys.argv = ['workbench', *{argv!r}]\n"
        "from workbench.launch import main\n"
        "main()\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd)


def test_opening_a_folder_loads_no_other_command(skill):
    """`workbench FOLDER` (a path, or nothing: the current folder) opens the app without click
    and the other commands' modules (their registries and the runner: a tenth of a second)."""
    for argv, cwd in (([str(skill)], None), ([str(skill), "--no-watch"], None), ([], skill), (["./"], skill)):
        done = _opening(argv, cwd)
        loaded, opened = done.stdout.splitlines()
        assert loaded == "-", f"workbench {argv} loads {loaded}"
        assert opened == f"['changelog-entry'] {'--no-watch' not in argv}"


def test_a_folder_that_is_not_there_is_said_as_before(tmp_path):
    done = _opening([str(tmp_path / "nowhere" / "skill")], None)
    assert done.returncode == 2
    assert done.stderr == f"workbench: {tmp_path / 'nowhere' / 'skill'}: no such folder\n"
    assert done.stdout == ""
