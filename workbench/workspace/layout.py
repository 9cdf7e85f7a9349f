"""The iteration layout, both ways: where each file of a run is written, and
listing the runs back. skill-creator's layout, so its viewer and aggregator
read ours:

    <workspace>/iteration-N/plan.json, benchmark.json, benchmark.md, feedback.json
    <workspace>/iteration-N/eval-<id>/eval_metadata.json
    <workspace>/iteration-N/eval-<id>/<configuration>/run-<k>/{run.json, grading.json, ...}

skill-creator's own iterations are read too (they have no plan.json and no
run.json): with run-<k> folders as above, or flat, the configuration folder
being the one run (`eval-<id>/<configuration>/{outputs/, grading.json}`, as its
SKILL.md lays them out).

Nothing else builds or parses these names. A case id is free text from an evals
file: it becomes a folder name through encode_id(), reversible and confined
(a plain id such as `export-json` or `7` stays as it is, so skill-creator's
viewer reads our folders; anything else is percent-encoded). Plain os calls: listing 10,000 runs
with pathlib costs more than reading them. No git here (reports import this)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from workbench.formats.record import Record

PLAN = "plan.json"
BENCHMARK = "benchmark.json"
BENCHMARK_MD = "benchmark.md"
FEEDBACK = "feedback.json"
EVAL_METADATA = "eval_metadata.json"
RUN_RECORD = "run.json"  # ours, written last: a run is finished when it exists
GRADING = "grading.json"
TRANSCRIPT = "transcript.jsonl"
TRANSCRIPT_MD = "transcript.md"  # for skill-creator's grader and viewer (the prompt, the conversation)
FINAL_ANSWER = "final_answer.md"  # in outputs/: the one place skill-creator's viewer shows a run's files
TIMING = "timing.json"
METRICS = "metrics.json"
DIFF = "diff.patch"
OUTPUTS = "outputs"
REPO = "repo"
TREES = "trees"  # the run's own object store: its baseline and the tree the agent left (workspace/trees.py)

ITERATION_PREFIX, EVAL_PREFIX, RUN_PREFIX = "iteration-", "eval-", "run-"


_PLAIN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
_NAME_MAX = 200  # bytes of an encoded id: eval-<id> stays under every file system's 255


def encode_id(case_id: str) -> str:
    """A case id as a folder name: unchanged when it is plain (letters, digits, `.`,
    `_`, `-`, not starting with a dot), else every byte outside [A-Za-z0-9_-] and
    every dot is %XX. Reversible (decode_id), never `.`, `..`, `.git` or a path,
    and two different ids never give the same name. Ids that differ only in case
    would share a folder on a case-insensitive file system: check_ids() refuses them."""
    if _PLAIN.fullmatch(case_id) and "%" not in case_id:
        return case_id
    return "".join(
        chr(b) if chr(b).isalnum() and b < 128 or chr(b) in "_-" else f"%{b:02X}"
        for b in case_id.encode("utf-8", "surrogatepass")
    )


def decode_id(name: str) -> str:
    """encode_id's inverse."""
    if "%" not in name:
        return name
    out, index, raw = bytearray(), 0, name.encode()
    while index < len(raw):
        if raw[index] == ord("%") and _hex(raw[index + 1 : index + 3]):
            out.append(int(raw[index + 1 : index + 3], 16))
            index += 3
        else:
            out.append(raw[index])
            index += 1
    return out.decode("utf-8", errors="surrogatepass")


def _hex(two: bytes) -> bool:
    return len(two) == 2 and all(chr(c) in "0123456789ABCDEFabcdef" for c in two)


def check_ids(case_ids: list[str]) -> None:
    """Raises ValueError when ids cannot all have folders of their own: two that
    differ only in case (one folder on macOS and Windows), or one too long."""
    seen: dict[str, str] = {}
    for case_id in case_ids:
        name = encode_id(case_id)
        if len(name.encode()) > _NAME_MAX:
            raise ValueError(f"eval id {case_id[:40]!r}... is too long to name a folder; shorten it")
        other = seen.setdefault(name.lower(), case_id)
        if other != case_id:
            raise ValueError(
                f"eval ids {other!r} and {case_id!r} differ only in case; they would share a folder on a "
                "case-insensitive file system. Rename one."
            )


def iteration_dir(workspace: Path, iteration: int) -> Path:
    return workspace / f"{ITERATION_PREFIX}{iteration}"


def iteration_numbers(workspace: Path) -> list[int]:
    return sorted(
        int(name[len(ITERATION_PREFIX) :])
        for name in folders(str(workspace), ITERATION_PREFIX)
        if name[len(ITERATION_PREFIX) :].isdigit()
    )


def eval_dir(iteration: Path, case_id: str) -> Path:
    return iteration / f"{EVAL_PREFIX}{encode_id(case_id)}"


def run_dir(iteration: Path, case_id: str, configuration: str, run_number: int) -> Path:
    return eval_dir(iteration, case_id) / configuration / f"{RUN_PREFIX}{run_number}"


class RunFolder(Record):
    """One run folder of an iteration (a plain record: a report makes one per run, and imports this)."""

    __slots__ = ("path", "eval_folder", "configuration", "number", "flat")
    __hash__ = Record.frozen_hash  # type: ignore[assignment]

    def __init__(self, path: str, eval_folder: str, configuration: str, number: int, flat: bool = False) -> None:
        self.path = path  # the run folder
        self.eval_folder = eval_folder  # eval-<encoded id>
        self.configuration = configuration
        self.number = number
        self.flat = flat  # skill-creator's flat layout: the configuration folder is the run

    @property
    def case_id(self) -> str:
        return decode_id(self.eval_folder[len(EVAL_PREFIX) :])

    @property
    def relative(self) -> str:
        """eval-<id>/<configuration>/run-<k> (flat: eval-<id>/<configuration>), as benchmark.json
        and the viewer name a run."""
        if self.flat:
            return f"{self.eval_folder}/{self.configuration}"
        return f"{self.eval_folder}/{self.configuration}/{RUN_PREFIX}{self.number}"


def eval_folders(iteration: Path | str) -> list[str]:
    return sorted(folders(str(iteration), EVAL_PREFIX))


def runs(iteration: Path | str, eval_folder: str | None = None) -> list[RunFolder]:
    """Every run folder of an iteration (or of one of its evals), in order:
    eval, configuration, run number."""
    out = []
    for name in [eval_folder] if eval_folder else eval_folders(iteration):
        eval_path = os.path.join(iteration, name)
        for configuration in sorted(folders(eval_path, "")):
            base = os.path.join(eval_path, configuration)
            numbered = [(run_number(run), run) for run in folders(base, RUN_PREFIX)]
            out += [RunFolder(os.path.join(base, run), name, configuration, number) for number, run in sorted(numbered)]
            if not numbered and _is_flat_run(base):
                out.append(RunFolder(base, name, configuration, 1, flat=True))
    return out


def _is_flat_run(folder: str) -> bool:
    """A configuration folder that is itself a run (skill-creator's flat layout): it
    holds the run's outputs/ or grading.json, and no run-<k> folders."""
    return os.path.isdir(os.path.join(folder, OUTPUTS)) or os.path.lexists(os.path.join(folder, GRADING))


def run_number(name: str) -> int:
    number = name.rsplit(RUN_PREFIX, 1)[-1]
    return int(number) if number.isdigit() else 0


def folders(parent: str, prefix: str) -> list[str]:
    try:
        with os.scandir(parent) as entries:
            return [e.name for e in entries if e.name.startswith(prefix) and e.is_dir()]
    except OSError:
        return []


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
    return max(iteration_numbers(workspace), default=0) + 1
