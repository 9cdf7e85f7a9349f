from __future__ import annotations

import compileall
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import fake_agent as fake
from support.cli import workbench

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
SEEDS = SHARED / "seeds"
DEMO = REPO / "demo" / "changelog-entry"
MISTAKES = REPO / "demo" / "mistakes" / "changelog-entry"
DRAFT = DEMO.parent / "draft" / "changelog-entry" / "SKILL.md"  # the demo skill before three of its steps were right

# The test modules' bytecode kept, as Python keeps any module's: pytest rewrites each test module's
# asserts when it imports it, and these machines set PYTHONDONTWRITEBYTECODE, so every worker of every
# run parsed and rewrote all of them again (~10 s of CPU a worker of the 2 cores' time). Written to
# tests/__pycache__ (ignored by git), checked against each source's time and size before use; only in
# the test processes: the workbench processes they start keep the environment's setting.
sys.dont_write_bytecode = False

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"the seeds are not at {SEEDS}")


# The test environment's `python3` is the project's own interpreter, as in an activated virtualenv: the
# demo suite's script assertions run `python3 checks/...` some thousands of times a run, and where
# `python3` is a version manager's shim (pyenv's here: a bash script that starts a dozen processes to
# choose a version), each cost ~130 ms of CPU before the check began, minutes of the suite's two cores.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def pytest_configure(config: pytest.Config) -> None:
    """The workbench's modules compiled once, before any test (and before the workers start), as pip
    compiles an installed package: these machines set PYTHONDONTWRITEBYTECODE, so each of the
    hundreds of `python -m workbench` processes the tests start (and each demo agent's) compiled
    them from source again, ~0.2 s of CPU each. Written beside the sources (__pycache__, ignored by
    git and by the package); Python checks each against its source's time and size before using it."""
    if not hasattr(config, "workerinput"):  # the workers see what the first process wrote
        compileall.compile_dir(str(REPO / "workbench"), quiet=1)


NUMBERED = re.compile(r"pytest-([0-9]+)")  # a session's folder, as pytest numbers them


def pytest_unconfigure(config: pytest.Config) -> None:
    """The earlier sessions' temporary folders that pytest removes as it exits (all but the newest
    tmp_path_retention_count) are moved aside at once and removed by a process of their own, at the lowest
    priority, after this one has exited. pytest removed them itself, after printing its verdict: the 130,000
    files of a --quick session took ~30 s of the command's time, a quarter of it, with nothing left to
    say. A folder with pytest's lock (a session still running, or killed) is left to pytest."""
    factory = getattr(config, "_tmp_path_factory", None)  # as pytest-xdist reads the basetemp
    # A session that made no temporary folder (--help, a collection error, no test asking for one) removes
    # nothing, as with pytest: asking for its folder here would make one, and fail where pytest would not.
    current = getattr(factory, "_basetemp", None)
    if hasattr(config, "workerinput") or current is None or config.option.basetemp:
        return
    try:
        _remove_aside(current.parent, current, int(config.getini("tmp_path_retention_count")))
    except OSError:
        pass  # what was not moved, pytest removes as before


def _remove_aside(root: Path, current: Path, keep: int) -> None:
    found = ((NUMBERED.fullmatch(p.name), p) for p in root.glob("pytest-*") if not p.is_symlink())
    numbered = {int(match[1]): p for match, p in found if match}
    newest = max(numbered, default=-1)
    old = [p for n, p in numbered.items() if n <= newest - keep and p != current]
    left = [*root.glob("garbage-*"), *root.glob("removing-*")]  # pytest's, and ours a killed removal left
    old = [p for p in [*old, *left] if p.is_dir() and not (p / ".lock").exists()]
    if not old:
        return
    aside = root / f"removing-{uuid.uuid4().hex}"  # in pytest's own folder (the user's, 0700); not a name it removes
    try:
        aside.mkdir(mode=0o700)
        for path in old:
            path.rename(aside / path.name)  # the same filesystem: at once
    except OSError:
        pass  # what was not moved, pytest removes as before
    lowest = ["nice", "-n", "19", *(["ionice", "-c", "3"] if shutil.which("ionice") else [])]
    subprocess.Popen(
        [*lowest, "rm", "-rf", "--", str(aside)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip


def _one_file(config: pytest.Config) -> bool:
    """The paths asked for (no path: the testpaths) name tests of one file at most."""
    files: set[Path] = set()
    for arg in config.args or [str(REPO / "tests")]:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0])
        if path.is_dir():
            files.update(path.rglob("test_*.py"))
        else:
            files.add(path)
        if len(files) > 1:
            return False
    return True


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many workers `-n auto` (the default, pyproject.toml's addopts) starts: none for
    one file (a worker's start-up costs more than it saves there), else one a core and one
    more: most tests wait on a subprocess (an agent, git, the app in tmux) part of their time."""
    if _one_file(config):
        return 0
    cores = len(os.sched_getaffinity(0))
    return cores + 1 if cores > 1 else 0


# The groups that take longest, longest first (from a whole run's --durations, 2 cores): the workers
# take groups in the order they come (addopts' --no-loadscope-reorder), so these start first and no
# worker starts one of them while the others run out of work. Every other group follows, in file order.
# xdist's own order (most tests first) started test_kills.py (19 tests) after 18 minutes of a 33-minute run.
LONGEST_FIRST = (
    # Round 6, a whole run (--durations=0, summed by group) at load 6-10 of others' work: 22 min 17 s.
    "terminal",  # 494 s of one worker (753 s or more before this round's changes, at load 5-16)
    "tests/test_kills.py",  # 226 s
    "tests/tui/test_key_order.py",  # 207 s
    "tests/tui/test_results_screen.py",  # 195 s
    "tests/tui/test_runs_screen.py",  # 146 s
    "tests/tui/test_first_hour.py",  # 128 s
    "tests/tui/test_keys_and_focus.py",  # 126 s
    "tests/tui/test_saving.py",  # 123 s
    "tests/tui/test_field_kinds.py",  # 119 s
    "tests/tui/test_screens_fit.py",  # 99 s
    "tests/tui/test_snapshots.py",  # 99 s
    "tests/tui/test_corpus_opens.py",  # 93 s
    "tests/test_verdict_attacks.py",  # 90 s
    "tests/tui/test_history_screen.py",  # 83 s
    "tests/tui/test_flows.py",  # 77 s
    "tests/test_bad_state.py",  # 75 s (223 s or more before its small iteration)
)


# Files of tests/terminal whose tests are not timed: they wait on what the screen shows with no mark to
# make (a signal's rescue, a closed terminal's process), so they run beside the others in a group of
# their own, not on the one worker that types at the timed apps one at a time.
UNTIMED_TERMINAL = frozenset({"test_signals.py"})


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The workers' groups (addopts' --dist loadgroup): a file's tests stay together on one worker
    (its module fixtures are made once; the tests that look for their own processes among the
    machine's never see a sibling test's), and so do all of tests/terminal but UNTIMED_TERMINAL: the
    real app typed at in tmux is timed, and two of them typed at at once on two cores miss their marks. The longest
    groups come first (LONGEST_FIRST)."""
    terminal = REPO / "tests" / "terminal"
    groups: dict[pytest.Item, str] = {}
    for item in items:
        if terminal in item.path.parents:  # the real app in tmux, typed at as a person types: seconds each
            item.add_marker(pytest.mark.terminal)
            item.add_marker(pytest.mark.slow)
        marker = item.get_closest_marker("xdist_group")
        if marker is None:
            where = item.path
            timed = terminal in where.parents and where.name not in UNTIMED_TERMINAL
            group = "terminal" if timed else str(where.relative_to(REPO))
            item.add_marker(pytest.mark.xdist_group(group))
        else:
            group = marker.args[0] if marker.args else marker.kwargs.get("name", "")
        groups[item] = group
    rank = {group: place for place, group in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(groups[item], len(rank)))  # stable: each group keeps its order


@pytest.fixture(autouse=True)
def private_config(tmp_path, monkeypatch):
    """Every test gets its own config folder: theme choices and trust never leak
    between tests, or into the user's own config."""
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def fake_agent() -> Iterator[str]:
    """The in-process fake agent's executor name, registered for this test only (tests/support/fake_agent.py)."""
    with fake.registered() as name:
        yield name


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    """A private copy of the demo skill, safe to edit."""
    target = tmp_path / "changelog-entry"
    shutil.copytree(DEMO, target)
    return target


def copy_prepared(prepared: Path, target: Path) -> None:
    """A prepared tree (a skill and its workspace, made once by a module-scoped fixture)
    copied into target as if it had been made there: the absolute paths its files record
    (plan.json, transcripts, gradings) are rewritten to the copy's; the files' modification
    times are kept and their change times come in the order they were made (what is up
    to date against what, e.g. benchmark.json against the gradings, stays as it was)."""
    shutil.copytree(prepared, target, symlinks=True, dirs_exist_ok=True)
    old, new = str(prepared).encode(), str(target).encode()
    made = sorted(
        (source.stat().st_ctime_ns, source)
        for source in prepared.rglob("*")
        if source.is_file() and not source.is_symlink()
    )
    for _, source in made:
        path = target / source.relative_to(prepared)
        data = path.read_bytes()
        if old in data:
            path.write_bytes(data.replace(old, new))
        times = source.stat()
        os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))  # its change time: now, after those made before


@pytest.fixture(scope="session")
def weak_v0_made(tmp_path_factory) -> Path:
    """The demo skill with its first draft's SKILL.md, v0 made and evaluated (demo agent
    and judge, its commands trusted in a config folder of its own), once a session. The command line runs
    in this process (support.cli) in all three of these: what the tests read is the files it writes."""
    base = tmp_path_factory.mktemp("weak-v0")
    skill = base / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    shutil.copy(DRAFT, skill / "SKILL.md")
    env = {**os.environ, "WORKBENCH_CONFIG_DIR": str(base / "config")}
    for args in (("version", "new", str(skill)), ("evaluate", str(skill), "v0", "--trust")):
        done = workbench(*args, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    return base


@pytest.fixture
def weak_v0(weak_v0_made, tmp_path) -> Path:
    """A private copy of weak_v0_made: the skill at tmp_path/skills/changelog-entry, its workspace
    beside the skills folder, and the test's own config folder trusting what the evaluation trusted."""
    copy_prepared(weak_v0_made, tmp_path)
    return tmp_path / "skills" / "changelog-entry"


@pytest.fixture(scope="session")
def worse_v1_made(weak_v0_made, tmp_path_factory) -> Path:
    """weak_v0_made, then v1 from v0 with no steps at all (18% against v0's 23%: a tie), evaluated: a
    version below the best that did not win, once a session."""
    base = tmp_path_factory.mktemp("worse-v1")
    copy_prepared(weak_v0_made, base)
    skill = base / "skills" / "changelog-entry"
    text = (skill / "SKILL.md").read_text()
    front = text[: text.index("# Changelog entry")]
    (skill / "SKILL.md").write_text(front + "# Changelog entry\n\nAdd the line the user asks for to the changelog.\n")
    env = {**os.environ, "WORKBENCH_CONFIG_DIR": str(base / "config")}
    for args in (("version", "new", str(skill)), ("evaluate", str(skill), "v1", "--trust")):
        done = workbench(*args, env=env)
        assert done.returncode in (0, 1), done.stdout + done.stderr  # v1 lost or tied
    return base


@pytest.fixture
def worse_v1(worse_v1_made, tmp_path) -> Path:
    """A private copy of worse_v1_made (as weak_v0 is of weak_v0_made): the skill's folder holds v1."""
    copy_prepared(worse_v1_made, tmp_path)
    return tmp_path / "skills" / "changelog-entry"


@pytest.fixture(scope="session")
def demo_run_made(tmp_path_factory) -> Path:
    """One `workbench run` of the demo (offline demo agent and judge, no sandbox, trusted), once a
    session: its iteration-1. Tests only read it, or copy it to change it."""
    base = tmp_path_factory.mktemp("demo-run")
    skill = base / "changelog-entry"
    shutil.copytree(DEMO, skill)
    env = {**os.environ, "PYTHONPATH": str(REPO), "WORKBENCH_CONFIG_DIR": str(base / "config")}
    done = workbench("run", skill, "--sandbox", "none", "--trust", cwd=base, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return base / "changelog-entry-workspace" / "iteration-1"
