"""The core is a library: importing it (and running `workbench validate`) never
imports Textual."""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE = [
    "workbench.formats.detect",
    "workbench.formats.document",
    "workbench.validate.tree",
    "workbench.validate.validator",
    "workbench.cli",
    "workbench.runs.launch",
    "workbench.cli.run",
    "workbench.grading.grade",
    "workbench.grading.review",
    "workbench.grading.report",
    "workbench.cli.grade",
    "workbench.grading.judges",
    "workbench.grading.feedback",
    "workbench.improve.evaluate",
    "workbench.improve.adaptive",
    "workbench.improve.promote",
    "workbench.cli.improve",
    "workbench.app.pipeline",
]


@pytest.mark.parametrize("module", CORE)
def test_core_module_does_not_import_textual(module):
    code = (
        f"import sys, {module}; "
        "sys.exit(1 if any(m == 'textual' or m.startswith('textual.') for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0, f"{module} imports textual"


def test_validate_command_does_not_import_textual(tmp_path):
    code = (
        f"import sys, runpy; sys.argv = ['workbench', 'validate', {str(tmp_path)!r}];\n"
        "try:\n    runpy.run_module('workbench', run_name='__main__')\n"
        "except SystemExit: pass\n"
        "sys.exit(3 if 'textual' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


@pytest.mark.parametrize("module", ["workbench.cli.run", "workbench.cli.evaluate", "workbench.cli.trigger"])
def test_the_commands_that_run_agents_do_not_import_gitpython(module):
    """gitpython's import is ~45 ms of a command's start; a run reads its baselines as data and needs it only
    for the version store and an old run's repository, where it is imported then."""
    code = f"import sys, {module}; sys.exit(2 if 'git' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0, f"{module} imports gitpython"


def test_git_errors_are_none_while_gitpython_is_half_imported(monkeypatch):
    """Another thread may be importing gitpython (its first git failure): the module is in sys.modules
    without GitCommandError yet. An except clause built from safe_git.errors() then catches no git error
    (none can have been raised: raising one waits for the import) instead of raising AttributeError."""
    import types

    from workbench.workspace import safe_git

    monkeypatch.setitem(sys.modules, "git", types.ModuleType("git"))
    assert safe_git.errors() == ()
    try:
        raise OSError("the run's folder went away")
    except (OSError,) + safe_git.errors() as exc:
        assert "went away" in str(exc)


@pytest.mark.parametrize("command", ["validate", "history", "promote", "version", "init", "demo", "open"])
def test_the_commands_that_run_no_agent_start_without_the_runner(command):
    """A command that offers no agent, sandbox or proposer choice starts without the runner, the sandbox, the
    relay and asyncio (a fifth of `workbench validate`'s whole process, 172 ms before): the modes they name
    live in runs/modes.py, and the proposers' names are looked up when first offered."""
    heavy = ["workbench.runs.runner", "workbench.runs.sandbox", "workbench.runs.network", "asyncio"]
    code = f"import sys, workbench.cli.{command}; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"workbench {command} imports {done.stdout.strip()}"
