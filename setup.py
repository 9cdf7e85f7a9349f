"""One build step beyond pyproject.toml: demo/ and themes/ stay at the repository
root, where users look for them, and a build copies them into the package as
workbench/_bundled/demo and workbench/_bundled/themes, so a wheel (`pip install .`)
carries them. An editable install (`pip install -e .`) copies nothing: it reads
them from the checkout. workbench.config.bundled() finds either."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUNDLED = ("demo", "themes")


def _ignore(folder: str, names: list[str]) -> set[str]:
    """Never bundled: Python caches, and the runs' workspaces written beside the demo skills."""
    skipped = {n for n in names if n == "__pycache__" or n.endswith((".pyc", ".pyo"))}
    if Path(folder) == ROOT / "demo":
        skipped |= {n for n in names if n.endswith("-workspace")}
    return skipped


class BuildPyWithBundled(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in BUNDLED:
            source = ROOT / name
            if not source.is_dir():
                raise SystemExit(f"cannot build: {source} is missing (the sdist must carry it: MANIFEST.in)")
            target = Path(self.build_lib) / "workbench" / "_bundled" / name
            if target.exists():
                shutil.rmtree(target)  # a stale copy from an earlier build must not survive
            shutil.copytree(source, target, ignore=_ignore)


setup(cmdclass={"build_py": BuildPyWithBundled})
