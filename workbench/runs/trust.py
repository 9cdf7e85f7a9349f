"""Trust: a command the workbench did not write (an evals file's command_check or
chock execute, a custom executor) runs only after the user trusted exactly that
content. Trust is remembered per content hash, so a changed file asks again."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from workbench.config import config_dir
from workbench.formats import paths
from workbench.formats.save import atomic_write


def _store() -> Path:
    return config_dir() / "trusted.json"


def digest(content: str | bytes) -> str:
    return hashlib.sha256(content.encode() if isinstance(content, str) else content).hexdigest()


def _trusted() -> dict:
    try:
        data = json.loads(_store().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def is_trusted(content: str | bytes) -> bool:
    return digest(content) in _trusted()


def trust(content: str | bytes, label: str) -> None:
    """Remember that this exact content may run (label: what it was, for people)."""
    data = _trusted()
    data[digest(content)] = label
    atomic_write(_store(), json.dumps(data, indent=2, sort_keys=True) + "\n")


# What is never part of a trusted tree, never hashed and never copied: a repository's
# own .git (the workbench never copies one), and Python's byte-code caches.
_SKIPPED = (".git", "__pycache__")


class TreeChanged(Exception):
    """The folder is not what was hashed (a link out, or it changed while copied)."""


MAX_FILE = 64 * 2**20  # bytes: one file of an evals folder, read whole to be hashed and copied


def tree_digest(root: Path, into: Path | None = None) -> tuple[str, int]:
    """(sha256 of a folder's content, number of files): every entry's relative path,
    kind, executable bit and bytes; a link is hashed as a link (its target text), not
    followed. With `into`, the same bytes are written there as they are read, so the
    copy is exactly what was hashed. Raises TreeChanged for a link that leads out of
    the folder or to a folder (the copy could not hold what it names)."""
    digest, count = hashlib.sha256(), 0
    real_root = os.path.realpath(root)
    for folder, dirs, files in os.walk(root):
        linked_dirs = [d for d in dirs if os.path.islink(os.path.join(folder, d))]  # os.walk lists them, unfollowed
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED and d not in linked_dirs)
        relative_folder = os.path.relpath(folder, root)
        if into is not None:
            os.makedirs(os.path.join(into, relative_folder), exist_ok=True)
        for name in sorted([*files, *linked_dirs]):
            if name in _SKIPPED:
                continue
            path = os.path.join(folder, name)
            relative = os.path.normpath(os.path.join(relative_folder, name))
            if os.path.islink(path):
                target = os.readlink(path)
                real = os.path.realpath(path)
                if not paths.inside(real, real_root) or os.path.isdir(real):  # the root itself is a folder
                    raise TreeChanged(f"{os.path.join(root, relative)} is a link to {real}, outside {root} or a folder")
                digest.update(b"L\0" + relative.encode("utf-8", "surrogateescape") + b"\0" + target.encode() + b"\0")
                if into is not None:  # to the same file in the copy, never back into the original
                    link = os.path.join(into, relative)
                    inside = os.path.join(into, os.path.relpath(real, real_root))
                    os.symlink(os.path.relpath(inside, os.path.dirname(link)), link)
                continue
            mode = os.lstat(path).st_mode
            if not stat.S_ISREG(mode):  # a pipe would block the read for ever, a device never end
                raise TreeChanged(f"{os.path.join(root, relative)} is not a regular file (a pipe, socket or device)")
            if os.lstat(path).st_size > MAX_FILE:
                raise TreeChanged(f"{os.path.join(root, relative)} is over {MAX_FILE // 2**20} MB: too big to trust")
            with open(path, "rb") as handle:
                content = handle.read()
            executable = os.access(path, os.X_OK)
            kind = b"X" if executable else b"F"
            digest.update(kind + b"\0" + relative.encode("utf-8", "surrogateescape") + b"\0")
            digest.update(str(len(content)).encode() + b"\0" + content)
            count += 1
            if into is not None:
                target_path = os.path.join(into, relative)
                with open(target_path, "wb") as out:
                    out.write(content)
                os.chmod(target_path, 0o755 if executable else 0o644)
    return digest.hexdigest(), count
