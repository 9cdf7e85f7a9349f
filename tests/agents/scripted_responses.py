"""A scripted OpenAI Responses API on 127.0.0.1, so the real Codex CLI runs
offline (configured through CODEX_HOME/config.toml as a custom model provider).

Script of the conversation (one eval), deciding from the request's input:
  turn 1: exec_command `printf '42\\n' > answer.txt && cat answer.txt` -> "Which format do you want?"
  turn 2 (resumed): "Done: the answer is in JSON now."
"""

from __future__ import annotations

import json

from agents.local_http import LocalServer, ScriptedHandler

COMMAND = "printf '42\\n' > answer.txt && cat answer.txt"


def _texts(body: dict) -> list[str]:
    out = []
    for item in body.get("input", []):
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user":
            out += [c.get("text", "") for c in item.get("content", []) if isinstance(c, dict)]
    return out


class ScriptedResponses:
    def __init__(self) -> None:
        self.requests: list[dict] = []

    def reply(self, body: dict) -> list[dict]:
        self.requests.append(body)
        users = [t for t in _texts(body) if not t.startswith("<")]
        outputs = [i for i in body.get("input", []) if isinstance(i, dict) and i.get("type") == "function_call_output"]
        if users and "JSON please" in users[-1]:
            return [_message("Done: the answer is in JSON now.")]
        if not outputs:
            return [
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": COMMAND}),
                }
            ]
        return [_message("Which format do you want?")]


def _message(text: str) -> dict:
    return {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


class _Handler(ScriptedHandler):
    model: ScriptedResponses

    def do_GET(self) -> None:  # noqa: N802
        self.send_json({"data": [], "models": []})

    def do_POST(self) -> None:  # noqa: N802
        items = self.model.reply(self.body())
        self.open_events()

        def send(event: str, data: dict) -> None:
            self.send_event(event, {"type": event, **data})

        send("response.created", {"response": {"id": "resp_1"}})
        for item in items:
            send("response.output_item.done", {"item": item})
        send(
            "response.completed",
            {
                "response": {
                    "id": "resp_1",
                    "usage": {
                        "input_tokens": 12,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 8,
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 20,
                    },
                }
            },
        )
        self.wfile.flush()


class ScriptedResponsesServer(LocalServer):
    def __init__(self) -> None:
        super().__init__(ScriptedResponses(), _Handler, "/v1")

    def config_toml(self) -> str:
        """What a user writes in ~/.codex/config.toml for a provider of their own."""
        return (
            'model = "scripted-model"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
            f'name = "scripted"\nbase_url = "{self.url}"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        )
