"""Packaging: every third-party module the package imports is a declared
dependency, and a real wheel (what `pip install .` installs) carries the demo
skill and the themes, which the installed copy finds and uses on its own."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "workbench"


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(extra: str | None = None) -> set[str]:
    """The [project] dependencies, or those of one optional extra."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    names = set()
    wanted = project.get("dependencies", []) if extra is None else project["optional-dependencies"][extra]
    for requirement in wanted:
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        assert match, f"pyproject.toml: cannot read the dependency {requirement!r}"
        names.add(_normal(match.group(1)))
    return names


def _imported() -> dict[str, set[str]]:
    """Top-level module -> the files importing it: every import statement (inside
    functions too) and every importlib.import_module("literal") under workbench/."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(REPO))
        for node in ast.walk(ast.parse(path.read_text("utf-8"), where)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and not node.args[0].value.startswith(".")
            ):
                names = [node.args[0].value]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(where)
    return found


def test_an_optional_extra_is_imported_only_inside_functions():
    """Importing the workbench never needs an extra: its module imports it lazily."""
    for extra, where in EXTRAS.items():
        modules = {_normal(name).replace("-", "_") for name in _declared(extra)}
        bodies = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        at_load = [
            n
            for top in ast.parse((REPO / where).read_text("utf-8")).body
            if not isinstance(top, bodies)
            for n in ast.walk(top)
        ]
        for node in at_load:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not {n.split(".")[0] for n in names} & modules, f"{where} imports the {extra} extra at load"


def test_the_import_scan_sees_imports_inside_functions():
    imported = _imported()
    assert "workbench/config.py" in imported["platformdirs"]  # imported inside config_dir()
    assert "textual" in imported and "json" in imported


# Features behind an optional extra: the one module that imports it, only inside its functions (the
# workbench runs without the extra and says how to install it when the feature is asked for).
EXTRAS = {"cluster": "workbench/runs/cluster.py"}


def test_every_third_party_import_is_a_declared_dependency():
    declared, providers = _declared(), packages_distributions()
    optional = {name: extra for extra in EXTRAS for name in _declared(extra)}
    problems = []
    for module, files in sorted(_imported().items()):
        if module in sys.stdlib_module_names or module == "workbench":
            continue
        shown = ", ".join(sorted(files))
        dists = {_normal(d) for d in providers.get(module, [])}
        extras = {optional[d] for d in dists if d in optional}
        if extras and not dists & declared:
            allowed = {EXTRAS[extra] for extra in extras}
            if files - allowed:
                problems.append(f"{module} (the extra {extras}) is imported outside {allowed}: in {shown}")
            continue
        if not dists:
            problems.append(f"{module} (imported in {shown}): no installed distribution provides it")
        elif not dists & declared:
            problems.append(
                f"{module} (imported in {shown}) comes from {' or '.join(sorted(dists))}, "
                "which pyproject.toml's [project] dependencies do not declare"
            )
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- the wheel

NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".hypothesis",
    "*-workspace",
    "snapshot_report.html",
)


def _build(*argv: str, cwd: Path) -> None:
    done = subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """A wheel built from a clean copy of the checkout (as `pip install .` builds it), the sdist,
    and a wheel built from that sdist (as `python -m build` does). No build isolation: the
    environment's setuptools builds them, offline."""
    base = tmp_path_factory.mktemp("packaging")
    source = base / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    pip_wheel = ("-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--disable-pip-version-check", "-q")
    _build(*pip_wheel, "-w", str(base / "wheel"), str(source), cwd=base)
    _build("-c", f"from setuptools import build_meta; build_meta.build_sdist({str(base / 'sdist')!r})", cwd=source)
    (sdist,) = (base / "sdist").glob("*.tar.gz")
    _build(*pip_wheel, "-w", str(base / "wheel-from-sdist"), str(sdist), cwd=base)
    (wheel,) = (base / "wheel").glob("*.whl")
    (wheel_from_sdist,) = (base / "wheel-from-sdist").glob("*.whl")
    return {"base": base, "wheel": wheel, "sdist": sdist, "wheel_from_sdist": wheel_from_sdist}


def _shipped() -> list[str]:
    """The demo and theme files of the checkout, as the package carries them."""
    names = []
    for folder in ("demo", "themes"):
        for path in sorted((REPO / folder).rglob("*")):
            relative = path.relative_to(REPO)
            if path.is_file() and "__pycache__" not in relative.parts and not relative.parts[1].endswith("-workspace"):
                names.append(f"workbench/_bundled/{relative.as_posix()}")
    return names


@pytest.mark.slow  # 13 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@pytest.mark.parametrize("kind", ["wheel", "wheel_from_sdist"])
def test_the_wheel_carries_the_demo_skill_and_the_themes(built, kind):
    with zipfile.ZipFile(built[kind]) as wheel:
        names = set(wheel.namelist())
    for needed in (
        "workbench/_bundled/demo/changelog-entry/SKILL.md",
        "workbench/_bundled/demo/changelog-entry/evals/evals.json",
        "workbench/_bundled/demo/draft/changelog-entry/SKILL.md",
        "workbench/_bundled/themes/workbench-dark.json",
        "workbench/formats/schemas/skill-creator.evals.schema.json",
    ):
        assert needed in names, f"{built[kind].name} lacks {needed}"
    missing = [name for name in _shipped() if name not in names]
    assert not missing, f"{built[kind].name} lacks {missing}"
    assert not any(name.startswith(("demo/", "themes/")) for name in names)  # nothing at the top of site-packages


def test_the_sdist_carries_the_root_folders(built):
    with tarfile.open(built["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"setup.py", "MANIFEST.in", "demo/changelog-entry/SKILL.md", "themes/workbench-dark.json"} <= names


INSTALLED = """
import json, sys
sys.path.insert(0, sys.argv[1])
import workbench, workbench.config, workbench.app.skills
demo, draft = workbench.app.skills.copy_demo(), workbench.app.skills.copy_demo(draft=True)
print(json.dumps({"package": workbench.__file__, "demo": str(demo), "draft": str(draft),
                  "themes": str(workbench.config.bundled("themes"))}))
"""


def test_the_installed_wheel_finds_its_demo_and_themes_outside_the_checkout(built, tmp_path):
    target = tmp_path / "site"
    _build(
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--disable-pip-version-check",
        "-q",
        "--target",
        str(target),
        str(built["wheel"]),
        cwd=tmp_path,
    )
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "tmp").mkdir(parents=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "TMPDIR": str(elsewhere / "tmp"),
        "HOME": str(elsewhere),
        "WORKBENCH_CONFIG_DIR": str(elsewhere / "config"),
    }
    # -I: no PYTHONPATH, no current folder on sys.path; the installed copy goes first on sys.path,
    # before the environment's editable install of the checkout.
    done = subprocess.run(
        [sys.executable, "-I", "-c", INSTALLED, str(target)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert Path(found["package"]).is_relative_to(target), found  # the installed copy, not the checkout
    assert Path(found["themes"]) == target / "workbench" / "_bundled" / "themes"
    assert (Path(found["themes"]) / "workbench-dark.json").is_file()
    demo, draft = Path(found["demo"]), Path(found["draft"])
    assert demo.is_relative_to(elsewhere / "tmp") and not demo.is_relative_to(REPO)
    assert (demo / "SKILL.md").is_file() and (demo / "evals" / "evals.json").is_file()
    assert (demo / "evals" / "fixtures").is_dir() and not list(demo.rglob("__pycache__"))
    assert (draft / "SKILL.md").read_text() == (REPO / "demo/draft/changelog-entry/SKILL.md").read_text()
    # and the installed copy validates its demo with its own schemas
    check = (
        "import sys; sys.path.insert(0, sys.argv[1]); sys.argv[1:] = ['validate', sys.argv[2]]; "
        "from workbench.cli import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", check, str(target), str(demo)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "0 errors" in done.stdout + done.stderr, done.stdout + done.stderr
