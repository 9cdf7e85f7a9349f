"""A run folder is data: what a cluster's worker sends back, and what an agent leaves
behind, is never followed by the workbench's own hands. Each test is an exploit: a
worker (a real `dask worker` whose dispatch function was replaced, tests/agents/
hostile_worker.py) returning links to a secret of the submitting machine, or failing
in an unusual way; an agent run with --sandbox none planting links and pipes in its
run folder. Each asserts the secret reached no judge, report or screen, nothing was
written through a link, and the run ended, with the dispatch recorded."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import DEMO
from test_cluster import AGENT, DASK, LocalCluster

from workbench.app import pipeline
from workbench.app.choices import Agent, Judge, Limits, Placement
from workbench.grading import run_files
from workbench.runs import cluster as cluster_module

distributed = pytest.importorskip("distributed")
HOSTILE = Path(__file__).parent / "agents" / "hostile_worker.py"
SECRET = "HOST-SECRET-4b1d"  # in a file of the submitting machine, outside every run folder
CREDENTIAL = "CREDENTIAL-9c2e"  # in a returned home/: inside the run folder, still never read

# A judge that keeps everything it is sent, then passes: what reached it is in its log.
JUDGE = textwrap.dedent(
    """
    import json, os, re, sys
    prompt = sys.stdin.read()
    with open(os.environ["JUDGE_LOG"], "a") as log:
        log.write(prompt + "\\n")
    token = re.findall(r'"token": "([0-9a-f]+)"', prompt)[-1]  # the question's, as its last line names it
    print(json.dumps({"token": token, "passed": True, "evidence": "read"}))
    """
)


@pytest.fixture(scope="module")
def hostile_cluster(tmp_path_factory):
    if not DASK.exists():
        pytest.skip(f"the dask command is not at {DASK}")
    plan = tmp_path_factory.mktemp("plan") / "plan.json"
    plan.write_text("{}")
    started = LocalCluster(tmp_path_factory.mktemp("dask-logs"))
    try:
        started.add_workers(1, "--preload", str(HOSTILE), HOSTILE_PLAN=str(plan))
        yield started, plan
    finally:
        started.stop()


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """A skill whose one eval the judge reads (its outputs), a secret beside it, the judge's log."""
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    case = {
        "id": "leak",
        "prompt": "Write the answer.",
        "expected_output": "answer.txt written",
        "files": ["fixtures/export-json/CHANGELOG.md"],
        "turns": [{"prompt": "JSON please", "deliver_when": "agent_asks"}],
        "assertions": [
            {"id": "judged", "type": "llm_judge", "rubric": "The agent wrote an answer."},
            {"id": "checked", "type": "command_check", "command": "test -f answer.txt"},
        ],
    }
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "changelog-entry", "evals": [case]}))
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "secret.md").write_text(SECRET + "\n")
    (tmp_path / "judge.py").write_text(JUDGE)
    monkeypatch.setenv("JUDGE_LOG", str(tmp_path / "judge.log"))
    return skill, secrets


def _prepared(skill: Path, workspace: Path, address: str | None, agent: str, **fields) -> pipeline.Prepared:
    request = pipeline.RunRequest(
        skill,
        agent=Agent("command", agent),
        judge=Judge("command", f"{sys.executable} {skill.parent.parent / 'judge.py'}"),
        limits=Limits(timeout=fields.pop("timeout")) if "timeout" in fields else Limits(),
        placement=Placement("none", cluster=address, workspace=workspace),
        baseline="none",
        **fields,
    )
    prepared = pipeline.prepare(request)
    prepared.trust()
    return prepared


def _run(prepared: pipeline.Prepared, limit: float) -> tuple[pipeline.Outcome, float]:
    """The run, and how long it took; a run still going after `limit` seconds fails the test."""
    started = time.monotonic()
    outcome = asyncio.run(asyncio.wait_for(pipeline.execute(prepared), limit))
    return outcome, time.monotonic() - started


def _ok_agent() -> str:
    return f"AGENT_MODE=ok {sys.executable} {AGENT}"


def _everything_under(folder: Path) -> str:
    """The text of every regular file under folder, links and pipes left alone."""
    out = []
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root, name)
            if path.is_file() and not path.is_symlink():
                out.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def _judged(tmp_path: Path) -> str:
    log = tmp_path / "judge.log"
    return log.read_text() if log.exists() else ""


def _report(iteration: Path) -> str:
    from click.testing import CliRunner

    from workbench.cli import cli

    page = CliRunner().invoke(cli, ["report", str(iteration), "--format", "html"])
    assert "Traceback" not in page.output
    return page.output


def _links_out(secrets: Path, run: Path) -> dict[str, dict]:
    """Links of a returned run folder that lead out of it, each its own exploit."""
    climb = "../" * (len(run.parts) + 2) + str(secrets / "secret.md").lstrip("/")
    # A chain: `g` leads to the run folder itself, from deep down; `h` climbs from `g` as far as its own
    # depth allows on paper (so the text alone stays inside), but from the run folder that is far outside.
    deep = "outputs/" + "/".join(["d"] * (len(run.parts) + 1))
    depth = deep.count("/") + 1
    chain = {
        f"{deep}/g": ["link", 0, "../" * depth],
        f"{deep}/h": ["link", 0, "g/" + "../" * depth + str(secrets / "secret.md").lstrip("/")],
    }
    return {
        "absolute": {"outputs/stolen.md": ["link", 0, str(secrets / "secret.md")]},
        "folder": {"outputs/secrets": ["link", 0, str(secrets)]},
        "climbing": {"outputs/up.md": ["link", 0, climb]},
        "in-the-repository": {"repo/notes.md": ["link", 0, str(secrets / "secret.md")]},
        "a-chain": chain,
    }


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("exploit", ["absolute", "folder", "climbing", "in-the-repository", "a-chain"])
def test_a_returned_link_out_of_the_run_folder_is_refused(hostile_cluster, setup, tmp_path, exploit):
    cluster, plan = hostile_cluster
    skill, secrets = setup
    run = tmp_path / "ws" / "iteration-1" / "eval-leak" / "with_skill" / "run-1"
    plan.write_text(json.dumps({"add": _links_out(secrets, run)[exploit]}))
    before = sorted(os.listdir(secrets))
    outcome, _took = _run(_prepared(skill, tmp_path / "ws", cluster.address, _ok_agent()), 120)
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "failed", record
    assert "leads outside the run folder" in record["error"] and "refused" in record["error"], record["error"]
    assert not (run / "outputs").exists() and not (run / "repo").exists()  # nothing of it was written
    assert SECRET not in _judged(tmp_path) and SECRET not in _everything_under(outcome.iteration)
    assert SECRET not in _report(outcome.iteration)
    assert sorted(os.listdir(secrets)) == before


def test_links_inside_a_returned_run_folder_stay_links_and_are_never_read(hostile_cluster, setup, tmp_path):
    """Inside the run folder is no licence: a link into home/ or the repository's .git is kept as a link
    (a run folder holds the agent's links as it made them) and read by no judge, report or screen."""
    cluster, plan = hostile_cluster
    skill, _secrets = setup
    plan.write_text(
        json.dumps(
            {
                "add": {
                    "home/.credentials.json": ["file", 0o600, CREDENTIAL],
                    "outputs/credentials.md": ["link", 0, "../home/.credentials.json"],
                    "outputs/config.md": ["link", 0, "../repo/.git/config"],
                    "outputs/notes": ["link", 0, "../home"],
                    "outputs/metrics.json": ["link", 0, "../home/.credentials.json"],
                    "repo/credentials.md": ["link", 0, "../home/.credentials.json"],
                }
            }
        )
    )
    outcome, _took = _run(_prepared(skill, tmp_path / "ws", cluster.address, _ok_agent()), 120)
    run = outcome.iteration / "eval-leak" / "with_skill" / "run-1"
    assert json.loads((run / "run.json").read_text())["status"] == "done"
    assert os.readlink(run / "outputs" / "credentials.md") == "../home/.credentials.json"
    judged = _judged(tmp_path)
    assert "answer.txt" in judged or "JSON please" in judged  # the judge did read the run
    assert CREDENTIAL not in judged and "repositoryformatversion" not in judged
    assert CREDENTIAL not in (run / "grading.json").read_text()
    page = _report(outcome.iteration)
    assert CREDENTIAL not in page and "repositoryformatversion" not in page
    shown, _note = run_files.outputs(run / "outputs")
    notes = {f.name: f.note for f in shown}
    assert notes["credentials.md"].startswith("a link") and notes["config.md"].startswith("a link")
    assert all(CREDENTIAL not in f.text for f in shown)


def test_a_returned_pipe_or_unknown_entry_fails_its_dispatch_not_the_run(hostile_cluster, setup, tmp_path):
    cluster, plan = hostile_cluster
    skill, _secrets = setup
    plan.write_text(json.dumps({"add": {"outputs/pipe": ["fifo", 0o644, ""]}}))
    outcome, _took = _run(_prepared(skill, tmp_path / "ws", cluster.address, _ok_agent()), 120)
    record = json.loads((outcome.iteration / "eval-leak" / "with_skill" / "run-1" / "run.json").read_text())
    assert record["status"] == "failed" and "outputs/pipe" in record["error"], record


FAILURES = {
    "recursion": "RecursionError",
    "memory": "MemoryError: the worker ran out of memory",
    "unpicklable-exception": "Unpicklable: an exception that cannot travel",
    "unpicklable-result": "cannot be sent back",
}


@pytest.mark.parametrize("mode", list(FAILURES))
def test_a_worker_failing_in_an_unusual_way_fails_its_dispatch_within_the_turn_timeout(
    hostile_cluster, setup, tmp_path, mode
):
    cluster, plan = hostile_cluster
    skill, _secrets = setup
    plan.write_text(json.dumps({"mode": mode}))
    timeout = 20.0
    outcome, took = _run(_prepared(skill, tmp_path / "ws", cluster.address, _ok_agent(), timeout=timeout), 120)
    record = json.loads((outcome.iteration / "eval-leak" / "with_skill" / "run-1" / "run.json").read_text())
    assert record["status"] == "failed" and FAILURES[mode] in record["error"], record
    assert "Traceback" not in record["error"]
    assert took < timeout, f"the run took {took:.1f} s"
    plan.write_text("{}")
    again, _took = _run(_prepared(skill, tmp_path / "ws", cluster.address, _ok_agent(), failed=True), 120)
    assert (
        json.loads((again.iteration / "eval-leak" / "with_skill" / "run-1" / "run.json").read_text())["status"]
        == "done"
    )  # the worker is still there, and serves the next dispatch


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("mode", ["hang", "freeze"])
def test_a_worker_that_hangs_fails_its_dispatch_within_the_turn_timeout_and_a_grace(setup, tmp_path, monkeypatch, mode):
    if not DASK.exists():
        pytest.skip(f"the dask command is not at {DASK}")
    skill, _secrets = setup
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"mode": mode}))
    monkeypatch.setattr(cluster_module, "GRACE", 2.0)
    timeout = 3.0
    own = LocalCluster(tmp_path)
    try:
        own.add_workers(1, "--preload", str(HOSTILE), HOSTILE_PLAN=str(plan))
        prepared = _prepared(skill, tmp_path / "ws", own.address, _ok_agent(), timeout=timeout)
        outcome, _took = _run(prepared, 90)
        ended = time.time()
    finally:
        own.stop()
    record = json.loads((outcome.iteration / "eval-leak" / "with_skill" / "run-1" / "run.json").read_text())
    assert record["status"] == "failed" and "no sign of progress" in record["error"], record
    # From the dispatch's start on its worker (a busy machine's worker may take long to come up, and the
    # run waits for it without a deadline): the turn's timeout, the grace, and the cancel and close.
    took = ended - float(Path(f"{plan}.started").read_text())
    assert took < timeout + 2.0 + 6.0, f"the run ended {took:.1f} s after its dispatch started on the worker"


HOSTILE_AGENT = r"""#!/bin/sh
cat > /dev/null
# In its repository: links to a file and a folder outside, one that climbs out, a pipe.
ln -s "$SECRETS/secret.md" leak.md
ln -s "$SECRETS" docs
ln -s ../../../../../../../../../../../../.. up
mkfifo pipe
# In its run folder (--sandbox none lets it): outputs/ planted before the workbench writes it.
mkdir -p ../outputs
ln -s "$SECRETS/secret.md" ../outputs/stolen.md
ln -s "$SECRETS" ../outputs/secrets
ln -s ../repo/.git/config ../outputs/config.md
ln -s "$SECRETS/secret.md" ../outputs/metrics.json
mkfifo ../outputs/pipe
ln -s "$SECRETS/written-through" ../outputs/answer.txt
echo "the answer" > answer.txt
echo '{"type":"result","result":"done","session_id":"s","usage":{"input_tokens":1}}'
"""


def test_links_and_pipes_a_local_agent_plants_in_its_run_folder_are_never_read(setup, tmp_path, monkeypatch):
    skill, secrets = setup
    (tmp_path / "agent.sh").write_text(HOSTILE_AGENT)
    monkeypatch.setenv("SECRETS", str(secrets))
    agent = f"sh {tmp_path / 'agent.sh'}"
    data = json.loads((skill / "evals" / "evals.json").read_text())
    data["evals"][0].pop("turns")
    (skill / "evals" / "evals.json").write_text(json.dumps(data))
    outcome, _took = _run(_prepared(skill, tmp_path / "ws", None, agent), 120)
    run = outcome.iteration / "eval-leak" / "with_skill" / "run-1"
    assert json.loads((run / "run.json").read_text())["status"] == "done"
    grading = json.loads((run / "grading.json").read_text())
    assert {e["id"]: e["passed"] for e in grading["expectations"]} == {"judged": True, "checked": True}
    assert SECRET not in _judged(tmp_path) and "repositoryformatversion" not in _judged(tmp_path)
    assert SECRET not in (run / "grading.json").read_text()
    assert SECRET not in _report(outcome.iteration)
    # outputs/ is written afresh: what the agent planted there is gone, never written through.
    shown, _note = run_files.outputs(run / "outputs")
    assert all(SECRET not in f.text for f in shown) and not {"pipe", "stolen.md"} & {f.name for f in shown}
    assert (run / "outputs" / "answer.txt").read_text() == "the answer\n"
    # The same dispatch again, in a new iteration: restored from the cache, links as links, the pipe left out.
    second = _prepared(skill, tmp_path / "ws", None, agent, iteration=2)
    reused, _took = _run(second, 120)
    copy = reused.iteration / "eval-leak" / "with_skill" / "run-1"
    assert json.loads((copy / "run.json").read_text())["reused"] is True
    assert not os.path.lexists(copy / "outputs" / "stolen.md")
    assert not (copy / "repo" / "pipe").exists() and (copy / "repo" / "leak.md").is_symlink()
    assert sorted(os.listdir(secrets)) == ["secret.md"]


@pytest.mark.slow  # 29 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_dispatch_whose_worker_died_waits_for_its_new_worker_however_long(setup, tmp_path, monkeypatch):
    """The deadline is for a worker that holds a dispatch and gives no sign; one whose worker died is run
    again by the scheduler, maybe after a long wait in its queue, and is never given up on for that."""
    if not DASK.exists():
        pytest.skip(f"the dask command is not at {DASK}")
    skill, _secrets = setup
    data = json.loads((skill / "evals" / "evals.json").read_text())
    data["evals"][0]["turns"] = [{"prompt": f"more {n}", "deliver_when": "always"} for n in range(3)]
    data["evals"][0]["runs"] = 2
    (skill / "evals" / "evals.json").write_text(json.dumps(data))
    monkeypatch.setattr(cluster_module, "GRACE", 0.5)
    log = tmp_path / "agent.log"
    agent = f"AGENT_MODE=slow AGENT_DELAY=3 AGENT_LOG={log} {sys.executable} {AGENT}"  # 4 turns: 12 s and more
    own = LocalCluster(tmp_path)
    killed = []

    def kill_one_busy_worker() -> None:
        with distributed.Client(own.address, timeout=30) as client:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                busy = [address for address, keys in client.processing().items() if keys]
                if len(busy) == 2 and log.exists() and log.read_text().count("\n") >= 2:  # both agents started
                    pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                    killed.append(pid)
                    os.kill(pid, signal.SIGKILL)
                    return
                time.sleep(0.05)

    try:
        own.add_workers(2, "--nthreads", "1")
        killer = threading.Thread(target=kill_one_busy_worker)
        killer.start()
        outcome, _took = _run(_prepared(skill, tmp_path / "ws", own.address, agent, timeout=6.0), 180)
        killer.join()
    finally:
        own.stop()
    assert killed, "no worker was killed"
    records = [json.loads(p.read_text()) for p in outcome.iteration.rglob("run.json")]
    assert [r["status"] for r in records] == ["done", "done"], [r.get("error") for r in records]
    first_turns = [line for line in log.read_text().splitlines() if '"session": null' in line]
    assert len(first_turns) == 3  # the killed worker's dispatch started again, after the other had finished


def test_files_too_big_to_send_fail_their_dispatch_with_the_reason(hostile_cluster, setup, tmp_path, monkeypatch):
    from workbench.runs import shipped

    cluster, plan = hostile_cluster
    skill, _secrets = setup
    plan.write_text("{}")
    monkeypatch.setattr(shipped, "LIMIT", 100)  # the fixture's CHANGELOG.md is more
    outcome, _took = _run(_prepared(skill, tmp_path / "ws", cluster.address, _ok_agent()), 120)
    record = json.loads((outcome.iteration / "eval-leak" / "with_skill" / "run-1" / "run.json").read_text())
    assert record["status"] == "failed", record
    assert "the dispatch's files cannot be sent to the cluster" in record["error"], record["error"]
    assert "over 100 bytes" in record["error"]
