"""Generates docs from the code's data, so they cannot drift: docs/VARIANTS.md (every
option of every variant), docs/RULES.md (the rules naparena plays, with every
interpretation), docs/BOTS.md (bids, stakes, packs, the view, the hooks' payloads) and the
bot tables of docs/reference/bot-interface.md.

`naparena docs` (or `python -m naparena.tools.docs`, without the command reference)
rewrites them; a test checks they are current.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from naparena.game.cards import RANK_NAMES, pack
from naparena.game.cards import name as card_name
from naparena.game.rules import (
    AUTO_PACK,
    CHOICES,
    FLOATER_LADDER,
    FLOATER_PACK,
    OPTION_NAMES,
    PAYOUTS,
    SEVEN_LADDER,
    STANDARD_LADDER,
    TRICKS_NEEDED,
    VARIANTS,
    Rules,
    make_rules,
    stakes,
)
from naparena.game.view import _Fields

INTRO = """# Variants

Generated from `naparena/game/rules.py` by `python -m naparena.tools.docs`
(a test fails when this file is out of date). `naparena variants NAME` prints the same.
Sources: `000` Wikipedia (modern), `001` pagat.com, `002` older Wikipedia,
`003` W. H. Peel, *Round Games with Cards*, `004` a Hoyle-style account. A value marked
*interpretation* is a choice naparena made where the sources are silent or disagree;
`docs/RULES.md` lists them all.
"""


def _value(v: object) -> str:
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


# Choices naparena makes where the sources leave one open, beyond those the variant table
# marks (those are added from it). Each is also where the code makes it, as a comment.
INTERPRETATIONS = (
    "The first dealer is drawn with the match's seeded random generator.",
    "A passed-out deal counts as one of the match's hands.",
    "`pack = \"auto\"` at 6 and 7 active players uses 36 and 40 cards, and at 2 players 20 cards"
    " (the sources give no size for these tables).",
    "The floater's pack table counts active players: if a floater variant is set to let the dealer"
    " sit out, the pack is the one for the players who hold cards.",
    "Under `shuffle = \"after_nap\"` the pack is gathered as: the finished tricks in play order, the"
    " unfinished trick, the cards still held (seat by seat), the cards put out face down, the peep"
    " card or floater if still out, the Sir Garnet hand if untaken, then the undealt stock. Each hand"
    " dealt from a gathered pack logs that order (`gathered`) and the cut.",
    "In a duplicate run (`duplicate = true`) the shuffle-after-Nap variants (`pagat`, `pagat-full`,"
    " `purchase`, `floater`) are not gathered and cut: every hand is shuffled and cut afresh, board"
    " by board, from its own seed, hashed from the deal seed and the hand's number (`\"boards\": true`"
    " in the match specs, `duplicate_boards` in the manifest). Why: gathering takes the cards in the"
    " order they were played, so each seating's later deals would follow its own play, and the"
    " seatings of a deal set would share only their first deal, which is what duplicate play exists"
    " to compare. This is the largest departure from the sources; without duplicate, gather-and-cut"
    " stays as written above.",
    "Seven-card hands are dealt in the 3-2 pattern repeated and cut short at seven (3, 2, 2).",
    "A purchase stock must hold at least five cards, so that one player can exchange a whole hand.",
    "Écarté Nap is allowed with five to seven players, as long as the pack holds the stock, but"
    " naparena warns: the source recommends at most four.",
    "The pool of peep, purchase and écarté goes to the next bidder who makes Nap or above on the"
    " game's ladder (so also sedan, and seven-card mis, six and seven); the same contracts, made,"
    " bring a shuffle under `shuffle = \"after_nap\"`.",
    "Chips left in the kitty when a match ends stay there (`kitty_at_end = \"carried\"`) and are"
    " reported with the standings; `\"split\"` shares them equally, the remainder carried.",
    "A revoking defender pays the bidder what every opponent would have paid; the kitty stays where"
    " it is (only a bid actually made takes it).",
    "With a floater, a revoking bidder pays into the kitty, as a lost floater bid does (stake times"
    " players), not each opponent.",
    "Floater Wellington's \"lowest non-trump\" lead is the lowest rank outside trumps; equal ranks in"
    " different suits are all allowed. A bidder may name any suit that leaves him a card of another"
    " suit.",
    "Sir Garnet is offered only while Nap can still be bid, and a player who takes it up makes the"
    " Nap bid at once.",
    "Only one extra-card feature (peep, purchase, Sir Garnet, floater) per variant.",
    "Sedan ranks above every other bid, stakes 5 a player, and is played with trumps: the suit of the"
    " first card led (`sedan_trumps = true`; `false` plays it without trumps).",
    "Under `all_pass = \"eldest_one\"` the player on the dealer's left stands for one trick.",
)


def _ladder(ladder: Iterable[str]) -> str:
    return " < ".join(f"`{b}`" for b in ladder)


def _interpretations() -> list[str]:
    found = list(INTERPRETATIONS)
    for v in VARIANTS.values():
        for option, source in v.sources.items():
            if "interpretation" in source:
                line = f"`{v.name}`, `{option}`: {source}."
                if line not in found:
                    found.append(line)
    return found


def _payout_table() -> list[str]:
    bids = [b for b in dict.fromkeys(STANDARD_LADDER + SEVEN_LADDER + ("bonaparte",))
            if any(b in table for table in PAYOUTS.values())]
    lines = ["| bid | tricks | " + " | ".join(f"`{t}`" for t in PAYOUTS) + " |",
             "|---|---|" + "---|" * len(PAYOUTS)]
    for b in bids:
        need = TRICKS_NEEDED[b]
        cells = [f"{w} / {lost}" if (w, lost) != (None, None) else "–"
                 for w, lost in (PAYOUTS[t].get(b, (None, None)) for t in PAYOUTS)]
        lines.append(f"| `{b}` | {'none' if need == 0 else need} | " + " | ".join(cells) + " |")
    return lines


def _options_table() -> list[str]:
    default = Rules()
    lines = ["| option | default | allowed |", "|---|---|---|"]
    for option in OPTION_NAMES:
        value = getattr(default, option)
        if option in CHOICES:
            allowed = ", ".join(f"`{c}`" for c in CHOICES[option])
        elif option == "pack":
            allowed = "`auto` or " + ", ".join(str(n) for n in (20, 24, 28, 32, 36, 40, 52))
        elif option == "bids":
            allowed = "bids of the game's ladder (below)"
        elif option == "dealer_ante":
            allowed = "0 to 1000"
        else:
            allowed = "`true`, `false`"
        lines.append(f"| `{option}` | {_value(value) or '–'} | {allowed} |")
    return lines


def _pack_table() -> list[str]:
    lowest = {size: RANK_NAMES[13 - size // 4] for size in (20, 24, 28, 32, 36, 40, 52)}
    lines = ["| active players | `auto` pack | floater pack |", "|---|---|---|"]
    for players in range(2, 8):
        auto = AUTO_PACK.get(players, 52)
        floater = FLOATER_PACK.get(players)
        shown = f"{floater} (A–{lowest[floater]})" if floater else "–"
        lines.append(f"| {players} | {auto} (A–{lowest[auto]}) | {shown} |")
    return lines


RULES_INTRO = """# The rules naparena plays

Generated by `python -m naparena.tools.docs` from the rules data in
`naparena/game/rules.py` (a test fails when this file is out of date). This is the
reference for what the engine does; `docs/VARIANTS.md` gives every option of every named
variant with its source. Sources are named by number: `000` Wikipedia (modern), `001`
pagat.com (with Nap with a floater), `002` older Wikipedia, `003` W. H. Peel, *Round
Games with Cards*, `004` a Hoyle-style account. Every rule on which they differ is a
rules option; a variant is a named set of options.
"""

RULES_BODY = """## 1. Cards and players

A French pack; in every suit the cards rank A K Q J 10 9 8 7 6 5 4 3 2, ace high. A
smaller pack keeps the top ranks of every suit. Two to seven players sit at a table (a
floater game three to seven). With `dealer_sits_out` the dealer of a six-player table
(or of a five- and six-player one) gets no cards and does not bid, but pays and is paid
like any opponent. A variant whose pack cannot hold every hand plus its extra cards (peep
card, floater, Sir Garnet hand, purchase stock) is refused before any play.

{packs}

## 2. Dealing

The first dealer is drawn at random; the deal then passes to the left every hand. The
pack is shuffled before every deal (`shuffle = "every_hand"`) or only before the first
deal and after a bid of Nap or above has been won (`"after_nap"`): otherwise the cards
are gathered in a fixed order and only cut. The player on the dealer's right cuts,
leaving at least four cards in each packet. Cards go out clockwise from the dealer's
left: three then two (`deal = "3-2"`), two then three (`"2-3"`), or one at a time
(`"1"`). Hands are five cards, seven in Seven-card Nap. Any peep card, floater, Sir
Garnet hand and purchase stock come off the pack after the hands, in that order.

## 3. Bidding

Bidding starts on the dealer's left and goes once round the table; each player with
cards either passes or bids higher than the bid so far, and a bid stands. The ladders,
lowest first:

- five cards: {standard}
- seven cards: {seven}
- with a floater: {floater}

A variant enables some of its ladder's bids (`bids`). Wellington may only be bid over a
Nap, and Blücher only over a Wellington. Misère (`mis`) is a contract to take no trick;
sedan is one too, and ranks above every other bid. When everyone passes the hand is
void and the next dealer deals (`all_pass = "redeal"`), or the player on the dealer's
left must play for one trick (`"eldest_one"`).

## 4. Play

The bidder leads to the first trick, and that card's suit is trumps for the hand. In
misère there are no trumps unless `misere_trumps` is set; sedan keeps trumps unless
`sedan_trumps` is off. Play goes clockwise; a player must follow the suit led when able
and may otherwise play any card, with no duty to win the trick or to trump. The highest
trump wins a trick, or else the highest card of the suit led, and the winner leads next.
Under `wellington_lead = "lowest_trump"` the Wellington bidder must lead the lowest card
of the suit he leads. With `stop_when_decided` the hand ends as soon as the bidder has
made the bid or can no longer make it; the chips are the same either way.

## 5. Settlement

Every seat starts a match with the same stack, and chips only move between the players
and the kitty, so their total never changes. A bidder who makes the bid is paid the win
stake by every opponent (extra tricks earn nothing); one who fails pays each opponent
the loss stake. A dealer sitting out pays and is paid as an opponent. Stakes per
opponent, win / loss (`payouts`):

{payouts}

`doubling = "double_big_wins"` doubles the win stake of Nap, Wellington and Blücher;
`"double_big_both"` doubles their loss stake too. With a floater the loss is paid into
the kitty, not to the players: the loss stake times the number of players.

A **revoke** (not following suit when able) ends the hand at once. A revoking bidder
pays as if the bid were lost; a revoking opponent pays the bidder the whole amount the
bidder would have collected from every opponent, and the others pay nothing. In
naparena an illegal card from a bot is a revoke, and every other failure (an illegal
answer, an exception, a time-out, a crash) has a fixed default
([when a bot misbehaves](reference/bot-interface.md#when-a-bot-misbehaves)), so no bot
can break the chip totals.

## 6. The kitty

Some variants keep chips on the table: `dealer_ante` is paid in by each dealer, the
floater game has every player ante 1 before each deal, and peeps and purchases are paid
in. A bid of Nap or above that is made takes the kitty. At the end of a match the kitty
is carried (`kitty_at_end = "carried"`, reported with the standings) or shared equally
(`"split"`).

## 7. Extra decisions

- **Peep Nap** (`peep`): one card is dealt face down. Before bidding, each player may pay
  1 to the kitty to look at it privately; that he looked is public. A bidder who looked
  may then swap one of his cards for it before leading.
- **Purchase Nap** and **Écarté Nap** (`purchase`): before bidding, each player in turn
  may throw out cards and take as many from the top of the stock: for 1 whatever the
  number (Purchase), or 1 per card, at most five (Écarté).
- **Sir Garnet** (`sir_garnet`): a second hand of five lies face down. A player may take
  it up on his turn to bid, keep five of the ten cards, put five out face down, and must
  then bid Nap.
- **Seven-card Nap** (`hand_size = 7`): seven cards each, bids three, four, nap, mis, six,
  seven (mis above Nap); no peep, exchange or extra hand.
- **Sedan**: a bid to take no trick, above every other bid, with trumps set by the first
  card (see §4).
- **Nap with a floater** (`floater`): everyone antes 1; one extra card, the floater, is
  dealt face down and a player may pay 1 more to see it before bidding. Each bid is made
  with or without the floater, *without* ranking just above the same bid *with*. A bidder
  who won *with* takes the floater and discards a card. Bonaparte (five tricks) must lead
  his lowest card of the suit he leads; a Wellington bidder names trumps and leads his
  lowest card outside them. A made bid of Nap or above also takes the kitty.

## 8. Every rules option

{options}

## 9. Named variants

{variants}

## 10. Interpretations

Where the sources are silent or disagree, naparena chooses; every such choice is here.

{interpretations}

## 11. What every hand must satisfy

Every card is in exactly one place and none is played twice; every card follows suit
when it can, or is a revoke settled as one; tricks are won as §4 says and the bidder's
tricks decide the result; the chips of the players and the kitty add up to the same
total after every hand; and the same configuration and seed give the same logs for any
number of workers and any order in which matches finish. A hand's log entry holds what
re-deals it: the cut, the gathered pack when it was not shuffled, the stock and the
cards bought in a purchase, the Sir Garnet hand in dealt order, and every answer given.
"""


def rules_markdown() -> str:
    variants = "\n".join(f"- `{v.name}`: {v.description}." for v in VARIANTS.values())
    body = RULES_BODY.format(
        packs="\n".join(_pack_table()), standard=_ladder(STANDARD_LADDER), seven=_ladder(SEVEN_LADDER),
        floater=_ladder(FLOATER_LADDER), payouts="\n".join(_payout_table()),
        options="\n".join(_options_table()), variants=variants,
        interpretations="\n".join(f"- {line}" for line in _interpretations()))
    return RULES_INTRO + "\n" + body


VIEW_FIELDS = {
    "kind": "the decision asked for: `bid`, `play`, `peep`, … (None outside the seat's turn)",
    "seat": "your seat, 0 to players − 1",
    "legal": "the legal answers, in the type the decision wants: bid names (str), cards (int), "
             "suits (int), True/False, tuples of cards, or None (`View[str]`, `View[int]`, … say which "
             "to a type checker; a bare `View` is any)",
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
    "peep_card": ("int | None", "the peep card (or the floater) you paid to see before bidding; None if you did not"),
}

#: The dict `start_match(info)` receives.
MATCH_INFO = {
    "match": "the match's index in the tournament's schedule",
    "seat": "your seat for the whole match",
    "seats": "every seat's alias, by seat",
    "players": "seats at the table",
    "rules": "the variant's `Rules`",
    "hands": "hands in the match",
    "timeout": "seconds allowed for each decision (the tournament's `timeout`)",
    "first_hand": "0, or the hand a match resumed from its checkpoint goes on from: the bot is new, "
                  "its `rng` as it was then; other state it kept across hands starts afresh",
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
        kind = str(getattr(hint, "__forward_arg__", hint)).replace("Kind", "str")  # the kinds are listed
        lines.append(f"| `{field}` | {_code(kind)} | {VIEW_FIELDS[field]} |")
    for prop, (kind, text) in VIEW_PROPERTIES.items():
        lines.append(f"| `{prop}` (property) | {_code(kind)} | {text} |")
    return lines


def _code(text: object) -> str:
    return "`" + str(text).replace("|", "\\|") + "`"  # a bare | would end the table cell


def _stakes_cell(rules: Rules, bid: str) -> str:
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
           "of date). [Your first bot](tutorials/first-bot.md) shows how to write, test and install a bot; "
           "this is what it sees.", "",
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
    out += ["", "## Hooks", "", "`start_match(info)`: `info` is a dict (`naparena.bots.bot.MatchInfo`):", "",
            "| key | holds |", "|---|---|"]
    out += [f"| `{k}` | {t} |" for k, t in MATCH_INFO.items()]
    out += ["", "`observe(event)` (only if your bot defines it): `event` is a dict with a `type` "
            "(`naparena.bots.bot.Event`):", "",
            "| type | when | other keys |", "|---|---|---|"]
    for kind, (keys, when) in EVENTS.items():
        out.append(f"| `{kind}` | {when} | " + "; ".join(f"`{k}`: {t}" for k, t in keys.items()) + " |")
    out += ["", "`end_hand(record)`: the hand's public record, a dict (`naparena.bots.bot.HandRecord`):", "",
            "| key | holds |", "|---|---|"]
    out += [f"| `{k}` | {t} |" for k, t in RECORD_KEYS.items()]
    out.append("")
    return "\n".join(out)


#: The hand-written page that carries the generated bot tables between its markers.
BLOCK_PAGE = "docs/reference/bot-interface.md"
README_START = "<!-- generated by naparena.tools.docs: bot tables -->"
README_END = "<!-- end of generated bot tables -->"


def readme_block() -> str:
    """The bot tables BLOCK_PAGE carries between its markers."""
    lines = [README_START, "", "Bids of each named variant (tricks needed after each; "
             "[the bot reference](../BOTS.md) adds the stakes, the packs and the hooks' payloads):", ""]
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
    (root / "docs" / "RULES.md").write_text(rules_markdown())
    (root / "docs" / "BOTS.md").write_text(bots_markdown())
    page = root / BLOCK_PAGE
    page.write_text(with_readme_block(page.read_text()))


if __name__ == "__main__":
    write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd())
