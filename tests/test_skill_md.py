"""SKILL.md per the Agent Skills specification."""

from __future__ import annotations

import pytest

from workbench.validate.validator import validate_file


def _check(tmp_path, frontmatter: str, body: str = "\nInstructions.\n", folder: str = "my-skill"):
    skill = tmp_path / folder
    skill.mkdir()
    path = skill / "SKILL.md"
    path.write_text(f"---\n{frontmatter}---\n{body}")
    report = validate_file(path)
    assert report.dialect == "skill-md"
    return [(d.severity, d.path, d.line, d.message) for d in report.diagnostics]


def test_a_good_skill_md_is_clean(tmp_path):
    assert (
        _check(
            tmp_path,
            "name: my-skill\ndescription: Does one thing well.\nlicense: MIT\n"
            "allowed-tools: Read Edit\ncompatibility: Needs git\nmetadata:\n  owner: me\n",
        )
        == []
    )


@pytest.mark.parametrize(
    "name,fragment",
    [
        ("My-Skill", "lowercase letters"),
        ("-my-skill", "not starting or ending"),
        ("my--skill", "single hyphens"),
        ("my-skill-", "not starting or ending"),
        ("a" * 65, "at most 64"),
    ],
)
def test_bad_names(tmp_path, name, fragment):
    found = _check(tmp_path, f"name: {name}\ndescription: d\n", folder=name)
    assert any(s == "error" and p == "/name" and line == 2 and fragment in m for s, p, line, m in found), found


def test_name_must_equal_folder(tmp_path):
    found = _check(tmp_path, "name: other\ndescription: d\n")
    assert ("error", "/name", 2, 'name "other" differs from its folder "my-skill"; expected them to be equal') in found


@pytest.mark.parametrize(
    "description,expected",
    [
        ("''", ("error", "/description", 3, "expected a non-empty description")),
        ("x" * 1025, ("error", "/description", 3, "description is 1025 characters; expected at most 1024")),
        (
            "Use for <html> pages",
            (
                "warning",
                "/description",
                3,
                "description contains angle brackets (< or >); skill-creator's packager refuses them",
            ),
        ),
    ],
)
def test_description_rules(tmp_path, description, expected):
    assert _check(tmp_path, f"name: my-skill\ndescription: {description}\n") == [expected]


def test_missing_keys_and_unknown_keys(tmp_path):
    found = _check(tmp_path, "title: x\n")
    messages = [m for _, _, _, m in found]
    assert any('unexpected frontmatter key "title"' in m for m in messages)
    assert any('missing required key "name"' in m for m in messages)
    assert any('missing required key "description"' in m for m in messages)


def test_compatibility_and_metadata(tmp_path):
    found = _check(
        tmp_path,
        "name: my-skill\ndescription: d\ncompatibility: " + "c" * 501 + "\nmetadata:\n"
        "  owner: me\n  nested:\n    a: 1\n",
    )
    assert ("error", "/compatibility", 4) in [(s, p, line) for s, p, line, _ in found]
    assert ("warning", "/metadata/nested", 7) in [(s, p, line) for s, p, line, _ in found]


def test_metadata_must_be_a_mapping(tmp_path):
    found = _check(tmp_path, "name: my-skill\ndescription: d\nmetadata: [a]\n")
    assert [(s, p) for s, p, _, _ in found] == [("error", "/metadata")]


def test_body_is_required_and_long_bodies_warn(tmp_path):
    empty = _check(tmp_path, "name: my-skill\ndescription: d\n", body="\n  \n")
    assert empty == [("error", "", 5, "expected a body after the frontmatter: the skill's instructions")]
    (tmp_path / "long").mkdir()
    long = _check(tmp_path / "long", "name: my-skill\ndescription: d\n", body="line\n" * 600)
    assert [(s, p) for s, p, _, _ in long] == [("warning", "")]
    assert "601 lines" in long[0][3]


def test_missing_or_unclosed_frontmatter(tmp_path):
    skill = tmp_path / "my-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("# My skill\n")
    [d] = validate_file(skill / "SKILL.md").diagnostics
    assert (d.severity, d.line) == ("error", 1) and "start with YAML frontmatter" in d.message
    (skill / "SKILL.md").write_text("---\nname: my-skill\n")
    [d] = validate_file(skill / "SKILL.md").diagnostics
    assert "not closed" in d.message


def test_frontmatter_yaml_error_is_on_the_file_line(tmp_path):
    skill = tmp_path / "my-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: my-skill\ndescription: [unclosed\n---\nbody\n")
    [d] = validate_file(skill / "SKILL.md").diagnostics
    assert d.severity == "error" and d.line == 3 and d.message.startswith("invalid YAML")
