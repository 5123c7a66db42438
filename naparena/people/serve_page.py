"""`naparena view` without `--out`: the report and its hand viewer on loopback, the hands
served a data file at a time from the run directory as the page asks for them."""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from naparena.arena.records.rundir import RunDir
from naparena.report.html import page
from naparena.report.viewer import Catalogue, data_script

LOOPBACK = "127.0.0.1"
HANDS = "hands/"
_DATA = re.compile(r"^/hands/([a-z0-9]{1,12})\.js$")


class RunPages:
    """The page and the catalogue of one run, built once and again only when more
    matches have been logged (a run still playing), never per request."""

    def __init__(self, run_dir: Path):
        self.run_dir = run_dir
        self.lock = threading.Lock()
        self.kept = -1
        self.catalogue: Catalogue | None = None
        self.page = b""
        self.fresh()

    def fresh(self) -> tuple[Catalogue, bytes]:
        with self.lock:
            kept = RunDir(self.run_dir).kept()
            if kept != self.kept or self.catalogue is None:
                self.catalogue = Catalogue(self.run_dir)
                self.page = page(self.run_dir, self.catalogue, HANDS).encode()
                self.kept = kept
            return self.catalogue, self.page


def page_server(pages: RunPages, port: int = 0) -> ThreadingHTTPServer:
    """A server on 127.0.0.1: / is the report, /hands/NAME.js a data file of its viewer."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return None

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/":
                self._send(pages.fresh()[1], "text/html; charset=utf-8")
                return
            if path == "/favicon.ico":  # the browser asks; the page has none
                self.send_response(204)
                self.end_headers()
                return
            found = _DATA.match(path)
            data = pages.fresh()[0].data(found.group(1)) if found else None
            if found is None or data is None:
                self.send_error(404)
                return
            self._send(data_script(found.group(1), data), "text/javascript; charset=utf-8")

    server = ThreadingHTTPServer((LOOPBACK, port), Handler)
    server.daemon_threads = True
    return server
