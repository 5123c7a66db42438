"""The report and the hand viewer of a quickstart-size run (384 matches, 57,600 hands), used
as a stranger would (the commands as typed, relative paths) while every core is kept busy:
the report is written and fits a phone; the viewer's filters read their index a few files
at a time and say how far they have come. Nothing here waits on a speed: every wait is for
an event, with bounds meant for a loaded machine."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from naparena.report.viewer import CHUNK
from tests.helpers import REPO, WAIT, flat, naparena, run_dir_in, start_naparena, wait_for

pytestmark = pytest.mark.slow

FULL_SIZE = 1800  # seconds: a bound for a full-size command on a loaded machine, never an expectation


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


def test_the_quickstarts_report_and_viewer_under_load(tmp_path, loaded):
    """One run for both (a full-size run is the costly part): its report, then its viewer."""
    folder, run_dir = _quickstart(tmp_path)
    _report_is_written_and_fits_a_phone(folder, run_dir)
    _viewer_filters_from_its_index_with_progress_on_screen(folder, run_dir)


def _quickstart(folder: Path) -> tuple[Path, Path]:
    """`naparena run tournaments/quickstart.toml --workers 2` in `folder`: the folder and the run
    directory, relative to it."""
    (folder / "tournaments").mkdir()
    shutil.copy(REPO / "tournaments" / "quickstart.toml", folder / "tournaments")
    ran = naparena("run", "tournaments/quickstart.toml", "--workers", "2", cwd=folder, timeout=FULL_SIZE)
    assert ran.returncode == 0, ran.stderr
    return folder, run_dir_in(folder / "logs").relative_to(folder)


# Whatever sticks out of the window: an element past its right edge, or a page that scrolls sideways.
WIDER = """() => {
  const page = document.documentElement.clientWidth;
  const out = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > page + 0.5)
    .map(e => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 40));
  if (document.documentElement.scrollWidth > page) out.push('the page scrolls sideways');
  return out;
}"""


def _report_is_written_and_fits_a_phone(folder: Path, run_dir: Path) -> None:
    sync_api, chromium = _browser()
    made = naparena("report", run_dir, "--html", "report.html", cwd=folder, timeout=FULL_SIZE)
    assert made.returncode == 0, made.stderr
    assert re.search(r"wrote report\.html \([\d,]+ bytes\) and its hands in report-hands", flat(made.stderr))
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for width, height in ((1280, 800), (390, 844)):
            page = browser.new_page(viewport={"width": width, "height": height})
            errors = _watch(page)
            page.goto((folder / "report.html").as_uri())
            page.wait_for_function("document.querySelector('#v-step').textContent.startsWith('match 0, hand 0')",
                                   timeout=WAIT * 1000)
            assert page.evaluate(WIDER) == []
            # A link from a head-to-head row opens its hand on the drawn table.
            page.locator("a.board").first.click()
            target = re.fullmatch(r"#hand-(\d+)-(\d+)", page.locator("a.board").first.get_attribute("href"))
            page.wait_for_function(f"document.querySelector('#v-step').textContent.startsWith("
                                   f"'match {target.group(1)}, hand {target.group(2)}:')", timeout=WAIT * 1000)
            assert page.locator("#v-table .nt-seat").count() == 4
            assert page.evaluate(WIDER) == []
            assert errors == []
            page.close()
        browser.close()


# The viewer's status line as it changed while a search ran, every state of it.
RECORD = """() => {
  window.states = [];
  new MutationObserver(() => {
    const count = document.querySelector('#v-count');
    window.states.push({text: count ? count.textContent : '', bar: !!document.querySelector('#v-progress')});
  }).observe(document.querySelector('#v-found'), {childList: true, subtree: true, characterData: true});
}"""


def _found(folder: Path, run_dir: Path) -> int:
    """Hands of Nap that heuristic bid and lost, from the logs: a few in each variant."""
    found = 0
    for path in sorted((folder / run_dir / "matches").glob("*.json")):
        data = json.loads(path.read_text())
        seats = data["match"]["seats"]
        found += sum(1 for h in data["hands"] if h.get("bidder") is not None and seats[h["bidder"]] == "heuristic"
                     and h["contract"] == "nap" and h["result"] == "lost")
    return found


def _viewer_filters_from_its_index_with_progress_on_screen(folder: Path, run_dir: Path) -> None:
    """Filters over 2,976 matches read one file per 16 matches, one after another, for 17 to
    37 s with nothing on screen. They read the index, at most a file per CHUNK matches, and
    say how far they have come as they go."""
    sync_api, chromium = _browser()
    expected = _found(folder, run_dir)
    proc = start_naparena("view", run_dir, cwd=folder)
    try:
        first = wait_for(proc.stderr.readline, "the viewer's address", proc=proc)
        url = re.search(r"http://127\.0\.0\.1:\d+/", " ".join(first.split())).group(0)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 390, "height": 844})
            errors = _watch(page)
            asked: list[str] = []
            page.on("request", lambda r: asked.append(r.url.removeprefix(url)))
            page.goto(url)
            page.wait_for_function("document.querySelector('#v-step').textContent.startsWith('match 0, hand 0')",
                                   timeout=WAIT * 1000)
            page.evaluate(RECORD)
            before = len(asked)
            page.locator("#f-bot").select_option("heuristic")
            page.locator("#f-role").select_option("bot")
            page.locator("#f-contract").select_option("nap")
            page.locator("#f-result").select_option("lost")
            page.locator("#f-go").click()
            page.wait_for_function("(document.querySelector('#v-count') || {}).textContent?.includes('hands found')",
                                   timeout=FULL_SIZE * 1000)
            count = page.locator("#v-count").text_content()
            states = page.evaluate("window.states")
            read = [a for a in asked[before:] if a.startswith("hands/")]
            assert page.evaluate(WIDER) == []
            browser.close()
    finally:
        proc.terminate()
        proc.communicate(timeout=WAIT)
    assert errors == []
    parts = math.ceil(384 / CHUNK)
    assert set(read) <= {f"hands/f{k:04d}.js" for k in range(parts)}, read  # the index only, no match
    # Fewer than a page of them: the search went through every match, and found each.
    assert 0 < expected <= 60 and count == f"{expected} hands found", (count, expected)
    # Before the result, the page said it was searching, with a progress bar.
    searching = [s for s in states if s["text"].startswith("searching: ")]
    assert searching and all(s["bar"] for s in searching), states
    assert re.fullmatch(r"searching: 0 of 384 matches…", searching[0]["text"])
