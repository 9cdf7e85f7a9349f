"""A run's own folder: the case's files laid out for the agent, its baseline tree, what the agent
changed in it, and the outputs copied out."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from workbench.formats import paths
from workbench.runs.cases import RunCase
from workbench.workspace import git_objects, layout, trees
from workbench.workspace.layout import iteration_dir

# What the baseline commit is made with: fixed, so identical inputs give identical commits.
_AUTHOR, _AUTHOR_DATE = "Skill Workbench <workbench@localhost>", 946684800  # 2000-01-01T00:00:00Z
# Where agents discover skills; excluded from what a run is said to have changed.
SKILL_FOLDERS = (".claude/skills", ".agents/skills")
NOT_CHANGES = tuple(f"{folder}/" for folder in SKILL_FOLDERS)  # path prefixes a run's changes leave out


def run_dir(workspace: Path, iteration: int, case: RunCase, configuration: str, run_number: int) -> Path:
    return layout.run_dir(iteration_dir(workspace, iteration), case.id, configuration, run_number)


def prepare(folder: Path, case: RunCase, skill_dir: Path | None, skill_name: str, skills_folder: str) -> str:
    """A private git repo with one baseline commit: the fixtures, and (with a
    skill) the skill staged where the agent discovers it. Returns the commit."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if case.codebase is not None:
        out = paths.links_out(case.codebase)
        if out:
            raise ValueError(f"codebase: {out[0]} is a link that leads outside the codebase; links out are refused")
        # What the repository starts as; its own .git is never copied (the baseline commit is ours),
        # and links stay links (the lint and the run refuse links out of it).
        shutil.copytree(case.codebase, folder, ignore=_no_git, symlinks=True, dirs_exist_ok=True)
    for source, place in case.files:
        target = folder / place
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=_no_git)  # the lint refuses a .git; never copy one anyway
        elif not paths.is_git_name(source.name):
            shutil.copy2(source, target)
    if skill_dir is not None:
        if "/" in skill_name or "\\" in skill_name or skill_name in ("", ".", "..") or paths.is_git_name(skill_name):
            raise ValueError(f"the skill name {skill_name!r} cannot name a folder")  # the pipeline checked SKILL.md
        staged = folder / skills_folder / skill_name
        # Not evals/: the agent must not read the expected outputs and checks of its own test.
        # Links stay links (the run refuses a skill with links out of it; see formats/paths.links_out).
        shutil.copytree(skill_dir, staged, ignore=skill_ignore, symlinks=True)
    return baseline(folder)


def baseline(folder: Path) -> str:
    """The repository the agent starts in, and the run's own copy of its baseline (beside it, in TREES,
    where the agent never writes): written as git objects by the workbench itself (workspace/git_objects.py),
    so no attribute or filter of the fixtures or the skill changes a byte and no git process starts.
    Returns the baseline commit, the same in both."""
    store = folder.parent / layout.TREES
    if store.is_symlink() or store.is_file():
        store.unlink()
    elif store.exists():
        shutil.rmtree(store)
    git_objects.init(store, bare=True, head="none")  # no branch: nothing to read attributes from
    objects = git_objects.FreshObjects(store / "objects")  # both stores are new: one pack, the same in each
    files = trees.read(folder, objects).entries
    commit = objects.write_commit(
        objects.write_tree(files), "baseline: fixtures and staged skill", _AUTHOR, _AUTHOR_DATE
    )
    objects.seal()
    # A ref, so that no git command run in the store (gc, repack -ad) takes the baseline for garbage.
    git_objects.set_ref(store, "refs/baseline", commit)
    agent = folder / ".git"
    git_objects.init(agent, bare=False)
    objects.copy_to(agent / "objects")
    git_objects.set_ref(agent, "refs/heads/master", commit)
    git_objects.write_index(agent / "index", folder, files)
    return commit


def lay_baseline(folder: Path, store: Path, commit: str) -> None:
    """A repository at folder/.git (none there before) holding the run's baseline as the workbench recorded
    it in store (the run's TREES): HEAD on master at the baseline commit, its objects written afresh from
    the store (each read back against its id, the tree made again and compared with the commit's), an
    index of its files. For a copy of what the agent left (a command_check's): a file that no longer holds
    its baseline content gets no stat data in the index, so git reads it again and sees the change.
    ValueError when the store does not hold that baseline whole."""
    source = git_objects.Objects(store / "objects")
    kind, data = source.read(commit)
    files = source.entries(source.tree_of(commit))
    git_dir = folder / ".git"
    objects = git_objects.init(git_dir, bare=False)  # loose: one blob held at a time, however big the baseline
    for oid in {entry.oid for entry in files.values()}:
        objects.write(*source.read(oid))
    if objects.write_tree(files) != source.tree_of(commit) or objects.write(kind, data) != commit:
        raise ValueError(f"{store}: the baseline commit {commit} is not whole")
    git_objects.set_ref(git_dir, "refs/heads/master", commit)
    git_objects.write_index(git_dir / "index", folder, files, same=_holding(folder, files))


def _holding(folder: Path, files: dict[str, git_objects.Entry]) -> set[str]:
    """The files under folder that hold the content given, reached through real folders only."""
    linked: dict[str, bool] = {}

    def through_link(name: str) -> bool:
        parent = name.rpartition("/")[0]
        if not parent:
            return False
        if parent not in linked:
            linked[parent] = (folder / parent).is_symlink() or through_link(parent)
        return linked[parent]

    return {name for name, entry in files.items() if not through_link(name) and trees.entry_of(folder / name) == entry}


def _no_git(_folder: str, names: list[str]) -> set[str]:
    return {n for n in names if paths.is_git_name(n)}


def skill_ignore(folder: str, names: list[str]) -> set[str]:
    ignored = {n for n in names if n in (".git", "__pycache__") or n.endswith("-workspace")}
    if Path(folder, "SKILL.md").exists() and "evals" in names:
        ignored.add("evals")
    return ignored


@dataclass
class Changes:
    """What the agent changed since the baseline, read from its workspace as data (workspace/trees.py)."""

    files: list[str]  # created, changed or deleted; the staged skill and framework files left out
    final_tree: str  # the workspace as the agent left it, in the run's TREES store
    notes: list[str]  # what was found but not read as files: nested repositories, FIFOs


def changed_files(folder: Path, baseline_commit: str) -> Changes:
    """Files created, changed or deleted since the baseline. No git process reads the workspace: its
    files are read here and compared with the baseline kept in TREES, whatever the agent did to its .git
    (removed it, committed, rewrote its config or its objects). Ignore rules are the baseline's .gitignore
    files (the suite's data), never ones the agent wrote."""
    objects = git_objects.Objects(folder.parent / layout.TREES / "objects")
    before = objects.entries(objects.tree_of(baseline_commit))
    now = trees.read(folder, objects, ignore=trees.ignore_rules(before, objects), tracked=before)
    final = objects.write_tree(now.entries)
    names = sorted(name for name in before.keys() | now.entries.keys() if before.get(name) != now.entries.get(name))
    return Changes([n for n in names if not n.startswith(NOT_CHANGES)], final, now.notes())


def _characters(path: Path) -> int:
    """A text file's characters, else its bytes."""
    try:
        return len(path.read_text("utf-8"))
    except (UnicodeDecodeError, OSError):
        return os.path.getsize(path)


def copy_outputs(folder: Path, outputs: Path, names: list[str]) -> int:
    """What the agent produced, into outputs/; returns their total characters. Read as the changes were:
    a link is never followed (an agent's link to a file outside would hand that file to the judge and the
    Results screen; what the link says is kept, as text), and only regular files are read."""
    # A fresh folder: anything there before (an unsandboxed agent can plant a link in it) is never written through.
    if outputs.is_symlink() or outputs.is_file():
        outputs.unlink()
    elif outputs.exists():
        shutil.rmtree(outputs)
    outputs.mkdir(parents=True)
    total = 0
    for name in names:
        source = folder / name
        target = outputs / name
        if source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"(a symbolic link to {os.readlink(source)}: not followed)\n")
            continue
        opened = trees.open_file(str(source))
        if opened is None:  # deleted, or not a regular file
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with opened, open(target, "wb") as out:
            shutil.copyfileobj(opened, out)
            executable = os.fstat(opened.fileno()).st_mode & 0o100
        os.chmod(target, 0o755 if executable else 0o644)
        total += _characters(target)
    return total
