"""Generates large, realistic slow-powers suites for benchmarks and tests: every
assertion kind, scripted turns, fixtures on disk (about 1.5 KB per case)."""

from __future__ import annotations

import json
from pathlib import Path


def case(index: int) -> dict:
    slug = f"case-{index:05d}"
    return {
        "id": slug,
        "prompt": f"Case {index}: add a --json flag to export, note it in the changelog, run the tests.",
        "expected_output": "Reads first, adds the flag with a test, quotes the passing run, one changelog line.",
        "files": ["fixtures/shared/CHANGELOG.md", "fixtures/shared/cli.py"],
        "turns": [
            {
                "prompt": "Yes, JSON should be pretty-printed.",
                "deliver_when": "agent_asks",
                "agent_response_matches": "(?i)pretty|indent",
            },
            {"prompt": "Thanks, that's all.", "deliver_when": "always"},
        ],
        "runs": 1 + index % 3,
        "skill_should_trigger": index % 7 != 0,
        "assertions": [
            {
                "id": "read-first",
                "type": "transcript_check",
                "check": "tool_invocation_matches",
                "pattern": f"^Read \\{{.*(CHANGELOG|cli)\\.(md|py)\\b.*{index}?",
                "must_precede": "first_write",
            },
            {
                "id": "asked",
                "type": "transcript_check",
                "check": "assistant_message_matches",
                "pattern": "\\?\\s*$",
                "must_precede": "completion_claim",
            },
            {
                "id": "quoted-tests",
                "type": "llm_judge",
                "rubric": "Did the final message quote the test output before claiming success?",
            },
            {
                "id": "tests-pass",
                "type": "command_check",
                "setup_files": ["checks/run_tests.sh"],
                "command": "bash checks/run_tests.sh",
                "env": {"CASE": str(index)},
                "matrix": {"PYTHON": ["3.11", "3.12"]},
                "expect_exit_code": 0,
                "expect_stdout": f"(?m)^ok {index % 10}",
            },
            {"id": "small", "type": "diff_scope", "max_files_touched": 3, "max_lines_changed": 40},
        ],
    }


def write_suite(root: Path, cases: int, name: str = "big-suite") -> Path:
    """A skill folder with SKILL.md, fixtures and an evals.json of `cases` cases."""
    skill = root / name
    evals = skill / "evals"
    (evals / "fixtures" / "shared").mkdir(parents=True, exist_ok=True)
    (evals / "checks").mkdir(exist_ok=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: A generated skill for benchmarks.\n---\n\nGenerated.\n"
    )
    (evals / "fixtures" / "shared" / "CHANGELOG.md").write_text("# Changelog\n\n## [Unreleased]\n")
    (evals / "fixtures" / "shared" / "cli.py").write_text("print('cli')\n")
    (evals / "checks" / "run_tests.sh").write_text("echo ok 0\n")
    path = evals / "evals.json"
    path.write_text(json.dumps({"skill_name": name, "evals": [case(i) for i in range(cases)]}, indent=2))
    return path
