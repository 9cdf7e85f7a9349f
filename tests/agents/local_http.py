"""What the scripted model servers share: a quiet JSON / event-stream handler and
a server on 127.0.0.1 (a free port) that runs until its `with` block ends."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedHandler(BaseHTTPRequestHandler):
    model: object  # the script; set per server

    def log_message(self, *args) -> None:  # quiet
        pass

    def body(self) -> dict:
        return json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")

    def send_json(self, data: dict) -> None:
        payload = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def open_events(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()

    def send_event(self, event: str, data: dict) -> None:
        self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())


class LocalServer:
    def __init__(self, model: object, handler: type[ScriptedHandler], path: str = "") -> None:
        self.model = model
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (handler,), {"model": model}))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
