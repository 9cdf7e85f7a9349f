"""Keys sent in one go (a paste, a fast typist, tmux send-keys) across case
switches and fields flipping between valid and invalid: every key lands, in
order, in the field it was typed for (the garbled id CHANOPECHANG)."""

from __future__ import annotations

import json
import shutil
import time

import pytest
from conftest import DEMO

from terminal.test_typing_speed import Terminal, pytestmark  # noqa: F401  (skipped without tmux)


@pytest.fixture()
def terminal(tmp_path):
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(DEMO, skill)
    opened = Terminal(tmp_path, skill)
    try:
        assert opened.wait_for("evals/evals.json"), opened.screen()
        yield opened
    finally:
        opened.close()


def _ids(terminal: Terminal, path) -> list[str]:
    before = path.read_text()
    terminal.keys("C-s")
    deadline = time.monotonic() + 10
    while path.read_text() == before and time.monotonic() < deadline:
        time.sleep(0.1)
    return [case["id"] for case in json.loads(path.read_text())["evals"]]


def test_a_burst_across_case_switches_lands_in_the_fields_it_was_typed_for(terminal, tmp_path):
    path = tmp_path / "skills" / "changelog-entry" / "evals" / "evals.json"
    # one write each: the app reads them as one burst
    terminal.keys("Down", "Down", "Tab", "End", "C", "H", "A", "N", "BTab", "Up", "Tab", "End", "O", "P", "E")
    terminal.keys("-", "a", "-", "B", "-", *["BSpace"] * 5)  # the id flips invalid and back
    time.sleep(3)
    assert terminal.running, terminal.screen()
    ids = _ids(terminal, path)
    assert ids[:3] == ["export-json-flag", "ambiguous-timeout-changeOPE", "question-not-a-requestCHAN"], (
        terminal.screen()
    )
