"""The command line is a thin edge (issue 27): cli/main.py only registers commands, each a module
imported when asked for; no function in cli/ takes more than 8 parameters; the shared choices come
from one option group each, and every list of choices from its one source."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import click
import pytest
from conftest import DEMO
from support import process

from workbench.app.choices import Limits, limit_offered
from workbench.cli import cli, options
from workbench.cli.main import COMMANDS
from workbench.formats.detect import EVALS_DIALECTS
from workbench.improve.proposal import PROPOSERS
from workbench.runs import network, sandbox

CLI = Path(__file__).resolve().parent.parent / "workbench" / "cli"
MOST_PARAMETERS = 8


def _command(name: str) -> click.Command:
    found = cli.get_command(click.Context(cli), name)
    assert found is not None, name
    return found


def _choices(command: str, option: str) -> tuple[str, ...]:
    [param] = [p for p in _command(command).params if p.name == option]
    assert isinstance(param.type, click.Choice)
    return tuple(param.type.choices)


def test_no_function_in_cli_takes_more_than_8_parameters():
    wide = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                given = node.args
                count = len(given.posonlyargs) + len(given.args) + len(given.kwonlyargs)
                count += (given.vararg is not None) + (given.kwarg is not None)
                if count > MOST_PARAMETERS:
                    wide.append(f"{path.name}:{node.lineno} {node.name} takes {count}")
    assert wide == []


def test_the_parameter_count_sees_a_wide_function():
    wide = ast.parse("def f(a, b, c, d, e, f, g, h, i): ...").body[0]
    assert isinstance(wide, ast.FunctionDef) and len(wide.args.args) == MOST_PARAMETERS + 1


def test_main_only_registers_and_every_command_is_its_own_module():
    tree = ast.parse((CLI / "main.py").read_text())
    decorated = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.decorator_list]
    assert decorated == ["cli"], "cli/main.py defines no command but the group"
    listed = cli.list_commands(click.Context(cli))
    assert listed == sorted(COMMANDS)
    for name in listed:
        module = COMMANDS[name].partition(":")[0]
        assert _command(name).name == name, (name, module)


def test_the_version_and_a_bare_path_import_no_command_module(tmp_path):
    code = (
        "import sys\n"
        "from workbench.cli import main\n"
        "sys.argv = ['workbench', '--version']\n"
        "try:\n    main()\n"
        "except SystemExit:\n    pass\n"
        "print(' '.join(m for m in sys.modules if m.startswith('workbench.cli.') and m not in "
        "('workbench.cli.main',)) or '-')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert done.stdout.splitlines() == ["workbench, version " + __import__("workbench").__version__, "-"]


def test_the_help_lists_every_command_and_a_mistyped_one_is_said(tmp_path):
    from click.testing import CliRunner

    listed = CliRunner().invoke(cli, ["--help"])
    assert listed.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in listed.output
    mistyped = process.run("evalute", cwd=tmp_path)
    assert mistyped.returncode == 2
    assert 'did you mean "evaluate"?' in mistyped.stderr


def test_the_lists_of_choices_come_from_their_one_source():
    for command in ("improve", "optimize-description", "draft-cases"):
        assert _choices(command, "proposer") == PROPOSERS
    for command in ("run", "evaluate", "improve", "trigger", "optimize-description", "draft-cases"):
        assert _choices(command, "sandbox") == sandbox.CHOICES
    for command in ("run", "evaluate", "improve", "trigger", "optimize-description"):
        assert _choices(command, "network") == network.CHOICES
    assert _choices("validate", "dialect") == tuple(EVALS_DIALECTS) == _choices("init", "dialect")


@pytest.mark.parametrize("flow", [options.RUN, options.TRIGGER], ids=["run", "trigger"])
def test_every_field_of_the_limits_has_its_option_in_the_one_group(flow):
    """Adding a field to Limits without its option in limits_options fails here: the type and the
    group are the two places a new limit is written (docs/architecture.md, where to change what)."""
    handed = set(options._names((options.limits_options(flow),)))
    derived = {"adaptive"}  # --runs auto
    fields = {f.name for f in dataclasses.fields(Limits) if limit_offered(f.name, flow.name)}
    assert fields - derived == handed
    assert "max_dispatches" in handed if flow is options.RUN else "max_dispatches" not in handed


def test_the_limits_reach_run_evaluate_improve_trigger_and_optimize(monkeypatch):
    """One option group, one value: each flow's command hands the same Limits on to its request."""
    seen: dict[str, Limits] = {}

    def keep(name):
        def take(request, *_args, **_kwargs):
            limits = getattr(request, "limits", None)
            if limits is None:  # ImproveRequest: .run; OptimizeRequest: .trigger
                inner = getattr(request, "run", None) or request.trigger
                limits = inner.limits
            seen[name] = limits
            return 0

        return take

    import workbench.cli.improve as improve_module
    import workbench.cli.run as run_module
    import workbench.cli.trigger as trigger_module

    _command("evaluate")  # its module imports evaluate_command from cli/run.py when invoked
    monkeypatch.setattr(run_module, "run_command", keep("run"))
    monkeypatch.setattr(run_module, "evaluate_command", keep("evaluate"))
    monkeypatch.setattr(improve_module, "improve_command", keep("improve"))
    monkeypatch.setattr(trigger_module, "trigger_command", keep("trigger"))
    monkeypatch.setattr(trigger_module, "optimize_command", keep("optimize-description"))
    from click.testing import CliRunner

    skill = DEMO
    given = ["--runs", "auto", "--max-runs", "5", "-j", "2", "--timeout", "30"]
    for name, extra in (
        ("run", []),
        ("evaluate", ["v1"]),
        ("improve", []),
        ("trigger", []),
        ("optimize-description", []),
    ):
        done = CliRunner().invoke(cli, [name, str(skill), *extra, *given])
        assert done.exit_code == 0, (name, done.output)
        limits = seen[name]
        assert (limits.adaptive, limits.max_runs, limits.jobs, limits.timeout) == (True, 5, 2, 30.0), name
