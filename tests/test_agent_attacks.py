"""An agent is what is measured, and it runs code: what it leaves in its
workspace must not reach outside it, through the workbench's own hands. Each
test is an exploit a hostile agent tried (a module beside a trusted check,
links planted in .git, in a setup file's place and among its outputs, a named
pipe), asserting nothing outside changed and the run was still graded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DEMO
from support.process import command as workbench_command

from workbench.runs import sandbox

ROOT = Path(__file__).resolve().parent.parent
needs_bwrap = pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()}")

HOSTILE = r"""#!/bin/sh
cat > /dev/null
mkdir -p checks
# A module beside the trusted check script: `python3 checks/check_changelog.py` imports it.
printf 'open("%s/PWNED-check", "w").write("ran")\n' "$OUTSIDE" > checks/re.py
# The place of a setup file, a link to a file outside: copying the setup file would write through it.
ln -s "$OUTSIDE/victim-setup" checks/check_changelog.py
# .git/config and missing object folders as links outside: the workbench writes both after the agent.
rm -f .git/config && ln -s "$OUTSIDE/victim-config" .git/config
for i in $(seq 0 255); do d=.git/objects/$(printf %02x "$i"); [ -e "$d" ] || ln -s "$OUTSIDE/objects" "$d"; done
# An output that is a link to a secret: copied into outputs/, it would reach the judge and the Results screen.
ln -s "$OUTSIDE/secret" leak.txt
echo "an entry" >> CHANGELOG.md
mkfifo pipe
echo '{"type":"result","result":"done","session_id":"s","usage":{"input_tokens":1}}'
"""


def _run(tmp_path: Path, mode: str) -> subprocess.CompletedProcess:
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    outside = tmp_path / "outside"
    (outside / "objects").mkdir(parents=True)
    for name, text in (("victim-setup", "precious\n"), ("victim-config", "precious\n"), ("secret", "TOP SECRET\n")):
        (outside / name).write_text(text)
    (tmp_path / "agent.sh").write_text(HOSTILE)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OUTSIDE": str(outside)}
    args = ["run", str(skill), "--executor", "command", "--agent-command", f"sh {tmp_path / 'agent.sh'}"]
    args += ["--only", "export-json-flag", "--baseline", "none", "--judge", "demo", "--sandbox", mode, "--trust"]
    return subprocess.run(workbench_command(*args), capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)


def _untouched(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    assert (outside / "victim-setup").read_text() == "precious\n"
    assert (outside / "victim-config").read_text() == "precious\n"
    assert list((outside / "objects").iterdir()) == []


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_links_an_agent_plants_are_never_followed_by_the_workbench(tmp_path, mode):
    done = _run(tmp_path, mode)
    assert "Traceback" not in done.stderr, done.stderr
    _untouched(tmp_path)
    run = next((tmp_path / "changelog-entry-workspace").glob("iteration-1/eval-export-json-flag/with_skill/run-1"))
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "done", record
    leak = run / "outputs" / "leak.txt"
    assert not leak.exists() or "TOP SECRET" not in leak.read_text()
    grading = json.loads((run / "grading.json").read_text())  # graded, named pipe and all
    assert {e["id"] for e in grading["expectations"]} >= {"only-the-changelog", "entry-under-unreleased-added"}
    regraded = subprocess.run(
        workbench_command("grade", str(run.parent.parent.parent), "--judge", "demo", "--trust"),
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path,
    )  # fmt: skip
    assert regraded.returncode in (0, 1) and "Traceback" not in regraded.stderr, regraded.stderr
    _untouched(tmp_path)


@needs_bwrap
def test_a_check_runs_what_the_agent_wrote_inside_the_sandbox_too(tmp_path):
    _run(tmp_path, "bwrap")
    assert not (tmp_path / "outside" / "PWNED-check").exists()  # the agent's module ran, held like the agent


def test_a_skill_with_links_out_of_it_does_not_run(tmp_path):
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    (tmp_path / "secret").write_text("HOST SECRET\n")
    (skill / "references").mkdir()
    (skill / "references" / "notes.md").symlink_to(tmp_path / "secret")
    done = subprocess.run(
        workbench_command("run", str(skill), "--trust"),
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and "references/notes.md ->" in done.stderr and "outside" in done.stderr
    assert not (tmp_path / "changelog-entry-workspace").exists()


def test_a_named_pipe_in_evals_is_refused_before_trust_not_a_hang(tmp_path):
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    os.mkfifo(skill / "evals" / "fixtures" / "pipe")
    done = subprocess.run(
        workbench_command("run", str(skill)),
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr


@pytest.mark.slow  # 29 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_promote_write_runs_no_filter_of_the_repository_around_the_skill(tmp_path):
    """A skill that came with its repository's .git (an archive): its config names a
    clean filter, which `git status` would run on a file whose stat changed."""
    skill = tmp_path / "proj" / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    marker = tmp_path / "PWNED-filter"
    repo = tmp_path / "proj"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for key, value in (("clean", f"sh -c 'touch {marker}; cat'"), ("process", f"sh -c 'touch {marker}'")):
        subprocess.run(["git", "-C", str(repo), "config", f"filter.evil.{key}", value], check=True)
    (repo / ".gitattributes").write_text("* filter=evil\n")
    quiet = ["-c", "filter.evil.clean=cat", "-c", "filter.evil.process=", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "-C", str(repo), *quiet, "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *quiet, "commit", "-qm", "skill"], check=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def workbench(*args):
        return subprocess.run(workbench_command(*args), capture_output=True, text=True,
                              timeout=300, env=env, cwd=tmp_path)  # fmt: skip

    assert workbench("version", "new", str(skill)).returncode == 0
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nOne more line.\n")
    assert workbench("version", "new", str(skill)).returncode == 0
    assert workbench("evaluate", str(skill), "v1", "--trust").returncode == 0
    subprocess.run(["git", "-C", str(repo), *quiet, "checkout", "--", "."], check=True)  # the folder: v0 again
    os.utime(skill / "SKILL.md", (1, 1))  # same bytes, new stat: git would hash it through the filter
    promoted = workbench("promote", str(skill), "v1", "--write", "--yes")
    assert promoted.returncode == 0, promoted.stderr
    assert "One more line." in (skill / "SKILL.md").read_text()
    assert not marker.exists()
