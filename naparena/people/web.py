"""The table as a local web page (`naparena play --web`): the person clicks cards and choices.

The standard library's threading HTTP server is enough for one person on loopback: the
page is one self-contained document (the drawn table and its script from the package,
inline; cards as text glyphs, nothing from the network), the table is pushed to it with
Server-Sent Events, and answers come back as small POSTs, leaving the table too (a
request the server answers). When the server goes, the page says the table has closed
and stops listening. It listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from naparena.game.cards import name as card_name
from naparena.people.live import people_asset
from naparena.people.play import Stop
from naparena.people.table import Table, read_answer
from naparena.report.viewer import asset

LOOPBACK = "127.0.0.1"
QUIT, NEXT = "\x00quit", "\x00next"


class Board:
    """What the page shows, versioned so each push is the latest; and the answers it sends."""

    def __init__(self) -> None:
        self.leave: Callable[[], None] = lambda: None
        self.state: dict[str, Any] = {"waiting": True, "ended": [], "message": "waiting for the first deal"}
        self.version = 0
        self.streams = 0  # pages listening now
        self.changed = threading.Condition()
        self.answers: queue.Queue[str] = queue.Queue()

    def publish(self, **state: Any) -> None:
        with self.changed:
            self.state = {**self.state, **state}
            self.version += 1
            self.changed.notify_all()

    def wait(self, seen: int, timeout: float) -> tuple[int, dict[str, Any]]:
        with self.changed:
            self.changed.wait_for(lambda: self.version != seen, timeout)
            return self.version, self.state


class WebFront:
    """A front for `TableServer`: asks the person through the page."""

    def __init__(self, port: int = 0, pause: float = 1.5):
        self.board = Board()
        self.board.publish(pause=pause)
        self.httpd = ThreadingHTTPServer((LOOPBACK, port), _handler(self.board))
        self.httpd.daemon_threads = True
        self.url = f"http://{LOOPBACK}:{self.httpd.server_address[1]}/"
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Serve the page; called once the session has forked its workers."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="web", daemon=True)
        self._thread.start()

    def on_leave(self, leave: Callable[[], None]) -> None:
        """What a request to leave the table does (the table server's `leave`)."""
        self.board.leave = leave

    def finish(self, result: dict[str, Any], resume: str | None = None, why: str = "left") -> None:
        """The run's end: each bot's rate per variant, best first, as the standings give them;
        when it was stopped (`why`: the person left the table, or Ctrl-C at the terminal), with
        the command that goes on."""
        lines = []
        for variant, data in result.get("variants", {}).items():
            lines.append(variant)
            for row in data.get("bots", ()):
                ci = row.get("ci95")
                interval = f"  [{ci[0]:+.1f}, {ci[1]:+.1f}]" if ci else ""
                lines.append(f"  {row['bot']}: {row['per100']:+.2f} chips per 100 hands{interval}, "
                             f"{row['hands']} hands")
        if resume is None:
            message = "the run is over: the standings"
        else:
            stopped = "you left the table" if why == "left" else "the run was stopped at its terminal (Ctrl-C)"
            message = stopped + (": the standings so far" if lines else ": no match was over, so no standings yet")
        self.board.publish(over=True, left=0, waiting=False, message=message,
                           standings="\n".join(lines) or "no match was finished", resume=resume or "")

    def close(self, grace: float = 2.0) -> None:
        """Tell the pages the table is closed, give them `grace` seconds to hear it, stop."""
        board = self.board
        board.publish(over=True, gone=True)
        with board.changed:
            board.changed.wait_for(lambda: board.streams == 0, grace)
        if self._thread is not None:
            self.httpd.shutdown()
        self.httpd.server_close()

    def _ended(self, table: Table) -> dict[str, Any]:
        """The hands that ended since the last screen, to publish with it: their texts (the
        last three kept), and the newest one's frame, which the page draws as that hand stood
        at its end."""
        ended = list(self.board.state.get("ended", []))
        while table.finished:
            ended.append(table.hand_end(table.finished.pop(0)))
        news: dict[str, Any] = {"ended": ended[-3:]}
        if table.ended:
            news["hand_over"] = table.ended[-1]
            table.ended.clear()
        return news

    def decide(self, table: Table) -> Any:
        view = table.view
        snapshot = table.snapshot()
        for card in snapshot["hand"]:
            card["name"] = card_name(card["card"]) if isinstance(card["card"], int) else str(card["card"])
        self.board.publish(waiting=False, over=False, table=snapshot, error="", message="", **self._ended(table))
        table.happened = []
        while True:
            text = self.board.answers.get()
            if text == QUIT:
                raise Stop
            if text == NEXT:
                continue
            answer, error = read_answer(view.get("kind"), view.get("legal", []), text, view)
            if error is None:
                self.board.publish(waiting=True, message="the others are playing…", error="")
                return answer
            self.board.publish(error=f"{error}; try again")

    def match_over(self, table: Table, left: int) -> bool:
        totals = "   ".join(f"{table.alias(i)} {c:+d}" for i, c in enumerate(table.won))
        news = self._ended(table)
        if table.held:
            news["ended"].append("what everybody held:\n" + table.deals())
        self.board.publish(waiting=False, over=True, left=left, running=table.running(),
                           message=f"match {table.match} over: {totals}", **news)
        if not left:
            return True
        while True:
            text = self.board.answers.get()
            if text in (QUIT, NEXT):
                self.board.publish(over=False, waiting=True, message="dealing…")
                return text == NEXT


def _handler(board: Board) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return None

        def _send(self, body: bytes, kind: str, status: int = 200) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/":
                self._send(page().encode(), "text/html; charset=utf-8")
            elif self.path == "/state":
                self._send(json.dumps(board.state).encode(), "application/json")
            elif self.path == "/events":
                self._events()
            elif self.path == "/favicon.ico":  # the browser asks; the page has none
                self._send(b"", "image/x-icon", 204)
            else:
                self._send(b"not found", "text/plain", 404)

        def _events(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            seen = -1
            with board.changed:
                board.streams += 1
            try:
                while True:
                    version, state = board.wait(seen, 15.0)
                    if version == seen:
                        self.wfile.write(b": keep-alive\n\n")
                    else:
                        self.wfile.write(b"data: " + json.dumps(state).encode() + b"\n\n")
                    self.wfile.flush()
                    seen = version
                    if state.get("gone"):
                        return
            except (BrokenPipeError, ConnectionResetError):
                return
            finally:
                with board.changed:
                    board.streams -= 1
                    board.changed.notify_all()

        def do_POST(self) -> None:
            length = min(int(self.headers.get("Content-Length") or 0), 4096)
            try:
                data = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                data = {}
            reply: dict[str, Any] = {}
            if self.path == "/answer" and isinstance(data.get("text"), str):
                board.answers.put(data["text"])
            elif self.path == "/next":
                board.answers.put(NEXT)
            elif self.path == "/quit":
                board.answers.put(QUIT)
                board.publish(message="leaving the table: the run stops and keeps its finished matches")
                board.leave()
                reply = {"leaving": True, "message": "leaving the table: the standings so far follow"}
            else:
                self._send(b"bad request", "text/plain", 400)
                return
            self._send(json.dumps(reply).encode(), "application/json")
    return Handler


PAGE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>naparena table</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{css}</style></head><body>
<header><h1>naparena</h1><p id="message" role="status"></p></header>
<div id="table"></div>
<p id="ask" class="ask"></p>
<p id="why" class="why"></p>
<div id="choices" class="choices"></div>
<p id="error" role="alert"></p>
<p class="typed"><input id="typed" size="22" aria-label="type an answer" placeholder="or type: 2, QH, pass, yes">
<button id="send" type="button">send</button> <button id="help" type="button" aria-expanded="false">help</button>
<button id="quit" type="button">leave the table</button></p>
<p class="keys">Keys: ← → move between your cards, Enter plays; 1–9 pick a card or a choice; h help.</p>
<pre id="helptext" hidden></pre>
<p id="running" class="running"></p>
<pre id="standings" hidden></pre>
<p id="resume" hidden></p>
<div id="ended"></div>
<script>{table}</script><script>{script}</script>
</body></html>
"""

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0 auto;max-width:820px;
 background:#123d25;color:#f4f4f4;padding:.6em}
h1{font-size:1.2em;margin:.2em 0}header{display:flex;gap:1em;align-items:baseline;flex-wrap:wrap}
#message{font-style:italic;margin:.2em 0}
pre{background:#0f3d22;padding:.7em;border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere}
button{font-size:1em;margin:.2em;padding:.35em .8em;cursor:pointer}
.choices button{min-width:3em}
button:focus-visible,input:focus-visible{outline:3px solid #ffd34d;outline-offset:2px}
#error{color:#ffb3b3;font-weight:bold}.why{color:#ffe08a;margin:.2em 0}.ask{font-weight:600;font-size:1.05em}
.keys{font-size:.85em;color:#cfe3cf}.running{font-variant-numeric:tabular-nums}
#resume code{background:#0f3d22;padding:.1em .3em;overflow-wrap:anywhere}
"""


def page() -> str:
    """The table's page: the drawn table and its script, both from the package."""
    return PAGE_HTML.format(css=CSS + asset("table.css"), table=asset("table.js"), script=people_asset("play.js"))
