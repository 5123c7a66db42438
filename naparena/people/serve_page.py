"""Serve one HTML page on loopback until interrupted: `naparena view` without `--out`."""

from __future__ import annotations

from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOOPBACK = "127.0.0.1"


def page_server(build: Callable[[], bytes], port: int = 0) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 whose every GET of / is `build()` (built afresh, so a reload shows new hands)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return None

        def do_GET(self) -> None:
            if self.path != "/":
                self.send_error(404)
                return
            body = build()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer((LOOPBACK, port), Handler)
    server.daemon_threads = True
    return server
