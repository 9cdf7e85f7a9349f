"""A scripted Anthropic Messages API on 127.0.0.1, so the real Claude Code CLI
runs offline: it answers with tool_use blocks (the CLI really runs Write and
Bash in the workspace) and text, deciding from the conversation so far.

Skills: on a request's first call, a skill in Claude Code's listing whose
description shares a word of 7 letters or more with the request is used
(agents/trigger_rule.py), so trigger evaluations have known answers.

Script of the conversation (one eval):
  turn 1: Write answer.txt -> Bash `cat answer.txt` -> "Which format do you want?"
  turn 2 (resumed): "Done: <the user's answer>."
Requests without tools (the CLI's side calls: titles, topics) get a short JSON text.
"""

from __future__ import annotations

import json
import re

from agents import trigger_rule
from agents.local_http import LocalServer, ScriptedHandler


def _text_of(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _tool_results(messages: list[dict]) -> int:
    return sum(
        1
        for m in messages
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    )


def _request(messages: list[dict]) -> str:
    """What the user asked last: the last text of theirs that is not one of Claude Code's reminders."""
    texts = [
        b.get("text", "")
        for m in messages
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "text" and not b.get("text", "").startswith("<system-reminder>")
    ]
    return texts[-1] if texts else ""


class ScriptedModel:
    def __init__(self) -> None:
        self.requests: list[dict] = []

    def reply(self, body: dict) -> list[dict]:
        """The content blocks of the next assistant message."""
        self.requests.append(body)
        users = [_text_of(m) for m in body.get("messages", []) if m.get("role") == "user"]
        if users and users[-1].startswith("You are grading one expectation"):
            return [{"type": "text", "text": _verdict(users[-1])}]
        if not body.get("tools"):
            return [{"type": "text", "text": '{"isNewTopic": false, "title": null}'}]
        messages = body.get("messages", [])
        system = json.dumps(body.get("system", ""))
        cwd = re.search(r"Working directory: ([^\s\\\\\"]+)", system)
        folder = cwd.group(1) if cwd else "."
        users = [_text_of(m) for m in messages if m.get("role") == "user" and _text_of(m).strip()]
        last = users[-1] if users else ""
        if "# Draft eval cases" in last:  # workbench draft-cases: the cases as JSON, in the suite's shape
            case = {
                "id": "drafted-by-the-model",
                "prompt": "We removed the --legacy flag. Changelog?",
                "expected_output": "One line under Unreleased / Removed.",
                "assertions": [
                    {
                        "id": "read-first",
                        "type": "transcript_check",
                        "check": "tool_invocation_matches",
                        "pattern": "^Read ",
                        "must_precede": "first_write",
                    }
                ],
            }
            return [{"type": "text", "text": json.dumps({"token": _token(last), "cases": [case]})}]
        if "# Improve the skill" in last:  # a proposer's brief (workbench improve)
            return _proposer(folder, _tool_results(messages))
        if "JSON please" in last:
            return [{"type": "text", "text": "Done: the answer is in JSON now."}]
        done = _tool_results(messages)
        if done == 0:  # a skill whose description shares a long word with the request is used (trigger_rule.py)
            skill = trigger_rule.chosen(_request(messages), trigger_rule.listing("\n".join(map(_text_of, messages))))
            if skill:
                return [{"type": "tool_use", "id": "toolu_skill_1", "name": "Skill", "input": {"skill": skill}}]
        if done == 0:
            return [
                {"type": "text", "text": "I'll write the answer."},
                {
                    "type": "tool_use",
                    "id": "toolu_write_1",
                    "name": "Write",
                    "input": {"file_path": f"{folder}/answer.txt", "content": "42\n"},
                },
            ]
        if done == 1:
            return [
                {
                    "type": "tool_use",
                    "id": "toolu_bash_1",
                    "name": "Bash",
                    "input": {"command": "cat answer.txt", "description": "Show the answer"},
                }
            ]
        return [{"type": "text", "text": "Which format do you want?"}]


def _proposer(folder: str, done: int) -> list[dict]:
    """As a proposer: read SKILL.md, make one real Edit to it (the demo draft's first step), say what changed."""
    if done == 0:
        return [
            {"type": "tool_use", "id": "toolu_read_1", "name": "Read", "input": {"file_path": f"{folder}/SKILL.md"}}
        ]
    if done == 1:
        return [
            {
                "type": "tool_use",
                "id": "toolu_edit_1",
                "name": "Edit",
                "input": {
                    "file_path": f"{folder}/SKILL.md",
                    "old_string": "**Look at the changelog.**",
                    "new_string": "**Read `CHANGELOG.md` first.**",
                },
            }
        ]
    return [{"type": "text", "text": "Step 1 now says to read CHANGELOG.md before writing anything."}]


def _token(prompt: str) -> str:
    """The question's token, as the prompt's closing instruction gives it (the last one named: the run quoted
    above it could name any)."""
    found = re.findall(r'"token": "([0-9a-f]+)"', prompt)
    return found[-1] if found else ""


def _verdict(prompt: str) -> str:
    """The scripted judge: UNPARSABLE rubrics get prose (a judge error after one
    retry); otherwise it passes when the rubric's quoted word is in the run."""
    rubric = prompt.split("EXPECTATION:\n", 1)[1].split("\n\nTRANSCRIPT:", 1)[0]
    if "UNPARSABLE" in rubric:
        return "I would say it mostly passes."
    wanted = re.search(r"'([^']+)'", rubric)
    # The run only: the closing instruction after it carries the token, whose hex digits are not the run's.
    run = prompt.split("\n\nTRANSCRIPT:", 1)[1].rsplit("\n\nReply with one JSON object", 1)[0]
    passed = bool(wanted) and wanted.group(1) in run
    return json.dumps(
        {
            "token": _token(prompt),
            "passed": passed,
            "evidence": f"{wanted.group(1) if wanted else '?'} {'found' if passed else 'not found'} in the run",
        }
    )


class _Handler(ScriptedHandler):
    model: ScriptedModel

    def do_POST(self) -> None:  # noqa: N802
        body = self.body()
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            self.send_json({"input_tokens": 10})
            return
        blocks = self.model.reply(body)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        if body.get("stream"):
            self._stream(body, blocks, stop)
        else:
            self.send_json(
                {
                    "id": "msg_scripted",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model"),
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 8},
                }
            )

    def do_GET(self) -> None:  # noqa: N802
        self.send_json({})

    def _stream(self, body: dict, blocks: list[dict], stop: str) -> None:
        self.open_events()
        send = self.send_event
        send(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_scripted",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 1},
                },
            },
        )
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                send(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                )
                send(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": block["text"]},
                    },
                )
            else:
                send(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}},
                    },
                )
                send(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                    },
                )
            send("content_block_stop", {"type": "content_block_stop", "index": index})
        send(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 8},
            },
        )
        send("message_stop", {"type": "message_stop"})
        self.wfile.flush()


class ScriptedServer(LocalServer):
    """Serves the scripted model on 127.0.0.1 (a free port) until stopped."""

    def __init__(self) -> None:
        super().__init__(ScriptedModel(), _Handler)
