"""The live page of a run (`naparena run … --live`): progress, elapsed time and the estimated
finish, standings with intervals, the sequential test's state and the last hands on the
drawn table, pushed to a loopback page as matches are booked; once every match is booked,
that the final standings are being tallied; at the end, "finished" with the standings
exactly as the run printed them, or "interrupted" with the resume command.

It only reads: the standings shown during the run are rebuilt from the match files on disk
(through the ledger's one reader) by the page's own thread, so the run's files are the same
with or without it; the final ones are the run's own. It wraps the run's own watcher, which
goes on showing progress as before.

Threads: the server's (one per page listening) only send the state as it stands, so a page
hears the end however long a rebuild takes; one tally thread rebuilds the standings, at
most a fifth of the time, as a long run's rebuild reads every file.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
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


#: Seconds a page may take to hear the end before the server goes anyway: only a page that
#: stopped reading (its sends no longer return) waits that long; the others hear it at once.
CLOSE_WAIT = 60.0
#: Seconds between two states sent while nothing new happens: the page's clock and estimate.
TICK = 5.0
#: Seconds at least between two sends to a page: a run books many matches a second.
SEND_GAP = 0.25
LAST_HANDS = 5

# The run's phases as the page names them; the last three are ends.
STARTING, PLAYING, TALLYING = "starting", "playing", "tallying"
FINISHED, INTERRUPTED, STOPPED = "finished", "interrupted", "stopped"


class LiveWatcher:
    """A session `Watcher` that tells `inner` everything and feeds the live page."""

    def __init__(self, inner: Any, port: int = 0, clock: Callable[[], float] = time.monotonic):
        self.inner = inner
        self.clock = clock  # monotonic: the elapsed time never runs backwards
        self.state: dict[str, Any] = {"name": "", "phase": STARTING, "done": 0, "total": 0, "hands": 0,
                                      "hands_total": 0, "session_hands": 0, "workers": 0, "standings": None,
                                      "last": None, "over": None}
        self.version = 0
        self.streams = 0
        self.changed = threading.Condition()
        self.run_dir: Any = None
        self._started = clock()
        self._ended: float | None = None
        self._tallied = -1  # matches booked when the standings shown were rebuilt
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
        self._started = self.clock()
        self._update(name=session.t.name, total=session.matches, done=done, workers=session.workers,
                     hands_total=total_hands(session.t), phase=self._phase(done, session.matches))

    @contextlib.contextmanager
    def live(self) -> Iterator[None]:
        # Threads start here, after the session has forked its workers.
        threading.Thread(target=self.httpd.serve_forever, name="live", daemon=True).start()
        threading.Thread(target=self._tally, name="live-standings", daemon=True).start()
        with self.inner.live():
            yield

    def progress(self, matches: int, hands: int, session_hands: int) -> None:
        self.inner.progress(matches, hands, session_hands)
        if self.state["over"] is None:
            self._update(done=matches, hands=hands, session_hands=session_hands,
                         phase=self._phase(matches, self.state["total"]))

    @staticmethod
    def _phase(done: int, total: int) -> str:
        """Every match booked: the run is tallying its final standings (on a long run under
        load, many seconds), not playing."""
        return TALLYING if total and done >= total else PLAYING

    def finish(self, standings: str, result: dict[str, Any] | None = None) -> None:
        """The run is over: the page shows `standings`, the text the run printed, and the
        run's own `result` in its table (no rebuild: the run has just built them)."""
        self._ended = self.clock()
        extra = {"standings": _plain(result), "last": self._newest()} if result is not None else {}
        self._update(over=FINISHED, phase=FINISHED, final=standings, **extra)

    def interrupt(self, resume: str, kept: int) -> None:
        """The run was stopped with `kept` matches logged: the page says so, and how to go on."""
        self._ended = self.clock()
        self._update(over=INTERRUPTED, phase=INTERRUPTED, resume=resume, kept=kept)

    def close(self, wait: float = CLOSE_WAIT) -> None:
        """Stop once every page listening has heard the end (the pages stop listening then);
        a page that stopped reading is waited for `wait` seconds at most."""
        if self.state["over"] is None:
            self._ended = self.clock()
            self._update(over=STOPPED, phase=STOPPED)
        with self.changed:
            self.changed.wait_for(lambda: self.streams == 0, wait)
        self.httpd.shutdown()
        self.httpd.server_close()

    def _update(self, **state: Any) -> None:
        with self.changed:
            self.state = {**self.state, **state}
            self.version += 1
            self.changed.notify_all()

    def wait(self, seen: int, timeout: float = TICK) -> int:
        """The version after `seen`, or `seen` again after `timeout` seconds without news."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != seen, timeout)
            return self.version

    def snapshot(self) -> dict[str, Any]:
        """The state as a page is sent it now: the elapsed time (frozen at the end), the
        estimated time to go and the tables in play."""
        with self.changed:
            state = dict(self.state)
        elapsed = (self._ended if self._ended is not None else self.clock()) - self._started
        state["elapsed"] = max(elapsed, 0.0)
        left = state["hands_total"] - state["hands"]
        rate = state["session_hands"] / elapsed if elapsed > 0 else 0.0
        playing = state["phase"] == PLAYING
        state["eta"] = left / rate if playing and rate > 0 and left > 0 else None
        state["in_play"] = min(state["workers"], state["total"] - state["done"]) if playing else 0
        return state

    # --- the tally thread ---

    def _tally(self) -> None:
        """Rebuild the standings shown each time more matches are booked, at most a fifth of
        the time; none once every match is booked (the run's own are coming)."""
        pause = 0.0
        while True:
            with self.changed:
                self.changed.wait_for(lambda: self.state["over"] is not None or (
                    self.state["phase"] == PLAYING and self.state["done"] != self._tallied), None)
                if self.state["over"] is not None:
                    return
                done = self.state["done"]
            began = self.clock()
            shown: dict[str, Any]
            try:
                shown = {"standings": _plain(load_standings(self.run_dir).result()) if done else None,
                         "last": self._newest(done), "standings_error": None}
            except Exception as e:  # a page must never stop a run
                shown = {"standings_error": str(e)}
            with self.changed:
                self._tallied = done
                if self.state["over"] is None:  # the run's own final standings are not overwritten
                    self.state = {**self.state, **shown}
                    self.version += 1
                    self.changed.notify_all()
            pause = max(1.0, 4 * (self.clock() - began))
            with self.changed:  # the next rebuild waits, unless the run ends meanwhile
                self.changed.wait_for(lambda: self.state["over"] is not None, pause)

    def _newest(self, done: int | None = None) -> dict[str, Any] | None:
        done = self.state["done"] if done is None else done
        try:
            return _last_hands(self.run_dir, done - 1) if self.run_dir is not None else None
        except Exception:  # a page must never stop a run
            return None


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
            seen = -1
            with watcher.changed:
                watcher.streams += 1
            try:
                while True:
                    # News as it comes (a run books many matches a second: a few sends a
                    # second at most), and the clock every few seconds without news.
                    version = watcher.wait(seen)
                    state = watcher.snapshot()
                    self.wfile.write(b"data: " + json.dumps(state, default=str).encode() + b"\n\n")
                    self.wfile.flush()
                    seen = version
                    if state["over"]:  # the page stops listening when it hears the end
                        return
                    with watcher.changed:
                        watcher.changed.wait_for(lambda: watcher.state["over"] is not None, SEND_GAP)
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
.meta{color:#555}.state{font-weight:600;font-size:1.1em}.state.finished{color:#146c2e}.state.tallying{color:#7a4b00}.state.interrupted{color:#a40000}
#final{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em}
#resume code{background:#f0f0f0;padding:.1em .3em;overflow-wrap:anywhere}
#table{max-width:700px}.last{font-size:.9em}
"""


def page() -> str:
    """The live page: its own script and the drawn table, both from the package."""
    return PAGE_HTML.format(css=CSS + asset("table.css"), table=asset("table.js"), script=people_asset("live.js"))
