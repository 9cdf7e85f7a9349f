"""A seeded random-key soak: the real app (file watching on) in tmux, thousands of
keys the way people type them - navigation, typing, undo and redo, raw toggles,
add, duplicate and delete, saves, Escape - at human speed (8 a second), at
auto-repeat speed (30 a second) and in bursts (several keys in one go), while
another program writes the suite now and then.

Throughout: the app is alive and printed no traceback; after every save the file
on disk parses and the raw view (the session's data, rendered) shows exactly the
file's lines; at the end ctrl+q (answering the quit dialog) exits 0 with no rescue
file written.

WORKBENCH_SOAK_KEYS is the layer's key budget (all seeds together; default 750,
about 60 s on 2 cores), WORKBENCH_SOAK_SEEDS the seeds (default 1,2,3). The
keys of a seed are the same on every run (only their timing against the app
varies): a failure prints the line that replays it."""

from __future__ import annotations

import json
import os
import random
import string
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .harness import Terminal, copy_demo, needs_tmux, parses, raw_matches, raw_view, shows_unsaved

pytestmark = needs_tmux

SEEDS = [int(seed) for seed in os.environ.get("WORKBENCH_SOAK_SEEDS", "1,2,3").split(",") if seed.strip()]
KEYS_PER_SEED = max(50, int(os.environ.get("WORKBENCH_SOAK_KEYS", "750")) // max(1, len(SEEDS)))

HUMAN, REPEAT, BURST = 8.0, 30.0, 0.0  # keys a second; BURST: all in one send-keys
NAVIGATION = ["Up", "Down", "Left", "Right", "PageUp", "PageDown", "Home", "End", "Tab", "BTab", "Enter"]
# In the raw view the keys that cannot make the text stop parsing: moving only.
RAW_NAVIGATION = ["Up", "Down", "Left", "Right", "PageUp", "PageDown", "Home", "End"]
TYPED = string.ascii_letters + string.digits + " -_.,:;!?'\"()[]{}/@#%&*+=<>"
CONFLICT_TEXT = "changed on disk while"
RELOADED_TEXT = "changed on disk: reloaded"
QUIT_TEXT = "Unsaved edits"


@dataclass(frozen=True)
class Step:
    kind: str  # "keys", "save" (ctrl+s, then the check) or "outside" (another program writes the suite)
    keys: tuple[str, ...] = ()
    rate: float = BURST
    to_raw: bool = False  # save: the raw view is not showing, so the check presses ctrl+r

    def __str__(self) -> str:
        if self.kind == "keys":
            pace = "burst" if self.rate == BURST else f"{self.rate:g}/s"
            return f"keys {pace}: " + " ".join(repr(k) if len(k) == 1 else k for k in self.keys)
        if self.kind == "save":
            return "C-s" + (" C-r" if self.to_raw else "") + " (save, then check)"
        return "outside write"


def plan(seed: int) -> Iterator[Step]:
    """The soak's steps for a seed: endless, the same on every run. It keeps its own
    idea of whether the raw view shows (ctrl+r toggles it; the check after a save
    leaves it showing) and types letters only in the form."""
    rng = random.Random(seed)
    raw = False
    while True:
        pace = rng.choice([HUMAN, REPEAT, BURST])
        roll = rng.random()
        if roll < 0.28:
            pool = RAW_NAVIGATION if raw else NAVIGATION
            yield Step("keys", tuple(rng.choice(pool) for _ in range(rng.choice([1, 2, 3, 5, 8]))), pace)
        elif roll < 0.38:  # a held key
            key = rng.choice(["Up", "Down", "Up", "Down", "PageDown", "Left", "Right"])
            yield Step("keys", (key,) * rng.randint(5, 30), REPEAT)
        elif roll < 0.62:
            if raw:
                yield Step("keys", (rng.choice(RAW_NAVIGATION),), pace)
                continue
            word: list[str] = []
            for _ in range(rng.randint(2, 16)):
                word.append("BSpace" if rng.random() < 0.08 else rng.choice(TYPED))
            yield Step("keys", tuple(word), pace)
        elif roll < 0.70:
            yield Step("keys", tuple(rng.choice(["C-z", "C-z", "C-y"]) for _ in range(rng.randint(1, 4))), pace)
        elif roll < 0.75:
            raw = not raw
            yield Step("keys", ("C-r",), HUMAN)
        elif roll < 0.82:
            yield Step("keys", (rng.choice(["C-n", "C-d", "C-k"]),), HUMAN)
        elif roll < 0.86:
            yield Step("keys", ("Escape",), HUMAN)
        elif roll < 0.95:
            yield Step("save", ("C-s",), to_raw=not raw)
            raw = True
        else:
            yield Step("outside")


SAVE_AS_TYPED = "Save as typed"


def _types_text(step: Step) -> bool:
    """Keys that edit text in the text view (ctrl+k and ctrl+d there delete, as in any editor)."""
    return any(len(key) == 1 or key in ("BSpace", "C-k", "C-d") for key in step.keys)


class Soak:
    def __init__(self, terminal: Terminal, seed: int, budget: int) -> None:
        self.t = terminal
        self.seed, self.budget = seed, budget
        self.answers = random.Random(f"{seed}-answers")  # dialog answers and outside edits: seeded too
        self.done: list[str] = []
        self.keys_sent = 0
        self.saves = self.outside_writes = self.conflicts = 0

    # ------------------------------------------------------------ reporting

    def fail(self, why: str, screen: str | None = None) -> None:
        lines = [
            f"soak seed {self.seed}, after {self.keys_sent} keys: {why}",
            f"replay: WORKBENCH_SOAK_SEEDS={self.seed} WORKBENCH_SOAK_KEYS={self.budget} "
            "pytest tests/terminal/test_soak.py",
            "last steps:",
            *("  " + step for step in self.done[-25:]),
            "screen:",
            screen if screen is not None else self.t.screen(),
        ]
        if not self.t.running:
            lines += ["printed after the app left:", self.t.after_exit()[-20000:]]
        pytest.fail("\n".join(lines), pytrace=False)

    def check_alive(self) -> None:
        if not self.t.running:
            self.fail(f"the app exited (status {self.t.exit_status(1)})")

    def check_printed(self) -> None:
        marks = self.t.crash_marks()
        if marks:
            printed = self.t.printed()
            at = min(printed.find(mark) for mark in marks if mark in printed)
            self.fail(f"the app printed {marks}: {printed[max(0, at - 500) : at + 3000]}")

    # ------------------------------------------------------------ doing

    def send(self, step: Step) -> None:
        if step.rate == BURST:
            chunks: list[tuple[str, str]] = []
            for key in step.keys:
                kind = "text" if len(key) == 1 else "keys"
                if chunks and chunks[-1][0] == kind:
                    chunks[-1] = (kind, chunks[-1][1] + ("" if kind == "text" else " ") + key)
                else:
                    chunks.append((kind, key))
            self.t.send(chunks)
        else:
            self.t.at_rate(step.keys, step.rate)
        self.keys_sent += len(step.keys)

    def run(self) -> None:
        print(f"soak seed {self.seed}: {self.budget} keys")
        started = time.monotonic()
        for step in plan(self.seed):
            if self.keys_sent >= self.budget:
                break
            self.done.append(str(step))
            if step.kind == "keys" and _types_text(step) and raw_view(self.t.screen()) is not None:
                # The plan thought the form was showing, but the app kept the text view (a ctrl+r
                # it refused, or one that came in a burst): letters there would only break the file.
                self.done.append("  (skipped: the text view is showing)")
                continue
            if step.keys == ("C-r",):
                # A person sees the view switch before typing on; so does the soak
                # (else letters meant for the form land in the text).
                was_raw = raw_view(self.t.screen()) is not None
                self.send(step)
                self.t.wait_until(lambda screen, was=was_raw: (raw_view(screen) is not None) != was, 3)
            elif step.kind == "keys":
                self.send(step)
            elif step.kind == "save":
                self.save_and_check(step)
            else:
                self.outside_write()
            self.check_alive()
            self.answer_dialogs()
        self.finish()
        print(
            f"soak seed {self.seed}: {self.keys_sent} keys, {self.saves} saves checked, "
            f"{self.outside_writes} outside writes ({self.conflicts} conflicts) in {time.monotonic() - started:.0f} s"
        )

    def answer_dialogs(self) -> None:
        """A dialog the keys could not have opened is answered (and logged)."""
        screen = self.t.screen()
        if CONFLICT_TEXT in screen:
            self.answer_conflict(screen)
        elif SAVE_AS_TYPED in screen:
            self.done.append("  (save-as-typed dialog: Escape)")
            self.t.keys("Escape")
        elif QUIT_TEXT in screen and "Save and quit" in screen:
            self.fail("the quit dialog is up, but no ctrl+q was sent", screen)

    def answer_conflict(self, screen: str) -> None:
        self.conflicts += 1
        choice = self.answers.choice(["Escape", "Enter", "Tab Enter"])  # decide later, keep mine, the next button
        self.done.append(f"  (conflict dialog: {choice})")
        self.t.keys(*choice.split())
        if self.t.wait_until(lambda s: CONFLICT_TEXT not in s, 10) is None:
            self.fail(f"the conflict dialog did not go after {choice}")

    def save_and_check(self, step: Step) -> None:
        """ctrl+s, then the raw view: it must show the file as it is now on disk, the
        file must parse, and the header must not say unsaved."""
        before = self.stamps()
        self.t.keys("C-s")
        self.keys_sent += 1
        if step.to_raw:
            self.t.keys("C-r")
            self.keys_sent += 1
        self.saves += 1
        why = "never"
        # A ctrl+r typed while the conflict dialog is up goes to the dialog (it is modal), as for a person.
        retype_raw = False
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            self.check_alive()
            screen = self.t.screen()
            if CONFLICT_TEXT in screen:
                self.answer_conflict(screen)
                self.t.keys("C-s")  # the save the dialog interrupted, now decided
                retype_raw = step.to_raw
                continue
            shown = raw_view(screen)
            if shown is None and retype_raw:
                retype_raw = False
                if raw_view(self.t.wait_steady(0.3)) is None:
                    self.done.append("  (C-r again: the first went to the dialog)")
                    self.t.keys("C-r")
                continue
            if shown is None:
                why = "the raw view is not showing"
            else:
                rel, lines = shown
                path = self.t.skill / rel
                text = path.read_text("utf-8") if path.is_file() else ""
                problem = parses(path) if path.is_file() else f"{rel} is not on disk"
                if problem:
                    why = f"{rel} on disk does not parse: {problem}"
                elif not raw_matches(lines, text):
                    top = "\n".join(text.split("\n")[: max(lines, default=0)])
                    why = f"the raw view of {rel} is not the file on disk; the file's top:\n{top}"
                elif shows_unsaved(screen):
                    why = "the header still says unsaved after the save"
                else:
                    self.check_printed()
                    return
            time.sleep(0.1)
        after = self.stamps()
        written = sorted(rel for rel in after if after[rel] != before.get(rel)) or ["nothing"]
        self.fail(f"after ctrl+s: {why}\n(this ctrl+s wrote: {', '.join(written)})")

    def stamps(self) -> dict[str, int]:
        files = [self.t.skill / "SKILL.md", *(self.t.skill / "evals").glob("*.*")]
        return {str(p.relative_to(self.t.skill)): p.stat().st_mtime_ns for p in files if p.is_file()}

    def outside_write(self) -> None:
        """Another program edits the suite (a whole-file atomic write, as editors do);
        the app must notice: a reload, or the conflict dialog when it has edits."""
        suite = self.t.skill / "evals" / "evals.json"
        try:
            data = json.loads(suite.read_text("utf-8"))
        except ValueError as exc:
            self.fail(f"evals/evals.json on disk does not parse before an outside write: {exc}")
        cases = data.setdefault("evals", [])
        self.outside_writes += 1
        n = self.outside_writes
        what = self.answers.choice(["prompt", "add", "remove"] if len(cases) > 3 else ["prompt", "add"])
        if what == "prompt" and cases:
            case = self.answers.choice(cases)
            case["prompt"] = f"{case.get('prompt', '')} [outside edit {n}]"
        elif what == "remove":
            cases.pop(self.answers.randrange(len(cases)))
        else:
            cases.insert(
                self.answers.randrange(len(cases) + 1),
                {"id": f"outside-{self.seed}-{n}", "prompt": "p", "expected_output": "e"},
            )
        self.done[-1] += f" ({what})"
        if not self.write_and_wait(suite, data):
            screen = self.t.screen()
            # Missed once, or not watching any more? Another program writes again.
            cases.append({"id": f"outside-{self.seed}-{n}-again", "prompt": "p", "expected_output": "e"})
            again = "noticed" if self.write_and_wait(suite, data) else "not noticed either (the watcher stopped)"
            self.fail(
                "another program changed evals/evals.json and the app did not notice (no reload, no dialog "
                f"within 10 s); a second write 10 s later was {again}",
                screen,
            )

    def write_and_wait(self, suite: Path, data: dict) -> bool:
        """Write the suite as another program would; True once the app says so."""
        # An earlier reload notice going away as the new one comes would hide it from a count: wait it out.
        self.t.wait_until(lambda screen: RELOADED_TEXT not in screen, 5)
        before = self.t.screen().count(RELOADED_TEXT)
        temporary = suite.with_name(".evals.json.outside.tmp")
        temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
        os.replace(temporary, suite)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            self.check_alive()
            screen = self.t.screen()
            if CONFLICT_TEXT in screen:
                self.answer_conflict(screen)
                return True
            count = screen.count(RELOADED_TEXT)
            if count > before:
                return True
            before = min(before, count)  # an older notice went away meanwhile
            time.sleep(0.05)
        return False

    def finish(self) -> None:
        """A last save and check, then ctrl+q: a dialog if anything is unsaved (the
        header says so for the open file), answered "Save and quit"; exit 0."""
        self.done.append("(finish) C-s, then C-q")
        self.save_and_check(Step("save", ("C-s",), to_raw=raw_view(self.t.screen()) is None))
        unsaved = shows_unsaved(self.t.screen())
        self.t.keys("C-q")
        asked = self.t.wait_until(lambda s: QUIT_TEXT in s, 5)
        if asked is not None:
            self.t.keys("Tab")  # from Cancel round to "Save and quit"
            self.t.wait_steady(0.3)
            self.t.keys("Enter")
        elif unsaved:
            self.fail("the header says unsaved, and ctrl+q did not ask")
        status = self.t.exit_status(20)
        if status != 0:
            self.fail(f"ctrl+q ended with exit status {status}")
        self.check_printed()
        for path in [self.t.skill / "SKILL.md", *sorted((self.t.skill / "evals").glob("*.*"))]:
            if path.suffix in (".json", ".yaml", ".yml", ".md") and path.is_file():
                problem = parses(path)
                if problem:
                    self.fail(f"after quitting, {path.name} does not parse: {problem}")
        rescued = self.t.rescue_files()
        if rescued:
            self.fail(f"rescue files were written: {rescued}")


@pytest.mark.parametrize("seed", SEEDS)
def test_soak(seed: int, tmp_path: Path) -> None:
    terminal = Terminal(tmp_path, copy_demo(tmp_path), size=(120, 40), watch=True)
    try:
        assert terminal.wait_for("^s Save", 30), terminal.screen()
        Soak(terminal, seed, KEYS_PER_SEED).run()
    finally:
        terminal.close()


def test_the_soak_keys_are_the_same_for_a_seed_and_differ_between_seeds() -> None:
    """Replaying a seed replays its keys: the plan depends on the seed only."""

    def first(seed: int, count: int = 200) -> list[str]:
        steps = plan(seed)
        return [str(next(steps)) for _ in range(count)]

    assert first(7) == first(7)
    assert first(7) != first(8)
    kinds = " ".join(first(7, 400))
    for key in ("C-s", "C-z", "C-r", "outside write", "PageDown", "BTab", "Escape", "burst", "30/s", "8/s"):
        assert key in kinds, key
