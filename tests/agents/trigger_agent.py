"""A stand-in agent for trigger evaluations through the command executor: it
reads the staged skills' descriptions (.claude/skills/*/SKILL.md) and uses one
by the rule of trigger_rule.py (its Skill tool, or with TRIGGER_BY_READ=1 a Read
of its SKILL.md, as an agent without a Skill tool would); else its first action
is a Bash call. With TRIGGER_LOG set, it appends one line per start."""

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trigger_rule import chosen  # noqa: E402

prompt = sys.stdin.read()
if os.environ.get("TRIGGER_LOG"):
    with open(os.environ["TRIGGER_LOG"], "a") as handle:
        handle.write(json.dumps({"prompt": prompt}) + "\n")
skills = []
for skill_md in sorted(Path(".claude/skills").glob("*/SKILL.md")):
    found = re.search(r"^description:\s*(.*)$", skill_md.read_text(), re.M)
    skills.append((skill_md.parent.name, found.group(1).strip().strip("'\"") if found else ""))


def emit(message):
    message["session_id"] = "trigger-1"
    print(json.dumps(message), flush=True)


def call(name, tool_input):
    emit(
        {
            "type": "assistant",
            "message": {"content": [{"type": "tool_use", "id": "t1", "name": name, "input": tool_input}]},
        }
    )
    emit({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}})


emit({"type": "system", "subtype": "init"})
name = chosen(prompt, skills)
if name and os.environ.get("TRIGGER_BY_READ"):
    call("Read", {"file_path": f"{os.getcwd()}/.claude/skills/{name}/SKILL.md"})
elif name:
    call("Skill", {"skill": name})
else:
    call("Bash", {"command": "ls"})
emit({"type": "assistant", "message": {"content": [{"type": "text", "text": "Done."}]}})
emit({"type": "result", "subtype": "success", "result": "Done.", "total_cost_usd": 0.001})
