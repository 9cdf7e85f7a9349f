"""What one run left behind, read for a person or a judge: its conversation
(transcript.jsonl), its output files and its diff.patch. The Results screen, the
HTML report and the judge read these. Everything here came from an agent (or a
cluster's worker): read through runs/agent_files.py, which never follows a link nor
opens a pipe or a device, and cut with a note where it is long, so one huge file
cannot swamp a screen, a page or a judge's prompt."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from workbench.runs import agent_files, viewer_files

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
        raw = agent_files.read(path.parent, path.name, TRANSCRIPT_LIMIT, cut=True)
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
    for folder in (run / "outputs", run):
        try:
            text = agent_files.read_text(folder, MARKDOWN, TRANSCRIPT_LIMIT, cut=True)
            break
        except OSError:
            continue
    else:
        return [], "no transcript.jsonl"
    return (
        [Event(MARKDOWN, None, text)] if text.strip() else []
    ), "the transcript is empty" if not text.strip() else ""


def outputs(folder: Path, file_limit: int = FILE_LIMIT, most: int = OUTPUT_FILES) -> tuple[list[OutputFile], str]:
    """The files under outputs/ (a link is named with its target, never followed; a pipe or a
    device is named, never opened) and a note."""
    if folder.is_symlink():
        return [], "outputs/ is a link: not followed"
    if not folder.is_dir():
        return [], "no outputs/: the run produced no files"
    found = _agents(folder)
    files_shown = []
    for entry in found[:most]:
        if entry.kind == agent_files.LINK:
            files_shown.append(OutputFile(entry.path, "", f"a link to {entry.target}, not followed"))
            continue
        if entry.kind != agent_files.FILE:
            files_shown.append(OutputFile(entry.path, "", f"{entry.why}, not read"))
            continue
        try:
            data = agent_files.read(folder, entry.path, file_limit, cut=True)
        except OSError as exc:
            files_shown.append(OutputFile(entry.path, "", f"cannot be read: {exc.strerror or exc}"))
            continue
        if b"\0" in data[:8192]:  # as git decides a file is binary
            files_shown.append(OutputFile(entry.path, "", f"binary, {entry.size:,} bytes"))
            continue
        # errors="replace": a cut can fall inside a character
        text = data.decode("utf-8", errors="replace")
        cut = f"cut at {file_limit:,} of {entry.size:,} bytes" if entry.size > file_limit else ""
        files_shown.append(OutputFile(entry.path, text, cut))
    note = f"{len(found) - most:,} more file(s) not shown" if len(found) > most else ""
    return files_shown, note or ("" if found else "the run produced no files")


def outputs_text(folder: Path, limit: int) -> dict[str, str]:
    """The text of what the agent produced, as a judge is given it: the regular files of outputs/
    that are UTF-8 text (links, pipes, devices and binary files left out), less what the workbench
    added there for skill-creator's tools, `limit` characters in all."""
    out: dict[str, str] = {}
    budget = limit
    if folder.is_symlink() or not folder.is_dir():
        return out
    for entry in _agents(folder):
        if entry.kind != agent_files.FILE or budget <= 0:
            continue
        try:  # at most 4 bytes a character: this many bytes hold `budget` characters
            data = agent_files.read(folder, entry.path, budget * 4, cut=True)
        except OSError:
            continue
        text = _utf8(data, cut=entry.size > len(data))
        if text is None:
            continue  # binary output: the judge gets the text files
        out[entry.path] = text[:budget]
        budget -= len(text)
    return out


def output_object(folder: Path, name: str) -> dict:
    """A JSON object from a file of outputs/ (skill-creator's executor writes metrics.json there), or
    {} when it is missing, a link, unreadable or not an object."""
    try:
        data = json.loads(agent_files.read(folder, name))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _agents(folder: Path) -> list[agent_files.Entry]:
    """What is in outputs/ but folders, less the files we put there for skill-creator's viewer."""
    added = viewer_files.ours_in(folder.parent)
    return [e for e in agent_files.entries(folder) if e.kind != agent_files.FOLDER and e.path not in added]


def _utf8(data: bytes, cut: bool) -> str | None:
    """data as UTF-8, or None when it is not text; a cut may fall inside the last character."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8", errors="replace")
        return None


def diff(path: Path, limit: int = FILE_LIMIT) -> tuple[str, str]:
    """The run's diff.patch and a note."""
    try:
        text = agent_files.read_text(path.parent, path.name, limit, cut=True)
        size = path.lstat().st_size
    except OSError:
        return "", "no diff.patch: this run has not been graded, or it changed nothing"
    return text, (f"cut at {limit:,} of {size:,} bytes" if size > limit else ("" if text else "no changes"))
