"""One ordered list of events per dispatch, whatever agent produced it.

Agents speak Claude Code's stream-json (one JSON object a line: system init,
assistant messages with text and tool_use blocks, user messages with
tool_result blocks, a final result with usage); other executors map their
events into the same model. A tool invocation is rendered `Name {compact json}`
so regex checks see exactly what eval-magic's do."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.runs import cost
from workbench.runs.cost import dollars

USER, ASSISTANT, TOOL_USE, TOOL_RESULT = "user", "assistant", "tool_use", "tool_result"

# Tools that write files: a write is "the first write" for must_precede: first_write.
WRITE_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch"}


@dataclass
class Event:
    kind: str  # user | assistant | tool_use | tool_result | turn
    turn: int
    text: str = ""
    name: str = ""  # tool name
    input: Any = None  # tool input
    tool_id: str = ""
    is_error: bool = False

    @property
    def rendered(self) -> str:
        """The form regex checks match: `Name {compact json input}` for a tool call."""
        if self.kind == TOOL_USE:
            return f"{self.name} {render_input(self.input)}"
        return self.text

    def as_json(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if v not in ("", None, False)}
        out["kind"], out["turn"] = self.kind, self.turn
        if self.kind == TOOL_USE:
            out["rendered"] = self.rendered
        return out


def render_input(value: Any) -> str:
    return json.dumps(value if value is not None else {}, separators=(",", ":"), ensure_ascii=False)


@dataclass
class TurnOutcome:
    """What one turn of an agent produced, parsed from its stdout."""

    events: list[Event] = field(default_factory=list)
    session_id: str | None = None
    result_text: str | None = None
    tokens: int = 0
    cost_usd: float | None = None  # as the agent reported or its usage was priced; None: unknown
    duration_ms: float | None = None
    is_error: bool = False
    garbage: list[str] = field(default_factory=list)  # lines that were not JSON events
    decided: bool = False  # the runner stopped the turn once what it watched for was decided
    # Each model call's (model, usage) as its assistant message stated it: what a turn stopped before
    # its result event (a trigger evaluation stops it early) is priced from.
    calls: list[tuple[str | None, dict]] = field(default_factory=list)
    _last_message: str | None = field(default=None, repr=False)

    @property
    def usage_cost_usd(self) -> float | None:
        """What the model calls seen cost, by the price table; None when there were none or one has no price."""
        if not self.calls:
            return None
        priced = [cost.price(model, usage) for model, usage in self.calls]
        return None if any(p is None for p in priced) else cost.dollars(sum(p for p in priced if p is not None))

    @property
    def last_assistant_text(self) -> str:
        texts = [e.text for e in self.events if e.kind == ASSISTANT and e.text]
        return texts[-1] if texts else (self.result_text or "")


def parse_stream_json(stdout: str, turn: int) -> TurnOutcome:
    """Claude Code stream-json lines -> events. Lines that are not JSON objects are
    kept as garbage (an executor that printed them is reported, not trusted)."""
    outcome = TurnOutcome()
    for line in stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            outcome.garbage.append(line)
            continue
        if not isinstance(message, dict):
            outcome.garbage.append(line)
            continue
        _take(message, turn, outcome)
    return outcome


def _take(message: dict, turn: int, outcome: TurnOutcome) -> None:
    kind = message.get("type")
    if isinstance(message.get("session_id"), str):
        outcome.session_id = message["session_id"]
    if kind == "assistant":
        inner = message.get("message")
        if isinstance(inner, dict) and isinstance(inner.get("usage"), dict):
            # One call's blocks come as several events with its id: counted once (the latest usage is kept).
            ident = inner.get("id") if isinstance(inner.get("id"), str) else None
            model = inner.get("model") if isinstance(inner.get("model"), str) else None
            if ident is not None and ident == outcome._last_message and outcome.calls:
                outcome.calls[-1] = (model, inner["usage"])
            else:
                outcome.calls.append((model, inner["usage"]))
            outcome._last_message = ident
        for block in _blocks(message):
            if block.get("type") == "text" and block.get("text"):
                outcome.events.append(Event(ASSISTANT, turn, text=str(block["text"])))
            elif block.get("type") == "tool_use":
                outcome.events.append(
                    Event(
                        TOOL_USE,
                        turn,
                        name=str(block.get("name", "")),
                        input=block.get("input"),
                        tool_id=str(block.get("id", "")),
                    )
                )
    elif kind == "user":
        outcome._last_message = None  # a tool's result: the next assistant message is another call
        for block in _blocks(message):
            if block.get("type") == "tool_result":
                outcome.events.append(
                    Event(
                        TOOL_RESULT,
                        turn,
                        text=_text_of(block.get("content")),
                        tool_id=str(block.get("tool_use_id", "")),
                        is_error=bool(block.get("is_error")),
                    )
                )
    elif kind == "result":
        outcome.result_text = message.get("result") if isinstance(message.get("result"), str) else None
        outcome.is_error = bool(message.get("is_error"))
        usage = message.get("usage")
        if isinstance(usage, dict):
            outcome.tokens = sum(v for k, v in usage.items() if k.endswith("_tokens") and isinstance(v, int))
        else:
            outcome.tokens = 0
        # Claude Code reports what the turn cost; the command protocol may, as cost_usd (docs/executors.md).
        for key in ("total_cost_usd", "cost_usd"):
            value = dollars(message.get(key))
            if value is not None:
                outcome.cost_usd = value
                break
        if isinstance(message.get("duration_ms"), (int, float)):
            outcome.duration_ms = float(message["duration_ms"])


def _blocks(message: dict) -> list[dict]:
    inner = message.get("message")
    content = inner.get("content") if isinstance(inner, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else json.dumps(content)


def metrics(events: list[Event], files_created: list[str], output_chars: int) -> dict:
    """metrics.json in seed 003's shape."""
    calls: dict[str, int] = {}
    for event in events:
        if event.kind == TOOL_USE:
            calls[event.name] = calls.get(event.name, 0) + 1
    transcript_chars = sum(len(e.rendered) for e in events)
    return {
        "tool_calls": calls,
        "total_tool_calls": sum(calls.values()),
        "total_steps": sum(1 for e in events if e.kind in (ASSISTANT, TOOL_USE)),
        "files_created": files_created,
        "errors_encountered": sum(1 for e in events if e.kind == TOOL_RESULT and e.is_error),
        "output_chars": output_chars,
        "transcript_chars": transcript_chars,
    }


def jsonl(events: list[Event]) -> str:
    return "".join(json.dumps(e.as_json(), ensure_ascii=False) + "\n" for e in events)


def read_jsonl(text: str) -> list[Event]:
    """transcript.jsonl back into events (the inverse of jsonl)."""
    events = []
    for line in text.splitlines():
        if not line.strip():
            continue
        data = json.loads(line)
        events.append(
            Event(
                kind=data["kind"],
                turn=data.get("turn", 0),
                text=data.get("text", ""),
                name=data.get("name", ""),
                input=data.get("input"),
                tool_id=data.get("tool_id", ""),
                is_error=bool(data.get("is_error")),
            )
        )
    return events
