"""The Anthropic Messages API over HTTP as the judge. The base URL and the model
are configurable (ANTHROPIC_BASE_URL by default, so a local server can stand in);
the key comes from ANTHROPIC_API_KEY."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

from workbench.config import read_config
from workbench.grading.judges.base import Judge, JudgeFailed

DEFAULT_MODEL = "claude-sonnet-4-5"


class AnthropicJudge(Judge):
    name = "anthropic"

    def __init__(self, model: str | None = None, base_url: str | None = None) -> None:
        config = read_config()
        self.model = model or config.get("judge_model") or DEFAULT_MODEL
        self.base_url = (base_url or config.get("judge_base_url") or os.environ.get("ANTHROPIC_BASE_URL")
                         or "https://api.anthropic.com").rstrip("/")
        self.label = f"Anthropic API judge ({self.model})"

    def ask(self, prompt: str, model: str | None) -> str:
        body = json.dumps({"model": model or self.model, "max_tokens": 1024,
                           "messages": [{"role": "user", "content": prompt}]}).encode()
        request = urllib.request.Request(f"{self.base_url}/v1/messages", data=body, method="POST", headers={
            "content-type": "application/json", "anthropic-version": "2023-06-01",
            "x-api-key": os.environ.get("ANTHROPIC_API_KEY", "")})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                reply = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise JudgeFailed(f"the Messages API answered {exc.code}: {exc.read()[:300]!r}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise JudgeFailed(f"the Messages API at {self.base_url} failed: {exc}") from None
        blocks = reply.get("content") if isinstance(reply, dict) else None
        texts = [b.get("text", "") for b in blocks or [] if isinstance(b, dict) and b.get("type") == "text"]
        if not texts:
            raise JudgeFailed("the Messages API answered without text")
        return "\n".join(texts)
