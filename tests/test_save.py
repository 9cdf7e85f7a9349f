"""Saving writes back exactly what the user had, plus the edit."""

from __future__ import annotations

import difflib
import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import CORPUS, DEMO, needs_corpus

from workbench.formats import chock, skill_creator, slow_powers
from workbench.formats.document import load
from workbench.formats.editable import EditableDocument
from workbench.formats.edits import Insert, Remove, Set
from workbench.formats.save import atomic_write

SUITES = sorted([*CORPUS.glob("**/evals/suite.yaml"), *CORPUS.glob("**/evals/evals.json")]) if CORPUS.is_dir() else []


def _open(path: Path) -> EditableDocument:
    fmt = chock.FORMAT if path.suffix == ".yaml" else slow_powers.FORMAT
    return EditableDocument(path, fmt, load(path))


def _changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def _first_case(data) -> str:
    if "evals" in data:
        return "/evals/0"
    return "/suite/cases/0" if "suite" in data else "/eval_suite/test_cases/0"


@needs_corpus
@pytest.mark.parametrize("source", SUITES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_one_edit_changes_one_line_and_undo_restores_the_bytes(tmp_path, source):
    path = tmp_path / "evals" / source.name
    path.parent.mkdir()
    shutil.copy(source, path)
    original = path.read_text()
    document = _open(path)
    document.apply(Set(_first_case(document.data) + "/id", "renamed-case"))
    document.save()
    assert _changed_lines(original, path.read_text()) == [
        line for line in _changed_lines(original, path.read_text()) if "renamed-case" in line or line.startswith("-")
    ]
    assert len(_changed_lines(original, path.read_text())) == 2
    assert load(path).data == document.data
    document.undo()
    document.save()
    assert path.read_text() == original


def test_unsaved_document_is_not_rewritten(tmp_path):
    path = tmp_path / "evals.json"
    path.write_text('{"skill_name": "s",   "evals": []}')  # odd spacing stays
    stamp = os.stat(path).st_mtime_ns
    document = EditableDocument(path, slow_powers.FORMAT, load(path))
    assert document.save() == '{"skill_name": "s",   "evals": []}'
    assert os.stat(path).st_mtime_ns == stamp


def test_yaml_comments_order_and_unknown_keys_survive_edits(tmp_path):
    path = tmp_path / "suite.yaml"
    shutil.copy(DEMO / "evals" / "suite.yaml", path)
    document = EditableDocument(path, chock.FORMAT, load(path))
    document.apply(Set("/eval_suite/test_cases/1/description", "A general question does not fire the skill"))
    document.apply(
        Insert(
            "/eval_suite/test_cases/-",
            {"id": "tc-005-behavior-new", "category": "behavior", "description": "new", "input": {"prompt": "p"}},
        )
    )
    document.apply(Set("/eval_suite/x-owner", "team"))  # a key the schema does not know
    text = document.save()
    assert text.startswith("# chock-style suite for the changelog-entry skill")
    assert "    # Released sections are history: the skill must refuse to rewrite them.\n" in text
    assert text.index("tc-004-edge") < text.index("tc-005-behavior-new")
    assert load(path).data == document.data
    assert "x-owner: team" in text


def test_json_edits_keep_indentation_and_inline_arrays_elsewhere(tmp_path):
    path = tmp_path / "evals.json"
    multi_line = '        {\n            "id": %d,\n            "prompt": "q"\n        }'
    path.write_text(
        '{\n    "skill_name": "s",\n    "evals": [\n        {"id": 1, "prompt": "p",'
        ' "expectations": ["a", "b"]},\n' + multi_line % 2 + ",\n" + multi_line % 3 + "\n    ]\n}\n"
    )
    original = path.read_text()
    document = EditableDocument(path, skill_creator.FORMAT, load(path))
    document.apply(Set("/evals/1/prompt", "changed"))
    text = document.save()
    assert _changed_lines(original, text) == ['-            "prompt": "q"', '+            "prompt": "changed"']
    document.apply(Remove("/evals/2"))
    text = document.save()
    # The inline case was not reached by either edit: it keeps its one line.
    assert '        {"id": 1, "prompt": "p", "expectations": ["a", "b"]},\n' in text
    assert [case["id"] for case in json.loads(text)["evals"]] == [1, 2]


def test_unicode_escapes_survive_where_not_edited(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text(
        'suite:\n  id: s\n  cases:\n  - id: a\n    prompt: "hidden \\u202E text"\n  - id: b\n    prompt: plain\n'
    )
    document = EditableDocument(path, chock.FORMAT, load(path))
    document.apply(Set("/suite/cases/1/prompt", "edited"))
    assert '"hidden \\u202E text"' in document.save()


def test_atomic_write_keeps_permissions_and_leaves_no_temp(tmp_path):
    path = tmp_path / "history.json"
    path.write_text("{}")
    path.chmod(0o640)
    atomic_write(path, '{"a": 1}\n')
    assert path.read_text() == '{"a": 1}\n' and (path.stat().st_mode & 0o777) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["history.json"]


def test_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "evals.json"
    path.write_text("old")

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        atomic_write(path, "new")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["evals.json"]


def test_an_atomic_write_into_a_folder_that_exists_makes_one_file_and_one_rename_and_nothing_else(tmp_path):
    """A run writes about a dozen files a dispatch: each write is the temporary file, its rename and (for a file
    already there) its mode, with no attempt to make the folder again (it tried a mkdir per write) and no
    change of mode by name. Recorded by the interpreter's audit events."""
    import sys

    (tmp_path / "old.json").write_text("{}")
    (tmp_path / "old.json").chmod(0o640)
    seen: list[str] = []
    watching = [False]

    def hook(event: str, args: tuple) -> None:
        if watching[0] and event in ("open", "os.mkdir", "os.chmod", "os.rename", "os.remove"):
            seen.append(event)

    sys.addaudithook(hook)
    watching[0] = True
    try:
        atomic_write(tmp_path / "old.json", '{"a": 1}\n', durable=False)
        atomic_write(tmp_path / "new.json", '{"b": 2}\n', durable=False)
    finally:
        watching[0] = False
    assert seen == ["open", "os.chmod", "os.rename", "open", "os.rename"], seen
    assert (tmp_path / "old.json").read_text() == '{"a": 1}\n' and (
        tmp_path / "old.json"
    ).stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "new.json").read_text() == '{"b": 2}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.json", "old.json"]


def test_an_atomic_write_makes_the_folders_it_needs(tmp_path):
    atomic_write(tmp_path / "a" / "b" / "c.json", "{}\n", durable=False)
    assert (tmp_path / "a" / "b" / "c.json").read_text() == "{}\n"
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):
        atomic_write(tmp_path / "file" / "c.json", "{}\n")
    with pytest.raises(IsADirectoryError):
        atomic_write(tmp_path / "a", "{}\n")
