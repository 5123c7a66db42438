"""Generates docs from the code's data, so they cannot drift: docs/VARIANTS.md (every
option of every variant), docs/BOTS.md (bids, stakes, packs, the view, the hooks'
payloads) and the bot tables in README.md.

`python -m naparena.tools.docs` rewrites all three; a test checks they are current.
"""

from __future__ import annotations

import sys
from pathlib import Path

from naparena.game.cards import name as card_name
from naparena.game.cards import pack
from naparena.game.rules import OPTION_NAMES, TRICKS_NEEDED, VARIANTS, make_rules, stakes
from naparena.game.view import _Fields

INTRO = """# Variants

Generated from `naparena/game/rules.py` by `python -m naparena.tools.docs`
(a test fails when this file is out of date). `naparena variants NAME` prints the same.
Sources: `000` Wikipedia (modern), `001` pagat.com, `002` older Wikipedia,
`003` W. H. Peel, *Round Games with Cards*, `004` a Hoyle-style account. A value marked
*interpretation* is a choice RULES.md (or naparena, where RULES.md is silent) made
where the sources are silent or disagree.
"""


def _value(v) -> str:
    if isinstance(v, tuple):
        return ", ".join(v)
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("interpretation", "*interpretation*")


def variants_markdown() -> str:
    lines = [INTRO]
    for v in VARIANTS.values():
        lines += [f"## `{v.name}`", "", v.description, "", "| option | value | source |", "|---|---|---|"]
        for option in OPTION_NAMES:
            lines.append(f"| `{option}` | {_value(v.options[option])} | {_cell(v.sources.get(option, ''))} |")
        lines.append("")
    return "\n".join(lines)


# --- for bot authors ----------------------------------------------------------------

#: What each View field holds (its type comes from the code). A test checks every field is here.
VIEW_FIELDS = {
    "kind": "the decision asked for: `bid`, `play`, `peep`, … (None outside the seat's turn)",
    "seat": "your seat, 0 to players − 1",
    "legal": "the legal answers, in the type the decision wants: bid names (str), cards (int), "
             "suits (int), True/False, tuples of cards, or None",
    "hand": "your cards, sorted (ints: suit × 13 + rank)",
    "trumps": "the trump suit (0 clubs, 1 diamonds, 2 hearts, 3 spades), None before the first "
              "lead or in a no-trumps misère",
    "trick": "the current trick so far: (seat, card) in playing order",
    "tricks": "completed tricks: (leader, ((seat, card), …), winner)",
    "won": "tricks won so far, per seat",
    "seen": "cards you saw privately: the peep card, the floater, your own discards",
    "bids": "every bid so far in bidding order, passes included: (seat, bid)",
    "bidder": "the highest bidder so far; after the bidding, the bidder",
    "contract": "the highest bid so far; after the bidding, the contract",
    "rules": "the variant's `Rules` (every option of docs/VARIANTS.md as an attribute)",
    "players": "seats at the table",
    "dealer": "the dealer's seat",
    "active": "the seats holding cards, in bidding order (a dealer may sit out)",
    "hand_no": "the hand's number in the match, from 0",
    "chips": "every seat's chip total now, this hand's antes and fees included",
    "kitty": "chips in the kitty",
    "peeps": "the seats that paid to peep or to see the floater",
    "exchanges": "(seat, cards exchanged) in Purchase or Écarté Nap",
    "garnet_taker": "the seat that took up the Sir Garnet hand, or None",
}
VIEW_PROPERTIES = {
    "led": ("int | None", "the suit led to the current trick; None when you lead"),
    "pack": ("tuple[int, ...]", "every card of the pack this hand was dealt from, sorted: a reduced "
             "pack holds the top ranks of each suit"),
}

#: The dict `start_match(info)` receives.
MATCH_INFO = {
    "match": "the match's index in the tournament's schedule",
    "seat": "your seat for the whole match",
    "seats": "every seat's alias, by seat",
    "players": "seats at the table",
    "rules": "the variant's `Rules`",
    "hands": "hands in the match",
}

#: The dicts `observe(event)` receives, by `type`: their other keys.
EVENTS = {
    "bid": ({"seat": "who bid", "bid": "the bid or `pass`"}, "a seat bid or passed"),
    "peep": ({"seat": "who paid"}, "a seat paid to peep (or to see the floater)"),
    "exchange": ({"seat": "who exchanged", "cards": "how many cards (not which)"},
                 "a seat exchanged cards in Purchase or Écarté Nap"),
    "garnet": ({"seat": "who took it up"}, "a seat took up the Sir Garnet hand"),
    "trumps": ({"seat": "the bidder", "suit": "the suit named"}, "floater Wellington: the bidder named trumps"),
    "play": ({"seat": "who played", "card": "the card"}, "a card was played"),
    "trick": ({"leader": "who led", "winner": "who won it"}, "a trick was completed"),
    "settle": ({"…": "every key of the public hand record (as `end_hand` gets it)"}, "the hand is over"),
}

#: The keys of the public hand record `end_hand(record)` gets: the log's hand entry
#: without the deal, the extra cards and the private decisions; faults by kind only.
RECORD_KEYS = {
    "n": "the hand's number", "dealer": "the dealer's seat", "bids": "(seat, bid) in order",
    "bidder": "the bidder, or None if all passed", "contract": "the contract", "trumps": "the trump suit",
    "tricks": "(leader, ((seat, card), …), winner)", "trick": "an unfinished trick (only if the hand "
    "ended early)", "revoke": "the revoking seat (only after a revoke)", "faults": "(decision, seat, kind, "
    "fault kind)", "result": "`made`, `lost`, `revoke` or `passed`", "chips": "the hand's chip change per "
    "seat", "kitty": "the kitty after the hand",
}

_SUITS = "clubs, diamonds, hearts, spades"


def _tricks(bid: str) -> str:
    base = bid.split("-", 1)[0]
    need = TRICKS_NEEDED[base]
    return "none (lose every trick)" if need == 0 else str(need)


def bids_table() -> list[str]:
    """One row per named variant: its bids, low to high, with the tricks each needs."""
    lines = ["| variant | bids, low to high (tricks needed; 0 = lose every trick) |", "|---|---|"]
    for v in VARIANTS.values():
        rules = make_rules(v.name)
        shown = [f"`{b}` {TRICKS_NEEDED[b.split('-', 1)[0]]}" for b in rules.ladder if b in rules.bids]
        lines.append(f"| `{v.name}` | {', '.join(shown)} |")
    return lines


def view_table() -> list[str]:
    lines = ["| field | type | holds |", "|---|---|---|"]
    for field in _Fields._fields:
        hint = _Fields.__annotations__[field]
        kind = getattr(hint, "__forward_arg__", hint)
        lines.append(f"| `{field}` | {_code(kind)} | {VIEW_FIELDS[field]} |")
    for prop, (kind, text) in VIEW_PROPERTIES.items():
        lines.append(f"| `{prop}` (property) | {_code(kind)} | {text} |")
    return lines


def _code(text: str) -> str:
    return "`" + str(text).replace("|", "\\|") + "`"  # a bare | would end the table cell


def _stakes_cell(rules, bid: str) -> str:
    base = bid.split("-", 1)[0]
    try:
        win, loss = stakes(rules, base)
    except KeyError:
        return "—"
    return f"{win} / {loss}"


def bots_markdown() -> str:
    """docs/BOTS.md: everything a bot sees and answers, from the code's own data."""
    out = ["# Writing a bot: the reference", "",
           "Generated by `python -m naparena.tools.docs` from the code (a test fails when it is out "
           "of date). README.md shows how to write, test and install a bot; this is what it sees.", "",
           "## Bids", "",
           "A bid's name is its answer to `bid(view)`; `pass` is always legal. Tricks needed: out "
           "of 5 (7 in `seven-card`); 0 means a misère, which the bidder must lose every trick of. "
           "Stakes are chips per opponent, won / lost; in `floater` a lost bid pays the stake × "
           "players into the kitty instead, and doubling options double Nap and above. `-with` "
           "and `-without` bids of `floater` take or leave the floater card.", ""]
    for v in VARIANTS.values():
        rules = make_rules(v.name)
        out += [f"### `{v.name}`", "", "| bid | tricks needed | stakes (win / loss) |", "|---|---|---|"]
        out += [f"| `{b}` | {_tricks(b)} | {_stakes_cell(rules, b)} |" for b in rules.ladder if b in rules.bids]
        out.append("")
    out += ["## The pack", "",
            "Cards are ints `suit × 13 + rank`: suits 0–3 are " + _SUITS + "; ranks 0–12 are 2 … A. "
            "A reduced pack holds the top ranks of each suit; `view.pack` gives the pack of the "
            "hand being played. Pack sizes by seats at the table (— = the variant cannot deal "
            "that table):", "",
            "| variant | " + " | ".join(f"{n} seats" for n in range(2, 8)) + " |",
            "|---|" + "---|" * 6]
    for v in VARIANTS.values():
        rules = make_rules(v.name)
        cells = []
        for n in range(2, 8):
            try:
                rules.check_players(n)
            except Exception:
                cells.append("—")
                continue
            size = rules.pack_size(n)
            cells.append(f"{size} ({card_name(pack(size)[0])[:-1]} up)")
        out.append(f"| `{v.name}` | " + " | ".join(cells) + " |")
    out += ["", "## The view", "", "`naparena.View`, an immutable tuple with named fields:", ""]
    out += view_table()
    out += ["", "## Hooks", "", "`start_match(info)`: `info` is a dict:", "",
            "| key | holds |", "|---|---|"]
    out += [f"| `{k}` | {t} |" for k, t in MATCH_INFO.items()]
    out += ["", "`observe(event)` (only if your bot defines it): `event` is a dict with a `type`:", "",
            "| type | when | other keys |", "|---|---|---|"]
    for kind, (keys, when) in EVENTS.items():
        out.append(f"| `{kind}` | {when} | " + "; ".join(f"`{k}`: {t}" for k, t in keys.items()) + " |")
    out += ["", "`end_hand(record)`: the hand's public record, a dict:", "", "| key | holds |", "|---|---|"]
    out += [f"| `{k}` | {t} |" for k, t in RECORD_KEYS.items()]
    out.append("")
    return "\n".join(out)


README_START = "<!-- generated by naparena.tools.docs: bot tables -->"
README_END = "<!-- end of generated bot tables -->"


def readme_block() -> str:
    """The bot tables README.md carries between its markers."""
    lines = [README_START, "", "Bids of each named variant (tricks needed after each; "
             "[docs/BOTS.md](docs/BOTS.md) adds the stakes, the packs and the hooks' payloads):", ""]
    lines += bids_table()
    lines += ["", "The view's fields (`naparena.View`):", ""]
    lines += view_table()
    lines += ["", README_END]
    return "\n".join(lines)


def with_readme_block(readme: str) -> str:
    head, _, rest = readme.partition(README_START)
    _, _, tail = rest.partition(README_END)
    return head + readme_block() + tail


def write_all(root: Path) -> None:
    (root / "docs" / "VARIANTS.md").write_text(variants_markdown())
    (root / "docs" / "BOTS.md").write_text(bots_markdown())
    readme = root / "README.md"
    readme.write_text(with_readme_block(readme.read_text()))


if __name__ == "__main__":
    write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd())
