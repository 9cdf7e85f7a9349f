"""Whatever bytes are on disk, loading and validating gives diagnostics, never an
exception: random bytes, random JSON and YAML values, under every format."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.formats.detect import ALL_FORMATS
from workbench.formats.document import Document, SyntaxProblem, decode, parse_json, parse_skill_md, parse_yaml
from workbench.validate.validator import validate_document, validate_file

FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "evals",
                    "skill_name",
                    "suite",
                    "eval_suite",
                    "cases",
                    "test_cases",
                    "assertions",
                    "turns",
                    "files",
                    "type",
                    "prompt",
                    "expectations",
                    "iterations",
                    "runs",
                    "summary",
                    "metadata",
                    "name",
                    "description",
                    "metadata",
                    "execute",
                    "x",
                ]
            )
            | st.text(max_size=5),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)


def _is_result(value) -> bool:
    return isinstance(value, (Document, SyntaxProblem))


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(raw):
    text = decode(raw)
    if isinstance(text, SyntaxProblem):
        assert text.line >= 1 and text.column >= 1
        return
    for parse in (parse_json, parse_yaml, parse_skill_md):
        result = parse(text)
        assert _is_result(result)
        if isinstance(result, SyntaxProblem):
            assert result.line >= 1 and result.column >= 1 and result.message


@FUZZ
@given(st.text(alphabet=st.sampled_from(list("{}[]:,\"'-#&*!|>%@`\n \t\\abc01.")), max_size=120))
def test_syntax_soup_never_raises(text):
    for parse in (parse_json, parse_yaml, parse_skill_md):
        assert _is_result(parse(text))


@pytest.mark.slow  # 32 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@FUZZ
@given(JSON_VALUES, st.sampled_from(ALL_FORMATS))
def test_any_json_value_validates_under_any_format(tmp_path_factory, value, fmt):
    folder = tmp_path_factory.mktemp("skill") / "evals"
    folder.mkdir()
    path = folder / "evals.json"
    text = json.dumps(value, indent=2)
    path.write_text(text)
    doc = parse_json(text, path)
    diagnostics = validate_document(doc, fmt)
    for d in diagnostics:
        assert d.severity in ("error", "warning") and d.line >= 1 and d.column >= 1 and d.message


@pytest.mark.slow  # 17 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@FUZZ
@given(JSON_VALUES)
def test_any_yaml_value_at_a_chock_place_validates_as_chock_or_is_skipped_with_why(tmp_path_factory, value):
    import io

    from ruamel.yaml import YAML

    folder = tmp_path_factory.mktemp("policy") / "evals"
    folder.mkdir()
    buffer = io.StringIO()
    YAML().dump(value, buffer)
    path = folder / "suite.yaml"
    path.write_text(buffer.getvalue())
    report = validate_file(path)
    # Detection by content: the place breaks ties, it does not make any value a chock suite
    # (a value shaped like another format, a grading say, is read as that).
    if report.dialect is None:
        assert report.skipped and report.skipped.startswith("not a format the workbench reads"), report
        assert not report.diagnostics
    assert all(d.line >= 1 for d in report.diagnostics)


@pytest.mark.slow  # 16 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@FUZZ
@given(JSON_VALUES)
def test_any_frontmatter_validates_as_skill_md(tmp_path_factory, value):
    import io

    from ruamel.yaml import YAML

    buffer = io.StringIO()
    YAML().dump(value, buffer)
    folder = tmp_path_factory.mktemp("skill")
    path = folder / "SKILL.md"
    path.write_text(f"---\n{buffer.getvalue()}---\nbody\n")
    report = validate_file(path)
    assert report.dialect == "skill-md"
    assert all(d.line >= 1 for d in report.diagnostics)
