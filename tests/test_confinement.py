"""What the sandbox shows: files, not folders it was not asked for (docs/security.md, "Agents: the sandbox").

The class: every folder the sandbox binds that it was not asked for. A run started as `python -m workbench`
from $HOME (sys.path[0] is then $HOME), with PYTHONPATH=$HOME, and with the agent's script beside a .env, the
workspace and the skill: a command agent tries to read every secret in reach (the user's ssh key, .env files,
Claude Code's credentials, the iteration's plan.json, the suite's expected outputs, the skill's evals/, the
checkout that holds the workbench) and writes down what it could read. Nothing may be read, and the run
itself must still work: the command agent's script runs, and so does the demo agent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DEMO
from support.process import command as workbench_command

from workbench.runs import sandbox

ROOT = Path(__file__).resolve().parent.parent
needs_bwrap = pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()}")


def _secrets(home: Path) -> dict[str, Path]:
    """The user's secrets, each holding a marker that must never reach a run's files."""
    project = home / "project"
    skill = project / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    places = {
        "SSH-KEY": home / ".ssh" / "id_rsa",
        "HOME-ENV": home / ".env",
        "CLAUDE-CREDENTIALS": home / ".claude" / ".credentials.json",
        "PROJECT-ENV": project / ".env",
        "HOME-MODULE": home / "helper.py",  # a module on PYTHONPATH=$HOME
    }
    for marker, path in places.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{marker}-SECRET\n")
    return places


AGENT = """#!/bin/sh
# Reads every file it is given and lists every folder; writes down what it could, then answers.
: > read.txt
for path in {files}; do
  if cat "$path" > /dev/null 2>&1; then echo "read $path" >> read.txt; fi
done
for path in {folders}; do
  if [ -d "$path" ]; then echo "list $path:" $(ls -A "$path") >> read.txt; fi
done
echo '{{"type":"result","result":"ok","session_id":"s","usage":{{"input_tokens":1}}}}'
"""


def _workbench(home: Path, *args: str) -> subprocess.CompletedProcess:
    """The real command, started from $HOME as `python -m workbench`, with PYTHONPATH=$HOME."""
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(home)}
    return subprocess.run(workbench_command(*args), capture_output=True, text=True, timeout=300, env=env, cwd=home)


@needs_bwrap
@pytest.mark.parametrize("started", ["sh agent.sh", "agent.sh"])
def test_a_sandboxed_agent_reads_none_of_the_users_secrets(tmp_path, started):
    home = tmp_path / "home"
    places = _secrets(home)
    project = home / "project"
    skill = project / "skills" / "changelog-entry"
    workspace = project / "changelog-entry-workspace"
    files = [
        *places.values(),
        workspace / "iteration-1" / "plan.json",  # the iteration's plan: every dispatch, the suite's path
        skill / "evals" / "evals.json",  # the expected outputs and every assertion
        skill / "evals" / "checks" / "check_changelog.py",
        skill / "SKILL.md",  # the skill's own folder (the run stages a copy in the workspace)
        ROOT / "pyproject.toml",  # the checkout that holds the workbench's package
    ]
    folders = [home / ".ssh", skill / "evals", skill, project, workspace / "iteration-1", ROOT, ROOT / "tests"]
    script = project / "agent.sh"
    quoted = {"files": " ".join(f"'{p}'" for p in files), "folders": " ".join(f"'{p}'" for p in folders)}
    script.write_text(AGENT.format(**quoted))
    script.chmod(0o755)
    command = f"sh {script}" if started.startswith("sh ") else str(script)
    done = _workbench(
        home, "run", str(skill), "--executor", "command", "--agent-command", command, "--only", "export-json-flag",
        "--baseline", "none", "--judge", "demo", "--sandbox", "bwrap", "--trust",
    )  # fmt: skip
    [record] = [json.loads(p.read_text()) for p in workspace.glob("iteration-1/*/*/run-*/run.json")]
    assert record["status"] == "done", (record, done.stderr)  # the script ran, sandboxed
    read = workspace / "iteration-1" / "eval-export-json-flag" / "with_skill" / "run-1" / "outputs" / "read.txt"
    said = read.read_text().splitlines()
    assert not [line for line in said if line.startswith("read ")], said
    # The folders on the way to what the sandbox shows exist, empty but for that way: the script's folder
    # holds the script alone and the way to the dispatch's repository; the checkout, the package alone.
    listed = {line.split(":")[0][len("list ") :]: line.split(":", 1)[1].split() for line in said}
    assert listed.get(str(project), []) == sorted(["agent.sh", "changelog-entry-workspace"]), said
    assert set(listed.get(str(ROOT), [])) <= {"workbench", ".venv"}, said
    assert set(listed) <= {str(project), str(ROOT), str(workspace / "iteration-1")}, said
    assert listed.get(str(workspace / "iteration-1"), []) == ["eval-export-json-flag"], said
    # and no marker reached anything the run wrote
    for path in workspace.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert not any(f"{m}-SECRET".encode() in text for m in places), path


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@needs_bwrap
def test_the_demo_agent_still_runs_when_started_from_home(tmp_path):
    home = tmp_path / "home"
    _secrets(home)
    skill = home / "project" / "skills" / "changelog-entry"
    done = _workbench(home, "run", str(skill), "--executor", "demo", "--sandbox", "bwrap", "--trust")
    workspace = home / "project" / "changelog-entry-workspace"
    records = [json.loads(p.read_text()) for p in workspace.glob("iteration-1/*/*/run-*/run.json")]
    assert records and all(r["status"] == "done" for r in records), done.stderr
    benchmark = json.loads((workspace / "iteration-1" / "benchmark.json").read_text())
    assert benchmark["run_summary"]["with_skill"]["pass_rate"]["mean"] == 1.0, done.stdout


def test_the_bound_folders_are_never_home_its_ancestors_the_current_folder_or_a_holder_of_the_run(tmp_path):
    """The rule itself, on every folder the sandbox would show for a turn started from a home that holds
    the workspace, the skill, the agent's script and a virtualenv, with PYTHONPATH and sys.path naming home."""
    from workbench.runs.executors.base import TurnCommand

    home = tmp_path / "home"
    places = _secrets(home)
    project = home / "project"
    repo = project / "changelog-entry-workspace" / "iteration-1" / "eval-x" / "with_skill" / "run-1" / "repo"
    private = repo.parent / "home"
    for folder in (repo, private):
        folder.mkdir(parents=True)
    script = project / "agent.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    env = {"HOME": str(home), "PYTHONPATH": str(home)}
    wrapped = sandbox.wrap(TurnCommand(shell=f"sh {script} --config {places['PROJECT-ENV']}", env=env), repo, private)
    argv = wrapped.argv or []
    shown = [argv[i + 1] for i, a in enumerate(argv) if a in ("--ro-bind", "--bind")]
    kept = [home, project, project / "skills", project / "changelog-entry-workspace", Path(os.getcwd()), Path("/")]
    for source in shown:
        path = Path(source)
        assert path not in kept and not any(path in k.parents for k in kept if k != Path("/")), source
        assert not (path.is_dir() and path in places["PROJECT-ENV"].parents), source
    assert str(script) in shown  # the script itself, as a file
    assert str(places["PROJECT-ENV"]) in shown  # a file the command names is shown, as that file


MODULE_AGENT = """import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from helper_rule import ANSWER  # a module beside the script
sys.stdin.read()
open("answer.txt", "w").write(ANSWER)
print('{"type":"result","result":"ok","session_id":"s","usage":{"input_tokens":1}}')
"""


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@needs_bwrap
def test_a_module_beside_the_script_is_shown_only_when_the_config_names_it(tmp_path):
    from workbench.config import write_config

    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "agent.py").write_text(MODULE_AGENT)
    (agents / "helper_rule.py").write_text("ANSWER = '42'\n")
    (agents / ".env").write_text("AGENTS-ENV-SECRET\n")
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    args = ["run", str(skill), "--executor", "command", "--agent-command", f"{sys.executable} {agents / 'agent.py'}"]
    args += ["--only", "export-json-flag", "--baseline", "none", "--judge", "demo", "--sandbox", "bwrap", "--trust"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(workspace: str) -> dict:
        subprocess.run(
            workbench_command(*args, "--workspace", str(tmp_path / workspace)),
            capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
        )  # fmt: skip
        [record] = [json.loads(p.read_text()) for p in (tmp_path / workspace).glob("iteration-1/*/*/run-*/run.json")]
        return record

    first = run("first")
    assert first["status"] == "failed" and "helper_rule" in first["stderr_tail"]  # its folder is not shown
    write_config(sandbox_show=[str(agents / "helper_rule.py")])
    second = run("second")
    assert second["status"] == "done", second
    write_config(sandbox_show=[str(tmp_path)])  # a folder holding the current folder: refused, with where
    done = subprocess.run(workbench_command(*args), capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 2 and "config.json" in done.stderr and "never shown" in done.stderr, done.stderr


def test_the_kernels_resolution_of_a_path_is_realpaths(tmp_path, monkeypatch):
    """What the sandbox shows is decided on real paths: sandbox._realpath (the kernel's, an O_PATH open) says
    what os.path.realpath says, for links (to folders, to files, chained, relative, dangling, in a loop),
    `..` after a link, paths that do not exist, and relative ones."""
    (tmp_path / "real" / "inner").mkdir(parents=True)
    (tmp_path / "real" / "file").write_text("x")
    (tmp_path / "to-real").symlink_to("real")
    (tmp_path / "to-to-real").symlink_to(tmp_path / "to-real")
    (tmp_path / "real" / "up").symlink_to("../real/inner")
    (tmp_path / "dangling").symlink_to("nowhere")
    (tmp_path / "loop-a").symlink_to("loop-b")
    (tmp_path / "loop-b").symlink_to("loop-a")
    monkeypatch.chdir(tmp_path)
    asked = ["to-real", "to-to-real/inner/..", "to-real/file", "real/up", "real/up/../file", "dangling",
             "dangling/more", "loop-a", "missing/x", ".", "", str(tmp_path / "to-to-real" / "inner"), "/"]  # fmt: skip
    for path in asked:
        assert sandbox._realpath(path) == os.path.realpath(path), path
