"""A suite's drafts file, by name: drafted cases wait in evals/evals.drafts.json beside
evals/evals.json until a person accepts them (workbench/improve/drafts.py writes them)."""

from __future__ import annotations

from pathlib import Path

DRAFTS = ".drafts"


def drafts_path(suite: Path) -> Path:
    """evals/evals.json -> evals/evals.drafts.json."""
    return suite.with_name(f"{suite.stem}{DRAFTS}{suite.suffix}")


def is_drafts(name: str) -> bool:
    return Path(name).stem.endswith(DRAFTS)


def suite_of(drafts: Path) -> Path:
    return drafts.with_name(f"{drafts.stem.removesuffix(DRAFTS)}{drafts.suffix}")
