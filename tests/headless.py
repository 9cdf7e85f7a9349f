"""A headless Chromium driven over the DevTools protocol through a pipe
(--remote-debugging-pipe: commands on its fd 3, answers on its fd 4, each a JSON
text ended by a NUL), to open one page and tell exactly what that page did.

What the page asked the network for is read from the page's own Network events
(and those of any frame or worker it starts): requests the browser makes for
itself (component updates, sign-in, time or safe-browsing checks, which a fresh
profile of Debian's Chromium sends to www.google.com and others) belong to no
page and are never counted. The browser is also started with its own
background traffic switched off, and through a proxy that answers nothing, so
nothing it sends leaves the machine either way."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import selectors
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

# The browser's own traffic, off as far as its switches go.
QUIET = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--metrics-recording-only",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--disable-extensions",
    "--disable-component-extensions-with-background-pages",
    "--safebrowsing-disable-auto-update",
    "--no-pings",
    "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate,AutofillServerCommunication",
)

AUTO_ATTACH = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}


@dataclass
class Visit:
    """What one page did: its DOM once loaded and idle, what it asked the network for, a screenshot."""

    dom: str
    requests: list[str] = field(default_factory=list)  # "METHOD URL (type, initiator)" of each page request
    screenshot: bytes = b""


class Browser:
    def __init__(self, chromium: str, profile: Path, proxy_port: int) -> None:
        to_browser, self._commands = os.pipe()
        self._answers, from_browser = os.pipe()

        def pipes() -> None:  # in the child: its fd 3 reads commands, its fd 4 writes answers
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser)]  # either may be 3 or 4
            os.dup2(high[0], 3)  # inheritable: they pass the exec, the parent's other fds do not (close-on-exec)
            os.dup2(high[1], 4)

        self.process = subprocess.Popen(
            [
                chromium,
                "--headless",
                "--disable-gpu",
                "--no-sandbox",  # as root in a container; the page is ours, and the test is that it runs nothing
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                f"--proxy-server=http://127.0.0.1:{proxy_port}",
                "--proxy-bypass-list=<-loopback>",
                "--window-size=1280,900",
                *QUIET,
                "about:blank",
            ],
            preexec_fn=pipes,  # noqa: PLW1509 - the only way to put the pipes at the fds the protocol names
            close_fds=False,  # (closing happens after preexec_fn, and would close fds 3 and 4 too)
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._next = 0
        self._buffer = b""
        self._events: list[dict] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_exc) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (OSError, TimeoutError, RuntimeError):
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._commands)
        os.close(self._answers)

    # ------------------------------------------------------------ the protocol

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 60) -> dict:
        """One command's result; the events that come meanwhile are kept for events()."""
        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self._events.append(answer)

    def wait_for(self, method: str, timeout: float = 60) -> dict:
        """The first event of that name (among those kept, then as they come)."""
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self._events):
                if event.get("method") == method:
                    return self._events.pop(index)
            self._events.append(self._read(deadline))

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            with selectors.DefaultSelector() as selector:
                selector.register(self._answers, selectors.EVENT_READ)
                if not selector.select(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium closed its pipe (exit {self.process.poll()})")
            self._buffer += chunk
        text, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(text)

    # ------------------------------------------------------------ one page

    def visit(self, page: str, budget_ms: int = 3000) -> Visit:
        """Open page in a new tab; let it load and run its timers for budget_ms of virtual time
        (paused while a fetch is pending); then its DOM, its requests and a screenshot."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        sessions = {session}
        # Frames in other processes and workers the page starts: attached paused, watched, then let go.
        self.send("Target.setAutoAttach", AUTO_ATTACH, session)
        for method in ("Network.enable", "Page.enable", "Runtime.enable"):
            self.send(method, {}, session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        self.send("Page.navigate", {"url": page}, session)
        seen: list[dict] = []
        loaded = False
        deadline = time.monotonic() + 60
        while True:
            event = self._events.pop(0) if self._events else self._read(deadline)
            method, where = event.get("method"), event.get("sessionId")
            if method == "Target.attachedToTarget" and where in sessions:
                child = event["params"]["sessionId"]
                sessions.add(child)
                self.send("Target.setAutoAttach", AUTO_ATTACH, child)
                self.send("Network.enable", {}, child)
                self.send("Runtime.runIfWaitingForDebugger", {}, child)
            elif method == "Network.requestWillBeSent" and where in sessions:
                seen.append(event["params"])
            elif method == "Page.loadEventFired" and where == session and not loaded:
                loaded = True  # then its timers run, for budget_ms of virtual time (paused while a fetch is pending)
                self.send(
                    "Emulation.setVirtualTimePolicy",
                    {"policy": "pauseIfNetworkFetchesPending", "budget": budget_ms},
                    session,
                )
            elif method == "Emulation.virtualTimeBudgetExpired" and where == session:
                break
        requests = [
            self._request(params)
            for params in seen
            if not (params.get("type") == "Document" and params["request"]["url"] == page)
        ]
        dom = self.send(
            "Runtime.evaluate",
            {"expression": "document.documentElement.outerHTML", "returnByValue": True},
            session,
        )["result"]["value"]
        shot = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"}, session)["data"])
        self.send("Target.closeTarget", {"targetId": target})
        return Visit(dom, requests, shot)

    @staticmethod
    def _request(params: dict) -> str:
        request, initiator = params["request"], params.get("initiator", {})
        return f"{request.get('method')} {request.get('url')} ({params.get('type')}, {initiator.get('type')})"
