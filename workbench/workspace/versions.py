"""Versions: immutable snapshots of a skill folder in a git repository inside the
workspace (`<workspace>/versions.git`, bare, managed with gitpython). One commit
per version, tagged vN, whose git parent is the version's parent, so any two
versions diff with git and the version tree is git's history.

A snapshot holds the skill's own files: everything in the folder except evals/
(the suite is the test, not the skill: every version is measured with the suite
as it is now, and promoting a version never rewrites the evals)."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import WorkbenchError
from workbench.formats.artifacts import VERSION_NAME
from workbench.formats.regular import kind
from workbench.validate.diagnostic import Diagnostic, FileProblems
from workbench.workspace import git_objects, safe_git, trees

if TYPE_CHECKING:
    import git

REPO = "versions.git"
SNAPSHOTS = ".snapshots"  # exported versions, for staging in runs (recreated from git when missing)
EXCLUDED = ("evals",)
VERSION = VERSION_NAME
_READABLE = (git_objects.FILE, git_objects.EXECUTABLE, git_objects.LINK)  # a gitlink has no blob to write
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class VersionsBroken(FileProblems):
    """versions.git cannot be read as it is (damaged, or not a repository); git's words say where."""

    def __init__(self, path: Path, why: str) -> None:
        message = (
            f"the versions repository is damaged: {why}; expected the git repository the workbench made "
            "(restore it from a backup, or move it away to start the versions again; nothing is repaired)"
        )
        super().__init__(path, [Diagnostic("error", "", message, 1, 1)])


class VersionError(WorkbenchError):
    """A version operation that cannot be done as asked; the message says why."""


def _not_a_file(store: Path) -> str | None:
    """What in the store is neither a folder nor a regular file (a FIFO, a device, a link), or None."""
    for root, dirs, files in os.walk(store):
        for name in dirs + files:
            path = os.path.join(root, name)
            mode = os.lstat(path).st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                what = "a link" if stat.S_ISLNK(mode) else kind(mode)
                return f"{os.path.relpath(path, store)} is {what}, not a file git wrote"
    return None


def number(version: str) -> int:
    match = VERSION.fullmatch(version) if isinstance(version, str) else None
    if not match:
        raise VersionError(f"{version!r} is not a version; expected v0, v1, ...")
    return int(match.group(1))


class VersionStore:
    def __init__(self, workspace: Path) -> None:
        self._checked = False
        self.workspace = workspace
        self.path = workspace / REPO

    @property
    def exists(self) -> bool:
        return (self.path / "HEAD").is_file()

    def repo(self) -> git.Repo:
        import git  # here, not at the top: gitpython's import is ~45 ms of every command, most never read versions

        if not self.exists:
            # Made aside and renamed into place: a repository killed half-made (HEAD but no identity) would
            # refuse every later commit.
            self.workspace.mkdir(parents=True, exist_ok=True)
            aside = Path(tempfile.mkdtemp(prefix=f".{REPO}.", dir=self.workspace))
            repo = safe_git.configure(git.Repo.init(aside, bare=True))
            with repo.config_writer() as config:
                config.set_value("user", "name", "skill-workbench")
                config.set_value("user", "email", "workbench@localhost")
            try:
                os.rename(aside, self.path)
            except OSError:  # made meanwhile (or an empty folder of that name): use what is there
                shutil.rmtree(aside, ignore_errors=True)
                if not self.exists:
                    raise VersionError(f"{self.path} exists and is not a version store; move it away") from None
        if not self._checked:
            strange = _not_a_file(self.path)
            if strange:  # git would block on a FIFO (its config, a ref) and follow a link out: never handed to it
                raise VersionsBroken(self.path, strange)
        try:
            repo = safe_git.configure(git.Repo(self.path))
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise VersionsBroken(self.path, "not a git repository (its HEAD, refs or objects are missing)") from None
        except (git.GitError, configparser.Error, OSError, ValueError) as exc:  # its config, say
            raise VersionsBroken(self.path, _first_line(exc)) from None
        if not self._checked:
            # Once per store: every object and ref readable, every tag a commit. A damaged store
            # is one clear error here, not a traceback from whichever command reads it next.
            try:
                repo.git.fsck("--no-dangling", "--no-progress", "--strict")
                for tag in repo.git.tag("--list", "v*").split():
                    repo.git.rev_parse("--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
            except git.GitCommandError as exc:
                raise VersionsBroken(self.path, _first_line(exc)) from None
            self._checked = True
        return repo

    def versions(self) -> list[str]:
        if not self.exists:
            if os.path.lexists(self.path):  # there, but no HEAD: damaged, not "no versions yet"
                raise VersionsBroken(self.path, "not a git repository (its HEAD is missing)")
            return []
        tags = [t for t in self.repo().git.tag("--list", "v*").split() if VERSION.fullmatch(t)]
        return sorted(tags, key=number)

    def commit_of(self, version: str) -> str:
        number(version)  # a name, never a revision expression handed to git
        try:
            return self.repo().git.rev_parse(f"refs/tags/{version}^{{commit}}")
        except safe_git.errors():
            raise VersionError(
                f"there is no version {version} (versions: {', '.join(self.versions()) or 'none yet'})"
            ) from None

    def parent_of(self, version: str) -> str | None:
        """The version whose commit is this version's git parent."""
        parents = self.repo().git.rev_list("--parents", "-n", "1", self.commit_of(version)).split()[1:]
        if not parents:
            return None
        by_commit = {self.commit_of(v): v for v in self.versions()}
        return by_commit.get(parents[0])

    def tree_of_folder(self, skill_dir: Path) -> str:
        """The git tree the folder's skill files would be, without committing. The folder is read as data
        (workspace/trees.py: no git process reads it, so no attribute, filter or nested repository of it takes
        part), its .gitignore files obeyed, evals/ left out; each blob is written into the store."""
        self.repo()  # made when missing, checked once
        objects = git_objects.Objects(self.path / "objects")
        found = trees.read(skill_dir, objects, leave_out=lambda path: path in EXCLUDED, own_ignore_files=True)
        return objects.write_tree(found.entries)

    def snapshot(self, skill_dir: Path, parent: str | None) -> str:
        """Commit the folder's skill files as the next version and tag it; its git parent is `parent`."""
        version, commit = self.commit(skill_dir, parent)
        self.tag(version, commit)
        return version

    def tag(self, version: str, commit: str) -> None:
        """Tag commit as version; nothing when it already is (a journal applied again)."""
        number(version)
        try:
            if self.repo().git.rev_parse(f"refs/tags/{version}^{{commit}}") == commit:
                return
        except safe_git.errors():
            pass
        self.repo().git.tag(version, commit)

    def commit(self, skill_dir: Path, parent: str | None) -> tuple[str, str]:
        """The next version's name and its commit of the folder's skill files, not tagged yet."""
        repo = self.repo()
        tree = self.tree_of_folder(skill_dir)
        existing = self.versions()
        version = f"v{number(existing[-1]) + 1}" if existing else "v0"
        args = ["commit-tree", tree, "-m", f"{version}" + (f" (from {parent})" if parent else " (baseline)")]
        if parent is not None:
            parent_commit = self.commit_of(parent)
            if repo.git.rev_parse(f"{parent_commit}^{{tree}}") == tree:
                raise VersionError(
                    f"the skill folder is identical to {parent}: nothing to snapshot (edit the skill first)"
                )
            args += ["-p", parent_commit]
        commit = repo.git.execute(safe_git.command(f"--git-dir={self.path}", *args)).strip()
        return version, commit

    def tree_of(self, version: str) -> str:
        return self.repo().git.rev_parse(f"{self.commit_of(version)}^{{tree}}")

    def entries(self, tree: str) -> dict[str, tuple[str, str]]:
        """Every file and link of a tree: path -> (mode, object id)."""
        out = {}
        for line in self.repo().git.ls_tree("-r", "-z", tree).split("\0"):
            if line:
                meta, path = line.split("\t", 1)
                mode, _kind, oid = meta.split()
                out[path] = (mode, oid)
        return out

    def materialize(self, version: str, folder: Path, only: Collection[str] | None = None) -> None:
        """Write the version's files (or only those named) into folder exactly as committed: the blobs
        byte for byte (no export rule or keyword expansion of the version's own .gitattributes), links as
        links, executables executable, each file synced (they are about to replace the user's)."""
        for name, (mode, data) in self._committed(version, only).items():
            parts = Path(name).parts
            if not parts or ".." in parts or Path(name).is_absolute():
                continue  # git never stores such a name; never written outside folder either
            target = folder.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == git_objects.LINK:
                os.symlink(os.fsdecode(data), target)
                continue
            with open(target, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(target, 0o755 if mode == git_objects.EXECUTABLE else 0o644)

    def files(self, version: str) -> dict[str, bytes]:
        """The version's files (not its links), as committed."""
        return {name: data for name, (mode, data) in self._committed(version).items() if mode != git_objects.LINK}

    def _committed(self, version: str, only: Collection[str] | None = None) -> dict[str, tuple[str, bytes]]:
        """path -> (mode, blob) of the version's files, read from git's objects (never `git archive`, which
        obeys export-ignore and export-subst of the tree itself)."""
        entries = {
            name: entry
            for name, entry in self.entries(self.tree_of(version)).items()
            if (only is None or name in only)
            and entry[0] in (git_objects.FILE, git_objects.EXECUTABLE, git_objects.LINK)
        }
        asked = "".join(f"{oid}\n" for _mode, oid in entries.values()).encode()
        with tempfile.TemporaryDirectory(prefix="workbench-read-") as nowhere:
            raw = safe_git.run_bytes([f"--git-dir={self.path}", "cat-file", "--batch"], Path(nowhere), stdin=asked)
        out = {}
        for name, (mode, oid) in entries.items():
            header, _, raw = raw.partition(b"\n")
            found, kind, size = header.decode().split()
            if found != oid or kind != "blob":
                raise VersionsBroken(self.path, f"object {oid} of {version} is missing or not a file")
            out[name], raw = (mode, raw[: int(size)]), raw[int(size) + 1 :]
        return out

    def export(self, version: str) -> Path:
        """The version's files in a folder of their own (made once; snapshots never change)."""
        folder = self.workspace / SNAPSHOTS / version
        done = self.workspace / SNAPSHOTS / f"{version}.complete"  # beside it: inside, it would be staged
        if done.exists() and folder.is_dir():
            return folder
        # Made aside and renamed into place, so a run never stages a half-exported version (this runs
        # before the workspace's lock is taken, and may be killed).
        folder.parent.mkdir(parents=True, exist_ok=True)
        aside = Path(tempfile.mkdtemp(prefix=f".{version}.", dir=folder.parent))
        self.materialize(version, aside)
        if folder.exists() and not done.exists():  # left half-made by an older workbench
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.rename(aside, folder)
        except OSError:  # another process exported it meanwhile: the same files
            shutil.rmtree(aside, ignore_errors=True)
        done.write_text(self.commit_of(version) + "\n")
        return folder

    def diff(self, old: str, new: str, *options: str) -> str:
        """`git diff` of two versions, or of a version and a tree id (options: "--stat")."""
        a, b = self._revision(old), self._revision(new)
        return self.repo().git.diff(*safe_git.DIFF_SAFE, *options, a, b)

    def _revision(self, name: str) -> str:
        """A version's commit, or a tree id made by tree_of_folder; nothing else reaches git."""
        if _OBJECT_ID.fullmatch(name):
            return name
        return self.commit_of(name)


def _first_line(exc: Exception) -> str:
    """git's own words: the first line of what it printed, else the error's."""
    stderr = str(getattr(exc, "stderr", "") or "").strip()
    for line in stderr.splitlines():
        line = line.strip().removeprefix("stderr:").strip().strip("'").strip()
        if line:
            return line
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
