"""The files skill-creator's viewer and grader look for in a run folder, written
beside ours so `generate_review.py` shows every run of our iterations whole:

- `outputs/` for every run, even one that changed no file (the viewer lists only
  folders that have one);
- `eval_metadata.json` in the run folder (the viewer looks there or one folder up,
  not in `eval-<id>/`, where ours stays);
- `outputs/final_answer.md`: the agent's last reply (the viewer shows a run's
  output files and nothing else of it);
- `outputs/metrics.json`: where skill-creator's docs and grader put it (ours stays
  in `run-<k>/`, where our users read it);
- `transcript.md`: the prompt under `## Eval Prompt` (the viewer's fallback), the
  conversation, the final answer; what skill-creator's grader reads.

A file the agent itself produced under one of these names in outputs/ is kept,
never overwritten; `ours()` says which names in outputs/ are the workbench's, so
the judge and the Results screen see only what the agent made."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from workbench.formats.regular import read_json
from workbench.formats.save import atomic_write
from workbench.runs.transcript import ASSISTANT, TOOL_RESULT, TOOL_USE, USER, Event
from workbench.workspace import layout

ADDED = (layout.FINAL_ANSWER, layout.METRICS)  # what we may add to outputs/


def write(folder: Path, metadata: dict, events: list[Event], metrics: dict, changed: list[str]) -> None:
    """The viewer's files, not synced: the run's durable point (runner._write_run) comes before run.json."""
    outputs = folder / layout.OUTPUTS
    outputs.mkdir(parents=True, exist_ok=True)
    dump = json.dumps(metadata, indent=2, ensure_ascii=False, default=str) + "\n"
    atomic_write(folder / layout.EVAL_METADATA, dump, durable=False)
    final = final_answer(events)
    atomic_write(
        folder / layout.TRANSCRIPT_MD, transcript_md(str(metadata.get("prompt", "")), events, final), durable=False
    )
    agents = set(changed)
    if layout.FINAL_ANSWER not in agents:
        atomic_write(outputs / layout.FINAL_ANSWER, (final or "(the agent gave no final reply)") + "\n", durable=False)
    if layout.METRICS not in agents:
        atomic_write(outputs / layout.METRICS, json.dumps(metrics, indent=2) + "\n", durable=False)


def ours(record: dict[str, Any]) -> set[str]:
    """The names in outputs/ the workbench wrote (not the agent), from run.json's changed_files."""
    changed = record.get("changed_files")
    agents = set(changed) if isinstance(changed, list) else set()
    return {name for name in ADDED if name not in agents}


def ours_in(run: str | Path) -> set[str]:
    """ours() for a run folder; none for a run without run.json (skill-creator's own)."""
    try:
        record = read_json(os.path.join(run, layout.RUN_RECORD))
    except (OSError, ValueError):
        return set()
    return ours(record) if isinstance(record, dict) else set()


def final_answer(events: list[Event]) -> str:
    texts = [e.text for e in events if e.kind == ASSISTANT and e.text]
    return texts[-1] if texts else ""


def transcript_md(prompt: str, events: list[Event], final: str) -> str:
    lines = ["# Transcript", "", "## Eval Prompt", "", prompt.strip(), "", "## Conversation", ""]
    for e in events:
        if e.kind == USER:
            lines += [f"**User** (turn {e.turn}):", "", e.text.strip(), ""]
        elif e.kind == ASSISTANT and e.text:
            lines += ["**Assistant:**", "", e.text.strip(), ""]
        elif e.kind == TOOL_USE:
            lines += [f"- tool call: `{e.rendered[:2000]}`", ""]
        elif e.kind == TOOL_RESULT:
            lines += [f"- tool result{' (error)' if e.is_error else ''}: {e.text.strip()[:2000]}", ""]
    lines += ["## Final Answer", "", final.strip() or "(none)", ""]
    return "\n".join(lines)
