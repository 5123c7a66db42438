"""The web table (`naparena play --web`) and the drawn table every page shares, in Chromium:
every frame the person is shown drawn from one hand (never the next hand's header over the
last one's trick, never a card both in a hand and on the trick), the bids on the felt until
the first lead, what the page says when the run is stopped at its terminal; and the drawn
table itself: cards sized to the felt, readable when they cannot be played, one mark for
each thing it marks."""

from __future__ import annotations

import json
import re
import shutil
import signal
from pathlib import Path

import pytest

from naparena.people.table import card_text
from naparena.report.viewer import asset
from tests.helpers import WAIT, run_dir_in, start_naparena, wait_for


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


# Every drawing of the table as the page showed it, kept by the page itself: nothing is
# missed however short a frame is held (the test sets a short pause).
RECORD = """() => {
  window.drawn = [];
  const texts = q => [...document.querySelectorAll(q)].map(e => e.dataset.card || e.textContent);
  new MutationObserver(() => {
    const felt = document.querySelector('#table .nt-felt');
    if (!felt) return;
    const you = document.querySelector('#table .nt-seat.near');
    const frame = {info: document.querySelector('#table .nt-info').textContent,
      caption: document.querySelector('#table .nt-caption').textContent,
      yours: you ? [...you.querySelectorAll('.nt-card')].map(e => e.dataset.card) : [],
      trick: texts('#table .nt-trick .nt-card'),
      bids: Object.fromEntries([...document.querySelectorAll('#table .nt-seat')].map(
        s => [s.querySelector('.nt-name').childNodes[s.querySelector('.nt-tag') ? 1 : 0].textContent,
              (s.querySelector('.nt-bid') || {}).textContent || null]))};
    const last = window.drawn[window.drawn.length - 1];
    if (!last || JSON.stringify(last) !== JSON.stringify(frame)) window.drawn.push(frame);
  }).observe(document.querySelector('#table'), {childList: true, subtree: true});
}"""


def _start(tmp_path: Path, *args: str):
    proc = start_naparena("play", "--web", "--bots", "heuristic,random,random", "--hands", "3", "--seed", "5",
                          "--log-dir", "logs", *args, cwd=tmp_path)
    first = wait_for(proc.stderr.readline, "the table's address", proc=proc)
    return proc, re.search(r"http://127\.0\.0\.1:\d+/", first).group(0)


def _play_match(page) -> int:
    """Click through match 0 (the first legal card, the first choice) to its end; the number of
    decisions answered."""
    turn, answered = "", 0
    while True:
        page.wait_for_function(f"!['', {turn!r}].includes(document.body.dataset.turn || '')"
                               " || document.querySelector('#next')", timeout=WAIT * 1000)
        if page.locator("#next").count():
            return answered
        turn = page.evaluate("document.body.dataset.turn")
        legal = page.locator("#table button.nt-card.legal")
        if legal.count():
            legal.first.click()
        else:
            page.locator("#choices button").first.click()
        answered += 1


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["1280", "390"])
def test_every_frame_draws_one_hand_and_no_card_twice_while_the_machine_is_loaded(tmp_path, size, loaded):
    """The 'hand over' frame drew hand 1's last trick under hand 2's header with the new hand's
    cards, and at the match's end the card played to the last trick was still in the hand."""
    sync_api, chromium = _browser()
    proc, url = _start(tmp_path, "--pause", "0.05")
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": size[0], "height": size[1]})
            errors = _watch(page)
            page.goto(url)
            page.wait_for_selector("#table .nt-felt", timeout=WAIT * 1000)
            page.evaluate(RECORD)
            _play_match(page)
            drawn = page.evaluate("window.drawn")
            page.screenshot(path=str(tmp_path / f"match-over-{size[0]}.png"))
            # The match is logged before its end is shown (the deals come from the log).
            _every_frame_one_hand(drawn, json.loads((run_dir_in(tmp_path / "logs") / "matches" / "000000.json")
                                                    .read_text()))
            page.locator("#quit").click()
            page.wait_for_function("document.querySelector('#message').textContent.endsWith('(the table has closed)')",
                                   timeout=WAIT * 1000)
            assert page.locator("#message").text_content().startswith("you left the table")
            browser.close()
        out, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert errors == []


def _every_frame_one_hand(drawn: list[dict], log: dict) -> None:
    you = log["match"]["seats"].index("you")
    dealt = {h["n"]: {card_text(c) for c in h["deal"][you]} for h in log["hands"]}
    ends = [f for f in drawn if re.match(r"hand \d+ over", f["caption"])]
    assert {int(f["caption"].split()[1]) for f in ends} >= {1, 2, 3}, [f["caption"] for f in drawn]
    for f in drawn:
        assert not set(f["yours"]) & set(f["trick"]), f  # a card is in a hand or on the trick, not both
        shown = re.search(r"hand (\d+) of", f["info"])
        if re.match(r"hand \d+ over", f["caption"]):  # a hand's end, under its own header, with its own cards
            n = int(f["caption"].split()[1])
            assert shown and int(shown.group(1)) == n, f
            assert set(f["yours"]) <= dealt[n - 1], (f, dealt[n - 1])
        if f["trick"]:  # once a card is led, the bids leave the felt
            assert not any(f["bids"].values()), f
    final = drawn[-1]
    assert final["caption"].startswith("hand 3 over") and "hand 3 of 3" in final["info"]
    # The bids were on the felt: at the person's bid in each hand, every bid made before it.
    for hand in log["hands"]:
        before = []
        for seat, bid in hand["bids"]:
            if seat == you:
                break
            before.append((log["match"]["seats"][seat], "passes" if bid == "pass" else f"bids {bid}"))
        if before:
            assert any(all(f["bids"].get(alias) == text for alias, text in before) and f"hand {hand['n'] + 1} of"
                       in f["info"] for f in drawn), (before, hand["n"])


@pytest.mark.slow
def test_after_ctrl_c_at_the_terminal_the_page_says_the_run_was_stopped_there(tmp_path):
    """Ctrl-C where `naparena play --web` runs: the page said "you left the table"."""
    sync_api, chromium = _browser()
    proc, url = _start(tmp_path, "--pause", "0")
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors = _watch(page)
            page.goto(url)
            page.wait_for_function("document.body.dataset.turn", timeout=WAIT * 1000)
            proc.send_signal(signal.SIGINT)
            page.wait_for_function("document.querySelector('#message').textContent.includes('closed')",
                                   timeout=WAIT * 1000)
            said = page.evaluate("document.body.innerText")
            message = page.locator("#message").text_content()
            browser.close()
        out, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert errors == []
    assert "you left the table" not in said
    assert message == ("the run was stopped at its terminal (Ctrl-C): no match was over, so no standings yet "
                       "(the table has closed)")
    assert "Go on with: naparena resume logs/" in said


# --- the drawn table on its own, as wide as the web table's page lets it be ---------------------

def _component(page, width: int, height: int, model: str) -> None:
    page.set_viewport_size({"width": width, "height": height})
    page.set_content(f"<!doctype html><html><head><meta name='viewport' content='width=device-width'>"
                     f"<style>body{{margin:0;padding:8px;background:#123d25}}{asset('table.css')}</style></head>"
                     f"<body><div id='t' style='max-width:800px;margin:auto'></div>"
                     f"<script>{asset('table.js')}</script></body></html>")
    page.evaluate(f"() => {{ const m = {model}; m.play.pick = () => {{}}; "
                  "NapTable.draw(document.getElementById('t'), m); }")


# The person at the bottom with 2♣ 10♦ Q♥ K♠ A♠, a card to play (Q♥ and A♠ legal), 10♦ picked
# (as in an exchange), heuristic took the trick; the others' bids are on the felt.
MODEL = """{
  seats: [{name: "you", chips: 3, turn: true, cards: [0, 21, 36, 50, 51]},
          {name: "heuristic", chips: -1, hidden: 4, bid: "three"},
          {name: "random", chips: 0, hidden: 4, bid: "pass"},
          {name: "bold", chips: 2, hidden: 5}],
  bottom: 0, trick: [[1, 38], [2, 30]], winner: 1, info: [{label: "match", text: "0, hand 1 of 3"}],
  caption: "your turn", play: {seat: 0, legal: %s, picked: %s, active: %s, choosing: false}}"""


YOURS = ".nt-seat[data-seat='0']"


def _ring(page, selector: str) -> str:
    """The colour of an element's first box shadow (its ring)."""
    return page.evaluate(f"(getComputedStyle(document.querySelector({selector!r})).boxShadow"
                         ".match(/rgba?\\([^)]*\\)/) || ['none'])[0]")


def _style(page, selector: str, prop: str) -> str:
    return page.evaluate(f"getComputedStyle(document.querySelector({selector!r}))[{prop!r}]")


def _luminance(rgb: str) -> float:
    def channel(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    r, g, b = (float(x) for x in re.findall(r"[\d.]+", rgb)[:3])
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["1280", "390"])
def test_cards_are_sized_to_the_felt_one_width_for_every_rank(size, tmp_path):
    """Cards were ≈33×43 px tiles, a 10 wider than a 2, on a mostly empty felt."""
    sync_api, chromium = _browser()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        _component(page, *size, MODEL % ("[36, 51]", "[]", "true"))
        felt = page.locator(".nt-felt").bounding_box()
        mine = [b.bounding_box() for b in page.locator(YOURS + " .nt-card").all()]
        trick = [b.bounding_box() for b in page.locator(".nt-trick .nt-card").all()]
        page.screenshot(path=str(tmp_path / f"table-{size[0]}.png"))
        browser.close()
    assert len({round(b["width"]) for b in mine}) == 1, mine  # 2♣ and 10♦ alike
    assert len({round(b["width"]) for b in trick}) == 1, trick
    assert mine[0]["width"] >= felt["width"] * (0.1 if size[0] > 600 else 0.14), (mine[0], felt)
    assert mine[0]["height"] >= 1.35 * mine[0]["width"]  # a card's shape, not a tile
    assert trick[0]["width"] >= felt["width"] * (0.085 if size[0] > 600 else 0.1)
    # Every card lies inside the felt, the hand's and the trick's, and no two trick cards overlap.
    for b in mine + trick:
        assert felt["x"] <= b["x"] and b["x"] + b["width"] <= felt["x"] + felt["width"], (b, felt)
        assert felt["y"] <= b["y"] and b["y"] + b["height"] <= felt["y"] + felt["height"], (b, felt)
    a, b = trick
    assert a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] or \
        a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"]


def test_the_hand_reads_at_full_strength_while_bidding_and_refused_cards_stay_readable():
    """While the person bid or peeped, the hand was greyed as 'not playable'."""
    sync_api, chromium = _browser()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        _component(page, 1280, 800, MODEL % ("[]", "[]", "false"))  # a bid: no card to play
        bidding = [(_style(page, f"{YOURS} .nt-card:nth-child({k})", "opacity"),
                    _style(page, f"{YOURS} .nt-card:nth-child({k})", "color"),
                    _style(page, f"{YOURS} .nt-card:nth-child({k})", "backgroundColor"),
                    page.locator(f"{YOURS} .nt-card:nth-child({k})").get_attribute("aria-label"))
                   for k in range(1, 6)]
        _component(page, 1280, 800, MODEL % ("[36, 51]", "[]", "true"))  # a card to play
        two = f"{YOURS} [data-card='2♣']"  # held, not playable now
        refused = (_style(page, two, "color"), _style(page, two, "backgroundColor"), _style(page, two, "opacity"))
        # A trick held still between two decisions: nothing stands up as playable.
        _component(page, 1280, 800, MODEL % ("[36, 51]", "[]", "false"))
        between = [_style(page, f"{YOURS} .nt-card:nth-child({k})", "transform") for k in range(1, 6)]
        browser.close()
    assert between == ["none"] * 5, between
    for opacity, ink, paper, label in bidding:
        assert float(opacity) == 1.0 and _contrast(ink, paper) >= 4.5 and "not playable" not in label
    assert float(refused[2]) == 1.0 and _contrast(refused[0], refused[1]) >= 4.5


def test_turn_winner_focus_and_pick_each_have_their_own_mark():
    """One yellow marked your turn, the trick's winner, the focused card and the picked card."""
    sync_api, chromium = _browser()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        _component(page, 1280, 800, MODEL % ("[36, 51]", "[21]", "true"))
        page.locator(f"{YOURS} [data-card='Q♥']").focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowLeft")  # a keyboard focus, as :focus-visible shows it
        focused = page.evaluate("document.activeElement.dataset.card")
        marks = {
            "turn": _style(page, YOURS, "borderTopColor"),
            "winner": _ring(page, ".nt-trick[data-seat='1'] .nt-card"),
            "focus": page.evaluate("getComputedStyle(document.activeElement).outlineColor"),
            "picked": _ring(page, f"{YOURS} [data-card='10♦']"),
        }
        tags = page.locator(".nt-tag").all_text_contents()
        bids = page.locator(".nt-bid").all_text_contents()
        picked_badge = page.evaluate(f"getComputedStyle(document.querySelector(\"{YOURS} [data-card='10♦']\"), "
                                     "'::after').content")
        browser.close()
    assert focused == "Q♥"
    assert len(set(marks.values())) == 4, marks  # four colours
    assert "your turn" in tags and "★ takes the trick" in tags  # and words, not colour alone
    assert picked_badge == '"✓"'
    assert bids == ["bids three", "passes"]  # on the felt, at their seats
