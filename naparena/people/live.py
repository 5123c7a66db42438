"""The live page of a run (`naparena run … --live`): progress, elapsed time and the estimated
finish, standings with intervals, the sequential test's state and the last hands on the
drawn table, pushed to a loopback page as matches are booked; at the end, "finished" with
the standings exactly as the run printed them, or "interrupted" with the resume command.

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
from importlib.resources import files
from typing import Any

from naparena.arena.records.ledger import load_standings
from naparena.arena.records.rundir import RunDir
from naparena.arena.setup.schedule import total_hands
from naparena.people.serve_page import LOOPBACK
from naparena.report.viewer import asset


def people_asset(name: str) -> str:
    """A script of the people's pages, from the package."""
    return (files("naparena.people") / "assets" / name).read_text(encoding="utf-8")


#: Seconds the page is given to hear the run's last state before the server goes.
GRACE = 3.0
LAST_HANDS = 5


class LiveWatcher:
    """A session `Watcher` that tells `inner` everything and feeds the live page."""

    def __init__(self, inner: Any, port: int = 0):
        self.inner = inner
        self.state: dict[str, Any] = {"name": "", "done": 0, "total": 0, "hands": 0, "hands_total": 0,
                                      "workers": 0, "standings": None, "over": None}
        self.version = 0
        self.streams = 0
        self.changed = threading.Condition()
        self.run_dir: Any = None
        self._standings: dict[str, Any] | None = None
        self._last: dict[str, Any] | None = None
        self._built_at, self._cost = -math.inf, 0.0
        self._clock = time.monotonic()
        self._session_hands = 0
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
        self._clock = time.monotonic()
        self._update(name=session.t.name, total=session.matches, done=done, workers=session.workers,
                     hands_total=total_hands(session.t))

    @contextlib.contextmanager
    def live(self) -> Iterator[None]:
        # Threads start here, after the session has forked its workers.
        thread = threading.Thread(target=self.httpd.serve_forever, name="live", daemon=True)
        thread.start()
        with self.inner.live():
            yield

    def progress(self, matches: int, hands: int, session_hands: int) -> None:
        self.inner.progress(matches, hands, session_hands)
        self._session_hands = session_hands
        self._update(done=matches, hands=hands)

    def finish(self, standings: str) -> None:
        """The run is over: the page shows `standings`, the text the run printed."""
        self._update(over="finished", final=standings)

    def interrupt(self, resume: str, kept: int) -> None:
        """The run was stopped with `kept` matches logged: the page says so, and how to go on."""
        self._update(over="interrupted", resume=resume, kept=kept)

    def close(self, grace: float = GRACE) -> None:
        """Give the pages `grace` seconds to hear the last state (they stop listening then), then stop."""
        if self.state.get("over") is None:
            self._update(over="stopped")
        with self.changed:
            self.changed.wait_for(lambda: self.streams == 0, grace)
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
        elapsed = now - self._clock
        state["elapsed"] = elapsed
        left = state["hands_total"] - state["hands"]
        rate = self._session_hands / elapsed if elapsed > 0 else 0.0
        state["eta"] = left / rate if rate > 0 and left > 0 and not state["over"] else None
        state["in_play"] = 0 if state["over"] else min(state["workers"], state["total"] - state["done"])
        fresh = now - self._built_at >= max(1.0, 4 * self._cost) or state.get("over")
        if self.run_dir is not None and state["done"] and fresh:
            try:
                self._standings = _plain(load_standings(self.run_dir).result())
                self._last = _last_hands(self.run_dir, state["done"] - 1)
            except Exception as e:  # a page must never stop a run
                state["standings_error"] = str(e)
            self._built_at, self._cost = now, time.monotonic() - now
        state["standings"] = self._standings
        state["last"] = self._last
        state["stale"] = bool(state["done"]) and not fresh
        return state


def _last_hands(run_dir: Any, index: int) -> dict[str, Any] | None:
    """The last hands of the newest booked match: what the page draws and lists."""
    rd = RunDir(run_dir)
    if index < 0 or not rd.has_match(index):
        return None
    logged = rd.read_match(index)
    if logged.skipped is not None:
        return None
    keep = ("n", "dealer", "bids", "bidder", "contract", "trumps", "tricks", "result", "chips", "kitty")
    return {"match": index, "variant": logged.spec.variant, "seats": list(logged.spec.seats),
            "hands": len(logged.hands),
            "last": [{k: h[k] for k in keep if k in h} for h in logged.hands[-LAST_HANDS:]]}


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
                body = page().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif self.path == "/events":
                self._events()
            elif self.path == "/favicon.ico":  # the browser asks; the page has none
                self.send_response(204)
                self.end_headers()
            else:
                self.send_error(404)

        def _events(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            seen, stale = -1, False
            with watcher.changed:
                watcher.streams += 1
            try:
                while True:
                    # Standings held back by the rebuild limit are sent again a second later;
                    # while the run plays, the clock is sent every few seconds.
                    version = watcher.wait(seen, 1.0 if stale else 5.0)
                    state = watcher.snapshot()
                    stale = state["stale"]
                    self.wfile.write(b"data: " + json.dumps(state, default=str).encode() + b"\n\n")
                    self.wfile.flush()
                    seen = version
                    if state["over"]:  # the page stops listening when it hears the end
                        return
            except (BrokenPipeError, ConnectionResetError):
                return
            finally:
                with watcher.changed:
                    watcher.streams -= 1
                    watcher.changed.notify_all()
    return Handler


PAGE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>naparena live</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{css}</style></head><body>
<h1>naparena live: <span id="name"></span></h1>
<p id="state" class="state" role="status"></p>
<progress id="bar" value="0" max="1"></progress>
<p class="meta" id="done"></p>
<p class="meta" id="clock"></p>
<pre id="final" hidden></pre>
<p id="resume" hidden></p>
<div id="standings"></div>
<p id="sprt"></p>
<h2>Last hands</h2>
<div id="table"></div>
<ol id="last" class="last"></ol>
<script>{table}</script><script>{script}</script>
</body></html>
"""

CSS = """
body{font-family:system-ui,sans-serif;margin:1em auto;max-width:900px;color:#222;padding:0 1em}
progress{width:100%;height:1.2em}table{border-collapse:collapse;margin:.4em 0 1em}
th,td{padding:.25em .6em;border-bottom:1px solid #e5e5e5;text-align:right}th.n,td.n{text-align:left}
.meta{color:#555}.state{font-weight:600;font-size:1.1em}.state.finished{color:#146c2e}.state.interrupted{color:#a40000}
#final{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em}
#resume code{background:#f0f0f0;padding:.1em .3em;overflow-wrap:anywhere}
#table{max-width:700px}.last{font-size:.9em}
"""


def page() -> str:
    """The live page: its own script and the drawn table, both from the package."""
    return PAGE_HTML.format(css=CSS + asset("table.css"), table=asset("table.js"), script=people_asset("live.js"))
