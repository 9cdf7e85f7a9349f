"""Every real suite, skill and result file in the shared corpus is valid."""

from __future__ import annotations

import json

import pytest
from conftest import CORPUS, needs_corpus
from support.cli import workbench

from workbench.validate.tree import candidates, validate_paths
from workbench.validate.validator import validate_file

pytestmark = needs_corpus

CORPUS_FILES = sorted(candidates(CORPUS)) if CORPUS.is_dir() else []


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_file_has_no_errors(path):
    report = validate_file(path, explicit=False)
    assert [d for d in report.diagnostics if d.severity == "error"] == []


def test_corpus_formats_are_recognised():
    reports = validate_paths([CORPUS])
    by_dialect: dict[str | None, int] = {}
    for report in reports:
        by_dialect[report.dialect] = by_dialect.get(report.dialect, 0) + 1
    assert by_dialect["slow-powers"] == 8
    assert by_dialect["chock"] == 25
    assert by_dialect["eval-magic-grading"] == 54
    assert by_dialect["eval-magic-benchmark"] == 7
    assert by_dialect["skill-md"] == 17
    # Nothing eval-magic wrote is mistaken for a broken skill-creator artifact.
    baseline = [r for r in reports if "/evals/baseline/" in r.file]
    assert baseline and all(r.dialect.startswith("eval-magic") for r in baseline)
    # Unknown files (manifests, fixtures' package.json) are skipped, never errors.
    skipped = [r for r in reports if r.skipped]
    assert any(r.file.endswith("manifest.yaml") for r in skipped)
    assert all(not r.diagnostics for r in skipped)


def test_legacy_and_modern_chock_suites_both_detected():
    modern = validate_file(CORPUS / "chock/policies/yagni/evals/suite.yaml")
    legacy = validate_file(CORPUS / "chock/policies/block-no-verify/evals/suite.yaml")
    assert (modern.dialect, legacy.dialect) == ("chock", "chock")


def test_cli_on_whole_corpus_exits_zero():
    result = workbench("validate", CORPUS, "--format", "json")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    files = json.loads(result.stdout)
    assert len(files) == len(CORPUS_FILES)
    assert sum(d["severity"] == "error" for f in files for d in f["diagnostics"]) == 0
