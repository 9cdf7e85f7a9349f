"""Issue 24's verdict and promotion holes, found by attacking its promises as a hostile agent and a hostile
skill folder would (the first test of each class is the attacker's own, from their notes), and the other
members of each class:

- what decides a trusted check's verdict is trusted: nothing the agent wrote is loaded or run in place of
  what the suite ships: a module, a bytecode cache, a sourced file or node_modules in the folder of a
  trusted script, at the top of the repository too;
- `promote --write` never obeys or waits on the skill folder's own git files: a FIFO, a device or a huge
  file anywhere git or the workbench would read in that repository is refused, naming it (exit 2)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from attack_runs import records, run_agent, workbench
from conftest import DEMO

from workbench.grading import command_check
from workbench.runs import sandbox

needs_bwrap = pytest.mark.skipif(bool(sandbox.unavailable()), reason=f"no sandbox here: {sandbox.unavailable()}")
SANDBOXES = [pytest.param("bwrap", marks=needs_bwrap), "none"]
RESULT = """echo '{"type":"result","result":"ok","session_id":"s","usage":{"input_tokens":1}}'"""
QUIET = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]


# --- verdicts: what decides a command_check ---------------------------------------------------------------

FORGER = (
    """
mkdir -p checks
# beside the trusted checks/check_changelog.py: `python3 checks/...` puts checks/ first on sys.path
printf 'print("ok: forged by the agent")\\nraise SystemExit(0)\\n' > checks/subprocess.py
cp checks/subprocess.py checks/re.py
"""
    + RESULT
)


@pytest.mark.parametrize("mode", SANDBOXES)
def test_a_module_the_agent_plants_beside_a_check_never_decides_its_verdict(tmp_path, mode):
    """verdicts: the agent writes no changelog entry, only checks/re.py and checks/subprocess.py, modules
    the trusted check imports; the setup file is copied in beside them and Python imports the agent's first,
    so the check prints the agent's "ok:" and its failed expectation passes."""
    run_agent(tmp_path, FORGER, mode)
    grading = records(tmp_path, "grading.json")["with_skill"]
    [check] = [e for e in grading["expectations"] if e["id"] == "entry-under-unreleased-added"]
    assert "forged by the agent" not in check["evidence"] and not check["passed"], check["evidence"][:300]


def _python_tag() -> str:
    """The bytecode cache tag of the python3 a check runs (the system's, inside the sandbox as outside)."""
    return subprocess.run(
        ["python3", "-c", "import sys; print(sys.implementation.cache_tag)"], capture_output=True, text=True
    ).stdout.strip()


def _plant_bytecode(folder: Path, module: str = "helper") -> None:
    """A bytecode cache of `module` the agent compiled from its own source, unchecked (Python never compares
    it with the source): beside a shipped helper, Python loads it in place of the helper."""
    folder.mkdir(parents=True, exist_ok=True)
    forged = folder / "forged.py"
    forged.write_text('def verdict():\n    return "ok: forged by the agent"\n')
    cache = folder / "__pycache__" / f"{module}.{_python_tag()}.pyc"
    cache.parent.mkdir(parents=True, exist_ok=True)
    compile_it = "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True, "
    compile_it += "invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)"
    subprocess.run(["python3", "-c", compile_it, str(forged), str(cache)], check=True)
    forged.unlink()


FAILING_PY = 'import statistics\nprint("fail: no entry")\nraise SystemExit(1)\n'
FORGED_MODULE = 'print("ok: forged by the agent")\nraise SystemExit(0)\n'
# member -> (the suite's files under evals/, setup_files, command, what the agent leaves in its repository)
MEMBERS = {
    "a module at the top of the repository": (
        {"check.py": FAILING_PY}, ["check.py"], "python3 check.py", {"statistics.py": FORGED_MODULE}
    ),
    "a bytecode cache of a shipped module": (
        {
            "checks/check.py": "import helper\nprint(helper.verdict())\n",
            "checks/helper.py": 'def verdict():\n    return "fail: no entry"\n',
        },
        ["checks/check.py", "checks/helper.py"],
        "python3 checks/check.py",
        _plant_bytecode,
    ),
    "a sourced file beside a shell check": (
        {"checks/run.sh": 'here=$(dirname "$0")\n[ -f "$here/local.sh" ] && . "$here/local.sh"\necho "fail: no entry"\n'
         "exit 1\n"},
        ["checks/run.sh"],
        "bash checks/run.sh",
        {"checks/local.sh": 'echo "ok: forged by the agent"; exit 0\n'},
    ),
    "node_modules beside a .js check": (
        {"checks/check.js": "let v = 'fail: no entry';\ntry { v = require('verdict')(); } catch (e) {}\n"
         "console.log(v); process.exit(v.startsWith('ok') ? 0 : 1);\n"},
        ["checks/check.js"],
        "node checks/check.js",
        {"checks/node_modules/verdict/index.js": "module.exports = () => 'ok: forged by the agent';\n"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("mode", SANDBOXES)
@pytest.mark.parametrize("member", list(MEMBERS))
def test_nothing_the_agent_leaves_beside_a_trusted_check_decides_its_verdict(tmp_path, member, mode):
    """verdicts, the class: what a trusted script loads from its own folder (a Python module or its bytecode
    cache, a file it sources, node_modules) is the suite's, wherever the script lies in the repository."""
    if member.startswith("node") and not shutil.which("node"):
        pytest.skip("no node here")
    shipped, setup, command, left = MEMBERS[member]
    evals = tmp_path / "evals"
    for name, text in shipped.items():
        (evals / name).parent.mkdir(parents=True, exist_ok=True)
        (evals / name).write_text(text)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "CHANGELOG.md").write_text("# Changelog\n")
    if callable(left):
        left(repo / "checks")
    else:
        for name, text in left.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
    assertion = {"type": "command_check", "setup_files": setup, "command": command, "expect_stdout": "^ok: "}
    verdict = command_check.grade(assertion, repo, evals, sandboxed=mode == "bwrap")
    assert "forged by the agent" not in verdict.evidence and not verdict.passed, verdict.evidence
    assert "fail: no entry" in verdict.evidence, verdict.evidence  # the suite's own script ran, and said so


# --- verdicts: what a check reads as the baseline ----------------------------------------------------------

AS_AGENT = "git -c user.name=agent -c user.email=agent@example.com"
RELEASED_EDIT = "sed -i 's/ISO 8601/RFC 2822/' CHANGELOG.md"  # a released section changed: the check must fail
ENTRY = "sed -i 's/^### Fixed$/### Added\\n\\n- Export can write JSON.\\n\\n### Fixed/' CHANGELOG.md"
# how the agent makes the baseline hold its released-section edit -> its script (before the new entry)
BASELINE_REWRITES = {
    "commits its change": f"{RELEASED_EDIT}\n{AS_AGENT} commit -qam mine",
    "moves HEAD": f"{RELEASED_EDIT}\ngit add CHANGELOG.md\n"
    f"{AS_AGENT} commit-tree $(git write-tree) -m mine > .new-head\ncp .new-head .git/HEAD && rm .new-head",
    "rewrites the baseline's blob": f"""old=$(git rev-parse HEAD:CHANGELOG.md)
{RELEASED_EDIT}
python3 -c "import sys, zlib; d = open('CHANGELOG.md', 'rb').read(); \\
sys.stdout.buffer.write(zlib.compress(b'blob %d\\0' % len(d) + d))" > .blob
object=.git/objects/${{old:0:2}}/${{old:2}}
chmod u+w "$object" && cp .blob "$object" && rm .blob""",
}


@pytest.mark.parametrize("mode", SANDBOXES)
@pytest.mark.parametrize("rewrite", list(BASELINE_REWRITES))
def test_a_check_reads_the_baseline_the_workbench_made_not_the_one_the_agent_rewrote(tmp_path, rewrite, mode):
    """verdicts, what a check reads as the baseline: the demo's check compares CHANGELOG.md with
    `git show HEAD:CHANGELOG.md`. The agent edits a released section (the check must fail), and makes the
    repository's baseline hold that edit: it commits it, points HEAD at a commit of its own, or overwrites
    the baseline commit's blob of CHANGELOG.md; then it adds its entry. The check's git read the agent's
    .git, so every cell said ok."""
    body = f"{BASELINE_REWRITES[rewrite]}\n{ENTRY}\n{RESULT}"
    done = run_agent(tmp_path, body, mode)
    grading = records(tmp_path, "grading.json")["with_skill"]
    [check] = [e for e in grading["expectations"] if e["id"] == "entry-under-unreleased-added"]
    evidence = check["evidence"]
    assert "[CHECK=entry] exit 0" in evidence, (evidence[:600], done.stderr[-2000:])  # the entry is new
    assert "fail: a released section changed" in evidence and not check["passed"], evidence[:600]


# the agent's own .git/config (and attributes) that would make `git diff HEAD -- cli.py` say nothing
HOSTILE_CONFIGS = {
    "an external diff driver": "git config diff.external true",
    "a clean filter": "cp cli.py .kept-cli.py\necho 'cli.py filter=same' > .gitattributes\n"
    "git config filter.same.clean 'cat .kept-cli.py'",
}


@pytest.mark.parametrize("mode", SANDBOXES)
@pytest.mark.parametrize("config", list(HOSTILE_CONFIGS))
def test_a_checks_git_never_obeys_the_agents_git_config(tmp_path, config, mode):
    """verdicts, the same class: a suite's check `git diff HEAD -- cli.py` says the agent left cli.py alone.
    The agent changes cli.py and configures its repository so that git shows no difference (an external
    diff driver that prints nothing, a clean filter that hands back the original). (An alias or a pager is no
    member: git lets no alias stand for its own commands, and pages only to a terminal.)"""
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    suite = json.loads((skill / "evals" / "evals.json").read_text())
    [case] = [c for c in suite["evals"] if c["id"] == "export-json-flag"]
    case["assertions"].append(
        {"id": "cli-untouched", "type": "command_check", "command": 'test -z "$(git diff HEAD -- cli.py)"'}
    )
    (skill / "evals" / "evals.json").write_text(json.dumps(suite, indent=2))
    body = f"{HOSTILE_CONFIGS[config]}\necho '# changed by the agent' >> cli.py\n{ENTRY}\n{RESULT}"
    done = run_agent(tmp_path, body, mode)
    grading = records(tmp_path, "grading.json")["with_skill"]
    [check] = [e for e in grading["expectations"] if e["id"] == "cli-untouched"]
    assert check["evidence"].startswith("$ test") and not check["passed"], (check["evidence"], done.stderr[-2000:])


# --- git obeying a tree it did not write: the skill folder's own repository -------------------------------


def _promotable(tmp_path: Path) -> Path:
    """The demo skill with v0 made, then changed and committed in a repository of its own (as a tarball of
    a repository unpacks): `promote v0 --write` has a diff to write and asks that repository about it."""
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    with (skill / "SKILL.md").open("a") as text:
        text.write("\nOne more line.\n")
    subprocess.run(["git", *QUIET, "init", "-q", str(skill)], check=True)
    subprocess.run(["git", "-C", str(skill), *QUIET, "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(skill), *QUIET, "commit", "-qm", "skill"], check=True)
    return skill


@pytest.mark.parametrize("where", ["config include", "info/exclude", "a .gitignore"])
def test_promote_write_never_hangs_on_a_skill_folders_git_files(tmp_path, where):
    """git obeying a tree it did not write: `promote --write` reads the skill folder's repository, shipped
    with it: gitpython reads its config and every include, git reads info/exclude and each .gitignore. A
    named pipe in any of them (a tarball keeps one) blocks the command for ever; /dev/zero as an include
    grows its memory without end."""
    skill = _promotable(tmp_path)
    if where == "config include":
        pipe = skill / ".git" / "settings"
        with (skill / ".git" / "config").open("a") as config:
            config.write("[include]\n\tpath = settings\n")
    elif where == "info/exclude":
        pipe = skill / ".git" / "info" / "exclude"
        pipe.parent.mkdir(exist_ok=True)
        pipe.unlink(missing_ok=True)
    else:
        pipe = skill / "references" / ".gitignore"  # untracked, in a folder of the skill
        pipe.parent.mkdir()
    os.mkfifo(pipe)
    try:
        done = workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`promote --write` still waits after 60 s on the named pipe {pipe.relative_to(skill)}")
    finally:
        _release(pipe)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr


def _release(pipe: Path) -> None:
    """Whatever still waits to read the pipe (a git left behind by the killed workbench) reads its end."""
    try:
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def _git(skill: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(skill), *QUIET, *args], input=stdin, check=True, capture_output=True, text=True
    )
    return done.stdout


def _loose_commit(skill: Path) -> Path:
    commit = _git(skill, "rev-parse", "HEAD").strip()
    return skill / ".git" / "objects" / commit[:2] / commit[2:]


def _elsewhere(skill: Path) -> Path:
    """The repository's folder moved beside the skill folder, whose .git becomes a file naming it (as a
    linked worktree's is); returns the moved folder."""
    moved = skill.parent / "elsewhere.git"
    (skill / ".git").rename(moved)
    (skill / ".git").write_text(f"gitdir: {moved}\n")
    return moved


def _swap(path: Path) -> Path:
    """path becomes a named pipe."""
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


def _huge(path: Path, size: int = 4 << 30) -> Path:
    """path becomes a file of size bytes (sparse: it costs no disk, only whoever reads it)."""
    path.unlink(missing_ok=True)
    with path.open("wb") as out:
        out.truncate(size)
    return path


def _gone(git_dir: Path) -> Path:
    """The repository's folder moved away, and a named pipe where it was."""
    git_dir.rename(git_dir.parent.parent / "gone.git")
    return _swap(git_dir)


def _packed(skill: Path) -> Path:
    _git(skill, "pack-refs", "--all")
    return _swap(skill / ".git" / "packed-refs")


def _include(skill: Path, target: str) -> None:
    with (skill / ".git" / "config").open("a") as config:
        config.write(f"[include]\n\tpath = {target}\n")


def _linked_pack(skill: Path) -> Path:
    """The objects packed, the pack folder moved beside the repository and linked back (git follows the
    link); returns its index, a named pipe."""
    _git(skill, "repack", "-adq")
    pack = skill / ".git" / "objects" / "pack"
    moved = skill.parent / "pack-elsewhere"
    pack.rename(moved)
    pack.symlink_to(moved)
    return _swap(next(moved.glob("*.idx")))


def _nested_file(skill: Path) -> Path:
    """A nested repository whose .git is a file naming a git folder beside the skill folder, with a sound
    HEAD; returns that folder's commondir, a named pipe."""
    target = skill.parent / "sub.git"
    (target / "objects").mkdir(parents=True)
    (target / "refs").mkdir()
    (target / "HEAD").write_text("ref: refs/heads/main\n")
    (skill / "references" / "sub").mkdir(parents=True)
    (skill / "references" / "sub" / ".git").write_text(f"gitdir: {target}\n")
    return _swap(target / "commondir")


# place -> how the skill folder's repository is spoiled there; returns the path the message must name
SPOILED = {
    "the repository's .git": lambda s: _gone(s / ".git"),
    "HEAD": lambda s: _swap(s / ".git" / "HEAD"),
    "the branch HEAD names": lambda s: _swap(s / ".git" / "refs" / "heads" / "main"),
    "packed-refs": lambda s: _packed(s),
    "index": lambda s: _swap(s / ".git" / "index"),
    "a loose object": lambda s: _swap(_loose_commit(s)),
    "a pack in a folder behind a link": _linked_pack,
    "objects/info/alternates": lambda s: _swap(s / ".git" / "objects" / "info" / "alternates"),
    "commondir": lambda s: _swap(_elsewhere(s) / "commondir"),
    "an include that never ends": lambda s: _include(s, "/dev/zero") or Path("/dev/zero"),
    "a huge config": lambda s: _huge(s / ".git" / "config"),
    # a file of the skill folder too (its snapshot hashes it): 100 MB, past what git would be let read
    "a huge .gitignore": lambda s: _huge(s / ".gitignore", 100 << 20),
    "a nested repository's HEAD": lambda s: (
        (s / "references" / "sub" / ".git").mkdir(parents=True) or _swap(s / "references" / "sub" / ".git" / "HEAD")
    ),
    "the commondir of a nested .git file's folder": _nested_file,
}


@pytest.mark.parametrize("place", list(SPOILED))
def test_promote_write_never_hangs_or_grows_on_any_file_of_the_skill_folders_repository(tmp_path, place):
    """git obeying a tree it did not write, the class: every file of the skill folder's repository that
    git or the workbench reads (the .git file or folder, commondir, config and its includes, HEAD, refs,
    packed-refs, the index, objects and alternates, the .gitignore files, a nested repository's HEAD) may
    be a named pipe, a device or huge: `promote --write` says which and changes nothing (exit 2)."""
    skill = _promotable(tmp_path)
    (skill / ".git" / "objects" / "info").mkdir(exist_ok=True)
    before = (skill / "SKILL.md").read_bytes()
    named = SPOILED[place](skill)
    try:
        done = workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`promote --write` still waits after 60 s on {place}")
    finally:
        if named.is_fifo():
            _release(named)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert str(named.name) in done.stderr, done.stderr
    assert (skill / "SKILL.md").read_bytes() == before


@pytest.mark.parametrize("layout", ["its own repository", "a linked worktree"])
def test_promote_write_still_reads_a_sound_repository_and_its_ignore_rules(tmp_path, layout):
    """The repository read as data, git on a folder of the workbench's own: a committed skill folder (its
    .git a folder, or a linked worktree's file) is written, and what info/exclude or a .gitignore ignores
    is not taken for uncommitted work."""
    skill = _promotable(tmp_path)
    if layout == "a linked worktree":
        main = tmp_path / "main-checkout"
        skill.rename(main)
        _git(main, "worktree", "add", "-q", str(skill))
        assert (skill / ".git").read_text().startswith("gitdir:")
    git_dir = Path(_git(skill, "rev-parse", "--git-common-dir").strip())
    git_dir = git_dir if git_dir.is_absolute() else skill / git_dir
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "exclude").write_text("scratch.txt\n")
    (skill / "scratch.txt").write_text("mine\n")
    (skill / "references" / ".gitignore").parent.mkdir(exist_ok=True)
    (skill / "references" / ".gitignore").write_text("*.log\n")
    _git(skill, "add", "references/.gitignore")
    _git(skill, "commit", "-qm", "ignore logs")
    (skill / "references" / "run.log").write_text("log\n")
    # scratch.txt in a version (v1), so that removing it loses nothing: what no version or commit keeps is
    # refused (test_promote_write_never_loses_a_file_git_cannot_give_back)
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    done = workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "One more line." not in (skill / "SKILL.md").read_text()
    assert not (skill / "scratch.txt").exists() and (skill / "references" / "run.log").exists()


# --- promote --write: nothing the user wrote is lost without a copy ------------------------------------------


def _with_notes(tmp_path: Path) -> Path:
    """The demo skill whose v0 holds a notes.md, then a .gitignore naming notes.md and the user's own notes
    there (ignored: in no version, never committed), and SKILL.md changed: `promote v0 --write` has v0's
    notes.md to write where the user's stands."""
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    (skill / "notes.md").write_text("notes of v0\n")
    assert workbench(tmp_path, "version", "new", str(skill)).returncode == 0
    (skill / ".gitignore").write_text("notes.md\n")
    (skill / "notes.md").write_text("my own notes, in no version\n")
    with (skill / "SKILL.md").open("a") as text:
        text.write("\nOne more line.\n")
    return skill


def _committed(skill: Path) -> Path:
    subprocess.run(["git", *QUIET, "init", "-q", str(skill)], check=True)
    _git(skill, "add", "-A")
    _git(skill, "commit", "-qm", "skill")
    return skill


def _snapshotted(skill: Path) -> Path:
    """No repository: the folder as it is made v1 (its content is in a version, so writing is allowed)."""
    assert workbench(skill.parent.parent, "version", "new", str(skill)).returncode == 0
    return skill


def _excluded_scratch(tmp_path: Path) -> Path:
    """The brief's case: scratch.txt, ignored through info/exclude, in no version: v0 has no scratch.txt."""
    skill = _promotable(tmp_path)
    (skill / ".git" / "info").mkdir(exist_ok=True)
    (skill / ".git" / "info" / "exclude").write_text("scratch.txt\n")
    (skill / "scratch.txt").write_text("mine, in no version\n")
    return skill


# member -> (how the skill folder is made, the user's file git cannot give back)
UNRECOVERABLE = {
    "ignored through info/exclude, removed": (_excluded_scratch, "scratch.txt"),
    "ignored by a .gitignore, overwritten": (lambda t: _committed(_with_notes(t)), "notes.md"),
    "in a folder with no repository, ignored by its .gitignore": (lambda t: _snapshotted(_with_notes(t)), "notes.md"),
}


@pytest.mark.parametrize("member", list(UNRECOVERABLE))
def test_promote_write_never_loses_a_file_git_cannot_give_back(tmp_path, member):
    """promote --write, the class: a file of the skill folder that the promotion would remove or overwrite,
    which is neither as a version holds it nor committed (ignored by git, or outside any repository), is
    the user's only copy. Promoting v0 deleted scratch.txt (ignored through info/exclude) and overwrote an
    ignored notes.md with v0's; even with --yes, which answers the diff shown, not a loss it does not show."""
    make, name = UNRECOVERABLE[member]
    skill = make(tmp_path)
    before = (skill / name).read_bytes()
    done = workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes", timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, (done.returncode, done.stdout, done.stderr)
    assert name in done.stderr, done.stderr
    assert (skill / name).read_bytes() == before
    assert "One more line." in (skill / "SKILL.md").read_text()  # nothing written


# --- the second attacker's: what git follows or prints that the survey did not bound ---------------------


def _promote_refuses_in_time(tmp_path: Path, skill: Path, pipe: Path, named: str) -> None:
    before = (skill / "SKILL.md").read_bytes()
    started = time.monotonic()
    try:
        done = workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes", timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"`promote --write` still waits after 60 s on the named pipe {pipe}") from None
    finally:
        _release(pipe)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert named in done.stderr, (time.monotonic() - started, done.stderr)
    assert (skill / "SKILL.md").read_bytes() == before


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_promote_write_never_waits_on_an_object_folder_git_follows(tmp_path):
    """git obeying a tree it did not write (a file the survey does not reach): the object store's walk
    does not enter a folder that is a link, git does. objects/<xx> (the HEAD commit's) is a link to a
    folder beside the repository where that loose object is a named pipe: `ls-tree HEAD` blocks on it.
    Found: promote waits for the 120 s guard, then says SKILL.md is uncommitted (a git that timed out is
    read as a repository without a commit)."""
    skill = _promotable(tmp_path)
    commit = _git(skill, "rev-parse", "HEAD").strip()
    folder = skill / ".git" / "objects" / commit[:2]
    moved = tmp_path / "objects-elsewhere"
    shutil.move(str(folder), moved)
    (moved / commit[2:]).unlink()
    os.mkfifo(moved / commit[2:])
    folder.symlink_to(moved)
    _promote_refuses_in_time(tmp_path, skill, moved / commit[2:], commit[2:])


def test_promote_write_never_waits_on_a_nested_repositorys_commondir(tmp_path):
    """git obeying a tree it did not write (a file the survey does not reach): `ls-files --others` asks
    whether a folder with a .git is a repository (is_git_directory): it reads its HEAD, and when HEAD is
    sound, its `commondir`. The survey checks the nested HEAD only: a pipe as commondir blocks git.
    Found: promote waits for the 120 s guard."""
    skill = _promotable(tmp_path)
    nested = skill / "references" / "sub" / ".git"
    (nested / "objects").mkdir(parents=True)
    (nested / "refs").mkdir()
    (nested / "HEAD").write_text("ref: refs/heads/main\n")
    os.mkfifo(nested / "commondir")
    _promote_refuses_in_time(tmp_path, skill, nested / "commondir", "commondir")


def _address_space(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def test_promote_write_never_grows_on_a_tree_that_names_its_subtrees_many_times(tmp_path):
    """git's answer read whole: a committed tree `references/bomb` whose every level names the level below
    16 times, 8 levels deep (9 objects, a few kB: a tarball or clone carries it) has 16**8 paths, and
    `ls-tree -r HEAD` prints all of them (about 80 MB a second here); promote captures git's whole output
    in memory. Bounded here at 1.5 GB of address space (without it: some 9 GB before the 120 s guard).
    Found: after ~20 s 'workbench promote: /tmp/workbench-promote-...: Cannot allocate memory'.
    Promised: a bounded read of what git says, refused with a reason about the repository."""
    skill = _promotable(tmp_path)
    blob = _git(skill, "hash-object", "-w", "--stdin", stdin="x\n").strip()
    tree = _git(skill, "mktree", stdin="".join(f"100644 blob {blob}\tf{i:02}\n" for i in range(16))).strip()
    for _ in range(7):
        tree = _git(skill, "mktree", stdin="".join(f"040000 tree {tree}\td{i:02}\n" for i in range(16))).strip()
    references = _git(skill, "mktree", stdin=f"040000 tree {tree}\tbomb\n").strip()
    root = _git(skill, "ls-tree", "HEAD") + f"040000 tree {references}\treferences\n"
    commit = _git(skill, "commit-tree", _git(skill, "mktree", stdin=root).strip(), "-p", "HEAD", "-m", "b").strip()
    _git(skill, "update-ref", "refs/heads/main", commit)
    started = time.monotonic()
    try:
        done = workbench(
            tmp_path, "promote", str(skill), "v0", "--write", "--yes", timeout=90, preexec=_address_space(1500 << 20)
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("`promote --write` still reads git's listing after 90 s") from None
    took = time.monotonic() - started
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "Cannot allocate memory" not in done.stderr and "MemoryError" not in done.stderr, (took, done.stderr)
    assert took < 60, (took, done.stderr)


def test_promote_write_says_a_git_that_fails_on_the_head_commit(tmp_path):
    """A git that fails (or is stopped) listing HEAD's commit is said as such, naming the git command, and
    never taken for a repository with no commit yet. Found: HEAD naming a commit the store lacks made
    promote say SKILL.md has uncommitted changes, a wrong reason."""
    skill = _promotable(tmp_path)
    _loose_commit(skill).unlink()
    done = workbench(tmp_path, "promote", str(skill), "v0", "--write", "--yes", timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "git ls-tree" in done.stderr and "uncommitted" not in done.stderr, done.stderr
