"""The Anthropic Messages API as the judge, through the official `anthropic` SDK
(its retries with backoff on 408/409/429/5xx and connection errors, honouring
retry-after; its typed errors). The base URL and the model are configurable
(ANTHROPIC_BASE_URL by default, so a local server can stand in); the key comes
from ANTHROPIC_API_KEY. The SDK is imported on the first question, not with the
CLI: it takes about a second to import."""

from __future__ import annotations

import os
import threading
import urllib.parse
from typing import TYPE_CHECKING

from workbench.grading import judge_bill
from workbench.grading.judges.base import Judge, JudgeFailed
from workbench.runs import cost

if TYPE_CHECKING:
    import anthropic

DEFAULT_MODEL = "claude-sonnet-5-5"  # claude-sonnet-4-5 reaches its end of life on 2026-11-30
DEFAULT_BASE_URL = "https://api.anthropic.com"  # the SDK's own default, for messages
MAX_TOKENS = 1024
NO_KEY = "ANTHROPIC_API_KEY is not set: the anthropic judge needs an API key (or choose another judge with --judge)"


class AnthropicJudge(Judge):
    name = "anthropic"
    max_retries = 2  # the SDK's retries of one question (429, 529, 5xx, connection errors)

    def __init__(self, model: str | None = None, base_url: str | None = None) -> None:
        # The config's judge_model and judge_base_url arrive here through pipeline.defaults().
        self.model = model or DEFAULT_MODEL
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.base_url = base_url.rstrip("/") if base_url else None  # None: the SDK's default
        self.label = f"Anthropic API judge ({self.model})"
        self._client: anthropic.Anthropic | None = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        """Sent to a cluster's worker (a responder eval's simulated user): never the client, which holds the
        API key; the worker makes its own from its own environment (docs/cluster.md)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_client", "_lock")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._client, self._lock = None, threading.Lock()

    @property
    def where(self) -> str:
        return self.base_url or DEFAULT_BASE_URL

    def unready(self) -> str | None:
        """Its key is set, its SDK imports and its base URL is a URL (no question is sent)."""
        if not os.environ.get("ANTHROPIC_API_KEY", "").strip():
            return NO_KEY
        try:
            import anthropic  # noqa: F401
        except ImportError as exc:
            return f"the anthropic judge needs the `anthropic` package ({exc}); reinstall skill-workbench"
        if self.base_url is not None:
            parts = urllib.parse.urlsplit(self.base_url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                return f"the anthropic judge's base URL {self.base_url!r} is not an http(s) URL with a host"
        return None

    def client(self) -> anthropic.Anthropic:
        """The SDK client, made once (it is thread-safe; grading asks from several threads)."""
        with self._lock:
            if self._client is None:
                key = os.environ.get("ANTHROPIC_API_KEY", "").strip()
                if not key:
                    raise JudgeFailed(NO_KEY)
                try:
                    import anthropic
                except ImportError as exc:
                    raise JudgeFailed(
                        f"the anthropic judge needs the `anthropic` package ({exc}); reinstall skill-workbench"
                    ) from None
                self._client = anthropic.Anthropic(
                    api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=self.max_retries
                )
            return self._client

    def ask(self, prompt: str, model: str | None, token: str) -> str:
        client = self.client()
        import anthropic

        try:
            reply = client.messages.create(
                model=model or self.model, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": prompt}]
            )
        except anthropic.AuthenticationError as exc:
            raise JudgeFailed(
                f"the Messages API at {self.where} refused the key in ANTHROPIC_API_KEY (401 {_said(exc)})"
            ) from None
        except anthropic.PermissionDeniedError as exc:
            raise JudgeFailed(
                f"the Messages API at {self.where} does not allow this key to do that (403 {_said(exc)})"
            ) from None
        except anthropic.NotFoundError as exc:
            raise JudgeFailed(
                f"the Messages API at {self.where} answered 404 for model {model or self.model!r}: {_said(exc)}"
            ) from None
        except anthropic.RateLimitError as exc:
            raise JudgeFailed(
                f"the Messages API at {self.where} is still rate-limiting (429) after "
                f"{self.max_retries} retries: {_said(exc)}"
            ) from None
        except anthropic.APIStatusError as exc:
            again = f" after {self.max_retries} retries" if exc.status_code >= 500 else ""
            raise JudgeFailed(
                f"the Messages API at {self.where} answered {exc.status_code}{again}: {_said(exc)}"
            ) from None
        except anthropic.APITimeoutError:
            raise JudgeFailed(f"the Messages API at {self.where} timed out after {self.timeout:g} s") from None
        except anthropic.APIConnectionError as exc:
            cause = exc.__cause__ or exc.__context__
            raise JudgeFailed(f"the Messages API at {self.where} failed: {cause or exc.message}") from None
        except Exception as exc:  # noqa: BLE001 - any other SDK or parsing failure is a judge error, not a crash
            raise JudgeFailed(f"the Messages API at {self.where} failed: {type(exc).__name__}: {exc}") from None
        usage = getattr(reply, "usage", None)
        counts = {k: getattr(usage, k, None) for k in cost.KINDS} if usage is not None else {}
        judge_bill.charge(cost.price(getattr(reply, "model", None) or model or self.model, counts) if counts else None)
        texts = [block.text for block in reply.content or [] if isinstance(block, anthropic.types.TextBlock)]
        if not texts:
            raise JudgeFailed(f"the Messages API answered without text (stop reason {reply.stop_reason!r})")
        return "\n".join(texts)


def _said(exc: anthropic.APIStatusError) -> str:
    """The API's own error type and message, else the start of the body."""
    kind, message = getattr(exc, "type", None), getattr(exc, "api_message", None)
    if message:
        return f"{kind}: {message}" if kind else str(message)
    return str(exc.body if exc.body is not None else exc.message)[:300]
