"""`workbench report --format html`: one self-contained page to share an
iteration. Everything in an iteration is untrusted: a transcript, an evidence, a
feedback or a file name holding markup shows as text and never runs (checked in
the page's source and in a real headless Chromium); the page loads nothing; each
run's files are bounded with a note; --output writes any format atomically; exit
codes and gates are those of the other formats."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import DEMO
from headless import Browser
from support.cli import workbench

from workbench.grading.review import load_review
from workbench.workspace import layout

DRAFT = DEMO.parent / "draft" / "changelog-entry" / "SKILL.md"  # a weaker skill: its own runs fail too
MARK = "pwned-marker"
RUN_MARK = f"document.documentElement.appendChild(document.createElement('{MARK}'))"
PAYLOAD = f'</pre></details><script>{RUN_MARK}</script><img src=x onerror="{RUN_MARK}"><b>bold</b>'


def _cli(*args, cwd=None):
    """The command line, in this process: its output, exit codes and files are what these tests read."""
    return workbench(*args, cwd=cwd)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """One demo iteration of the draft skill (demo agent and judge, offline), run once; tests copy it."""
    base = tmp_path_factory.mktemp("html")
    skill = base / "changelog-entry"
    shutil.copytree(DEMO, skill)
    shutil.copy(DRAFT, skill / "SKILL.md")
    result = _cli("run", skill, "--sandbox", "none", "--trust", cwd=base)
    assert result.returncode == 1, result.stdout + result.stderr  # the draft fails some of its own expectations
    return base / "changelog-entry-workspace" / "iteration-1"


@pytest.fixture
def iteration(built, tmp_path) -> Path:
    copy = tmp_path / "iteration-1"
    shutil.copytree(built, copy, symlinks=True)
    return copy


def _poison(iteration: Path) -> None:
    """Markup everywhere the iteration's own strings reach the page."""
    run = next(iteration.glob("eval-*/with_skill/run-1"))
    with (run / layout.TRANSCRIPT).open("a") as transcript:
        transcript.write(json.dumps({"kind": "assistant", "turn": 1, "text": PAYLOAD}) + "\n")
    (run / layout.OUTPUTS / f'<img src=x onerror="{RUN_MARK}">.md').write_text(PAYLOAD)
    with (run / layout.DIFF).open("a") as diff:
        diff.write(f"+{PAYLOAD}\n")
    feedback = {"reviews": [{"run_id": "x", "feedback": PAYLOAD, "timestamp": ""}], "status": "in_progress"}
    (iteration / layout.FEEDBACK).write_text(json.dumps(feedback))
    failed = next(
        g
        for g in iteration.glob("eval-*/*/run-*/grading.json")
        if not all(e["passed"] for e in json.loads(g.read_text())["expectations"])
    )
    grading = json.loads(failed.read_text())
    wrong = next(e for e in grading["expectations"] if not e["passed"])
    wrong["evidence"] += PAYLOAD
    failed.write_text(json.dumps(grading))


def _page(iteration: Path, *args) -> str:
    result = _cli("report", iteration, "--format", "html", *args)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


@pytest.mark.slow  # 8 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_markup_from_the_iteration_is_escaped_everywhere(iteration):
    _poison(iteration)
    page = _page(iteration)
    assert "<script" not in page.lower() and "<img" not in page.lower() and "<b>bold" not in page
    # Shown, as text, in the conversation, the outputs, the diff, the evidence and the feedback.
    assert page.count("&lt;script&gt;") >= 5
    assert "&lt;img src=x onerror=&#34;" in page  # the output file's name, in text


def test_the_page_has_the_summary_the_failures_first_the_evals_runs_and_feedback(iteration):
    (iteration / layout.FEEDBACK).write_text(
        json.dumps({"reviews": [{"run_id": "r1", "feedback": "needs a Fixed heading", "timestamp": ""}]})
    )
    review = load_review(iteration)
    page = _page(iteration)
    assert page.startswith("<!DOCTYPE html>")
    assert "demo agent (offline, deterministic; not a model)" in page and "demo judge" in page
    assert "Demo results." in page
    difference = review.difference()
    assert difference is not None
    assert f"[{difference.low:+.2f}, {difference.high:+.2f}]" in page
    for configuration in review.configurations:
        assert f"{review.rate(configuration):.0%}" in page
    failures = page.index('id="failures"')
    assert failures < page.index('id="evals"') < page.index('id="runs"') < page.index('id="feedback"')
    assert review.failures[0].configuration == "with_skill"  # the skill's own failures lead
    for failure in review.failures:
        assert f'<code class="aid">{failure.id}</code>' in page
    assert page.count('<details class="run"') == len(review.results)
    assert "needs a Fixed heading" in page


def test_each_run_is_bounded_with_a_note_and_links_are_not_followed(iteration, tmp_path):
    run = next(iteration.glob("eval-*/with_skill/run-1"))
    (run / layout.OUTPUTS / "huge.txt").write_text("x" * 3_000_000)
    with (run / layout.TRANSCRIPT).open("a") as transcript:
        transcript.write(json.dumps({"kind": "tool_result", "turn": 1, "text": "y" * 500_000}) + "\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("the private key is 42")
    (run / layout.OUTPUTS / "leak.txt").symlink_to(secret)
    page = _page(iteration)
    assert len(page) < 1_000_000
    assert "cut at 50,000 of 3,000,000 bytes" in page
    assert "more characters in transcript.jsonl" in page
    assert "the private key" not in page and f"a link to {secret}, not followed" in page


def test_output_writes_every_format_atomically_with_the_same_exit_code(iteration, tmp_path):
    for fmt in ("text", "json", "junit", "html"):
        shown = _cli("report", iteration, "--format", fmt, "--fail-under", "0.99")
        target = tmp_path / "out" / f"report.{fmt}"
        written = _cli("report", iteration, "--format", fmt, "--fail-under", "0.99", "--output", target)
        assert shown.returncode == written.returncode == 1, written.stderr  # the draft is under the gate
        assert "under --fail-under 0.99" in written.stderr
        assert written.stdout == "" and target.read_text() == shown.stdout
        assert not [p for p in target.parent.iterdir() if p != target and p.name.startswith(target.name)]
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # to share, not the temporary file's 0600
    assert _cli("report", iteration, "--format", "html", "--fail-under", "0.1").returncode == 0
    folder = tmp_path / "a-folder"
    folder.mkdir()
    refused = _cli("report", iteration, "--format", "html", "--output", folder)
    assert refused.returncode == 2 and "a-folder" in refused.stderr


# ------------------------------------------------------------ in a real browser


def _chromium() -> str | None:
    return os.environ.get("WORKBENCH_TEST_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


needs_chromium = pytest.mark.skipif(
    _chromium() is None, reason="no chromium (tests/run.sh installs Debian's chromium as root with apt)"
)


class _Proxy:
    """An HTTP proxy that answers nothing: whatever the browser sends, for the page or for itself,
    stops here, and never leaves the machine. What the page asked for is read from the page's own
    Network events (tests/headless.py), not from here: a fresh profile of Debian's Chromium calls
    www.google.com and others by itself, whatever the page does."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(2)
                try:
                    self.requests.append(connection.recv(4096).decode("latin-1").split("\r\n")[0])
                    connection.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass

    def close(self) -> None:
        self.server.close()


class _Visible(HTMLParser):
    """The text of one section, less anything inside a closed <details> (strict: even its summary)."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self, section: str) -> None:
        super().__init__()
        self.section = section
        self.stack: list[tuple[str, bool]] = []  # open tags inside the section: (tag, hidden)
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if not self.stack and not (tag == "section" and attributes.get("id") == self.section):
            return
        if tag in self.VOID:
            return
        hidden = bool(self.stack) and self.stack[-1][1]
        self.stack.append((tag, hidden or (tag == "details" and "open" not in attributes)))

    def handle_endtag(self, tag):
        if self.stack and tag not in self.VOID:
            self.stack.pop()

    def handle_data(self, data):
        if self.stack and not self.stack[-1][1]:
            self.text.append(data)

    def visible(self) -> str:
        return " ".join(" ".join(self.text).split())


FETCHING = {"src", "srcset", "poster", "data", "action", "formaction", "background", "ping", "style"}


class _Tags(HTMLParser):
    """Every element's name and attributes, and the text of the style elements."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.attributes: list[tuple[str, str]] = []
        self.style, self.in_style = "", False

    def handle_starttag(self, tag, attrs):
        self.names.add(tag)
        self.attributes += [(name, value or "") for name, value in attrs]
        self.in_style = tag == "style"

    def handle_endtag(self, tag):
        self.in_style = False

    def handle_data(self, data):
        self.style += data if self.in_style else ""


@pytest.mark.slow  # 9 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@needs_chromium
def test_in_chromium_failures_are_visible_nothing_runs_and_nothing_is_fetched(iteration, tmp_path):
    _poison(iteration)
    page = tmp_path / "report.html"
    assert _cli("report", iteration, "--format", "html", "--output", page).returncode in (0, 1)
    proxy = _Proxy()
    try:
        with Browser(_chromium() or "chromium", tmp_path / "profile", proxy.port) as browser:
            # The probes work: a page that does run a script and fetch a URL is caught by both.
            control = tmp_path / "control.html"
            control.write_text(f'<html><body><script>{RUN_MARK}</script><img src="http://nowhere.invalid/a.png">')
            probe = browser.visit(control.as_uri())
            assert f"<{MARK}>" in probe.dom
            assert any("http://nowhere.invalid/a.png" in request for request in probe.requests), probe.requests
            visit = browser.visit(page.as_uri())
    finally:
        proxy.close()
    assert visit.requests == [], "\n".join(visit.requests)  # the page's own: none, whatever the browser sends
    dom = visit.dom
    # And nothing in the document could fetch: no source, no link out, no url() or @import in its style.
    tags = _Tags()
    tags.feed(dom)
    assert {name for name, value in tags.attributes if name in FETCHING or name == "href" and value[:1] != "#"} == set()
    assert {"script", "link", "iframe", "object", "embed", "img"} & tags.names == set()
    assert "url(" not in tags.style and "@import" not in tags.style
    assert f"<{MARK}>" not in dom and "<b>bold" not in dom
    assert "Demo results." in dom
    parser = _Visible("failures")
    parser.feed(dom)
    shown = parser.visible()
    failures = load_review(iteration).failures
    assert failures
    for failure in failures:
        assert failure.id in shown and " ".join(failure.text.split()) in shown, failure.id
    assert len(visit.screenshot) > 10_000  # a page was drawn, not a blank
