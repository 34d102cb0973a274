"""A real HTTP server on 127.0.0.1, in a thread of the test's own process, that keeps every
POST it is sent (path and JSON body) and answers each with the next status it is told to (200
once it has none left): the receiving end of a webhook, for tfperf-notify's tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Receiver:
    url: str  # where to post, with a token in its path as a real webhook's URL has
    posts: list[tuple[str, Any]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)  # the next answers, then 200


@contextmanager
def receiver(token: str = "T0KEN-s3cr3t") -> Iterator[Receiver]:
    kept = Receiver("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            kept.posts.append((self.path, json.loads(body)))
            status = kept.statuses.pop(0) if kept.statuses else 200
            self.send_response(status)
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"invalid_payload")

        def log_message(self, *args: object) -> None:
            pass  # the test reads the posts, not a log

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    kept.url = f"http://127.0.0.1:{server.server_address[1]}/services/{token}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield kept
    finally:
        server.shutdown()
        server.server_close()
