"""Chock's deterministic mode: replay a case's `execute` against the policy and
compare with its expect (block/allow).

- A `command` goes to the policy's guard script (implementations/*.sh) as its
  arguments, split like a shell would: exit 1 blocks, 0 allows, anything else is
  an error.
- Gate cases build a throwaway git repository: head_files committed, the branch
  checked out, repo_files left untracked, files staged; push events carry
  push_refs. Then the manifest's gate decides. Chock's gates are declarative
  (content_regex, forbidden_ref, dependency_allowlist); their patterns are
  Python regexes, as chock's own gate runner reads them."""

from __future__ import annotations

import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from workbench.formats import paths
from workbench.formats.document import Document, load
from workbench.grading.verdict import Verdict, tail
from workbench.runs.processes import run_bounded
from workbench.workspace import safe_git

BLOCK, ALLOW = "block", "allow"


@dataclass
class Policy:
    folder: Path
    manifest: dict
    guard: Path | None

    @property
    def gate(self) -> dict | None:
        hook = self.manifest.get("hook")
        return hook.get("gate") if isinstance(hook, dict) and isinstance(hook.get("gate"), dict) else None


def policy_of(suite: Path) -> Policy | None:
    """The policy a suite at <policy>/evals/suite.yaml belongs to."""
    folder = suite.resolve().parent.parent
    manifest_file = folder / "manifest.yaml"
    if not manifest_file.is_file():
        return None
    parsed = load(manifest_file)
    manifest = parsed.data if isinstance(parsed, Document) else None
    guards = sorted((folder / "implementations").glob("*.sh"))
    return Policy(folder, manifest if isinstance(manifest, dict) else {}, guards[0] if len(guards) == 1 else None)


def guard_commands(policy: Policy | None, cases: list[dict]) -> list[str]:
    """What would run, for the trust dialog: the guard with each case's arguments."""
    if policy is None or policy.guard is None:
        return []
    return [
        f"bash {policy.guard} {c['execute']['command']}"
        for c in cases
        if isinstance(c.get("execute"), dict) and isinstance(c["execute"].get("command"), str)
    ]


def gate_replays(policy: Policy | None, cases: list[tuple[str, dict]]) -> list[str]:
    """Gate replays (an execute with no command), for the trust dialog: each builds a
    git repository from the case's files."""
    out: list[str] = []
    if policy is None:
        return out
    for case_id, case in cases:
        execute = case.get("execute")
        if isinstance(execute, dict) and not isinstance(execute.get("command"), str):
            event = execute.get("event", "commit")
            out.append(f"replay the {event} gate of case {case_id} (builds a git repository from its files)")
    return out


def replay(policy: Policy | None, execute: dict, timeout: float = 60.0) -> Verdict:
    expect = execute.get("expect")
    if policy is None:
        return Verdict(False, "no manifest.yaml beside evals/: the policy to replay is unknown", error=True)
    if isinstance(execute.get("command"), str):
        decision, why = _guard(policy, execute["command"], timeout)
    else:
        decision, why = _gate(policy, execute)
    if decision is None:
        return Verdict(False, f"replay error: {why}", error=True)
    return Verdict(decision == expect, f"{decision} (expected {expect}): {why}")


def _guard(policy: Policy, command: str, timeout: float) -> tuple[str | None, str]:
    if policy.guard is None:
        return None, f"{policy.folder.name} has no single guard script under implementations/"
    try:
        arguments = shlex.split(command)
    except ValueError as exc:
        return None, f"cannot split {command!r}: {exc}"
    with tempfile.TemporaryDirectory(prefix="workbench-guard-") as cwd:
        try:
            finished = run_bounded(["bash", str(policy.guard), *arguments], "", timeout, cwd=cwd)
        except OSError as exc:
            return None, f"could not start bash: {exc.strerror or exc}"
    if finished.code is None:
        return None, f"the guard {finished.evidence}"
    code, said = finished.code, tail((finished.stderr + finished.stdout).strip(), 200)
    if finished.evidence:
        said = f"{said} ({finished.evidence})".strip()
    if code == 1:
        return BLOCK, f"{policy.guard.name} exited 1" + (f": {said}" if said else "")
    if code == 0:
        return ALLOW, f"{policy.guard.name} exited 0"
    return None, f"{policy.guard.name} exited {code} (neither 0 nor 1): {said}"


def _gate(policy: Policy, execute: dict) -> tuple[str | None, str]:
    gate = policy.gate
    if gate is None:
        return None, f"{policy.folder.name}'s manifest declares no hook gate"
    event = execute.get("event", "commit")
    if event not in (gate.get("on") or ["commit"]):
        return ALLOW, f"the gate does not run on {event}"
    kind, params = gate.get("kind"), gate.get("params") or {}
    with tempfile.TemporaryDirectory(prefix="workbench-gate-") as folder:
        try:
            repo = _build_repo(Path(folder), execute)
        except (ValueError,) + safe_git.errors() as exc:
            return None, f"cannot build the replay's repository: {exc}"
        if kind == "content_regex":
            return _content_regex(repo, params)
        if kind == "forbidden_ref":
            return _forbidden_ref(repo, params, event, execute.get("push_refs") or [])
        if kind == "dependency_allowlist":
            return _dependency_allowlist(repo, params)
    return None, f"unknown gate kind {kind!r}"


def _write(root: Path, files: dict | None, field: str) -> None:
    """The suite's files into the replay's repository: confined to it, never under .git
    (a .git/config there would make git run a command; the lint refuses these too)."""
    for name in files or {}:
        problem = paths.relative_problem(str(name), f"{field} path")
        if problem:
            raise ValueError(f"{field}: {problem}")
    for name, text in (files or {}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(text), encoding="utf-8")


def _build_repo(root: Path, execute: dict) -> Path:
    """The replay's repository, built through safe_git: nothing in it runs."""
    safe_git.run(["init", "-q", "--template=", "--initial-branch=main"], root)
    _write(root, execute.get("head_files"), "head_files")
    safe_git.run(["add", "-A"], root)
    identity = safe_git.identity("workbench", "workbench@localhost")
    safe_git.run(["commit", "-q", "--allow-empty", "--no-verify", "--no-gpg-sign", "-m", "head"], root, identity)
    branch = execute.get("branch")
    if branch and branch != "main":
        safe_git.run(["checkout", "-q", "-b", str(branch)], root)
    _write(root, execute.get("files"), "files")
    if execute.get("files"):
        safe_git.run(["add", "--", *[str(n) for n in execute["files"]]], root)
    _write(root, execute.get("repo_files"), "repo_files")  # untracked
    return root


def _staged_additions(repo: Path) -> dict[str, list[str]]:
    """Staged path -> its added lines."""
    out: dict[str, list[str]] = {}
    current = None
    diff = ["diff", *safe_git.DIFF_SAFE, "--cached", "--no-renames"]
    for line in safe_git.run([*diff, "--unified=0", "--no-color"], repo).splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else None
            if current is not None:
                out.setdefault(current, [])
        elif line.startswith("+") and current is not None:
            out[current].append(line[1:])
    for name in safe_git.run([*diff, "--name-only"], repo).splitlines():
        out.setdefault(name, [])
    return out


def _content_regex(repo: Path, params: dict) -> tuple[str | None, str]:
    try:
        pattern = re.compile(params.get("content_pattern") or "(?!)")
        pragma = re.compile(params["allowlist_pragma"]) if params.get("allowlist_pragma") else None
        forbidden = re.compile(params["forbidden_path_regex"]) if params.get("forbidden_path_regex") else None
    except re.error as exc:
        return None, f"the gate's pattern does not compile: {exc}"
    for path, lines in _staged_additions(repo).items():
        if forbidden is not None and forbidden.search(path):
            return BLOCK, f"staged path {path} matches forbidden_path_regex"
        for line in lines:
            if pattern.search(line) and not (pragma and pragma.search(line)):
                return BLOCK, f"{path}: added line matches content_pattern: {line[:120]!r}"
    return ALLOW, "no added line matches content_pattern"


def _forbidden_ref(repo: Path, params: dict, event: str, push_refs: list[str]) -> tuple[str | None, str]:
    refs = set(params.get("refs") or [])
    if event == "push":
        for ref in push_refs:
            name = str(ref).removeprefix("refs/heads/")
            if name in refs:
                return BLOCK, f"push to protected {ref}"
        return ALLOW, f"pushed refs {', '.join(map(str, push_refs)) or 'none'} are not protected"
    branch = safe_git.run(["symbolic-ref", "--short", "HEAD"], repo)
    if branch in refs:
        return BLOCK, f"commit on protected branch {branch}"
    return ALLOW, f"commit on {branch}, not a protected branch"


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_QUOTED = re.compile(r"""["']([A-Za-z0-9@][A-Za-z0-9._/@-]*)""")


def _dependencies(path: str, line: str) -> list[str]:
    """Package names an added manifest line declares."""
    name = Path(path).name
    stripped = line.strip()
    if not stripped or stripped.startswith(("#", "//", "[")):
        return []
    if name == "requirements.txt":
        match = _REQUIREMENT.match(stripped)
        return [match.group(1)] if match and not stripped.startswith("-") else []
    if name == "pyproject.toml":
        if "=" in stripped and not stripped.startswith("dependencies"):
            return []
        return [re.split(r"[<>=!~\[; ]", q, maxsplit=1)[0] for q in _QUOTED.findall(stripped.split("=", 1)[-1])]
    if name == "package.json":
        match = re.match(r'"([^"]+)"\s*:\s*"', stripped)
        return [match.group(1)] if match else []
    if name == "go.mod":
        match = re.match(r"(?:require\s+)?([\w.-]+\.[\w.-]+/\S+)\s+v", stripped)
        return [match.group(1)] if match else []
    return []


def _dependency_allowlist(repo: Path, params: dict) -> tuple[str | None, str]:
    manifests = set(params.get("manifests") or [])
    allow_file = repo / (params.get("allowlist_file") or ".chock/dependency-allowlist.txt")
    allowed = set()
    if allow_file.is_file():
        allowed = {
            line.strip().lower()
            for line in allow_file.read_text().splitlines()
            if line.strip() and not line.startswith("#")
        }
    for path, lines in _staged_additions(repo).items():
        if Path(path).name not in manifests:
            continue
        for line in lines:
            for dependency in _dependencies(path, line):
                if dependency.lower() not in allowed:
                    return BLOCK, f"{path} adds {dependency}, which is not in {params.get('allowlist_file')}"
    return ALLOW, "every added dependency is on the allowlist"
