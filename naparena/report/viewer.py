"""The hand viewer: every hand of every match of a run on the drawn table, step by step
(the deal face up, every decision, each card, the tricks, faults, the settlement), with
filters, auto-play and links from the head-to-head tables.

The page carries none of the hands: it loads small data files as it needs them, a match
at a time, from `naparena view`'s local server or from the folder a static export writes
beside the page. `Catalogue` makes one pass over the run's match files (through the run
directory's one reader, `RunDir`) for the index and the filters' summaries; a match's
file is read again only when it is shown.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import quote

from naparena.arena.records import jsontext
from naparena.arena.records.rundir import RunDir
from naparena.game.rules import MISERE_BIDS, TRICKS_NEEDED

LINKS_PER_PAIR = 3
#: Matches per file of the filters' index: a filter over a league of 3,000 matches reads a dozen
#: files of a few hundred kilobytes (it read one file per 16 matches, 17 to 37 s under load).
CHUNK = 256
# Keys of a hand record the viewer shows; the rest (seeds, cut, gathered order) stay in the log.
SHOWN = ("n", "dealer", "deal", "peep_card", "floater", "garnet", "stock", "bought", "pre", "bids", "bidder",
         "contract", "trumps", "tricks", "trick", "revoke", "faults", "result", "chips", "kitty")
#: Contracts at Nap or above (five tricks or more, misère aside): what "next Nap bid" looks for.
NAP_UP = sorted(b for b, n in TRICKS_NEEDED.items() if n >= 5 and b not in MISERE_BIDS)


def asset(name: str) -> str:
    """A file of the page's own CSS or script, from the package (pages fetch nothing else)."""
    return (files("naparena.report") / "assets" / name).read_text(encoding="utf-8")


def hand_id(match: int, hand: int) -> str:
    return f"hand-{match}-{hand}"


def _base(bid: str) -> str:
    """A floater bid's contract: 'nap-with' → 'nap'."""
    return bid.rsplit("-", 1)[0] if bid.endswith(("-with", "-without")) else bid


def summary(record: dict[str, Any]) -> list[Any]:
    """A hand as the filters read it: [n, bidder, contract, result, faulted, seats that bid Nap or above]."""
    naps = sorted({s for s, b in record.get("bids", ()) if _base(b) in NAP_UP})
    return [record["n"], record.get("bidder"), record.get("contract"), record.get("result"),
            1 if record.get("faults") or record.get("revoke") is not None else 0, naps]


# A hand in the filters' index: one integer, so that a league's index is small and a filter
# reads it as fast as it can loop. Bits, low to high (viewer.js reads them back):
#   4  bidder + 1 (0: none)           6  contract + 1 (into the index's contracts; 0: none)
#   4  result (into its results)      1  faulted
#  16  seats that bid Nap or above, one bit each
SEATS_MAX = 16


def packed(hand: list[Any], contracts: dict[str, int], results: dict[str, int]) -> int:
    """A hand's summary as its index code."""
    n, bidder, contract, result, faulted, naps = hand
    if len(contracts) > 62 or len(results) > 15 or (bidder or 0) >= SEATS_MAX - 1:
        raise ValueError("more contracts, results or seats than a hand's index code holds")
    code: int = (0 if bidder is None else bidder + 1) | (0 if contract is None else contracts[contract] + 1) << 4
    code |= results[result] << 10 | faulted << 14
    for seat in naps:
        code |= 1 << (15 + seat)
    return code


@dataclass
class Entry:
    """One logged match as the catalogue keeps it."""

    index: int
    variant: str
    seats: list[str]
    path: Path
    hands: list[list[Any]] = field(default_factory=list)       # summaries
    chips: list[tuple[int, ...]] = field(default_factory=list)  # per hand, per seat


class Catalogue:
    """Every logged match of a run, read once: the viewer's index and summaries, and each
    hand's chips for the head-to-head links."""

    def __init__(self, run_dir: str | Path | RunDir):
        self.rd = RunDir(run_dir)
        self.entries: list[Entry] = []
        for path in self.rd.match_files():
            logged = self.rd.read_match_file(path)
            if logged.skipped is not None:
                continue
            m = logged.spec
            entry = Entry(m.index, m.variant, list(m.seats), path)
            for record in logged.hands:
                entry.hands.append(summary(record))
                entry.chips.append(tuple(record["chips"]))
            self.entries.append(entry)
        self.by_index = {e.index: e for e in self.entries}

    @property
    def hands(self) -> int:
        return sum(len(e.hands) for e in self.entries)

    # --- the data files: `index`, `sNNNN` (summaries of CHUNK matches), `mNNNNNN` (a match) ---

    @functools.cached_property
    def contracts(self) -> list[str]:
        return sorted({h[2] for e in self.entries for h in e.hands if h[2]})

    @functools.cached_property
    def results(self) -> list[str]:
        return sorted({str(h[3]) for e in self.entries for h in e.hands})

    def index(self) -> dict[str, Any]:
        return {"matches": [[e.index, e.variant, e.seats, len(e.hands)] for e in self.entries], "chunk": CHUNK,
                "contracts": self.contracts, "results": self.results, "naps": NAP_UP, "hands": self.hands}

    def chunk(self, k: int) -> list[Any] | None:
        """The filters' index of matches k·CHUNK to (k + 1)·CHUNK: per match, each hand's code
        (`packed`), and its hand numbers where they are not simply 0, 1, 2…"""
        if not 0 <= k * CHUNK < max(len(self.entries), 1):
            return None
        contracts = {c: i for i, c in enumerate(self.contracts)}
        results = {r: i for i, r in enumerate(self.results)}
        part = []
        for e in self.entries[k * CHUNK:(k + 1) * CHUNK]:
            codes = [packed([*h[:3], str(h[3]), *h[4:]], contracts, results) for h in e.hands]
            numbers = [h[0] for h in e.hands]
            part.append(codes if numbers == list(range(len(numbers))) else [codes, numbers])
        return part

    def match(self, index: int) -> dict[str, Any] | None:
        entry = self.by_index.get(index)
        if entry is None:
            return None
        hands = self.rd.read_match_file(entry.path).hands
        return {"index": entry.index, "variant": entry.variant, "seats": entry.seats,
                "hands": [{k: r[k] for k in SHOWN if k in r} for r in hands]}

    def data(self, name: str) -> Any:
        """The data file `name` (without .js), or None when there is none by that name."""
        if name == "index":
            return self.index()
        if len(name) == 5 and name[0] == "f" and name[1:].isdigit():
            return self.chunk(int(name[1:]))
        if len(name) == 7 and name[0] == "m" and name[1:].isdigit():
            return self.match(int(name[1:]))
        return None

    def names(self) -> Iterator[str]:
        yield "index"
        for k in range((len(self.entries) + CHUNK - 1) // CHUNK):
            yield f"f{k:04d}"
        for e in self.entries:
            yield f"m{e.index:06d}"


def data_script(name: str, data: Any) -> bytes:
    """A data file as a script that hands its data to the page: a page opened from disk may
    add a script from its folder, where a fetch of a file would be refused."""
    text = jsontext.dumps(data, compact=True, ensure_ascii=False).replace("</", "<\\/")
    return f"naparenaData({jsontext.dumps(name)},{text});\n".encode()


def export(catalogue: Catalogue, folder: Path) -> int:
    """Write every data file into `folder` (the static export); their total size in bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for name in catalogue.names():
        body = data_script(name, catalogue.data(name))
        (folder / f"{name}.js").write_bytes(body)
        total += len(body)
    return total


# --- links from the head-to-head tables ---------------------------------------------------

def _chips(chips: tuple[int, ...], seats: list[int]) -> float:
    """A bot's chips in a hand: over its seats' mean when the table repeats it, as the standings count it."""
    return sum(chips[s] for s in seats) / len(seats)


def widest_hands(catalogue: Catalogue, variant: str, a: str, b: str) -> list[tuple[int, int, float]]:
    """(match, hand, a's chips − b's) of the hands of `variant` both played where that
    difference was largest either way, largest first."""
    found = []
    for e in catalogue.entries:
        if e.variant != variant:
            continue
        sa = [s for s, alias in enumerate(e.seats) if alias == a]
        sb = [s for s, alias in enumerate(e.seats) if alias == b]
        if not sa or not sb:
            continue
        for h, chips in zip(e.hands, e.chips):
            diff = _chips(chips, sa) - _chips(chips, sb)
            found.append((abs(diff), e.index, h[0], diff))
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    return [(match, hand, diff) for _, match, hand, diff in found[:LINKS_PER_PAIR]]


def pair_links(catalogue: Catalogue, variant: str, a: str, b: str) -> str:
    """For a head-to-head row: the hands of `variant` where a and b differed most, and all their hands."""
    links = [f"<a href='#{hand_id(m, h)}' class='board'>m{m} h{h} ({d:+g})</a>" for m, h, d in
             widest_hands(catalogue, variant, a, b)]
    query = "&amp;".join(f"{k}={quote(v, safe='')}" for k, v in (("variant", variant), ("bot", a), ("with", b)))
    if links:
        links.append(f"<a href='#hands?{query}' class='pair'>all their hands</a>")
    return " ".join(links) or "—"


# --- the page's part ---------------------------------------------------------------------

def section(catalogue: Catalogue, base: str) -> str:
    """The viewer's controls and its script; its data comes from `base` (a folder URL)."""
    bots = sorted({alias for e in catalogue.entries for alias in e.seats})
    variants = sorted({e.variant for e in catalogue.entries})
    opt = "".join(f"<option>{escape(b)}</option>" for b in bots)
    config = jsontext.dumps({"base": base}).replace("</", "<\\/")
    return (f"<h2 id='viewer'>Hand viewer</h2><p class='note'>Every hand of the {len(catalogue.entries):,} "
            f"matches ({catalogue.hands:,} hands), loaded a match at a time: the deal face up, every decision "
            "(peeps, exchanges, purchases, Sir Garnet, the floater), each card by its player, the tricks, "
            "faults and the settlement. ← and → step, space plays and pauses; a link from a head-to-head "
            "table opens its hand.</p>"
            "<form id='v-filter' class='v-row'>"
            f"<label>bot <select id='f-bot'><option value=''>any</option>{opt}</select></label>"
            f"<label>with <select id='f-with'><option value=''>any</option>{opt}</select></label>"
            "<label>variant <select id='f-variant'><option value=''>any</option>"
            + "".join(f"<option>{escape(v)}</option>" for v in variants) + "</select></label>"
            "<label>contract <select id='f-contract'><option value=''>any</option></select></label>"
            "<label>bidder <select id='f-role'><option value=''>anyone</option><option value='bot'>the bot"
            "</option></select></label>"
            "<label>result <select id='f-result'><option value=''>any</option><option value='made'>made</option>"
            "<option value='lost'>beaten</option><option value='passed'>passed out</option></select></label>"
            "<label><input type='checkbox' id='f-faults'> faults</label>"
            "<button id='f-go' type='submit'>find</button></form>"
            "<div id='v-found' class='v-found'></div>"
            "<p class='v-row'><label>match <select id='v-match'></select></label> "
            "<label>hand <select id='v-hand'></select></label> "
            "<button id='v-first' type='button'>« first</button><button id='v-back' type='button'>◀ back</button>"
            "<button id='v-next' type='button'>next ▶</button><button id='v-last' type='button'>last »</button>"
            "<button id='v-play' type='button'>▶ play</button>"
            "<label>step <select id='v-speed'><option value='400'>0.4 s</option><option value='900' selected>"
            "0.9 s</option><option value='1800'>1.8 s</option></select></label>"
            "<label>pause after a trick <select id='v-pause'><option value='0'>none</option>"
            "<option value='1500' selected>1.5 s</option><option value='3000'>3 s</option></select></label>"
            "<button id='v-nap' type='button'>next Nap bid »</button></p>"
            "<p id='v-step' class='meta' aria-live='polite'></p>"
            "<div id='v-table'></div><pre id='v-log'></pre>"
            f"<script type='application/json' id='v-config'>{config}</script>"
            f"<script>{asset('table.js')}</script><script>{asset('viewer.js')}</script>")


CSS = """
.v-row { display: flex; flex-wrap: wrap; gap: .35em .7em; align-items: center; }
.v-row select, .v-row button { font-size: .95em; max-width: 100%; }
.v-row label { max-width: 100%; }
.v-found { display: flex; flex-wrap: wrap; gap: .3em; margin: .4em 0; font-size: .9em; }
.v-found button { font-size: .9em; }
#v-table { max-width: 760px; margin: .5em 0; }
#v-log { background: #f6f6f6; padding: .6em; white-space: pre-wrap; max-height: 16em; overflow: auto; }
a.board, a.pair { margin-right: .4em; }
button:focus-visible, select:focus-visible, a:focus-visible { outline: 3px solid #e90; outline-offset: 2px; }
"""
