"""Mutation tests: a valid document of each dialect, then one violation at a time.
Each must give its diagnostic at the right pointer and on the right line (the
line is computed by an independent printer, tests/printers.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from printers import to_json, to_yaml

from workbench.validate.validator import validate_file

SLOW_POWERS = {
    "skill_name": "demo-skill",
    "evals": [
        {
            "id": "first-case",
            "prompt": "Do the thing.",
            "expected_output": "The thing is done.",
            "files": ["fixtures/input.txt"],
            "turns": [
                {"prompt": "Yes, go ahead.", "deliver_when": "agent_asks", "agent_response_matches": "(?i)proceed"}
            ],
            "runs": 2,
            "isolation": "shared",
            "skill_should_trigger": True,
            "assertions": [
                {
                    "id": "read-first",
                    "type": "transcript_check",
                    "check": "tool_invocation_matches",
                    "pattern": "^Read \\{",
                    "must_precede": "first_write",
                },
                {"id": "judged", "type": "llm_judge", "rubric": "Is it done?", "model": "judge-model"},
                {
                    "id": "tests-pass",
                    "type": "command_check",
                    "command": "make test",
                    "setup_files": ["checks/held-out.txt"],
                    "env": {"A": "1"},
                    "matrix": {"PY": ["3.11", "3.12"]},
                    "expect_exit_code": 0,
                    "expect_stdout": "ok",
                },
                {"id": "small-diff", "type": "diff_scope", "max_files_touched": 1, "max_lines_changed": 10},
            ],
        },
        {"id": "second-case", "prompt": "Say hi.", "expected_output": "Hi.", "skill_should_trigger": False},
    ],
}

SKILL_CREATOR = {
    "skill_name": "demo-skill",
    "evals": [
        {
            "id": 1,
            "prompt": "Do the thing.",
            "expected_output": "Done.",
            "files": ["evals/fixtures/input.txt"],
            "expectations": ["The thing is done"],
        },
        {"id": 2, "prompt": "Again.", "expected_output": "Done again.", "assertions": ["Done twice"]},
    ],
}

CHOCK_MODERN = {
    "eval_suite": {
        "id": "demo-tests",
        "skill_id": "demo-skill",
        "created_at": "2026-01-15T10:30:00Z",
        "metrics": {"pass_rate": {"type": "binary", "direction": "higher_is_better", "production_threshold": 1.0}},
        "test_cases": [
            {"id": "tc-1", "category": "trigger", "description": "fires", "input": {"prompt": "do it"}},
            {"id": "tc-2", "category": "negative_trigger", "description": "quiet", "input": {"prompt": "hello"}},
            {
                "id": "tc-3",
                "category": "behavior",
                "description": "acts",
                "input": {"prompt": "act"},
                "expected_error_pattern": "refused",
                "structural_checks": ["## Heading"],
            },
        ],
    }
}

CHOCK_LEGACY = {
    "suite": {
        "id": "guard-tests",
        "policy_id": "guard",
        "primary_metric": "pass_rate",
        "metrics": {"pass_rate": {"direction": "higher_is_better", "threshold": 1.0}},
        "cases": [
            {
                "id": "tc-1",
                "category": "trigger",
                "prompt": "rm -rf /",
                "expect": "blocked",
                "execute": {"command": "rm -rf /", "expect": "block"},
            },
            {
                "id": "tc-2",
                "category": "negative_trigger",
                "prompt": "ls",
                "expect": "allowed",
                "execute": {
                    "expect": "allow",
                    "files": {"a.txt": "x"},
                    "head_files": {"b.txt": "y"},
                    "branch": "main",
                    "event": "push",
                    "push_refs": ["refs/heads/main"],
                },
            },
            {
                "id": "tc-3",
                "category": "behavior",
                "prompt": "p",
                "expect": "e",
                "status": "ready",
                "provenance": "authored",
            },
        ],
    }
}


def _set(path: str, value):
    def mutate(doc):
        *parents, last = path.split("/")[1:]
        node = doc
        for token in parents:
            node = node[int(token)] if isinstance(node, list) else node[token]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def _del(path: str):
    def mutate(doc):
        *parents, last = path.split("/")[1:]
        node = doc
        for token in parents:
            node = node[int(token)] if isinstance(node, list) else node[token]
        del node[int(last) if isinstance(node, list) else last]

    return mutate


def _both(*mutations):
    def mutate(doc):
        for m in mutations:
            m(doc)

    return mutate


A = "/evals/0/assertions"
SLOW_POWERS_MUTATIONS = [
    ("missing skill_name", _del("/skill_name"), "error", "", 'missing required property "skill_name"'),
    ("unknown top key", _set("/notes", "x"), "error", "/notes", 'unexpected property "notes"'),
    ("no evals", _set("/evals", []), "error", "/evals", "expected at least 1 item"),
    ("id not kebab", _set("/evals/0/id", "First_Case"), "error", "/evals/0/id", "kebab-case"),
    ("empty prompt", _set("/evals/0/prompt", ""), "error", "/evals/0/prompt", "found an empty string"),
    ("no expected_output", _del("/evals/0/expected_output"), "error", "/evals/0", '"expected_output"'),
    ("runs zero", _set("/evals/0/runs", 0), "error", "/evals/0/runs", "expected a number >= 1"),
    ("runs not integer", _set("/evals/0/runs", 1.5), "error", "/evals/0/runs", "expected an integer"),
    ("isolation enum", _set("/evals/0/isolation", "private"), "error", "/evals/0/isolation", '"shared", "isolated"'),
    (
        "trigger not bool",
        _set("/evals/0/skill_should_trigger", "yes"),
        "error",
        "/evals/0/skill_should_trigger",
        "expected true or false",
    ),
    ("empty turns", _set("/evals/0/turns", []), "error", "/evals/0/turns", "at least 1 item"),
    (
        "deliver_when enum",
        _set("/evals/0/turns/0/deliver_when", "sometimes"),
        "error",
        "/evals/0/turns/0/deliver_when",
        '"always", "agent_asks"',
    ),
    (
        "matches with always",
        _set("/evals/0/turns/0/deliver_when", "always"),
        "error",
        "/evals/0/turns/0",
        "only for turns with deliver_when: agent_asks",
    ),
    (
        "turn regex lookahead",
        _set("/evals/0/turns/0/agent_response_matches", "(?=go)"),
        "error",
        "/evals/0/turns/0/agent_response_matches",
        "lookaround",
    ),
    ("unknown assertion kind", _set(f"{A}/0/type", "transcript"), "error", f"{A}/0", "most resembles transcript_check"),
    (
        "judge without rubric",
        _del(f"{A}/1/rubric"),
        "error",
        f"{A}/1",
        'most resembles llm_judge, which lacks "rubric"',
    ),
    (
        "diff_scope without limits",
        _both(_del(f"{A}/3/max_files_touched"), _del(f"{A}/3/max_lines_changed")),
        "error",
        f"{A}/3",
        "diff_scope needs a limit",
    ),
    (
        "negative limit",
        _set(f"{A}/3/max_lines_changed", -1),
        "error",
        f"{A}/3/max_lines_changed",
        "expected a number >= 0",
    ),
    ("empty env", _set(f"{A}/2/env", {}), "error", f"{A}/2/env", "expected at least 1 entry"),
    (
        "matrix repeats",
        _set(f"{A}/2/matrix/PY", ["3.11", "3.11"]),
        "error",
        f"{A}/2/matrix/PY",
        'found "3.11" more than once',
    ),
    (
        "exit code too big",
        _set(f"{A}/2/expect_exit_code", 2**31),
        "error",
        f"{A}/2/expect_exit_code",
        "expected a number <= 2147483647",
    ),
    ("stdout backreference", _set(f"{A}/2/expect_stdout", "(a)\\1"), "error", f"{A}/2/expect_stdout", "backreferences"),
    ("pattern does not compile", _set(f"{A}/0/pattern", "([a-"), "error", f"{A}/0/pattern", "not a valid Rust regex"),
    (
        "must_precede enum",
        _set(f"{A}/0/must_precede", "first_read"),
        "error",
        f"{A}/0/must_precede",
        'did you mean "first_write"',
    ),
    ("duplicate case id", _set("/evals/1/id", "first-case"), "error", "/evals/1/id", 'duplicate case id "first-case"'),
    ("duplicate assertion id", _set(f"{A}/1/id", "read-first"), "error", f"{A}/1/id", "duplicate assertion id"),
    ("missing fixture", _set("/evals/0/files/0", "fixtures/nope.txt"), "error", "/evals/0/files/0", "not found"),
    (
        "fixture escapes",
        _set("/evals/0/files/0", "../SKILL.md"),
        "error",
        "/evals/0/files/0",
        "outside the evals folder",
    ),
    ("absolute fixture", _set("/evals/0/files/0", "/etc/passwd"), "error", "/evals/0/files/0", "absolute path"),
    (
        "setup file missing",
        _set(f"{A}/2/setup_files/0", "checks/gone.txt"),
        "error",
        f"{A}/2/setup_files/0",
        "not found",
    ),
    ("skill name differs", _set("/skill_name", "other-skill"), "warning", "/skill_name", "SKILL.md beside it"),
    (
        "nothing should trigger",
        _set("/evals/0/skill_should_trigger", False),
        "warning",
        "/evals",
        "skill_should_trigger: false",
    ),
]

SKILL_CREATOR_MUTATIONS = [
    ("string id", _set("/evals/0/id", "one"), "error", "/evals/0/id", "expected an integer"),
    ("missing prompt", _del("/evals/1/prompt"), "error", "/evals/1", 'missing required property "prompt"'),
    (
        "expectation not text",
        _set("/evals/0/expectations/0", {"text": "x"}),
        "error",
        "/evals/0/expectations/0",
        "expected a string",
    ),
    ("skill_name not text", _set("/skill_name", 7), "error", "/skill_name", "expected a string, found the integer 7"),
    (
        "both lists",
        _set("/evals/0/assertions", ["x"]),
        "warning",
        "/evals/0/assertions",
        "both expectations and assertions",
    ),
    ("duplicate id", _set("/evals/1/id", 1), "error", "/evals/1/id", "duplicate case id 1"),
    ("missing file", _set("/evals/0/files/0", "evals/fixtures/gone.txt"), "error", "/evals/0/files/0", "not found"),
    (
        "file escapes skill",
        _set("/evals/0/files/0", "../../x"),
        "error",
        "/evals/0/files/0",
        "outside the skill folder",
    ),
]

E = "/eval_suite"
CHOCK_MODERN_MUTATIONS = [
    ("both suite forms", _set("/suite", CHOCK_LEGACY["suite"]), "error", "", "exactly one of `suite`"),
    ("missing metrics", _del(f"{E}/metrics"), "error", E, 'missing required property "metrics"'),
    ("too few cases", _del(f"{E}/test_cases/2"), "error", f"{E}/test_cases", "expected at least 3 items"),
    (
        "unknown category",
        _set(f"{E}/test_cases/2/category", "behaviour"),
        "error",
        f"{E}/test_cases/2/category",
        'did you mean "behavior"',
    ),
    (
        "metric type",
        _set(f"{E}/metrics/pass_rate/type", "percent"),
        "error",
        f"{E}/metrics/pass_rate/type",
        '"nlp_overlap"',
    ),
    (
        "metric without direction",
        _del(f"{E}/metrics/pass_rate/direction"),
        "error",
        f"{E}/metrics/pass_rate",
        '"direction"',
    ),
    (
        "input not object",
        _set(f"{E}/test_cases/0/input", "do it"),
        "error",
        f"{E}/test_cases/0/input",
        "expected an object",
    ),
    ("duplicate id", _set(f"{E}/test_cases/1/id", "tc-1"), "error", f"{E}/test_cases/1/id", "duplicate case id"),
    (
        "lookbehind",
        _set(f"{E}/test_cases/2/expected_error_pattern", "(?<!not )refused"),
        "error",
        f"{E}/test_cases/2/expected_error_pattern",
        "lookaround",
    ),
    (
        "no negative trigger",
        _set(f"{E}/test_cases/1/category", "edge"),
        "error",
        f"{E}/test_cases",
        "no negative_trigger case",
    ),
    ("created_at not a date-time", _set(f"{E}/created_at", "yesterday"), "warning", f"{E}/created_at", "RFC 3339"),
]

S = "/suite/cases"
CHOCK_LEGACY_MUTATIONS = [
    # (Neither suite form at all is no chock suite: skipped with why, as test_detect checks.)
    ("status enum", _set(f"{S}/2/status", "draft"), "error", f"{S}/2/status", '"pending", "ready"'),
    (
        "execute expect enum",
        _set(f"{S}/0/execute/expect", "deny"),
        "error",
        f"{S}/0/execute/expect",
        '"block", "allow"',
    ),
    ("execute without expect", _del(f"{S}/0/execute/expect"), "error", f"{S}/0/execute", '"expect"'),
    (
        "file content not text",
        _set(f"{S}/1/execute/files/a.txt", 3),
        "error",
        f"{S}/1/execute/files/a.txt",
        "expected a string",
    ),
    ("event enum", _set(f"{S}/1/execute/event", "merge"), "error", f"{S}/1/execute/event", '"commit", "push"'),
    ("command and gate", _set(f"{S}/0/execute/branch", "main"), "warning", f"{S}/0/execute", "both command and gate"),
    (
        "push_refs without push",
        _set(f"{S}/1/execute/event", "commit"),
        "warning",
        f"{S}/1/execute/push_refs",
        "only used with event: push",
    ),
    ("missing expect", _del(f"{S}/1/expect"), "error", f"{S}/1", '"expect"'),
    (
        "threshold not number",
        _set("/suite/metrics/pass_rate/threshold", "high"),
        "error",
        "/suite/metrics/pass_rate/threshold",
        "expected a number",
    ),
]


def _skill(tmp_path: Path) -> Path:
    skill = tmp_path / "demo-skill"
    (skill / "evals" / "fixtures").mkdir(parents=True)
    (skill / "evals" / "checks").mkdir()
    (skill / "SKILL.md").write_text("---\nname: demo-skill\ndescription: A skill for tests.\n---\n\nDo it.\n")
    (skill / "evals" / "fixtures" / "input.txt").write_text("input\n")
    (skill / "evals" / "checks" / "held-out.txt").write_text("held out\n")
    return skill


def _oracle_line(where: dict[str, int], pointer: str) -> int:
    while pointer not in where:
        pointer = pointer.rsplit("/", 1)[0]
    return where[pointer]


def _check(tmp_path, base, mutate, severity, pointer, fragment, name, printer):
    doc = copy.deepcopy(base)
    if mutate:
        mutate(doc)
    text, where = printer(doc)
    path = _skill(tmp_path) / "evals" / name
    path.write_text(text)
    report = validate_file(path)
    if mutate is None:
        assert report.diagnostics == []
        return
    matches = [d for d in report.diagnostics if d.path == pointer and d.severity == severity]
    assert matches, f"no {severity} at {pointer!r}; got " + "; ".join(
        f"{d.severity} {d.path}: {d.message}" for d in report.diagnostics
    )
    assert any(fragment in d.message for d in matches), [d.message for d in matches]
    line = _oracle_line(where, pointer)
    assert any(d.line == line for d in matches), (line, [(d.line, d.message) for d in matches])


@pytest.mark.parametrize(
    "base,printer,name",
    [
        (SLOW_POWERS, to_json, "evals.json"),
        (SKILL_CREATOR, to_json, "evals.json"),
        (CHOCK_MODERN, to_yaml, "suite.yaml"),
        (CHOCK_LEGACY, to_yaml, "suite.yaml"),
        (CHOCK_LEGACY, to_json, "suite.json"),
    ],
    ids=["slow-powers", "skill-creator", "chock-eval_suite", "chock-suite", "chock-json"],
)
def test_valid_base_documents_have_no_diagnostics(tmp_path, base, printer, name):
    _check(tmp_path, base, None, None, None, None, name, printer)


MUTATIONS = [
    (SLOW_POWERS, to_json, "evals.json", "slow-powers", SLOW_POWERS_MUTATIONS),
    (SKILL_CREATOR, to_json, "evals.json", "skill-creator", SKILL_CREATOR_MUTATIONS),
    (CHOCK_MODERN, to_yaml, "suite.yaml", "chock eval_suite", CHOCK_MODERN_MUTATIONS),
    (CHOCK_LEGACY, to_yaml, "suite.yaml", "chock suite", CHOCK_LEGACY_MUTATIONS),
]
CASES = [(base, printer, name, *m) for base, printer, name, _, table in MUTATIONS for m in table]
IDS = [f"{dialect}: {m[0]}" for _, _, _, dialect, table in MUTATIONS for m in table]


@pytest.mark.parametrize("base,printer,name,label,mutate,severity,pointer,fragment", CASES, ids=IDS)
def test_mutation_is_reported_at_its_pointer_and_line(
    tmp_path, base, printer, name, label, mutate, severity, pointer, fragment
):
    _check(tmp_path, base, mutate, severity, pointer, fragment, name, printer)
