"""The anthropic judge through the official SDK, against the scripted Messages
API: the SDK's retries of 429 and 529, a refused key and a missing key as
recorded judge errors (never a crash), and the SDK imported only when asked."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from agents.local_http import LocalServer
from agents.scripted_model import ScriptedModel, ScriptedServer, _Handler

from workbench.app.choices import Agent, Judge
from workbench.grading.judges import JudgeCase, make
from workbench.runs.transcript import ASSISTANT, Event

EVENTS = [Event(ASSISTANT, 1, text="The answer is 42.")]


class FailingFirst(ScriptedModel):
    """Answers the first requests with the given errors, then as the scripted model."""

    def __init__(self, failures: list[tuple[int, dict[str, str], dict]]) -> None:
        super().__init__()
        self.failures = list(failures)
        self.seen: list[dict[str, str]] = []  # the headers of every request, failed or not


class _FailingHandler(_Handler):
    model: FailingFirst

    def do_POST(self) -> None:  # noqa: N802
        self.model.seen.append({k.lower(): v for k, v in self.headers.items()})
        if not self.model.failures:
            super().do_POST()
            return
        self.body()
        status, headers, body = self.model.failures.pop(0)
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


def _ask(url: str):
    return make("anthropic", base_url=url, model="judge-model").decide(JudgeCase("The reply says '42'", EVENTS))


def _error(kind: str, message: str) -> dict:
    return {"type": "error", "error": {"type": kind, "message": message}}


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.mark.slow  # 30 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_rate_limited_and_overloaded_answers_are_retried_by_the_sdk(api_key):
    model = FailingFirst(
        [
            (429, {"retry-after-ms": "10"}, _error("rate_limit_error", "slow down")),
            (529, {"retry-after-ms": "10"}, _error("overloaded_error", "Overloaded")),
        ]
    )
    with LocalServer(model, _FailingHandler) as server:
        judge = make("anthropic", base_url=server.url, model="judge-model")
        verdict = judge.decide(JudgeCase("The reply says '42'", EVENTS))
    assert verdict.passed and not verdict.error
    assert len(model.seen) == 3 and len(model.requests) == 1  # two refusals, then the answer: one question
    assert [h.get("x-stainless-retry-count") for h in model.seen] == ["0", "1", "2"]
    assert all("sk-test" in (h.get("x-api-key") or h.get("authorization", "")) for h in model.seen)


def test_still_overloaded_after_the_retries_is_a_judge_error(api_key):
    overloaded = (529, {"retry-after-ms": "1"}, _error("overloaded_error", "Overloaded"))
    model = FailingFirst([overloaded] * 6)
    with LocalServer(model, _FailingHandler) as server:
        verdict = _ask(server.url)
    assert verdict.error and not verdict.passed
    assert "answered 529 after 2 retries: overloaded_error: Overloaded" in verdict.evidence
    assert len(model.seen) == 6  # the SDK's 3 tries, for each of the judge's 2 attempts


def test_a_refused_key_is_a_judge_error_that_says_so(api_key):
    model = FailingFirst([(401, {}, _error("authentication_error", "invalid x-api-key"))] * 2)
    with LocalServer(model, _FailingHandler) as server:
        verdict = _ask(server.url)
        assert verdict.error and not verdict.passed
        assert (
            f"the Messages API at {server.url} refused the key in ANTHROPIC_API_KEY "
            "(401 authentication_error: invalid x-api-key)"
        ) in verdict.evidence
    assert len(model.seen) == 2  # a 401 is not retried by the SDK: once, and the judge's one retry


def test_no_api_key_is_a_judge_error_before_any_request(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with ScriptedServer() as server:
        verdict = _ask(server.url)
        assert verdict.error and "ANTHROPIC_API_KEY is not set" in verdict.evidence
        assert server.model.requests == []


def test_the_base_url_comes_from_the_environment_and_the_model_from_the_config_through_the_pipeline(
    api_key, monkeypatch, tmp_path
):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.json").write_text('{"judge_model": "configured-model"}')
    with ScriptedServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        from workbench.app.pipeline import RunRequest, defaults, make_judge

        judge = make_judge(defaults(RunRequest(tmp_path, agent=Agent("claude"), judge=Judge("anthropic"))).judge)
        assert judge.decide(JudgeCase("The reply says '42'", EVENTS)).passed
        assert server.model.requests[0]["model"] == "configured-model"


def test_a_cut_connection_is_a_judge_error(api_key):
    judge = make("anthropic", base_url="http://127.0.0.1:9", model="judge-model")
    judge.max_retries = 0
    verdict = judge.decide(JudgeCase("x"))
    assert verdict.error and "the Messages API at http://127.0.0.1:9 failed" in verdict.evidence


def test_the_sdk_is_imported_only_when_the_judge_asks():
    code = (
        "import sys, workbench.cli, workbench.grading.judges as j; j.make('anthropic', base_url='http://x'); "
        "sys.exit(3 if 'anthropic' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
