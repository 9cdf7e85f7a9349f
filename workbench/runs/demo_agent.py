"""The demo agent: offline, deterministic, NOT a model. It exists so the demo
skill can be run anywhere, and it behaves the way the skill it finds tells it to.

It speaks the command executor's protocol: the prompt on stdin, the session to
resume in WORKBENCH_SESSION, Claude Code stream-json on stdout. It really edits
CHANGELOG.md in its workspace. What it does depends on the staged SKILL.md's
instructions, so runs with and without the skill, and with different versions of
it, differ measurably. It reacts to these phrases of the skill and to nothing
else in it:
- "Read `CHANGELOG.md` first" -> it reads the file before writing, and puts the
  entry where the file's shape calls for it: into the `### Kind` section that
  Unreleased already has, or a new one in Keep a Changelog order, creating
  `## [Unreleased]` above the latest release when there is none. Without it, it
  writes blind: a new `### Kind` heading right under `## [Unreleased]` (or, when
  there is no such heading, under the first `## ` heading, a released one);
- "ask one short question" -> it asks when the kind of change is unclear
  (without it, it guesses Changed);
- "what the user can now do" -> user-facing wording instead of code names;
- "Touch nothing else" -> it leaves other files alone, and declines a request
  to edit a released section (without it, it makes the edit);
- "under `## [Unreleased]`" -> the entry goes under that heading (without it, at
  the end of the file).
The kind of change comes from the conversation: a kind the user names ("under
Fixed"), else words such as security, deprecated, removed, fixed, added.
Without a skill it writes a developer's note at the end of the file and also
leaves a comment in the code it was told about (or the first Python file).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import TextIO

KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
# A request to change an entry of a released version: "the 1.3.0 entry about ...".
RELEASED_EDIT = re.compile(r"\b(\d+\.\d+\.\d+)\b[^.?!]*?\b(?:entry|line|section)\b")
# What the entry says, by what the conversation is about: (words, for users, a developer's note).
TOPICS = (
    ("--json", "Export can write JSON with `--json`.", "add json arg to cli.py"),
    ("timeout", "The default timeout is 30 seconds again, as documented.", "DEFAULT_TIMEOUT_SECONDS = 30 in client.py"),
    (
        "--legacy-csv",
        "Import no longer accepts `--legacy-csv`: CSV files are read in the current format only.",
        "remove legacy_csv arg from importer.py",
    ),
    (
        "upload",
        lambda said: (
            "Uploads over 25 MB are refused instead of exhausting the server's memory."
            if "25 mb" in said
            else "Uploads have a size limit."
        ),
        "MAX_UPLOAD_BYTES check in upload.py",
    ),
    ("fuzzy", "Search finds close spellings too: `colour` finds `color`.", "difflib matching in search.py"),
    (
        "--color",
        "The `--color` option of report is deprecated: use `--theme` instead; `--color` goes away in 3.0.",
        "deprecate use_color in report.py",
    ),
    ("progress bar", "The progress bar no longer freezes at 99% on slow disks.", "percent rounding in progress.py"),
    ("pagination", "The last page of a list is no longer empty.", "fix page_count off-by-one in pager.py"),
)


class Agent:
    def __init__(self, cwd: Path, prompt: str, session: str | None, out: TextIO | None = None) -> None:
        self.cwd = cwd
        self.out = out  # where its stream-json goes (None: stdout); a fake agent in a test's process reads it
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
        self.emit(
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
                },
            }
        )
        self.emit(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": tool_id, "content": result, "is_error": is_error}
                    ],
                },
            }
        )

    # ---------------------------------------------------------------- behaviour

    def knows(self, words: str) -> bool:
        return words in self.skill

    def run(self) -> None:
        self.emit(
            {
                "type": "system",
                "subtype": "init",
                "model": "demo-agent (offline, not a model)",
                "cwd": str(self.cwd),
                "tools": ["Read", "Edit", "Write", "Bash", "Skill"],
            }
        )
        conversation = " ".join(self.history).lower()
        if re.search(r"\bdifference between\b|\bjust curious\b", self.history[0].lower()):
            self.say(
                "A changelog lists every notable change for people who use the project, version by "
                "version; release notes tell the story of one release, often with highlights and "
                "upgrade advice. Nothing to change in your files for that."
            )
            return self.finish()
        if self.skill_name and len(self.history) == 1:
            self.tool("Skill", {"skill": self.skill_name}, f"Launching skill: {self.skill_name}")
        changelog = self.cwd / "CHANGELOG.md"
        reads_first = self.knows("read `changelog.md` first") or self.knows("read changelog.md first")
        release = RELEASED_EDIT.search(self.history[0])
        if release:
            if self.knows("touch nothing else"):
                if reads_first and changelog.exists():
                    self.tool("Read", {"file_path": str(changelog)}, changelog.read_text(encoding="utf-8"))
                self.say(
                    f"I won't edit the {release.group(1)} entry: released sections are history, and "
                    f"people may rely on what {release.group(1)} said. I can record the change as a new "
                    "line under ## [Unreleased] instead, if you like."
                )
                return self.finish()
            return self.edit_release(changelog, release.group(1))
        kind = self.kind_of(conversation)
        if kind is None and self.knows("ask one short question") and len(self.history) == 1:
            self.say("Before I write it down: is this a fix, or a change of behaviour?")
            return self.finish()
        if not changelog.exists():
            self.say("There is no CHANGELOG.md here, so I have nothing to add the entry to.")
            return self.finish()
        text = changelog.read_text(encoding="utf-8")
        if reads_first:
            self.tool("Read", {"file_path": str(changelog)}, text)
        entry = self.entry(conversation)
        kind = kind or "Changed"
        if not self.knows("## [unreleased]"):
            new, where = text.rstrip("\n") + f"\n- {entry}\n", "at the end of the changelog"
        elif reads_first:
            new, where = self.placed(text, kind, entry), f"under ## [Unreleased] / ### {kind}"
        else:
            new, heading = self.blind(text, kind, entry)
            where = f"under {heading} / ### {kind}"
        self.tool(
            "Edit",
            {"file_path": str(changelog), "old_string": text[-40:], "new_string": new[-80:]},
            "The file CHANGELOG.md has been updated.",
        )
        changelog.write_text(new, encoding="utf-8")
        if not self.knows("touch nothing else"):
            self.comment_code(conversation)
        self.say(f"Done: I added this line {where}:\n\n- {entry}")
        return self.finish()

    def edit_release(self, changelog: Path, version: str) -> None:
        """Does as asked: rewrites the released line that holds the first `quoted` text."""
        quoted = re.findall(r"`([^`]+)`", self.history[0])
        if not changelog.exists() or len(quoted) < 2:
            self.say(f"I could not find what to change in the {version} section.")
            return self.finish()
        text = changelog.read_text(encoding="utf-8")
        lines = text.split("\n")
        start = next((i for i, line in enumerate(lines) if line.startswith(f"## [{version}]")), len(lines))
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        at = next((i for i in range(start, end) if f"`{quoted[0]}`" in lines[i]), None)
        if at is None:
            self.say(f"I could not find `{quoted[0]}` in the {version} section.")
            return self.finish()
        old = lines[at]
        lines[at] = old.replace(f"`{quoted[0]}`", f"`{quoted[1]}`")
        self.tool(
            "Edit",
            {"file_path": str(changelog), "old_string": old, "new_string": lines[at]},
            "The file CHANGELOG.md has been updated.",
        )
        changelog.write_text("\n".join(lines), encoding="utf-8")
        self.say(f"Done: the {version} line now reads:\n\n{lines[at]}")
        return self.finish()

    def comment_code(self, conversation: str) -> None:
        """A note at the top of the Python file the user named, else of the first one."""
        named = [self.cwd / name for name in re.findall(r"[\w-]+\.py\b", conversation)]
        sources = [p for p in named if p.is_file()] or sorted(self.cwd.glob("*.py"))
        if not sources:
            return
        source = sources[0]
        code = source.read_text(encoding="utf-8")
        note = "# Changelog updated for this change.\n"
        self.tool(
            "Edit",
            {"file_path": str(source), "old_string": "", "new_string": note},
            f"The file {source.name} has been updated.",
        )
        source.write_text(note + code, encoding="utf-8")

    def kind_of(self, conversation: str) -> str | None:
        named = re.search(
            r"\b(?:under|as|in)\s+(?:the\s+)?(added|changed|deprecated|removed|fixed|security)\b", conversation
        )
        if named:
            return named.group(1).capitalize()
        if re.search(r"\bsecurity\b|\bvulnerab", conversation):
            return "Security"
        if re.search(r"\bdeprecat", conversation):
            return "Deprecated"
        if re.search(r"\bremov(e|ed|es)\b|\bdropped\b", conversation):
            return "Removed"
        if re.search(r"\bfix(ed|es)?\b|\bbug\b", conversation):
            return "Fixed"
        if re.search(r"\badded\b|\bnew\b", conversation):
            return "Added"
        return None

    def entry(self, conversation: str) -> str:
        for words, user_facing, developer in TOPICS:
            if words in conversation:
                if callable(user_facing):
                    user_facing = user_facing(conversation)
                return user_facing if self.knows("what the user can now do") else developer
        return "Noted the change." if self.knows("what the user can now do") else "misc changes"

    @staticmethod
    def blind(text: str, kind: str, entry: str) -> tuple[str, str]:
        """The entry under a new ### kind right below ## [Unreleased], or below the
        first ## heading when there is none, without looking at what is there."""
        lines = text.split("\n")
        at = next((i for i, line in enumerate(lines) if line.startswith("## [Unreleased]")), None)
        if at is None:
            at = next((i for i, line in enumerate(lines) if line.startswith("## ")), None)
        if at is None:
            return text.rstrip("\n") + f"\n\n### {kind}\n\n- {entry}\n", "the end of the changelog"
        lines[at + 1 : at + 1] = ["", f"### {kind}", "", f"- {entry}"]
        return "\n".join(lines), lines[at]

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
        section = lines[start + 1 : end]
        while section and not section[-1].strip():
            section.pop()
        heading = f"### {kind}"
        if heading in section:
            at = section.index(heading) + 1
            while at < len(section) and not section[at].strip():
                at += 1
            section.insert(at, f"- {entry}")
        else:
            later = [
                i
                for i, line in enumerate(section)
                if line[4:] in KINDS and line.startswith("### ") and KINDS.index(line[4:]) > KINDS.index(kind)
            ]
            if later:
                section[later[0] : later[0]] = [heading, "", f"- {entry}", ""]
            else:
                section += ["", heading, "", f"- {entry}"]
        lines[start + 1 : end] = section + ([""] if end < len(lines) else [])
        return "\n".join(lines)

    def finish(self) -> None:
        self.state_file.parent.mkdir(exist_ok=True)
        self.state_file.write_text(json.dumps({"prompts": self.history}))
        final = next(
            (
                m["message"]["content"][0]["text"]
                for m in reversed(self.lines)
                if m["type"] == "assistant" and m["message"]["content"][0]["type"] == "text"
            ),
            "",
        )
        self.emit(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "result": final,
                "num_turns": len(self.history),
                "duration_ms": 5,
                "usage": {"input_tokens": self.tokens, "output_tokens": len(final) // 4},
                "cost_usd": 0,  # not a model: it costs nothing, and says so through the command protocol
            }
        )
        for line in self.lines:
            print(json.dumps(line), file=self.out or sys.stdout)


def main() -> None:
    prompt = sys.stdin.read() or os.environ.get("WORKBENCH_PROMPT", "")
    Agent(Path.cwd(), prompt, os.environ.get("WORKBENCH_SESSION") or None).run()


if __name__ == "__main__":
    main()
