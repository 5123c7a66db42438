"""The hand viewer of the HTML report: any hand of any match, step by step (the deal face
up, each bid, each card, the tricks, faults, the settlement), forward and back; and, per
pair of bots, the hands where their results differed most, to link to from the
head-to-head table. Read through the run directory's one reader, `RunDir`.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from naparena.arena.records.rundir import RunDir

#: Hands the page carries at most: a larger run still opens, with the rest named in a note.
MAX_HANDS = 20_000
LINKS_PER_PAIR = 3
# Keys of a hand record the viewer shows; the rest (seeds, cut, gathered order) stay in the log.
SHOWN = ("n", "dealer", "deal", "peep_card", "floater", "garnet", "stock", "bought", "pre", "bids", "bidder",
         "contract", "trumps", "tricks", "trick", "revoke", "faults", "result", "chips", "kitty")


def hand_id(match: int, hand: int) -> str:
    return f"hand-{match}-{hand}"


def viewer_data(run_dir: Path) -> tuple[list[dict[str, Any]], int]:
    """(matches with their hands as the viewer needs them, hands left out over MAX_HANDS)."""
    rd = RunDir(run_dir)
    matches, kept, left = [], 0, 0
    for path in rd.match_files():
        data = rd.read_match_file(path)
        if "skipped" in data:
            continue
        hands = []
        for record in data["hands"]:
            if kept >= MAX_HANDS:
                left += 1
                continue
            hands.append({k: record[k] for k in SHOWN if k in record})
            kept += 1
        matches.append({"index": data["match"]["index"], "variant": data["match"]["variant"],
                        "seats": data["match"]["seats"], "hands": hands})
    return matches, left


def _chips(hand: dict[str, Any], seats: list[int]) -> float:
    """A bot's chips in a hand: over its seats' mean when the table repeats it, as the standings count it."""
    return sum(hand["chips"][s] for s in seats) / len(seats)


def widest_hands(matches: list[dict[str, Any]], a: str, b: str) -> list[tuple[int, int, float]]:
    """(match, hand, a's chips − b's) of the hands both played where that difference was
    largest either way, largest first."""
    found = []
    for m in matches:
        sa = [s for s, alias in enumerate(m["seats"]) if alias == a]
        sb = [s for s, alias in enumerate(m["seats"]) if alias == b]
        if not sa or not sb:
            continue
        for h in m["hands"]:
            diff = _chips(h, sa) - _chips(h, sb)
            found.append((abs(diff), m["index"], h["n"], diff))
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    return [(match, hand, diff) for _, match, hand, diff in found[:LINKS_PER_PAIR]]


def pair_links(matches: list[dict[str, Any]], a: str, b: str) -> str:
    """Links to the hands where a and b differed most, for a head-to-head row."""
    links = [f"<a href='#{hand_id(m, h)}' class='board'>m{m} h{h} ({d:+g})</a>" for m, h, d in
             widest_hands(matches, a, b)]
    return " ".join(links) or "—"


def section(matches: list[dict[str, Any]], left: int) -> str:
    """The viewer: its data as JSON in the page, and the script that steps through a hand."""
    note = f" The first {MAX_HANDS:,} hands are here; {left:,} more are in the logs." if left else ""
    options = "".join(f"<option value='{i}'>match {m['index']} ({escape(m['variant'])}: "
                      f"{escape(', '.join(m['seats']))})</option>" for i, m in enumerate(matches))
    data = json.dumps(matches, separators=(",", ":")).replace("</", "<\\/")
    return (f"<h2 id='viewer'>Hand viewer</h2><p class='note'>Any hand, step by step: the deal face up, each "
            f"bid, each card, the tricks, faults and the settlement. ← and → step; a link from the head-to-head "
            f"table opens its hand.{note}</p>"
            f"<p><select id='v-match'>{options}</select> hand <select id='v-hand'></select> "
            "<button id='v-first'>first</button> <button id='v-back'>◀ back</button> "
            "<button id='v-next'>next ▶</button> <button id='v-last'>last</button> "
            "<span id='v-step' class='meta'></span></p>"
            "<div id='v-table'></div><pre id='v-log'></pre>"
            f"<script type='application/json' id='v-data'>{data}</script><script>{SCRIPT}</script>")


CSS = """
#v-table table td { text-align: left; }
.vcard { display: inline-block; min-width: 2.2em; padding: .1em .25em; margin: .1em; border: 1px solid #bbb;
  border-radius: 4px; background: #fff; text-align: center; }
.vcard.red { color: #c00; } .vcard.gone { opacity: .25; } .vcard.now { box-shadow: 0 0 0 2px #e90; }
#v-log { background: #f6f6f6; padding: .6em; white-space: pre-wrap; }
a.board { margin-right: .4em; }
"""

SCRIPT = r"""
"use strict";
(function(){
const matches = JSON.parse(document.getElementById("v-data").textContent);
const S = "♣♦♥♠", R = ["2","3","4","5","6","7","8","9","10","J","Q","K","A"];
const card = c => R[c % 13] + S[Math.floor(c / 13)];
const red = c => [1, 2].includes(Math.floor(c / 13));
const $ = id => document.getElementById(id);
let m = 0, h = 0, step = 0;
function steps(hand, seats){
  const out = [{text: "the deal", played: []}];
  const who = s => seats[s] ?? ("seat " + s);
  for (const [s, b] of hand.bids || []) out.push({text: who(s) + " bids " + b, played: []});
  if (hand.contract) out.push({text: "contract: " + hand.contract + " by " + who(hand.bidder)
      + (hand.trumps === null || hand.trumps === undefined ? "" : ", trumps " + S[hand.trumps]), played: []});
  let played = [];
  const tricks = (hand.tricks || []).map(t => [t[0], t[1], t[2]]);
  if (hand.trick && hand.trick.length) tricks.push([hand.trick[0][0], hand.trick, null]);
  tricks.forEach(([lead, plays, winner], i) => {
    for (const [s, c] of plays) {
      played = played.concat([c]);
      out.push({text: "trick " + (i + 1) + ": " + who(s) + " plays " + card(c), played, now: c});
    }
    if (winner !== null) out.push({text: "trick " + (i + 1) + " to " + who(winner), played});
  });
  for (const f of hand.faults || []) out.push({text: "fault: " + who(f[1]) + " at " + f[2] + ": " + f[3], played});
  if (hand.revoke !== undefined) out.push({text: "revoke by " + who(hand.revoke), played});
  out.push({text: "settlement: " + hand.result + " — " + seats.map((a, i) => a + " "
      + (hand.chips[i] >= 0 ? "+" : "") + hand.chips[i]).join(", ") + "; kitty " + hand.kitty, played, end: true});
  return out;
}
function draw(){
  const match = matches[m]; if (!match) return;
  const hand = match.hands[h], all = steps(hand, match.seats);
  step = Math.max(0, Math.min(step, all.length - 1));
  const now = all[step];
  const rows = match.seats.map((alias, s) => {
    const cards = (hand.deal[s] || []).map(c => "<span class='vcard" + (red(c) ? " red" : "")
      + (now.played.includes(c) ? " gone" : "") + (now.now === c ? " now" : "") + "'>" + card(c) + "</span>").join("");
    const mark = s === hand.dealer ? " (dealer)" : "", bid = s === hand.bidder ? " (bidder)" : "";
    return "<tr><td class='name'>" + alias.replace(/[&<>]/g, "") + mark + bid + "</td><td>" + (cards || "sits out")
      + "</td><td>" + (now.end ? ((hand.chips[s] >= 0 ? "+" : "") + hand.chips[s]) : "") + "</td></tr>";
  }).join("");
  $("v-table").innerHTML = "<table><tbody>" + rows + "</tbody></table>";
  $("v-log").textContent = all.slice(0, step + 1).map(x => x.text).join("\n");
  $("v-step").textContent = "match " + match.index + ", hand " + hand.n + ": step " + (step + 1) + " of " + all.length;
}
function pick(mi, hi){
  m = mi; h = hi; step = 0;
  $("v-match").value = String(m);
  $("v-hand").innerHTML = matches[m].hands.map((x, i) => "<option value='" + i + "'>" + x.n + "</option>").join("");
  $("v-hand").value = String(h);
  draw();
}
function open(hash){
  const found = /^#hand-(\d+)-(\d+)$/.exec(hash || "");
  if (!found) return false;
  const mi = matches.findIndex(x => x.index === Number(found[1]));
  if (mi < 0) return false;
  const hi = matches[mi].hands.findIndex(x => x.n === Number(found[2]));
  pick(mi, Math.max(hi, 0));
  $("viewer").scrollIntoView();
  return true;
}
$("v-match").onchange = e => pick(Number(e.target.value), 0);
$("v-hand").onchange = e => pick(m, Number(e.target.value));
$("v-next").onclick = () => { step++; draw(); };
$("v-back").onclick = () => { step--; draw(); };
$("v-first").onclick = () => { step = 0; draw(); };
$("v-last").onclick = () => { step = 1e9; draw(); };
document.addEventListener("keydown", e => {
  if (e.target.tagName === "SELECT") return;
  if (e.key === "ArrowRight") $("v-next").onclick(); else if (e.key === "ArrowLeft") $("v-back").onclick();
});
window.addEventListener("hashchange", () => open(location.hash));
if (matches.length && !open(location.hash)) pick(0, 0);
})();
"""
