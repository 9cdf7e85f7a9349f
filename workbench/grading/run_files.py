"""What one run left behind, read for a person: its conversation (transcript.jsonl),
its output files and its diff.patch. The Results screen and the HTML report both
show these. Everything here came from an agent: read through the bounded reader
(formats.regular), never following a link out of the run, and cut with a note
where it is long, so one huge file cannot swamp a screen or a page."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from workbench.formats.regular import read_regular
from workbench.runs import viewer_files

RESULT_LIMIT = 2000  # characters of one tool result shown; the rest is in transcript.jsonl
FILE_LIMIT = 200_000  # bytes of one output file or diff.patch read
TRANSCRIPT_LIMIT = 8 * 1024 * 1024  # bytes of transcript.jsonl read
OUTPUT_FILES = 200  # output files listed at most
MARKDOWN = "transcript.md"  # skill-creator's conversation, where a run has no transcript.jsonl

LABELS = {
    "user": "user",
    "assistant": "assistant",
    "tool_use": "tool call",
    "tool_result": "result",
}


@dataclass
class Event:
    """One line of the conversation: a message, a tool call or result, or a turn marker."""

    kind: str  # user, assistant, tool_use, tool_result, turn, or what the transcript says
    turn: object
    text: str
    error: bool = False  # a tool result that reported an error

    @property
    def label(self) -> str:
        return LABELS.get(self.kind, self.kind) + (" (error)" if self.error else "")


@dataclass
class OutputFile:
    name: str  # relative to outputs/
    text: str  # the text, or "" when binary or unreadable
    note: str = ""  # why the text is cut or missing


def conversation(path: Path, result_limit: int = RESULT_LIMIT) -> tuple[list[Event], str]:
    """The run's events and a note ("" or what is missing or cut)."""
    try:
        raw = read_regular(path, TRANSCRIPT_LIMIT, cut=True)
    except OSError:
        return _transcript_md(path.parent)
    note = ""
    if len(raw) >= TRANSCRIPT_LIMIT:
        note = f"transcript.jsonl is over {TRANSCRIPT_LIMIT:,} bytes: only its start is shown"
    events = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = str(event.get("kind", ""))
        text = str(event.get("rendered") or event.get("text", ""))
        if kind == "tool_result" and len(text) > result_limit:
            text = text[:result_limit] + f" … ({len(text) - result_limit:,} more characters in transcript.jsonl)"
        events.append(Event(kind, event.get("turn"), text, bool(event.get("is_error"))))
    return events, note or ("" if events else "the transcript is empty")


def excerpt(run: Path, limit: int) -> str:
    """The end of a run's conversation as lines `[kind] text`, at most `limit` characters: where it went wrong
    is usually near the end (a brief for a proposer quotes it)."""
    events, _note = conversation(run / "transcript.jsonl", result_limit=300)
    lines = [f"[{e.kind}] {' '.join(e.text.split())[:400]}" for e in events]
    text = "\n".join(lines)
    return text if len(text) <= limit else "… " + text[-limit:]


def _transcript_md(run: Path) -> tuple[list[Event], str]:
    """A skill-creator run has its conversation as transcript.md (its executor writes
    it into outputs/; ours beside them is for its viewer): shown as written, one event."""
    for path in (run / "outputs" / MARKDOWN, run / MARKDOWN):
        try:
            text = read_regular(path, TRANSCRIPT_LIMIT, cut=True).decode("utf-8", errors="replace")
            break
        except OSError:
            continue
    else:
        return [], "no transcript.jsonl"
    return (
        [Event(MARKDOWN, None, text)] if text.strip() else []
    ), "the transcript is empty" if not text.strip() else ""


def outputs(folder: Path, file_limit: int = FILE_LIMIT, most: int = OUTPUT_FILES) -> tuple[list[OutputFile], str]:
    """The files under outputs/ (links are named, not followed) and a note."""
    if not folder.is_dir() or folder.is_symlink():
        return [], "no outputs/: the run produced no files"
    paths: list[Path] = []
    added = viewer_files.ours_in(folder.parent)  # what we put there for skill-creator's viewer, not the agent
    for root, dirs, files in os.walk(folder):  # os.walk does not descend into linked folders
        dirs.sort()
        paths += (Path(root) / name for name in sorted(files) if not (Path(root) == folder and name in added))
    files_shown = []
    for path in paths[:most]:
        name = str(path.relative_to(folder))
        if path.is_symlink():
            files_shown.append(OutputFile(name, "", "a link, not followed"))
            continue
        try:
            data = read_regular(path, file_limit, cut=True)
            size = path.stat().st_size
        except OSError as exc:
            files_shown.append(OutputFile(name, "", f"cannot be read: {exc.strerror or exc}"))
            continue
        if b"\0" in data[:8192]:  # as git decides a file is binary
            files_shown.append(OutputFile(name, "", f"binary, {size:,} bytes"))
            continue
        # errors="replace": a cut can fall inside a character
        text = data.decode("utf-8", errors="replace")
        files_shown.append(
            OutputFile(name, text, f"cut at {file_limit:,} of {size:,} bytes" if size > file_limit else "")
        )
    note = f"{len(paths) - most:,} more file(s) not shown" if len(paths) > most else ""
    return files_shown, note or ("" if paths else "the run produced no files")


def diff(path: Path, limit: int = FILE_LIMIT) -> tuple[str, str]:
    """The run's diff.patch and a note."""
    try:
        text = read_regular(path, limit, cut=True).decode("utf-8", errors="replace")
        size = path.stat().st_size
    except OSError:
        return "", "no diff.patch: this run has not been graded, or it changed nothing"
    return text, (f"cut at {limit:,} of {size:,} bytes" if size > limit else ("" if text else "no changes"))
