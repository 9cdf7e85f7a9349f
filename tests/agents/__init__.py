"""Stand-ins for the outside world in tests: scripted model servers and agents,
and the one-eval skill the real agent CLIs are driven through."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

# The scripted servers' conversation: write answer.txt, ask which format, then answer "JSON please".
ANSWER_EVAL = {
    "id": "write-the-answer",
    "prompt": "Write the answer.",
    "expected_output": "answer.txt, then a question",
    "turns": [{"prompt": "JSON please", "deliver_when": "agent_asks", "agent_response_matches": "(?i)format"}],
}


def answer_skill(tmp_path: Path, demo: Path, **case) -> Path:
    """A copy of the demo skill whose suite is the one scripted eval, with `case`'s keys
    added or replaced (None drops a key)."""
    skill = tmp_path / "skills" / "changelog-entry"
    shutil.copytree(demo, skill)
    eval_case = {k: v for k, v in {**ANSWER_EVAL, **case}.items() if v is not None}
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "changelog-entry", "evals": [eval_case]}))
    return skill
