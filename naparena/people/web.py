"""The table as a local web page (`naparena play --web`): the person clicks cards and choices.

The standard library's threading HTTP server is enough for one person on loopback: the
page is one self-contained document (inline CSS and JS, cards as text glyphs, nothing
from the network), the table is pushed to it with Server-Sent Events, and answers come
back as small POSTs. It listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from naparena.game.cards import name as card_name
from naparena.people.play import Stop
from naparena.people.table import Table, read_answer

LOOPBACK = "127.0.0.1"
QUIT, NEXT = "\x00quit", "\x00next"


class Board:
    """What the page shows, versioned so each push is the latest; and the answers it sends."""

    def __init__(self) -> None:
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

    def wait(self, seen: int, timeout: float) -> tuple[int, dict]:
        with self.changed:
            self.changed.wait_for(lambda: self.version != seen, timeout)
            return self.version, self.state


class WebFront:
    """A front for `TableServer`: asks the person through the page."""

    def __init__(self, port: int = 0):
        self.board = Board()
        self.httpd = ThreadingHTTPServer((LOOPBACK, port), _handler(self.board))
        self.httpd.daemon_threads = True
        self.url = f"http://{LOOPBACK}:{self.httpd.server_address[1]}/"
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Serve the page; called once the session has forked its workers."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="web", daemon=True)
        self._thread.start()

    def finish(self, result: dict) -> None:
        """The run's end: each bot's rate per variant, best first, as the standings give them."""
        lines = []
        for variant, data in result.get("variants", {}).items():
            lines.append(variant)
            for row in data.get("bots", ()):
                ci = row.get("ci95")
                interval = f"  [{ci[0]:+.1f}, {ci[1]:+.1f}]" if ci else ""
                lines.append(f"  {row['bot']}: {row['per100']:+.2f} chips per 100 hands{interval}, "
                             f"{row['hands']} hands")
        self.board.publish(over=True, left=0, message="the run is over: the standings",
                           standings="\n".join(lines))

    def close(self, grace: float = 2.0) -> None:
        """Tell the pages the table is closed, give them `grace` seconds to hear it, stop."""
        board = self.board
        board.publish(over=True, gone=True)
        with board.changed:
            board.changed.wait_for(lambda: board.streams == 0, grace)
        if self._thread is not None:
            self.httpd.shutdown()
        self.httpd.server_close()

    def _ended(self, table: Table) -> list[str]:
        ended = list(self.board.state.get("ended", []))
        while table.finished:
            ended.append(table.hand_end(table.finished.pop(0)))
        return ended[-3:]

    def decide(self, table: Table) -> Any:
        view = table.view
        snapshot = table.snapshot()
        for card in snapshot["hand"]:
            card["name"] = card_name(card["card"]) if isinstance(card["card"], int) else str(card["card"])
        self.board.publish(waiting=False, over=False, table=snapshot, ended=self._ended(table), error="",
                           message="")
        table.happened = []
        while True:
            text = self.board.answers.get()
            if text == QUIT:
                raise Stop()
            if text == NEXT:
                continue
            answer, error = read_answer(view.get("kind"), view.get("legal", []), text)
            if error is None:
                self.board.publish(waiting=True, message="the others are playing…", error="")
                return answer
            self.board.publish(error=f"{error}; try again")

    def match_over(self, table: Table, left: int) -> bool:
        totals = "   ".join(f"{table.alias(i)} {c:+d}" for i, c in enumerate(table.won))
        ended = self._ended(table)
        if table.held:
            ended.append("what everybody held:\n" + table.deals())
        self.board.publish(waiting=False, over=True, left=left, ended=ended,
                           message=f"match {table.match} over: {totals}")
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
            return None  # requests are not the run's business

        def _send(self, body: bytes, kind: str, status: int = 200) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/":
                self._send(PAGE.encode(), "text/html; charset=utf-8")
            elif self.path == "/state":
                self._send(json.dumps(board.state).encode(), "application/json")
            elif self.path == "/events":
                self._events()
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
            if self.path == "/answer" and isinstance(data.get("text"), str):
                board.answers.put(data["text"])
            elif self.path == "/next":
                board.answers.put(NEXT)
            elif self.path == "/quit":
                board.answers.put(QUIT)
            else:
                self._send(b"bad request", "text/plain", 400)
                return
            self._send(b"{}", "application/json")
    return Handler


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>naparena table</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;background:#1d5e36;color:#f4f4f4}
pre{background:#0f3d22;padding:.8em;border-radius:6px;white-space:pre-wrap}
.card{display:inline-block;width:3.2em;height:4.4em;margin:.2em;border-radius:6px;border:1px solid #333;
 background:#fff;color:#111;font-size:1.3em;text-align:center;line-height:4.4em;cursor:pointer}
.card.red{color:#c00}.card.picked{transform:translateY(-.5em);box-shadow:0 0 0 3px #fc0}
.card.legal{outline:3px solid #9f9}
button{font-size:1em;margin:.2em;padding:.3em .8em;cursor:pointer}
#error{color:#ffb3b3;font-weight:bold}#message{font-style:italic}
</style></head><body>
<h1>naparena</h1>
<p id="message"></p>
<pre id="screen"></pre>
<p id="ask"></p>
<div id="hand"></div>
<div id="choices"></div>
<p><input id="typed" size="24" placeholder="or type: 2, QH, pass, yes">
<button id="send">send</button> <button id="quit">leave the table</button></p>
<p id="error"></p>
<pre id="standings" hidden></pre>
<div id="ended"></div>
<script>
"use strict";
let state = {}, picked = new Set();
const $ = id => document.getElementById(id);
function post(path, body){ return fetch(path, {method:"POST", body: JSON.stringify(body||{})}); }
function answer(text){ post("/answer", {text}); }
function kind(){ return state.table && state.table.view ? state.table.view.kind : null; }
function several(){ return ["exchange","garnet_discard"].includes(kind()); }
function draw(){
  const t = state.table || {};
  const mine = !state.waiting && !state.over;
  document.body.dataset.turn = mine ? (t.match + "." + t.turn) : "";
  $("message").textContent = state.message || "";
  $("error").textContent = state.error || "";
  $("screen").textContent = t.screen || "";
  $("ask").textContent = mine ? (t.ask || "") : "";
  const hand = $("hand"); hand.replaceChildren();
  const legal = new Set(((t.view||{}).legal||[]).filter(x => typeof x === "number"));
  for (const c of state.over ? [] : (t.hand || [])) {
    const b = document.createElement("span");
    b.className = "card" + (c.red ? " red" : "") + (picked.has(c.name) ? " picked" : "")
      + (mine && legal.has(c.card) ? " legal" : "");
    b.textContent = c.text; b.title = c.name; b.dataset.card = c.name;
    b.onclick = () => {
      if (!mine) return;
      if (several()) { picked.has(c.name) ? picked.delete(c.name) : picked.add(c.name); draw(); }
      else answer(c.name);
    };
    hand.appendChild(b);
  }
  const ch = $("choices"); ch.replaceChildren();
  if (mine && several()) {
    const go = document.createElement("button");
    go.textContent = "throw out the picked cards"; go.id = "throw";
    go.onclick = () => { answer([...picked].join(" ") || "none"); picked.clear(); };
    ch.appendChild(go);
  } else if (mine && kind() !== "play") {
    (t.choices || []).forEach((label, i) => {
      const b = document.createElement("button"); b.textContent = label; b.className = "choice";
      b.onclick = () => answer(String(i + 1)); ch.appendChild(b);
    });
  }
  if (state.over && state.left) {
    const b = document.createElement("button"); b.textContent = "next match"; b.id = "next";
    b.onclick = () => post("/next"); ch.appendChild(b);
  }
  $("standings").hidden = !state.standings; $("standings").textContent = state.standings || "";
  const ended = $("ended"); ended.replaceChildren();
  for (const text of (state.ended || []).slice().reverse()) {
    const p = document.createElement("pre"); p.className = "ended"; p.textContent = text; ended.appendChild(p);
  }
}
$("send").onclick = () => { answer($("typed").value); $("typed").value = ""; };
$("typed").onkeydown = e => { if (e.key === "Enter") $("send").onclick(); };
$("quit").onclick = () => post("/quit");
const source = new EventSource("/events");
source.onmessage = e => { state = JSON.parse(e.data); if (!state.waiting) picked.clear(); draw(); };
</script></body></html>
"""
