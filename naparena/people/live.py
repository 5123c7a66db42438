"""The live page of a run (`naparena run … --live`): progress, standings with intervals and
the sequential test's state, pushed to a loopback page as matches are booked.

It only reads: the standings are rebuilt from the match files on disk (through the
ledger's one reader) by the page's own thread, so the run's files are the same with or
without it. It wraps the run's own watcher, which goes on showing progress as before.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from naparena.arena.records.ledger import load_standings
from naparena.people.serve_page import LOOPBACK


class LiveWatcher:
    """A session `Watcher` that tells `inner` everything and feeds the live page."""

    def __init__(self, inner: Any, port: int = 0):
        self.inner = inner
        self.state: dict[str, Any] = {"name": "", "done": 0, "total": 0, "hands": 0, "standings": None}
        self.version = 0
        self.changed = threading.Condition()
        self.run_dir: Any = None
        self._standings: dict[str, Any] | None = None
        self._built_at, self._cost = -math.inf, 0.0
        self.httpd = ThreadingHTTPServer((LOOPBACK, port), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://{LOOPBACK}:{self.httpd.server_address[1]}/"

    def failures(self, registry: Any) -> None:
        self.inner.failures(registry)

    def caveat(self, text: str) -> None:
        self.inner.caveat(text)

    def notice(self, text: str) -> None:
        self.inner.notice(text)

    def started(self, session: Any, done: int) -> None:
        self.inner.started(session, done)
        self.run_dir = session.run_dir.path
        self._update(name=session.t.name, total=session.matches, done=done)

    @contextlib.contextmanager
    def live(self) -> Iterator[None]:
        # Threads start here, after the session has forked its workers.
        thread = threading.Thread(target=self.httpd.serve_forever, name="live", daemon=True)
        thread.start()
        try:
            with self.inner.live():
                yield
        finally:
            self._update(finished=True)

    def progress(self, matches: int, hands: int, session_hands: int) -> None:
        self.inner.progress(matches, hands, session_hands)
        self._update(done=matches, hands=hands)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _update(self, **state: Any) -> None:
        with self.changed:
            self.state = {**self.state, **state}
            self.version += 1
            self.changed.notify_all()

    def wait(self, seen: int, timeout: float = 15.0) -> int:
        """The version after `seen`, or `seen` again after `timeout` seconds without news."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != seen, timeout)
            return self.version

    def snapshot(self) -> dict[str, Any]:
        """The state with the standings rebuilt from the files written so far: at most once
        a second, and at most a fifth of the time, as a long run's rebuild reads every file."""
        state = dict(self.state)
        now = time.monotonic()
        fresh = now - self._built_at >= max(1.0, 4 * self._cost) or state.get("finished")
        if self.run_dir is not None and state["done"] and fresh:
            try:
                self._standings = _plain(load_standings(self.run_dir).result())
            except Exception as e:  # a page must never stop a run
                state["standings_error"] = str(e)
            self._built_at, self._cost = now, time.monotonic() - now
        state["standings"] = self._standings
        state["stale"] = bool(state["done"]) and not fresh
        return state


def _plain(result: dict[str, Any]) -> dict[str, Any]:
    """What the page shows: per variant, each bot's rate and interval; the SPRT's state."""
    variants = {v: [{"bot": r["bot"], "hands": r["hands"], "per100": r["per100"], "ci95": r["ci95"]}
                    for r in data["bots"]] for v, data in result["variants"].items()}
    return {"variants": variants, "sprt": result.get("sprt"), "matches": result["matches"]}


def _handler(watcher: LiveWatcher) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return None

        def do_GET(self) -> None:
            if self.path == "/":
                body = PAGE.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif self.path == "/events":
                self._events()
            else:
                self.send_error(404)

        def _events(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            seen, stale = -1, False
            try:
                while True:
                    # Standings held back by the rebuild limit are sent again a second later.
                    version = watcher.wait(seen, 1.0 if stale else 15.0)
                    if version == seen and not stale:
                        self.wfile.write(b": keep-alive\n\n")
                    else:
                        state = watcher.snapshot()
                        stale = state["stale"]
                        self.wfile.write(b"data: " + json.dumps(state, default=str).encode() + b"\n\n")
                    self.wfile.flush()
                    seen = version
            except (BrokenPipeError, ConnectionResetError):
                return
    return Handler


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>naparena live</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:900px;color:#222;padding:0 1em}
progress{width:100%;height:1.2em}table{border-collapse:collapse;margin:.4em 0 1em}
th,td{padding:.25em .6em;border-bottom:1px solid #e5e5e5;text-align:right}th.n,td.n{text-align:left}
.meta{color:#555}
</style></head><body>
<h1>naparena live: <span id="name"></span></h1>
<progress id="bar" value="0" max="1"></progress>
<p class="meta" id="done"></p>
<div id="standings"></div>
<p id="sprt"></p>
<script>
"use strict";
const $ = id => document.getElementById(id);
const num = x => (x >= 0 ? "+" : "") + x.toFixed(2);
function draw(s){
  $("name").textContent = s.name;
  $("bar").max = s.total || 1; $("bar").value = s.done;
  $("done").textContent = s.done + " of " + s.total + " matches booked, " + s.hands + " hands"
    + (s.finished ? " — the run is over" : "");
  const box = $("standings"); box.replaceChildren();
  const st = s.standings;
  if (!st) { box.textContent = "standings after the first match"; return; }
  for (const [variant, rows] of Object.entries(st.variants)) {
    const h = document.createElement("h2"); h.textContent = variant; box.appendChild(h);
    const t = document.createElement("table"); t.className = "standings";
    t.innerHTML = "<tr><th class=n>bot</th><th>hands</th><th>per 100</th><th>95% CI</th></tr>";
    for (const r of rows) {
      const tr = document.createElement("tr");
      const ci = r.ci95 ? "[" + num(r.ci95[0]) + ", " + num(r.ci95[1]) + "]" : "—";
      for (const [text, cls] of [[r.bot, "n"], [String(r.hands), ""], [num(r.per100), ""], [ci, ""]]) {
        const td = document.createElement("td"); td.textContent = text; td.className = cls; tr.appendChild(td);
      }
      t.appendChild(tr);
    }
    box.appendChild(t);
  }
  const p = st.sprt;
  $("sprt").textContent = p ? ("SPRT " + p.a + " vs " + p.b + " (delta " + p.delta + "): " + p.boards
    + " boards, LLR " + p.llr + " in [" + p.bounds.join(", ") + "], " + (p.verdict || "undecided")) : "";
}
new EventSource("/events").onmessage = e => draw(JSON.parse(e.data));
</script></body></html>
"""
