"""The live page of a run (`naparena run --live`): its server's states, heard as a page hears
them, while the standings are rebuilt as slowly as a loaded machine rebuilds them; and the
page itself in Chromium on a quickstart-size run with every core kept busy."""

from __future__ import annotations

import json
import re
import shutil
import threading
import urllib.request
from types import SimpleNamespace
from typing import Any

import pytest

from naparena.arena.session import Quiet
from naparena.arena.setup.reader import load_tournament
from naparena.people import live
from tests.helpers import REPO, WAIT, start_naparena, wait_for, write_tournament


class Gate:
    """A stand-in for the ledger's reader whose rebuilds wait until the test opens the gate:
    a rebuild as slow as the test wants, with no clock involved."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.open = threading.Event()
        self.calls = 0

    def __call__(self, run_dir: Any) -> Any:
        self.calls += 1
        self.entered.set()
        assert self.open.wait(WAIT), "the test never opened the gate"
        result = {"variants": {"classic": {"bots": [{"bot": "random", "hands": 4, "per100": 1.0, "ci95": None}]}},
                  "sprt": None, "matches": 1}
        return SimpleNamespace(result=lambda: result)


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Listener:
    """A page's event stream, read in a thread: every state the server sent, in order."""

    def __init__(self, url: str) -> None:
        self.states: list[dict[str, Any]] = []
        self.heard = threading.Condition()
        self.response = urllib.request.urlopen(url + "events", timeout=WAIT)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.response:
            if line.startswith(b"data: "):
                with self.heard:
                    self.states.append(json.loads(line[6:]))
                    self.heard.notify_all()

    def until(self, test: Any, what: str) -> dict[str, Any]:
        with self.heard:
            assert self.heard.wait_for(lambda: any(test(s) for s in self.states), WAIT), f"never heard {what}"
            return next(s for s in self.states if test(s))


def _session(tmp_path):
    path = write_tournament(tmp_path, bots=("random", "heuristic"), seeds=2, hands=4, table=2, example=False)
    t = load_tournament(path)
    return SimpleNamespace(run_dir=SimpleNamespace(path=tmp_path / "run"), t=t, matches=4, workers=2)


def test_the_page_hears_the_finish_while_a_rebuild_of_the_standings_is_still_under_way(tmp_path, monkeypatch):
    """Under load the standings take longer to rebuild than the server used to wait at the end:
    the page stopped at '332 of 384 … playing' and then said the page had closed. The end,
    with the standings as the run printed them, must reach it whatever a rebuild is doing."""
    gate = Gate()
    monkeypatch.setattr(live, "load_standings", gate)
    watcher = live.LiveWatcher(Quiet())
    watcher.started(_session(tmp_path), 0)
    with watcher.live():
        page = Listener(watcher.url)
        page.until(lambda s: s["total"] == 4, "the run's start")
        watcher.progress(1, 4, 4)
        assert gate.entered.wait(WAIT), "a rebuild of the standings never began"
        watcher.progress(4, 16, 16)
        watcher.finish("the standings as printed")
        closing = threading.Thread(target=watcher.close)
        closing.start()
        # The rebuild is still stuck: the end must be heard all the same.
        end = page.until(lambda s: s["over"], "the run's end")
        gate.open.set()
        closing.join(WAIT)
    assert end["over"] == "finished" and end["final"] == "the standings as printed"
    assert end["done"] == end["total"] == 4


def test_the_clock_a_page_is_sent_is_the_time_it_is_sent_and_stops_at_the_end(tmp_path, monkeypatch):
    gate, clock = Gate(), Clock()
    monkeypatch.setattr(live, "load_standings", gate)
    watcher = live.LiveWatcher(Quiet(), clock=clock)
    watcher.started(_session(tmp_path), 0)
    with watcher.live():
        page = Listener(watcher.url)
        watcher.progress(1, 4, 4)
        assert gate.entered.wait(WAIT)
        clock.now += 10  # while the rebuild is stuck, the run goes on
        watcher.progress(2, 8, 8)
        heard = page.until(lambda s: s["done"] == 2, "the second match")
        assert heard["elapsed"] == 10.0
        assert heard["phase"] == "playing" and heard["in_play"] == 2
        assert heard["eta"] == 10.0  # 8 hands in 10 s, 8 to go
        watcher.progress(4, 16, 16)
        tallying = page.until(lambda s: s["done"] == 4, "every match booked")
        # The final standings are being tallied: no estimate, no table in play.
        assert (tallying["phase"], tallying["eta"], tallying["in_play"]) == ("tallying", None, 0)
        clock.now += 20
        watcher.finish("printed")
        clock.now += 100
        end = page.until(lambda s: s["over"], "the end")
        gate.open.set()
        watcher.close()
    assert end["elapsed"] == 30.0
    elapsed = [s["elapsed"] for s in page.states]
    assert elapsed == sorted(elapsed)


def _browser():
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    return sync_api, chromium


def _watch(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def _seconds(text: str) -> int:
    """'elapsed 1 min 5 s; …' → 65."""
    found = re.match(r"elapsed (?:(\d+) h )?(?:(\d+) min )?(\d+) s", text)
    assert found, text
    h, m, s = (int(x or 0) for x in found.groups())
    return 3600 * h + 60 * m + s


def test_the_page_clock_never_runs_backwards_when_a_state_comes_late(tmp_path, monkeypatch):
    """The page counts on from the last state; a state sent late (it was rebuilt meanwhile)
    carries an elapsed time behind what the page already shows: it must not step back.
    Both clocks are the test's: the server's and the browser's (Playwright's clock)."""
    sync_api, chromium = _browser()
    clock = Clock()
    monkeypatch.setattr(live, "load_standings", Gate())  # no standings: they do not matter here
    watcher = live.LiveWatcher(Quiet(), clock=clock)
    watcher.started(_session(tmp_path), 0)
    with watcher.live(), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        errors = _watch(page)
        page.clock.install()
        page.goto(watcher.url)
        clock.now += 100
        watcher.progress(0, 2, 2)
        page.wait_for_function("document.querySelector('#done').textContent.includes('2 of 16 hands')")
        page.clock.run_for(20_000)  # the page's clock: 20 s more than the state it heard
        assert _seconds(page.locator("#clock").text_content()) == 120
        clock.now += 5  # the next state says 105 s: sent late
        watcher.progress(0, 3, 3)
        page.wait_for_function("document.querySelector('#done').textContent.includes('3 of 16 hands')")
        page.clock.run_for(1_000)
        shown = _seconds(page.locator("#clock").text_content())
        assert shown >= 120, page.locator("#clock").text_content()
        watcher.close()
        browser.close()
    assert errors == []


# The page's states as it showed them, each time its status line or clock changed.
RECORD = """() => {
  window.seen = [];
  const note = () => window.seen.push({state: document.querySelector('#state').textContent,
    done: document.querySelector('#done').textContent, clock: document.querySelector('#clock').textContent});
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
FULL_SIZE = 1800  # seconds: a bound for a full-size run on a loaded machine, never an expectation


def test_the_quickstart_under_load_reaches_finished_on_its_live_page(tmp_path, loaded):
    """`naparena run tournaments/quickstart.toml --workers 2 --live`, as typed, every core busy:
    the page follows all 384 matches, says when the final standings are being tallied, and
    ends with them as printed; its clock never steps back."""
    sync_api, chromium = _browser()
    (tmp_path / "tournaments").mkdir()
    shutil.copy(REPO / "tournaments" / "quickstart.toml", tmp_path / "tournaments")
    proc = start_naparena("run", "tournaments/quickstart.toml", "--workers", "2", "--live", cwd=tmp_path)
    try:
        first = wait_for(proc.stderr.readline, "the live page's address", proc=proc)
        url = re.search(r"http://127\.0\.0\.1:\d+/", first).group(0)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors = _watch(page)
            page.goto(url)
            page.evaluate(RECORD)
            page.wait_for_function("['finished', 'stopped: the run ended without standings'].includes("
                                   "document.querySelector('#state').textContent) || "
                                   "document.querySelector('#state').textContent.startsWith(\"the run's page\")",
                                   timeout=FULL_SIZE * 1000)
            out, err = proc.communicate(timeout=FULL_SIZE)
            state = page.locator("#state").text_content()
            done = page.locator("#done").text_content()
            shown = page.locator("#final").text_content()
            seen = page.evaluate("window.seen")
            page.screenshot(path=str(tmp_path / "live-quickstart.png"), full_page=True)
            browser.close()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert state == "finished", (state, done, seen[-3:])
    assert done.startswith("384 of 384 matches booked, 57,600 of 57,600 hands"), done
    assert shown == out
    clocks = [_seconds(s["clock"]) for s in seen if s["clock"].startswith("elapsed")]
    assert clocks == sorted(clocks), clocks
    # Once a hand is played the estimate is made; once all are, the page says what it waits for.
    assert not [s for s in seen if "estimated when the first hands" in s["clock"] and
                not s["done"].startswith("0 of")]
    waiting = [s for s in seen if s["done"].startswith("384 of 384") and s["state"] != "finished"]
    assert all(s["state"].startswith("all matches played: tallying") and "tallied" in s["clock"]
               for s in waiting), waiting
    assert errors == []
