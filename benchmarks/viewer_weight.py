"""Benchmark (not a test): the hand viewer of the quickstart's run, its weight and first paint.

Plays `tournaments/quickstart.toml` (or takes `--run RUN_DIR`), serves it with
`naparena view`, and opens it in Debian's chromium K times, reading from the browser:
the bytes the page and its data files came to (first view: the report, the index and one
match), the first contentful paint and the moment the first hand is drawn, each from the
navigation's start. The references, measured in the same run: the bytes of every hand
file together (what a page embedding the hands would carry), and the paint of a blank
page from the same kind of loopback server (the browser's own floor). Also the time
`naparena view` takes to read the run and build the page before it serves:

    .venv/bin/python benchmarks/viewer_weight.py --loads 3
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ADDRESS = re.compile(r"http://127\.0\.0\.1:\d+/")
TIMING = """() => {
  const paint = performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint');
  const bytes = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
    .reduce((sum, e) => sum + e.encodedBodySize, 0);
  return {paint: paint ? paint.startTime : null, bytes, drawn: window.__drawn || null};
}"""
# Marks the moment the viewer has drawn its first hand, from the navigation's start.
DRAWN = """new MutationObserver((_, o) => {
  if ((document.getElementById('v-step') || {}).textContent) { window.__drawn = performance.now(); o.disconnect(); }
}).observe(document, {subtree: true, childList: true, characterData: true});"""


def quickstart(folder: Path) -> Path:
    subprocess.run([sys.executable, "-m", "naparena", "run", str(REPO / "tournaments" / "quickstart.toml"),
                    "--log-dir", str(folder)], check=True, capture_output=True)
    [run] = [p for p in folder.iterdir() if p.is_dir()]
    return run


def blank_server() -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return None

        def do_GET(self) -> None:
            body = b"<!doctype html><title>blank</title><p>blank</p>"
            self.send_response(200 if self.path == "/" else 204)
            self.send_header("Content-Length", str(len(body) if self.path == "/" else 0))
            self.end_headers()
            if self.path == "/":
                self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="a run directory (default: play the quickstart first)")
    parser.add_argument("--loads", type=int, default=3, help="page loads of each page")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as tmp:
        run = args.run or quickstart(Path(tmp))
        started = time.monotonic()
        view = subprocess.Popen([sys.executable, "-m", "naparena", "view", str(run)], stderr=subprocess.PIPE,
                                text=True)
        try:
            url = ADDRESS.search(view.stderr.readline()).group(0)
            built = time.monotonic() - started
            export = Path(tmp) / "r.html"
            subprocess.run([sys.executable, "-m", "naparena", "view", str(run), "--out", str(export)], check=True,
                           capture_output=True)
            every_hand = sum(p.stat().st_size for p in (Path(tmp) / "r-hands").glob("m*.js"))
            blank = blank_server()
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
                viewer, floor = [], []
                for _ in range(args.loads):
                    for target, into in ((url, viewer), (f"http://127.0.0.1:{blank.server_address[1]}/", floor)):
                        page = browser.new_page(viewport={"width": 1280, "height": 800})
                        page.add_init_script(DRAWN)
                        page.goto(target, wait_until="load")
                        page.wait_for_function("performance.getEntriesByType('paint').some(e => e.name === "
                                               "'first-contentful-paint')")
                        if into is viewer:
                            page.wait_for_function("window.__drawn")
                        into.append(page.evaluate(TIMING))
                        page.close()
                browser.close()
            blank.shutdown()
        finally:
            view.terminate()
            view.communicate(timeout=60)
        weight = viewer[0]["bytes"]
        paint = statistics.median(v["paint"] for v in viewer)
        drawn = statistics.median(v["drawn"] for v in viewer)
        floor_paint = statistics.median(v["paint"] for v in floor)
        print(f"run: {run.name}, {len(list((run / 'matches').glob('*.json')))} matches; "
              f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.loads} loads each")
        print(f"naparena view read the run and built the page in {built:.1f} s (once, not per request)")
        print(f"first view: {weight:,} bytes (report, index, one match); every hand file: {every_hand:,} bytes "
              f"(ratio {weight / every_hand:.3f})")
        print(f"first contentful paint: {paint:.0f} ms (blank page {floor_paint:.0f} ms, ratio "
              f"{paint / floor_paint:.2f}); first hand drawn at {drawn:.0f} ms")


if __name__ == "__main__":
    main()
