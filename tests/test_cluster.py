"""Runs on a real Dask cluster: a `dask scheduler` and two `dask worker` processes
started here on 127.0.0.1, the same iteration run locally and on the cluster, a
worker killed mid-run, a scheduler that cannot be reached or goes away."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DEMO, REPO

from workbench.app import pipeline
from workbench.app.choices import Agent, Limits, Placement
from workbench.app.pipeline import defaults
from workbench.cli import cli
from workbench.config import ConfigProblem, config_dir, load_config
from workbench.errors import EXIT_USAGE, Refused
from workbench.runs import cluster as cluster_module
from workbench.runs.cluster import ClusterLost, ClusterUnavailable
from workbench.runs.runner import DONE
from workbench.runs.shipped import pack, unpack

distributed = pytest.importorskip(
    "distributed", reason="the cluster needs the optional extra: pip install 'skill-workbench[cluster]'"
)
DASK = Path(sys.executable).parent / "dask"
AGENT = Path(__file__).parent / "agents" / "scripted_agent.py"
START_TIMEOUT = 30.0  # seconds for the scheduler and workers to come up


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _env() -> dict[str, str]:
    # Workers import the workbench from the checkout under test, not from an installed copy.
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


class LocalCluster:
    """A scheduler and workers, each a separate process started with the plain `dask` command."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.scheduler = self._start(["scheduler", "--host", "127.0.0.1", "--port", str(self.port)], "scheduler")
        self.workers: list[subprocess.Popen] = []
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.scheduler.poll() is not None:
                    raise RuntimeError(f"the scheduler did not start: {self.log('scheduler')}") from None
                time.sleep(0.1)

    def _start(self, args: list[str], name: str, **env: str) -> subprocess.Popen:
        with open(self.logs / f"{name}.log", "ab") as log:
            return subprocess.Popen(
                [str(DASK), *args, "--no-dashboard"],
                stdout=log,
                stderr=log,
                env={**_env(), **env},
                start_new_session=True,
            )

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text()[-2000:]

    def add_workers(self, count: int, *extra: str, **env: str) -> None:
        for _ in range(count):
            # No nanny: the worker is this very process, so killing it kills the worker (no restart).
            args = ["worker", self.address, "--nworkers", "1", "--nthreads", "2", "--no-nanny", *extra]
            self.workers.append(self._start(args, f"worker-{len(self.workers)}", **env))
        self.wait_for(len([w for w in self.workers if w.poll() is None]))

    def wait_for(self, count: int) -> None:
        with distributed.Client(self.address, timeout=START_TIMEOUT) as client:
            client.wait_for_workers(count, timeout=START_TIMEOUT)

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    if not DASK.exists():
        pytest.skip(f"the dask command is not at {DASK}")
    started = LocalCluster(tmp_path_factory.mktemp("dask-logs"))
    try:
        started.add_workers(2)
        yield started
    finally:
        started.stop()


@pytest.fixture
def skill(tmp_path) -> Path:
    target = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target


def _run(skill: Path, workspace: Path, cluster: str | None = None, **fields) -> pipeline.Outcome:
    placement = Placement(fields.pop("sandbox", "none"), cluster=cluster, workspace=workspace)
    request = pipeline.RunRequest(skill, placement=placement, **fields)
    prepared = pipeline.prepare(request)
    prepared.trust()
    return pipeline.run(prepared)


def _gradings(iteration: Path) -> dict[str, list]:
    out = {}
    for path in sorted(iteration.rglob("grading.json")):
        data = json.loads(path.read_text())
        out[str(path.parent.relative_to(iteration))] = [(e["text"], e["passed"]) for e in data["expectations"]]
    return out


def _pass_rates(iteration: Path) -> dict:
    summary = json.loads((iteration / "benchmark.json").read_text())["run_summary"]
    return {name: side["pass_rate"] for name, side in summary.items() if name != "delta"}


def _transcripts(iteration: Path) -> dict[str, list]:
    """Each transcript without its times, and the agent's workspace path made one (a worker's is its own)."""
    out = {}
    for path in sorted(iteration.rglob("transcript.jsonl")):
        events = []
        for line in path.read_text().splitlines():
            event = json.loads(line)
            event.pop("timestamp", None)
            text = json.dumps(event, sort_keys=True)
            text = re.sub(r"/tmp/workbench-dispatch-[^/\"]+/run", "<run>", text)
            text = text.replace(str(path.parent), "<run>")
            events.append(re.sub(r'"(duration_ms|tokens|total_tokens)": \d+', "", text))
        out[str(path.parent.relative_to(iteration))] = events
    return out


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_demo_iteration_on_the_cluster_grades_as_the_local_run(dask_cluster, skill, tmp_path):
    only = frozenset({"export-json-flag", "ambiguous-timeout-change", "question-not-a-request"})
    local = _run(skill, tmp_path / "local", only=only)
    remote = _run(skill, tmp_path / "remote", dask_cluster.address, only=only)
    assert {d.status for d in remote.prepared.dispatches} == {DONE} and len(remote.prepared.dispatches) == 8
    assert _gradings(remote.iteration) == _gradings(local.iteration)
    assert _transcripts(remote.iteration) == _transcripts(local.iteration)
    files = sorted(
        p.relative_to(remote.iteration).as_posix() for p in remote.iteration.rglob("*") if ".git" not in p.parts
    )
    assert files == sorted(
        p.relative_to(local.iteration).as_posix() for p in local.iteration.rglob("*") if ".git" not in p.parts
    )
    assert _pass_rates(remote.iteration) == _pass_rates(local.iteration)


def _command_suite(skill: Path, runs: int = 1) -> None:
    case = {
        "id": "ask-then-write",
        "prompt": "Write the answer.",
        "expected_output": "answer.txt written",
        "runs": runs,
        "files": ["fixtures/export-json/CHANGELOG.md"],
        "turns": [{"prompt": "JSON please", "deliver_when": "agent_asks"}],
        "assertions": [
            {"id": "asked", "type": "transcript_check", "check": "assistant_message_matches", "pattern": "\\?"},
            {"id": "one-file", "type": "diff_scope", "max_files_touched": 1},
            {"id": "wrote-json", "type": "command_check", "command": "grep -q JSON answer.txt"},
        ],
    }
    data = {"skill_name": "changelog-entry", "evals": [case, {**case, "id": "second", "runs": runs}]}
    (skill / "evals" / "evals.json").write_text(json.dumps(data, indent=2))


def _agent(mode: str, **env) -> str:
    return f"AGENT_MODE={mode} " + " ".join(f"{k}={v}" for k, v in env.items()) + f" {sys.executable} {AGENT}"


def test_a_command_agent_on_the_cluster_grades_as_the_local_run(dask_cluster, skill, tmp_path):
    _command_suite(skill)
    command = _agent("ok")
    local = _run(skill, tmp_path / "local", agent=Agent("command", command))
    remote = _run(skill, tmp_path / "remote", dask_cluster.address, agent=Agent("command", command))
    assert {d.status for d in remote.prepared.dispatches} == {DONE}
    gradings = _gradings(remote.iteration)
    assert gradings == _gradings(local.iteration) and len(gradings) == 4
    assert all(passed for run, verdicts in gradings.items() if "with_skill" in run for _, passed in verdicts)
    record = json.loads((remote.iteration / "eval-second" / "with_skill" / "run-1" / "run.json").read_text())
    assert record["turns"] == 2 and record["changed_files"] == ["answer.txt"]


def test_the_run_command_on_the_cluster_says_where_and_passes(dask_cluster, skill, tmp_path):
    _command_suite(skill)
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(skill),
            "--cluster",
            dask_cluster.address,
            "--executor",
            "command",
            "--agent-command",
            _agent("ok"),
            "--workspace",
            str(tmp_path / "ws"),
            "--sandbox",
            "none",
            "--trust",
            "--baseline",
            "none",
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"with the command: {_agent('ok')} on the cluster at {dask_cluster.address}, graded by" in result.output


def test_the_sandbox_holds_the_agent_on_the_worker_as_here(dask_cluster, skill, tmp_path):
    from workbench.runs import sandbox

    if sandbox.unavailable():
        pytest.skip(f"no sandbox here: {sandbox.unavailable()}")
    _command_suite(skill)
    remote = _run(skill, tmp_path / "ws", dask_cluster.address, agent=Agent("command", _agent("ok")), sandbox="bwrap")
    records = [json.loads(p.read_text()) for p in remote.iteration.rglob("run.json")]
    assert {(r["status"], r["sandbox"]) for r in records} == {(DONE, "bwrap")} and len(records) == 4


def test_a_codebase_and_an_overlay_reach_the_worker_as_they_are_here(dask_cluster, skill, tmp_path):
    evals = skill / "evals"
    (evals / "codebases" / "app" / "src").mkdir(parents=True)
    (evals / "codebases" / "app" / "src" / "main.py").write_text("print('app')\n")
    (evals / "codebases" / "app" / "run.sh").write_text("#!/bin/sh\n")
    (evals / "codebases" / "app" / "run.sh").chmod(0o755)
    (evals / "codebases" / "app" / "main-link.py").symlink_to("src/main.py")
    (evals / "overlay" / "docs").mkdir(parents=True)
    (evals / "overlay" / "docs" / "TASK.md").write_text("the task\n")
    data = json.loads((evals / "evals.json").read_text())
    case = next(c for c in data["evals"] if c["id"] == "question-not-a-request")
    case.update(files_root="overlay", files=["docs/TASK.md"])
    data.update(codebase={"path": "codebases/app"}, evals=[case])
    (evals / "evals.json").write_text(json.dumps(data, indent=2))
    local = _run(skill, tmp_path / "local", baseline="none")
    remote = _run(skill, tmp_path / "remote", dask_cluster.address, baseline="none")

    def tree(outcome: pipeline.Outcome) -> dict:
        [repo] = outcome.iteration.glob("eval-*/with_skill/run-1/repo")
        return {
            p.relative_to(repo).as_posix(): (p.is_symlink(), os.readlink(p) if p.is_symlink() else p.stat().st_mode)
            for p in repo.rglob("*")
            if ".git" not in p.parts
        }

    assert tree(remote) == tree(local) and tree(remote)["run.sh"][1] & 0o111
    assert tree(remote)["main-link.py"] == (True, "src/main.py") and "docs/TASK.md" in tree(remote)
    assert _gradings(remote.iteration) == _gradings(local.iteration)


def test_a_responder_eval_is_played_on_the_worker_as_here(dask_cluster, skill, tmp_path):
    suite = skill / "evals" / "evals.json"
    data = json.loads(suite.read_text())
    case = next(c for c in data["evals"] if c["id"] == "ambiguous-timeout-change")
    case.pop("turns")
    case["assertions"] = [a for a in case["assertions"] if a.get("check") != "assistant_message_matches"]
    case["responder"] = {"type": "llm", "max_turns": 3}
    data["evals"] = [case]
    suite.write_text(json.dumps(data, indent=2))
    local = _run(skill, tmp_path / "local", limits=Limits(runs=1))
    remote = _run(skill, tmp_path / "remote", dask_cluster.address, limits=Limits(runs=1))
    for outcome in (local, remote):
        [run] = outcome.iteration.glob("eval-*/with_skill/run-1")
        record = json.loads((run / "run.json").read_text())
        assert record["turns"] == 2 and record["responder_outcome"]["ending"] == "done"
        assert json.loads((run / "responder" / "turn-1" / "verdict.json").read_text())["verdict"] == "answer"
    assert _gradings(remote.iteration) == _gradings(local.iteration)
    assert _transcripts(remote.iteration) == _transcripts(local.iteration)


def test_a_second_run_on_the_cluster_resumes_and_reuses(dask_cluster, skill, tmp_path):
    _command_suite(skill)
    first = _run(skill, tmp_path / "ws", dask_cluster.address, agent=Agent("command", _agent("ok")))
    again = _run(skill, tmp_path / "ws", dask_cluster.address, agent=Agent("command", _agent("ok")))
    assert again.iteration == first.iteration
    assert {d.status for d in again.prepared.dispatches} == {"skipped"}  # nothing sent twice


def test_an_unreachable_scheduler_is_a_clear_error_and_exit_2(skill, tmp_path):
    address = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    result = CliRunner().invoke(
        cli,
        ["run", str(skill), "--cluster", address, "--workspace", str(tmp_path / "ws"), "--sandbox", "none", "--trust"],
    )
    assert result.exit_code == EXIT_USAGE, result.output
    assert f"--cluster {address}: the Dask scheduler cannot be reached" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "ws").exists()  # nothing was written
    bad = CliRunner().invoke(cli, ["run", str(skill), "--cluster", "localhost", "--sandbox", "none"])
    assert bad.exit_code == EXIT_USAGE and "expected a Dask scheduler address such as tcp://host:8786" in bad.output
    # evaluate and improve send their dispatches the same way
    said = CliRunner().invoke(cli, ["evaluate", str(skill), "v1", "--cluster", "localhost", "--sandbox", "none"])
    assert said.exit_code == EXIT_USAGE and "expected a Dask scheduler address" in said.output, said.output
    improve = ["improve", str(skill), "--proposer", "command", "--proposer-command", "true", "--cluster", address]
    said = CliRunner().invoke(cli, [*improve, "--sandbox", "none", "--trust"])
    assert said.exit_code == EXIT_USAGE, said.output
    assert f"--cluster {address}: the Dask scheduler cannot be reached" in said.output


def test_without_the_extra_the_cluster_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(cluster_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ClusterUnavailable, match=re.escape("pip install 'skill-workbench[cluster]'")):
        cluster_module.check_address("tcp://127.0.0.1:8786")


def test_the_config_names_the_cluster_and_a_wrong_type_says_where():
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"cluster": "tcp://10.0.0.5:8786"}\n')
    assert defaults(pipeline.RunRequest(Path("."))).placement.cluster == "tcp://10.0.0.5:8786"
    elsewhere = pipeline.RunRequest(Path("."), placement=Placement(cluster="tcp://other:1"))
    assert defaults(elsewhere).placement.cluster == "tcp://other:1"
    here = pipeline.RunRequest(Path("."), placement=Placement(cluster="local"))
    assert defaults(here).placement.cluster is None  # --cluster local: here
    (folder / "config.json").write_text('{"theme": "x",\n "cluster": "localhost:8786"}\n')
    with pytest.raises(Refused, match=re.escape(":2:13: 'localhost:8786': expected a Dask scheduler address")):
        defaults(pipeline.RunRequest(Path(".")))
    (folder / "config.json").write_text('{"theme": "x",\n "cluster": 8786}\n')
    with pytest.raises(ConfigProblem, match=re.escape(':2:13: "cluster" must be a string')):
        load_config()


def test_shipped_trees_never_become_paths_outside_their_folder(tmp_path):
    for relative in ("../out", "/etc/x", "a/../../out", ".git/config"):
        with pytest.raises(ValueError, match="cannot be written"):
            unpack({relative: ("file", 0o644, b"x")}, tmp_path / "data")
    with pytest.raises(ValueError, match="leads outside"):
        unpack({"link": ("link", 0, "/etc/passwd")}, tmp_path / "links")
    with pytest.raises(ValueError, match="cannot be written"):
        unpack({"../out": ("file", 0o644, b"x")}, tmp_path / "run", data=False)
    # A returned run folder keeps its repository's .git, and an agent's link inside it stays a link; one
    # leading out of the run folder is refused (tests/test_returned_trees.py: with a real worker).
    (tmp_path / "made" / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "made" / "repo" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "made" / "repo" / "head").symlink_to(".git/HEAD")
    unpack(pack(tmp_path / "made"), tmp_path / "back", data=False)
    assert (tmp_path / "back" / "repo" / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert os.readlink(tmp_path / "back" / "repo" / "head") == ".git/HEAD"
    (tmp_path / "made" / "repo" / "out").symlink_to("/etc/passwd")
    with pytest.raises(ValueError, match=re.escape("repo/out: a link that leads outside the run folder")):
        unpack(pack(tmp_path / "made"), tmp_path / "again", data=False)


@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_the_scheduler_going_away_stops_the_run_and_the_same_command_resumes(skill, tmp_path):
    if not DASK.exists():
        pytest.skip(f"the dask command is not at {DASK}")
    _command_suite(skill)
    command = _agent("slow")  # the same command after: the same plan, so the same iteration resumes
    own = LocalCluster(tmp_path)
    try:
        own.add_workers(1, AGENT_DELAY="1.5")  # slow on the worker, quick when resumed here
        killer = threading.Timer(1.0, lambda: os.killpg(own.scheduler.pid, signal.SIGKILL))
        killer.start()
        with pytest.raises(ClusterLost, match="run the same command again to resume"):
            _run(skill, tmp_path / "ws", own.address, agent=Agent("command", command), limits=Limits(jobs=2))
        killer.join()
    finally:
        own.stop()
    iteration = tmp_path / "ws" / "iteration-1"
    assert len(list(iteration.rglob("run.json"))) < 4  # what had not finished left no record
    again = _run(skill, tmp_path / "ws", agent=Agent("command", command))  # resumed, here
    assert again.iteration == iteration and len(list(iteration.rglob("run.json"))) == 4


@pytest.mark.slow  # a cluster of its own, a worker replaced mid-run
def test_a_run_whose_every_worker_is_replaced_sends_its_trees_again_and_finishes(skill, tmp_path):
    """The skill and fixture trees are scattered once per run to the workers there. Once every worker that
    held them is gone (an autoscaled cluster replaces its workers), the scheduler cancels each dispatch sent
    after, for "lost dependencies": the run sends its trees again and goes on, where it ended saying "the
    scheduler went away" (it had not)."""
    if not DASK.exists():
        pytest.skip(f"the dask command is not at {DASK}")
    _command_suite(skill, runs=2)
    local = _run(skill, tmp_path / "local", agent=Agent("command", _agent("ok")))
    logs = tmp_path / "logs"
    logs.mkdir()
    own = LocalCluster(logs)
    replaced: list[int] = []

    def replace_the_worker_after_the_first_dispatch() -> None:
        deadline = time.monotonic() + 60
        while not list((tmp_path / "remote").rglob("run.json")) and time.monotonic() < deadline:
            time.sleep(0.02)
        replaced.append(own.workers[0].pid)
        os.killpg(own.workers[0].pid, signal.SIGKILL)
        own.workers[0].wait(10)
        own.add_workers(1)

    try:
        own.add_workers(1)
        replacer = threading.Thread(target=replace_the_worker_after_the_first_dispatch)
        replacer.start()
        remote = _run(
            skill, tmp_path / "remote", own.address, agent=Agent("command", _agent("ok")), limits=Limits(jobs=1)
        )
        replacer.join()
    finally:
        own.stop()
    assert replaced, "the worker was not replaced"
    assert {d.status for d in remote.prepared.dispatches} == {DONE}
    assert _gradings(remote.iteration) == _gradings(local.iteration)


def test_cancelling_the_run_cancels_the_clusters_tasks_and_kills_their_agents(dask_cluster, skill, tmp_path):
    _command_suite(skill)
    child = tmp_path / "child.pid"
    request = pipeline.RunRequest(
        skill,
        agent=Agent("command", _agent("hang", AGENT_CHILD_PID=child)),
        limits=Limits(timeout=120),
        placement=Placement("none", cluster=dask_cluster.address, workspace=tmp_path / "ws"),
        baseline="none",
    )
    prepared = pipeline.prepare(request)
    prepared.trust()

    async def cancelled_midway() -> None:
        run = asyncio.ensure_future(pipeline.execute(prepared))
        deadline = time.monotonic() + 20
        while not child.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert child.exists(), "no agent started on the cluster"
        run.cancel()  # what Ctrl-C does to the command's event loop
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(cancelled_midway())
    pid = int(child.read_text())
    with distributed.Client(dask_cluster.address, timeout=START_TIMEOUT) as client:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and (_alive(pid) or any(client.processing().values())):
            time.sleep(0.1)
        assert not any(client.processing().values())  # nothing of the run is left on the cluster
    assert not _alive(pid)  # the worker killed the agent's whole tree
    assert list((tmp_path / "ws").rglob("run.json")) == []  # cancelled: nothing recorded, it resumes


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        # A zombie is dead, only not reaped yet; one reaped between the two looks is gone (ESRCH on the read:
        # a CI run's ProcessLookupError).
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def _agents_under(worker: int) -> list[str]:
    """The working folders of the test agent's processes that descend from the worker process."""
    parents: dict[int, int] = {}
    agents: list[int] = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
            line = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        if str(AGENT).encode() in line:
            agents.append(int(entry.name))
    found = []
    for agent in agents:
        pid = agent
        for _ in range(64):
            if pid == worker:
                try:
                    found.append(os.readlink(f"/proc/{agent}/cwd"))
                except OSError:
                    pass
                break
            if pid <= 1:
                break
            pid = parents.get(pid, 0)
    return found


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_a_worker_killed_mid_run_loses_nothing_and_runs_nothing_twice(dask_cluster, skill, tmp_path):
    _command_suite(skill)
    log = tmp_path / "agent.log"
    command = _agent("slow", AGENT_DELAY="0.5", AGENT_LOG=log)
    local = _run(skill, tmp_path / "local", agent=Agent("command", _agent("ok")))
    killed: list[subprocess.Popen] = []

    def kill_one_that_runs_a_dispatch() -> None:
        with distributed.Client(dask_cluster.address, timeout=START_TIMEOUT) as client:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                busy = [address for address, keys in client.processing().items() if keys]
                pids = client.run(os.getpid, workers=busy) if busy else {}
                # a worker whose agent has started and logged its first turn (a busy worker may still be
                # setting its dispatch up; an agent just started may not have logged yet)
                logged = log.read_text() if log.exists() else ""
                running = [pid for pid in pids.values() if any(f'"{cwd}"' in logged for cwd in _agents_under(pid))]
                if running:
                    killed.extend(w for w in dask_cluster.workers if w.pid == running[0])
                    os.killpg(running[0], signal.SIGKILL)  # mid-dispatch: its agent between its start and reply
                    return
                time.sleep(0.05)

    killer = threading.Thread(target=kill_one_that_runs_a_dispatch)
    killer.start()
    try:
        remote = _run(skill, tmp_path / "remote", dask_cluster.address, agent=Agent("command", command))
    finally:
        killer.join()
        dask_cluster.add_workers(1)  # the cluster stays two workers strong for whatever runs after
    assert len(killed) == 1 and killed[0].poll() is not None
    records = [json.loads(p.read_text()) for p in remote.iteration.rglob("run.json")]
    assert len(records) == 4 and {r["status"] for r in records} == {DONE}
    assert len({r["key"] for r in records}) == 4  # each dispatch recorded exactly once
    first_turns = [json.loads(line) for line in log.read_text().splitlines() if '"session": null' in line]
    assert len(first_turns) > 4  # some dispatch started twice: its worker died under it, it ran again elsewhere
    assert _gradings(remote.iteration) == _gradings(local.iteration)
    assert _pass_rates(remote.iteration) == _pass_rates(local.iteration)


def test_a_judge_sent_to_a_worker_carries_no_api_key(monkeypatch):
    import pickle

    from workbench.grading.judges.http import AnthropicJudge

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-of-the-submitting-machine")
    judge = AnthropicJudge("m", "http://127.0.0.1:1")
    judge.client()  # made here, with the key
    shipped = pickle.dumps(judge)
    assert b"sk-secret" not in shipped
    arrived = pickle.loads(shipped)
    assert arrived._client is None and arrived.model == "m" and arrived.base_url == "http://127.0.0.1:1"


def test_a_worker_that_cannot_sandbox_records_the_dispatch_failed_and_says_why(skill, monkeypatch):
    from workbench.runs import executors
    from workbench.runs.launch import prepare_launch
    from workbench.runs.runner import RunOptions, dispatch_key, run_task

    executor = executors.make("demo", None)
    options = RunOptions(sandbox="bwrap", only={"export-json-flag"}, baseline="none")
    [dispatch] = prepare_launch(skill, executor, options).dispatches
    dispatch.key = dispatch_key(dispatch, executor)
    task = cluster_module.task_of(dispatch, executor, options, "changelog-entry", None)
    monkeypatch.setattr(cluster_module.sandbox, "unavailable", lambda: "bubblewrap (bwrap) is not installed")
    reply = run_task(task)  # what the worker runs, here in-process
    assert reply["result"]["status"] == "failed" and reply["files"] == {}
    assert "the worker cannot sandbox: bubblewrap (bwrap) is not installed" in reply["result"]["error"]
    assert "--sandbox none" in reply["result"]["error"]


def test_a_trigger_evaluation_on_the_cluster_gives_the_local_results(dask_cluster, tmp_path):
    """The early stop travels with the dispatch: a worker stops the agent once triggering is decided."""
    from test_triggers import QUERIES, agent_args, skill_with

    skill = skill_with(tmp_path, QUERIES)
    results = {}
    for where, extra in (("local", []), ("cluster", ["--cluster", dask_cluster.address])):
        done = CliRunner().invoke(
            cli,
            [
                "trigger",
                str(skill),
                *agent_args("--runs", "1", "--sandbox", "none", "--format", "json", "--fresh"),
                "--workspace",
                str(tmp_path / where),
                *extra,
            ],
        )
        assert done.exit_code == 1, done.output  # one miss, one false trigger
        data = json.loads(done.stdout)
        results[where] = [(q["query"], q["triggered"], q["runs"]) for q in data["queries"]]
        record = Path(data["iteration"]) / "eval-1" / "with_skill" / "run-1" / "run.json"
        assert json.loads(record.read_text())["stop_reason"] == "triggering decided"
    assert results["local"] == results["cluster"]


def test_a_returned_tree_never_writes_through_one_of_its_own_links(tmp_path):
    """Found by an attacker: a link, then an entry under it, wrote outside the run folder."""
    from workbench.runs import shipped

    outside = tmp_path / "outside"
    outside.mkdir()
    for tree in (
        {"a": ("link", 0, str(outside)), "a/b": ("link", 0, "target")},
        {"a": ("link", 0, "."), "a/b": ("link", 0, "../outside")},
        {"a": ("link", 0, str(outside)), "a/f": ("file", 0o644, b"x")},
    ):
        with pytest.raises(ValueError, match="under the link"):
            shipped.place_run(tree, tmp_path / "dest")
    assert list(outside.iterdir()) == []
    with pytest.raises(ValueError, match="root cannot be a link"):
        shipped.place_run({".": ("link", 0, ".")}, tmp_path / "dest2")


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:99999999", "tcp://127.0.0.1:0", "tcp://h:\u00b2"])
def test_a_port_out_of_range_is_refused_clearly(address):
    from workbench.runs import cluster

    assert cluster.address_problem(address) is not None


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_each_skill_and_fixture_tree_is_read_and_sent_once_per_run_not_once_per_dispatch(
    dask_cluster, skill, tmp_path, monkeypatch
):
    """3 runs of 2 evals, with and without the skill: 12 dispatches, one skill and one fixture between
    them. Each tree is packed here once and reaches the workers once per run (the dispatches name it by
    its digest); the iteration grades as the local run."""
    _command_suite(skill, runs=3)
    packed: list[str] = []
    honest = cluster_module.pack

    def counting(path: Path, limit: int | None = None):
        packed.append(path.name)
        return honest(path, limit)

    monkeypatch.setattr(cluster_module, "pack", counting)
    sent: list[int] = []
    submit = distributed.Client.submit

    def measured(self, function, *args, **kwargs):
        import pickle

        sent.append(len(pickle.dumps(args[0])))  # the task, as it travels
        return submit(self, function, *args, **kwargs)

    monkeypatch.setattr(distributed.Client, "submit", measured)
    command = _agent("ok")
    local = _run(skill, tmp_path / "local", agent=Agent("command", command))
    remote = _run(skill, tmp_path / "remote", dask_cluster.address, agent=Agent("command", command))
    assert {d.status for d in remote.prepared.dispatches} == {DONE} and len(remote.prepared.dispatches) == 12
    assert sorted(packed) == ["CHANGELOG.md", "changelog-entry"], packed  # the fixture, the staged skill
    assert len(sent) == 12 and max(sent) < 2 * min(sent), sent  # no dispatch carries a tree's bytes
    assert _gradings(remote.iteration) == _gradings(local.iteration)


def test_a_tree_is_shelved_once_by_its_digest_and_a_refused_one_leaves_nothing(tmp_path):
    source = tmp_path / "fixture"
    (source / "sub").mkdir(parents=True)
    (source / "sub" / "a.txt").write_text("a\n")
    tree = pack(source)
    name = cluster_module.digest(tree)
    assert name == cluster_module.digest(dict(reversed(list(tree.items()))))  # the content names it, not the order
    assert name != cluster_module.digest({**tree, "sub/a.txt": ("file", 0o644, b"b\n")})
    shelf = tmp_path / "shelf"
    first = cluster_module.shelved(shelf, name, tree)
    assert (first / "sub" / "a.txt").read_text() == "a\n"
    (first / "sub" / "a.txt").write_text("changed\n")  # a second dispatch does not write it again
    assert cluster_module.shelved(shelf, name, tree) == first and (first / "sub" / "a.txt").read_text() == "changed\n"
    assert sorted(p.name for p in shelf.iterdir()) == [name]  # nothing left beside it
    hostile = {**tree, "out": ("link", 0, "/etc/passwd")}
    with pytest.raises(ValueError, match="leads outside"):
        cluster_module.shelved(shelf, cluster_module.digest(hostile), hostile)
    with pytest.raises(ValueError, match="digest"):
        cluster_module.shelved(shelf, "../escape", tree)
    assert sorted(p.name for p in shelf.iterdir()) == [name]


def test_a_dispatchs_private_folder_is_removed_after_its_reply(tmp_path):
    folders = [tmp_path / f"private-{n}" for n in range(3)]
    for folder in folders:
        (folder / "run" / "repo" / ".git").mkdir(parents=True)
        (folder / "run" / "repo" / ".git" / "HEAD").write_text("ref: refs/heads/master\n")
        cluster_module.discard_later(folder)
    deadline = time.monotonic() + 20
    while any(folder.exists() for folder in folders) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(folder.exists() for folder in folders)


def test_a_dispatch_sends_a_sign_of_progress_at_most_once_a_second_not_at_each_move(
    dask_cluster, skill, tmp_path, monkeypatch
):
    """Each sign goes worker -> scheduler -> this process: a quick dispatch of two turns used to send four
    (started, turn 1, turn 2, sending back). A sign sooner than SIGNS_APART after the last one sent, with
    the same allowance, is left out: the deadline it would move is at most that much earlier."""
    _command_suite(skill, runs=2)
    heard: dict[str, list[float]] = {}
    honest = cluster_module.Cluster._heard

    def counting(self, event):
        message = event[1] if isinstance(event, tuple | list) and len(event) == 2 else {}
        heard.setdefault(str(message.get("key")), []).append(time.monotonic())
        return honest(self, event)

    monkeypatch.setattr(cluster_module.Cluster, "_heard", counting)
    ended: dict[str, float] = {}
    execute = cluster_module.Cluster.execute

    async def timed(self, dispatch, task, work, freed=None):
        try:
            return await execute(self, dispatch, task, work, freed)
        finally:
            ended[dispatch.key] = time.monotonic()

    monkeypatch.setattr(cluster_module.Cluster, "execute", timed)
    remote = _run(skill, tmp_path / "remote", dask_cluster.address, agent=Agent("command", _agent("ok")))
    assert {d.status for d in remote.prepared.dispatches} == {DONE} and len(remote.prepared.dispatches) == 8
    assert len(heard) == 8, heard
    for key, times in heard.items():
        end = next(at for named, at in ended.items() if key.startswith(f"workbench-dispatch-{named[:16]}"))
        allowed = 1 + int((end - times[0]) / cluster_module.SIGNS_APART)
        assert 1 <= len(times) <= allowed, (key, len(times), end - times[0])


def test_a_returned_run_folder_is_written_with_one_call_per_entry_not_several(tmp_path, monkeypatch):
    """The run folder a worker sent back is written on the submitting machine for every dispatch: each file
    made its parent folders again and was changed mode by path (370 system calls for the demo's 63 entries,
    70 of them failing). Now each folder is made once and each file's mode set on its open descriptor:
    the calls that name a path are about one per entry (235 in all)."""
    run = tmp_path / "run"
    (run / "repo" / ".git" / "objects" / "ab").mkdir(parents=True)
    for number in range(20):
        (run / "repo" / f"file-{number}.txt").write_text(f"{number}\n")
        (run / "repo" / ".git" / "objects" / "ab" / f"{number:038d}").write_bytes(b"x" * number)
    (run / "repo" / "tool.sh").write_text("#!/bin/sh\n")
    os.chmod(run / "repo" / "tool.sh", 0o750)
    os.symlink("file-1.txt", run / "repo" / "link")
    tree = pack(run)
    calls: list[str] = []
    for name in ("mkdir", "chmod", "open", "stat", "lstat"):
        honest = getattr(os, name)
        monkeypatch.setattr(os, name, lambda *a, _n=name, _h=honest, **k: calls.append(_n) or _h(*a, **k))
    placed = tmp_path / "iteration" / "run-1"
    cluster_module.place_run(tree, placed)
    monkeypatch.undo()
    assert pack(placed) == tree  # the same files, modes and links
    assert calls.count("mkdir") <= sum(kind == "folder" for kind, _mode, _content in tree.values()) + 4, calls
    assert calls.count("chmod") <= sum(kind == "folder" for kind, _mode, _content in tree.values()), calls
    assert len(calls) <= 2 * len(tree) + 40, (len(calls), len(tree))


def test_once_the_cluster_is_reached_a_full_collection_no_longer_walks_distributeds_objects(dask_cluster):
    # distributed builds ~50,000 objects that live as long as the process: every full collection of the run
    # walked them, and so did the interpreter's teardown at exit (~0.2 s of CPU a process).
    code = (
        "import asyncio, gc, sys\n"
        "from workbench.runs import cluster\n"
        f"asyncio.run(cluster.probe({dask_cluster.address!r}))\n"
        "print(len(gc.get_objects()), sum(1 for m in sys.modules if m.startswith('distributed')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=120)
    walked, loaded = map(int, done.stdout.split())
    assert loaded > 50  # distributed is loaded...
    assert walked < 5_000, f"a full collection walks {walked} objects"  # ...and left out of the collector's walk


def test_a_worker_thread_runs_its_dispatches_on_one_event_loop_starting_no_thread_of_its_own(skill, monkeypatch):
    """A worker ran each dispatch in a new event loop: a thread to watch for its cancellation, a pool for
    its turns and the loop's own pool for its file work, all started again for every dispatch. One loop and
    one turn pool now serve every dispatch of a worker's thread: past the first dispatch, the wrapper starts
    no thread beyond those the conversation itself starts when run locally."""
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from workbench.runs import executors
    from workbench.runs.launch import prepare_launch
    from workbench.runs.runner import Runner, RunOptions, dispatch_key, run_task

    _command_suite(skill, runs=4)
    executor = executors.make("command", _agent("ok"))
    options = RunOptions(sandbox="none", baseline="none")
    launch = prepare_launch(skill, executor, options)
    dispatches = launch.dispatches
    for dispatch in dispatches:
        dispatch.key = dispatch_key(dispatch, executor)
    started: list[str] = []
    honest = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name) or honest(self))

    def counted(run) -> int:
        before = len(started)
        run()
        return len(started) - before

    local = Runner(executor, launch.workspace, "changelog-entry", options)
    local.pool = ThreadPoolExecutor(1)
    loop = asyncio.new_event_loop()
    try:
        counted(lambda: loop.run_until_complete(local.execute(dispatches[0])))
        here = [counted(lambda d=d: loop.run_until_complete(local.execute(d))) for d in dispatches[1:3]]
    finally:
        loop.close()
        local.pool.shutdown()
    tasks = [cluster_module.task_of(d, executor, options, "changelog-entry", None) for d in dispatches[3:]]
    for task in tasks[:2]:  # the first ones: the thread's loop and pools begin, and grow to what is used
        assert run_task(task)["result"]["status"] == DONE
    there = [counted(lambda t=t: run_task(t)) for t in tasks[2:6]]
    assert len(there) == 3 and max(there) <= max(here), (here, there, started[-12:])


def test_a_slot_is_free_for_the_next_dispatch_once_its_worker_has_finished(dask_cluster, skill, tmp_path, monkeypatch):
    """-j counts the dispatches on the cluster's workers: once a worker has finished one, the next is sent while
    this machine fetches the reply, writes its run folder and grades it (the slot was held through all of
    that, the worker thread idle). With -j 1 a dispatch is sent while the one before it is being written."""
    _command_suite(skill)
    events: list[str] = []
    submit = distributed.Client.submit

    def counted(self, function, *args, **kwargs):
        events.append("sent")
        return submit(self, function, *args, **kwargs)

    monkeypatch.setattr(distributed.Client, "submit", counted)
    placed = cluster_module.Cluster._placed

    async def slowly(self, reply, folder):
        events.append("writing")
        await asyncio.sleep(1.0)  # a slow disk here: the worker does not wait for it
        try:
            return await placed(self, reply, folder)
        finally:
            events.append("written")

    monkeypatch.setattr(cluster_module.Cluster, "_placed", slowly)
    command = _agent("ok")
    local = _run(skill, tmp_path / "local", agent=Agent("command", command), limits=Limits(jobs=1))
    remote = _run(
        skill, tmp_path / "remote", dask_cluster.address, agent=Agent("command", command), limits=Limits(jobs=1)
    )
    assert {d.status for d in remote.prepared.dispatches} == {DONE} and len(remote.prepared.dispatches) == 4
    assert events.count("sent") == 4 and events.count("written") == 4, events
    first = events.index("writing")
    assert "sent" in events[first : events.index("written")], events  # the next went while this was written
    assert _gradings(remote.iteration) == _gradings(local.iteration)
