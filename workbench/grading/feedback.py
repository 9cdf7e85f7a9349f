"""A person's review of an iteration: feedback.json in skill-creator's viewer
format ({"reviews": [{run_id, feedback, timestamp}], "status"}), so either tool
reads what the other wrote, and the failures a person marked as reviewed.

A run's id is its folder relative to the iteration with "/" turned into "-"
(eval-3-with_skill-run-1), as the viewer names runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from workbench.formats import artifacts
from workbench.formats.regular import read_object
from workbench.formats.save import atomic_write
from workbench.grading.artifact import write_artifact
from workbench.workspace import layout

REVIEWED = "reviewed.json"  # ours: which failed expectations a person has looked at


def run_id(folder: str) -> str:
    return folder.strip("/").replace("/", "-")


class Feedback:
    def __init__(self, iteration: Path) -> None:
        self.iteration = iteration
        self.path = iteration / layout.FEEDBACK
        data = read_object(self.path)
        self.extra = {k: v for k, v in data.items() if k not in ("reviews", "status")}  # kept as found
        self.reviews: dict[str, dict] = {}
        for review in data.get("reviews", []) if isinstance(data.get("reviews"), list) else []:
            if isinstance(review, dict) and isinstance(review.get("run_id"), str):
                self.reviews[review["run_id"]] = review
        self.status = data.get("status", "in_progress")
        self.reviewed: set[str] = set(read_object(iteration / REVIEWED).get("reviewed", []))

    def text(self, run: str) -> str:
        return str(self.reviews.get(run, {}).get("feedback", ""))

    def set_text(self, run: str, text: str) -> bool:
        """Record a run's feedback; True when it changed (and was saved)."""
        if self.text(run) == text:
            return False
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.reviews[run] = {**self.reviews.get(run, {}), "run_id": run, "feedback": text, "timestamp": stamp}
        self.save()
        return True

    def save(self) -> None:
        write_artifact(
            self.path, artifacts.FEEDBACK, {**self.extra, "reviews": list(self.reviews.values()), "status": self.status}
        )

    def toggle_reviewed(self, key: str) -> bool:
        if key in self.reviewed:
            self.reviewed.discard(key)
        else:
            self.reviewed.add(key)
        atomic_write(
            self.iteration / REVIEWED, json.dumps({"reviewed": sorted(self.reviewed)}, indent=2) + "\n", sync_dir=False
        )
        return key in self.reviewed
