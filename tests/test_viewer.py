"""The hand viewer in Chromium: a 384-match run served by `naparena view`, hands loaded a
match at a time; every decision kind of every variant drawn as the log has it; the
filters and the jump to the next Nap bid against counts taken from the logs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from naparena.game.rules import VARIANTS
from naparena.people.table import cards_text
from naparena.report.viewer import NAP_UP
from tests.helpers import naparena, run_dir_in, start_naparena, wait_for, write_tournament

pytestmark = pytest.mark.slow


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


def _logs(run_dir: Path) -> dict[int, dict]:
    return {int(p.stem): json.loads(p.read_text()) for p in sorted((run_dir / "matches").glob("*.json"))}


@pytest.fixture(scope="module")
def every_variant(tmp_path_factory) -> Path:
    """Every named variant, 6 matches of 6 hands each: every decision kind is in it."""
    folder = tmp_path_factory.mktemp("variants")
    path = write_tournament(folder, bots=("random", "heuristic"), seeds=1, hands=6, table=4, duplicate=True,
                            example=False, workers=1, variants=tuple(VARIANTS))
    result = naparena("run", path, "--log-dir", folder / "logs", cwd=folder)
    assert result.returncode == 0, result.stderr
    return run_dir_in(folder / "logs")


def test_the_viewer_of_a_384_match_run_loads_only_what_it_shows_and_draws_the_last_match(tmp_path):
    sync_api, chromium = _browser()
    # The quickstart's design (4 bots, 8 seed streams, 24 seatings, 2 variants) with 1 hand a match.
    path = write_tournament(tmp_path, bots=("heuristic", "random", "cautious", "bold"), seeds=8, hands=1, table=4,
                            duplicate=True, example=False, variants=("classic", "pagat"))
    ran = naparena("run", path, "--log-dir", tmp_path / "logs", cwd=tmp_path, timeout=600)
    assert ran.returncode == 0, ran.stderr
    run_dir = run_dir_in(tmp_path / "logs")
    logs = _logs(run_dir)
    assert len(logs) == 384
    proc = start_naparena("view", run_dir, cwd=tmp_path)
    try:
        first = wait_for(proc.stderr.readline, "the viewer's address", proc=proc)
        url = re.search(r"http://127\.0\.0\.1:\d+/", " ".join(first.split())).group(0)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            for width, height in ((1280, 800), (390, 844)):
                page = browser.new_page(viewport={"width": width, "height": height})
                errors = _watch(page)
                asked: list[str] = []
                page.on("request", lambda r, asked=asked: asked.append(r.url.removeprefix(url)))
                page.goto(url)
                page.wait_for_function("document.querySelector('#v-step').textContent.startsWith('match 0, hand 0')")
                assert page.locator("#v-match option").count() == 384
                page.locator("#v-match").select_option(index=383)
                page.wait_for_function("document.querySelector('#v-step').textContent.startsWith('match 383, hand 0')")
                page.locator("#v-last").click()
                deal = logs[383]["hands"][0]["deal"]
                seats = page.locator("#v-table .nt-seat")
                assert seats.count() == 4
                for s, cards in enumerate(deal):  # each seat shows its dealt cards, as the log has them
                    shown = page.locator(f"#v-table .nt-seat[data-seat='{s}'] .nt-card").all_text_contents()
                    assert sorted(shown) == sorted(cards_text(cards).split()), (s, shown)
                assert "settlement:" in page.locator("#v-log").text_content()
                page.locator("#viewer").scroll_into_view_if_needed()
                page.screenshot(path=str(tmp_path / f"viewer-384-{width}.png"))
                # the page holds no hand; it asked for the index and the two matches shown, nothing else
                assert '"deal"' not in page.content().split("<script>")[0]
                data = sorted(a for a in asked if a.startswith("hands/"))
                assert data == ["hands/index.js", "hands/m000000.js", "hands/m000383.js"], data
                # the viewer's controls and table fit the phone's width
                right = page.evaluate("Math.max(...[...document.querySelectorAll('#v-table *, .v-row')]"
                                      ".map(e => e.getBoundingClientRect().right))")
                assert right <= width, right
                assert errors == []
                page.close()
            browser.close()
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def _first(logs: dict[int, dict], test) -> tuple[int, dict]:
    for index, data in logs.items():
        for hand in data["hands"]:
            if test(data["match"]["variant"], hand):
                return index, hand
    raise AssertionError("no such hand in the run")


def _kinds(hand: dict) -> set:
    return {(kind, bool(answer) if kind in ("peep", "garnet", "floater_peep") else answer is not None)
            for _, kind, answer in hand.get("pre", ())}


# What each decision kind must read as in the viewer's log: (which hand, a pattern of its step).
DECISIONS = {
    "peep": (lambda v, h: ("peep", True) in _kinds(h), r" pays 1 to peep at the top card"),
    "peep exchange": (lambda v, h: ("peep_exchange", True) in _kinds(h), r" swaps \S+ for the peep card \S+"),
    "purchase": (lambda v, h: v == "purchase" and h.get("bought"), r" throws out .+ and buys \S+"),
    "écarté": (lambda v, h: v == "ecarte" and h.get("bought"), r" throws out .+ and buys \S+"),
    "Sir Garnet": (lambda v, h: ("garnet", True) in _kinds(h), r" takes up Sir Garnet's hand\n.+ keeps five of ten"),
    "floater": (lambda v, h: ("floater_discard", True) in _kinds(h), r" takes the floater \S+ and discards \S+"),
    "misère": (lambda v, h: h.get("contract") == "mis", r"contract: mis by "),
}


@pytest.mark.parametrize("kind", list(DECISIONS))
def test_every_decision_kind_is_drawn_and_every_card_played_was_shown_in_its_players_hand(every_variant, tmp_path,
                                                                                           kind):
    sync_api, chromium = _browser()
    logs = _logs(every_variant)
    index, hand = _first(logs, DECISIONS[kind][0])
    out = tmp_path / "r.html"
    assert naparena("view", every_variant, "--out", out, cwd=tmp_path).returncode == 0
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors = _watch(page)
        page.goto(f"{out.as_uri()}#hand-{index}-{hand['n']}")
        page.wait_for_function(f"document.querySelector('#v-step').textContent.startsWith('match {index}, hand "
                               f"{hand['n']}:')")
        page.locator("#v-last").click()
        log = page.locator("#v-log").text_content()
        assert re.search(DECISIONS[kind][1], log), log
        # the hands after the exchanges: every card a seat played is among the cards drawn at its seat
        played: dict[int, list[int]] = {}
        for _, plays, _ in hand["tricks"]:
            for s, c in plays:
                played.setdefault(s, []).append(c)
        for s, cards in played.items():
            shown = page.locator(f"#v-table .nt-seat[data-seat='{s}'] .nt-card").all_text_contents()
            assert set(cards_text(cards).split()) <= set(shown), (s, cards_text(cards), shown)
        if kind in ("purchase", "écarté"):
            assert page.locator("#v-table .nt-card.new").count() >= 1  # bought cards are marked
            assert page.locator("#v-table .nt-card.out").count() >= 1  # and the cards thrown out
        page.locator("#viewer").scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / f"viewer-{kind}.png"))
        browser.close()
    assert errors == []


def test_filters_and_the_next_nap_bid_find_what_the_logs_hold(every_variant, tmp_path):
    sync_api, chromium = _browser()
    logs = _logs(every_variant)
    lost = sum(1 for data in logs.values() for h in data["hands"]
               if h.get("bidder") is not None and data["match"]["seats"][h["bidder"]] == "heuristic"
               and h["result"] == "lost" and data["match"]["variant"] == "hoyle")
    napped = [(i, h["n"]) for i, data in logs.items() for h in data["hands"]
              if any(b.rsplit("-", 1)[0] in NAP_UP or b in NAP_UP for _, b in h.get("bids", ()))]
    out = tmp_path / "r.html"
    assert naparena("view", every_variant, "--out", out, cwd=tmp_path).returncode == 0
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors = _watch(page)
        page.goto(out.as_uri())
        page.wait_for_function("document.querySelector('#v-step').textContent.startsWith('match 0, hand 0')")
        page.locator("#f-bot").select_option("heuristic")
        page.locator("#f-variant").select_option("hoyle")
        page.locator("#f-role").select_option("bot")
        page.locator("#f-result").select_option("lost")
        page.locator("#f-go").click()
        page.wait_for_function("(document.querySelector('#v-count') || {}).textContent?.endsWith('hands found')")
        assert page.locator("#v-count").text_content() == f"{lost} hands found"
        assert page.locator(".v-hit").count() == lost > 0
        assert all(", lost" in t and "by heuristic" in t for t in page.locator(".v-hit").all_text_contents())
        # from the first hand, the next where anyone (no bot chosen) bid Nap or above
        page.locator("#f-bot").select_option("")
        target = next(x for x in napped if x > (0, 0))
        page.locator("#v-nap").click()
        page.wait_for_function(f"document.querySelector('#v-step').textContent.startsWith('match {target[0]}, "
                               f"hand {target[1]}:')")
        assert re.search(r" bids (nap|wellington|blucher|bonaparte|six|seven)", page.locator("#v-table .nt-caption")
                         .text_content())
        # auto-play steps on by itself
        before = page.locator("#v-step").text_content()
        page.locator("#v-speed").select_option("400")
        page.locator("#v-play").click()
        page.wait_for_function(f"document.querySelector('#v-step').textContent !== {before!r}")
        page.locator("#v-play").click()
        browser.close()
    assert errors == []
