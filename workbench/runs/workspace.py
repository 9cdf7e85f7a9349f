"""Where runs live: skill-creator's layout, and one private git repository per dispatch."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from workbench.formats import paths
from workbench.runs import layout, safe_git
from workbench.runs.cases import RunCase
from workbench.runs.layout import iteration_dir

# What the baseline commit is made with: fixed, so identical inputs give identical commits.
_AUTHOR_NAME, _AUTHOR_EMAIL = "Skill Workbench", "workbench@localhost"
# Where agents discover skills; excluded from what a run is said to have changed.
SKILL_FOLDERS = (".claude/skills", ".agents/skills")
NOT_CHANGES = tuple(f"{folder}/" for folder in SKILL_FOLDERS)  # path prefixes a run's changes leave out


def default_workspace(skill_dir: Path) -> Path:
    """Beside the skills folder, never inside it (a folder there would look like a skill);
    except skill-creator's own workspace, right beside the skill, once it holds a
    history.json (its Improve mode: docs/improve.md, "skill-creator's legacy layout")."""
    skill_dir = skill_dir.resolve()
    theirs = skill_dir.parent / f"{skill_dir.name}-workspace"
    if (theirs / "history.json").is_file() and not theirs.is_symlink():
        return theirs
    parent = skill_dir.parent
    # A chock policy (.agents/policies/<id>) is placed as a skill is: beside its folder of policies.
    while parent.name in ("skills", "policies") or (parent / "SKILL.md").exists():
        parent = parent.parent
    return parent / f"{skill_dir.name}-workspace"


def next_iteration(workspace: Path) -> int:
    return max(layout.iteration_numbers(workspace), default=0) + 1


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
    # The git CLI writes the baseline (three short processes, no templates copied),
    # through safe_git: no hook, fsmonitor or filter of anyone's runs.
    identity = safe_git.identity(_AUTHOR_NAME, _AUTHOR_EMAIL, "2000-01-01T00:00:00Z")
    safe_git.run(["init", "-q", "--template="], folder)
    safe_git.run(["add", "-A"], folder)
    safe_git.run(
        ["commit", "-q", "--allow-empty", "--no-gpg-sign", "--no-verify", "-m", "baseline: fixtures and staged skill"],
        folder,
        identity,
    )
    return safe_git.run(["rev-parse", "HEAD"], folder)


def _no_git(_folder: str, names: list[str]) -> set[str]:
    return {n for n in names if paths.is_git_name(n)}


def skill_ignore(folder: str, names: list[str]) -> set[str]:
    ignored = {n for n in names if n in (".git", "__pycache__") or n.endswith("-workspace")}
    if Path(folder, "SKILL.md").exists() and "evals" in names:
        ignored.add("evals")
    return ignored


def changed_files(folder: Path, baseline: str) -> list[str]:
    """Files created, changed or deleted since the baseline, the staged skill and
    framework files excluded. One git call while the agent has not committed."""
    safe_git.scrub(folder)  # the agent could have written its .git/config
    if safe_git.run(["rev-parse", "HEAD"], folder) == baseline:
        status = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]
        entries = safe_git.run(status, folder).split("\0")
        names = sorted({entry[3:] for entry in entries if len(entry) > 3})
    else:  # the agent committed: compare the whole tree with the baseline
        safe_git.run(["add", "-A"], folder)
        names = safe_git.run(
            ["diff", *safe_git.DIFF_SAFE, "--name-only", "--no-renames", baseline], folder
        ).splitlines()
    return [n for n in names if n and not n.startswith(NOT_CHANGES + (".git/",))]


def copy_outputs(folder: Path, outputs: Path, names: list[str]) -> int:
    """What the agent produced, into outputs/; returns their total characters."""
    total = 0
    for name in names:
        source = folder / name
        target = outputs / name
        if source.is_symlink() or any(parent.is_symlink() for parent in source.parents if folder in parent.parents):
            # Never followed: an agent's link to a file outside would hand that file to the judge and the Results
            # screen. What the link says is kept, as text.
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(
                f"(a symbolic link to {os.readlink(source) if source.is_symlink() else '?'}: not followed)\n"
            )
            continue
        if not source.is_file():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        try:
            total += len(source.read_text("utf-8"))
        except (UnicodeDecodeError, OSError):
            total += os.path.getsize(source)
    return total
