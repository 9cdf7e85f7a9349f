"""Loading: syntax errors at their line and column, and source maps that find any
pointer in JSON and YAML text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from printers import to_json, to_yaml

from workbench.formats.document import SyntaxProblem, decode, parse_json, parse_yaml
from workbench.formats.jsonmap import JsonSourceMap
from workbench.formats.pointer import join, split


def test_json_syntax_error_has_line_and_column():
    problem = parse_json('{\n  "a": 1,\n  "b": [1, 2,,]\n}\n')
    assert isinstance(problem, SyntaxProblem)
    assert (problem.line, problem.column) == (3, 14)
    assert problem.message.startswith("invalid JSON: expecting value, found ','")


def test_json_truncated_file_says_end_of_file():
    problem = parse_json('{"a": [1, 2')
    assert isinstance(problem, SyntaxProblem) and "found end of file" in problem.message


def test_json_nan_and_infinity_are_not_json():
    problem = parse_json('{\n  "rate": NaN\n}')
    assert isinstance(problem, SyntaxProblem)
    assert (problem.line, "NaN is not a JSON value" in problem.message) == (2, True)


def test_json_with_byte_order_mark_is_read():
    doc = parse_json('\ufeff{"a": {"b": 1}}')
    assert doc.data == {"a": {"b": 1}}
    assert doc.position(("a", "b")) == (1, 9)


def test_invalid_utf8_points_at_the_byte():
    problem = decode(b'{\n  "a": "caf\xe9"\n}')
    assert isinstance(problem, SyntaxProblem)
    assert (problem.line, problem.column) == (2, 12) and "0xe9" in problem.message


def test_yaml_syntax_error_has_line_and_column():
    problem = parse_yaml("suite:\n  cases: [1, 2\n  id: x\n")
    assert isinstance(problem, SyntaxProblem)
    assert problem.line == 3 and problem.message.startswith("invalid YAML:")


def test_yaml_duplicate_key_is_an_error_not_a_silent_overwrite():
    problem = parse_yaml("suite:\n  id: a\n  id: b\n")
    assert isinstance(problem, SyntaxProblem)
    assert problem.line == 3 and 'duplicate key "id"' in problem.message


def test_yaml_timestamps_and_keys_become_json_like():
    doc = parse_yaml("created_at: 2026-07-11T00:00:00Z\n1: one\nflag: yes\non: true\n")
    assert doc.data == {"created_at": "2026-07-11T00:00:00Z", "1": "one", "flag": "yes", "on": True}


def test_yaml_positions_follow_comments_and_flow_style():
    doc = parse_yaml("# header\nsuite:\n  # note\n  cases:\n    - {id: a, category: trigger}\n    - id: b\n")
    assert doc.position(("suite", "cases", "1", "id")) == (6, 7)
    assert doc.position(("suite", "cases", "0", "category")) == (5, 15)
    assert doc.position(("suite", "cases", "9")) == (4, 3)  # absent: its nearest parent


def test_json_positions_of_escaped_keys_and_pointer_tokens():
    text = '{"a/b": {"m~n": [10, {"k": "v\\"}"}]}, "z": 1}'
    source = JsonSourceMap(text)
    assert source.position(split("/a~1b/m~0n/1/k")) == (1, 23)
    assert source.position(split("/z")) == (1, 39)
    assert source.position(split("/missing/deeper")) == (1, 1)


def test_json_duplicate_keys_are_an_error_at_the_second_key():
    # Readers disagree on which of the two they keep, and a save would drop one.
    problem = parse_json('{\n"a": 1,\n"a": 2\n}')
    assert isinstance(problem, SyntaxProblem)
    assert (problem.line, problem.column) == (3, 1) and 'duplicate key "a"' in problem.message


def _pointers(data, tokens=()):
    yield join(tokens)
    children = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, child in children:
        yield from _pointers(child, tokens + (str(key),))


# Printable text: YAML (unlike JSON) cannot hold control characters such as DEL.
TEXT = st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"]), max_size=8)
DOCS = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda children: (
        st.lists(children, min_size=1, max_size=4)
        | st.dictionaries(st.text(alphabet='ab/~"\\ é', min_size=1, max_size=4), children, min_size=1, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(DOCS.filter(lambda d: isinstance(d, (dict, list))))
def test_every_pointer_is_found_on_the_oracle_line_json(data):
    text, where = to_json(data)
    doc = parse_json(text)
    for pointer in _pointers(data):
        assert doc.position(split(pointer))[0] == where[pointer], pointer


@pytest.mark.slow  # 6 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "cases", "id"]), DOCS, min_size=1, max_size=4))
def test_every_pointer_is_found_on_the_oracle_line_yaml(data):
    text, where = to_yaml(data)
    doc = parse_yaml(text)
    assert doc.data == json.loads(json.dumps(data))
    for pointer in _pointers(data):
        assert doc.position(split(pointer))[0] == where[pointer], (pointer, text)
