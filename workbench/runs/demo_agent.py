"""The demo agent: offline, deterministic, NOT a model. It exists so the demo
skill can be run anywhere, and it behaves the way the skill it finds tells it to.

It speaks the command executor's protocol: the prompt on stdin, the session to
resume in WORKBENCH_SESSION, Claude Code stream-json on stdout. It really edits
CHANGELOG.md in its workspace. What it does depends on the staged SKILL.md's
instructions, so runs with and without the skill, and with different versions of
it, differ measurably:
- "Read `CHANGELOG.md` first" -> it reads the file before writing;
- "ask one short question" -> it asks when the kind of change is unclear;
- "what the user can now do" -> user-facing wording instead of code names;
- "Touch nothing else" -> it leaves other files alone;
- "under `## [Unreleased]`" -> the entry goes there, in its `### Kind` section.
Without a skill it writes a developer's note at the end of the file and also
leaves a comment in the code it was told about.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


class Agent:
    def __init__(self, cwd: Path, prompt: str, session: str | None) -> None:
        self.cwd = cwd
        self.prompt = prompt
        self.state_file = cwd / ".git" / "demo-agent-session.json"
        state = json.loads(self.state_file.read_text()) if session and self.state_file.exists() else {}
        self.session = session or "demo-" + hashlib.sha256(f"{cwd.name}:{prompt}".encode()).hexdigest()[:16]
        self.history: list[str] = state.get("prompts", [])
        self.history.append(prompt)
        skills = sorted(cwd.glob(".claude/skills/*/SKILL.md"))
        self.skill_name = skills[0].parent.name if skills else None
        # Lower case, one space between words: instructions wrap across lines.
        self.skill = " ".join(skills[0].read_text(encoding="utf-8").lower().split()) if skills else ""
        self.lines: list[dict] = []
        self.counter = 0
        self.tokens = len(prompt) // 4

    # ---------------------------------------------------------------- output

    def emit(self, message: dict) -> None:
        message["session_id"] = self.session
        self.lines.append(message)

    def say(self, text: str) -> None:
        self.tokens += len(text) // 4
        self.emit({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}})

    def tool(self, name: str, tool_input: dict, result: str, is_error: bool = False) -> None:
        self.counter += 1
        tool_id = f"toolu_demo_{self.counter:03d}"
        self.tokens += len(json.dumps(tool_input)) // 4 + len(result) // 4
        self.emit({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]}})
        self.emit({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": result, "is_error": is_error}]}})

    # ---------------------------------------------------------------- behaviour

    def knows(self, words: str) -> bool:
        return words in self.skill

    def run(self) -> None:
        self.emit({"type": "system", "subtype": "init", "model": "demo-agent (offline, not a model)",
                   "cwd": str(self.cwd), "tools": ["Read", "Edit", "Write", "Bash", "Skill"]})
        conversation = " ".join(self.history).lower()
        if re.search(r"\bdifference between\b|\bjust curious\b", self.history[0].lower()):
            self.say("A changelog lists every notable change for people who use the project, version by "
                     "version; release notes tell the story of one release, often with highlights and "
                     "upgrade advice. Nothing to change in your files for that.")
            return self.finish()
        if self.skill_name and len(self.history) == 1:
            self.tool("Skill", {"skill": self.skill_name}, f"Launching skill: {self.skill_name}")
        kind = self.kind_of(conversation)
        if kind is None and self.knows("ask one short question") and len(self.history) == 1:
            self.say("Before I write it down: is this a fix, or a change of behaviour?")
            return self.finish()
        changelog = self.cwd / "CHANGELOG.md"
        if not changelog.exists():
            self.say("There is no CHANGELOG.md here, so I have nothing to add the entry to.")
            return self.finish()
        text = changelog.read_text(encoding="utf-8")
        if self.knows("read `changelog.md` first") or self.knows("read changelog.md first"):
            self.tool("Read", {"file_path": str(changelog)}, text)
        entry = self.entry(conversation)
        new = self.placed(text, kind or "Changed", entry) if self.knows("## [unreleased]") else \
            text.rstrip("\n") + f"\n- {entry}\n"
        self.tool("Edit", {"file_path": str(changelog), "old_string": text[-40:], "new_string": new[-80:]},
                  "The file CHANGELOG.md has been updated.")
        changelog.write_text(new, encoding="utf-8")
        if not self.knows("touch nothing else"):
            for source in sorted(self.cwd.glob("*.py")):
                code = source.read_text(encoding="utf-8")
                note = "# Changelog updated for this change.\n"
                self.tool("Edit", {"file_path": str(source), "old_string": "", "new_string": note},
                          f"The file {source.name} has been updated.")
                source.write_text(note + code, encoding="utf-8")
                break
        where = f"under ## [Unreleased] / ### {kind or 'Changed'}" if self.knows("## [unreleased]") else \
            "at the end of the changelog"
        self.say(f"Done: I added this line {where}:\n\n- {entry}")
        return self.finish()

    def kind_of(self, conversation: str) -> str | None:
        if re.search(r"\bfix(ed|es)?\b|\bbug\b", conversation):
            return "Fixed"
        if re.search(r"\badd(ed)?\b|\bnew\b", conversation):
            return "Added"
        if re.search(r"\bremov(e|ed)\b", conversation):
            return "Removed"
        return None

    def entry(self, conversation: str) -> str:
        user_facing = self.knows("what the user can now do")
        if "--json" in conversation:
            return "Export can write JSON with `--json`." if user_facing else "add json arg to cli.py"
        if "timeout" in conversation:
            return "The default timeout is 30 seconds again, as documented." if user_facing else \
                "DEFAULT_TIMEOUT_SECONDS = 30 in client.py"
        return "Noted the change." if user_facing else "misc changes"

    @staticmethod
    def placed(text: str, kind: str, entry: str) -> str:
        """The entry under ## [Unreleased] / ### kind, creating what is missing, in order."""
        lines = text.split("\n")
        start = next((i for i, line in enumerate(lines) if line.startswith("## [Unreleased]")), None)
        if start is None:
            first = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
            lines[first:first] = ["## [Unreleased]", ""]
            start = first
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        section = lines[start + 1:end]
        while section and not section[-1].strip():
            section.pop()
        heading = f"### {kind}"
        if heading in section:
            at = section.index(heading) + 1
            while at < len(section) and not section[at].strip():
                at += 1
            section.insert(at, f"- {entry}")
        else:
            later = [i for i, line in enumerate(section) if line[4:] in KINDS and line.startswith("### ")
                     and KINDS.index(line[4:]) > KINDS.index(kind)]
            if later:
                section[later[0]:later[0]] = [heading, "", f"- {entry}", ""]
            else:
                section += ["", heading, "", f"- {entry}"]
        lines[start + 1:end] = section + ([""] if end < len(lines) else [])
        return "\n".join(lines)

    def finish(self) -> None:
        self.state_file.parent.mkdir(exist_ok=True)
        self.state_file.write_text(json.dumps({"prompts": self.history}))
        final = next((m["message"]["content"][0]["text"] for m in reversed(self.lines)
                      if m["type"] == "assistant" and m["message"]["content"][0]["type"] == "text"), "")
        self.emit({"type": "result", "subtype": "success", "is_error": False, "result": final,
                   "num_turns": len(self.history), "duration_ms": 5,
                   "usage": {"input_tokens": self.tokens, "output_tokens": len(final) // 4}})
        for line in self.lines:
            print(json.dumps(line))


def main() -> None:
    prompt = sys.stdin.read() or os.environ.get("WORKBENCH_PROMPT", "")
    Agent(Path.cwd(), prompt, os.environ.get("WORKBENCH_SESSION") or None).run()


if __name__ == "__main__":
    main()
