"""The person's side of the table: what the seat protocol has told them so far, the
screen that shows it, and their typed answers turned into legal ones.

Pure: no terminal, no socket. It reads the protocol's messages as plain JSON objects by
field name (a field it does not know is ignored, a missing one shows as unknown), so a
later protocol that adds fields to the view changes nothing here. The terminal and the
web page both draw from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from naparena.game.cards import RANK_NAMES, SUIT_LETTERS, parse
from naparena.game.rules import MISERE_BIDS, TRICKS_NEEDED, Rules, stakes

SUIT_SYMBOLS = "♣♦♥♠"
SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")

ASKS = {
    "bid": "bid (or pass)",
    "play": "play a card",
    "peep": "pay 1 chip to peep at the top card of the stock?",
    "floater_peep": "pay 1 chip to see the floater?",
    "garnet": "take up Sir Garnet (the extra hand)? You must then bid Nap",
    "garnet_discard": "throw out 5 cards after taking up Sir Garnet",
    "exchange": "throw out cards to buy as many new ones (none to stand)",
    "peep_exchange": "swap a card for the peep card, or keep your hand",
    "floater_discard": "discard a card for the floater",
    "trumps": "choose trumps",
}
# Above this many choices, a list of numbers helps nobody: the person types the cards.
MAX_LISTED = 16


def card_text(card: Any) -> str:
    """'Q♥': rank and suit symbol; an unknown value as it came."""
    if isinstance(card, int) and 0 <= card < 52:
        return RANK_NAMES[card % 13] + SUIT_SYMBOLS[card // 13]
    return str(card)


def cards_text(cards: Any) -> str:
    return " ".join(card_text(c) for c in cards or ()) or "—"


def suit_text(suit: Any) -> str:
    if isinstance(suit, int) and 0 <= suit < 4:
        return f"{SUIT_SYMBOLS[suit]} {SUIT_WORDS[suit]}"
    return "none" if suit is None else str(suit)


def choice_text(kind: str | None, value: Any) -> str:
    """One legal answer as the person reads it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if kind == "trumps":
        return suit_text(value)
    if kind == "peep_exchange" and value is None:
        return "keep"
    if isinstance(value, list | tuple):
        return cards_text(value) if value else "none"
    if isinstance(value, int):
        return card_text(value)
    return str(value)


def _plain(value: Any) -> Any:
    """JSON arrays as tuples, so an answer compares with a legal value at any depth."""
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    return value


# A card as the screen shows it (Q♥) reads like its name (QH).
_SYMBOL_LETTERS = str.maketrans(dict(zip(SUIT_SYMBOLS, SUIT_LETTERS)))


def read_answer(kind: str | None, legal: list[Any], text: str,
                view: dict[str, Any] | None = None) -> tuple[Any, str | None]:
    """(the legal answer `text` names, None) or (None, why it names none); with the
    `view`, a refused card says which rule refuses it."""
    text = text.strip()
    if kind != "trumps":
        text = text.translate(_SYMBOL_LETTERS)
    choices = [_plain(v) for v in legal]
    if not choices:
        return None, "there is nothing to choose"
    if text.isdigit():
        n = int(text)
        if 1 <= n <= len(choices):
            return legal[n - 1], None
        return None, f"{text} is not a choice: type 1 to {len(choices)}"
    word = text.lower()
    for value in choices:  # by its own words: a bid, yes/no, keep, a suit, none
        if word and word in _names(kind, value):
            return _original(legal, choices, value), None
    if kind in ("exchange", "garnet_discard"):
        return _read_cards(legal, choices, text)
    try:
        card = parse(text)
    except ValueError:
        return None, f"{text!r} is not one of the choices: type its number or its name (QH, 10s)"
    if card in choices:
        return _original(legal, choices, card), None
    why = refusal(view or {}, card)
    return None, f"{card_text(card)} is not a legal choice now" + (f": {why}" if why else "")


def refusal(view: dict[str, Any], card: int) -> str:
    """Why `card` may not be played at this decision, in the rules' words ('' if unknown)."""
    hand, legal = list(view.get("hand", ())), [c for c in view.get("legal", ()) if isinstance(c, int)]
    if view.get("kind") != "play":
        return ""
    if card not in hand:
        return "you do not hold it"
    trick = view.get("trick") or ()
    if trick:
        led = trick[0][1] // 13
        follow = [c for c in hand if c // 13 == led]
        if follow and card // 13 != led:
            return f"you must follow {SUIT_SYMBOLS[led]} {SUIT_WORDS[led]} while you hold {cards_text(follow)}"
        return ""
    if not view.get("tricks") and view.get("bidder") == view.get("seat") and view.get("contract"):
        contract, rules = str(view.get("contract")), view.get("rules") or {}
        base = contract.rsplit("-", 1)[0] if contract.endswith(("-with", "-without")) else contract
        if rules.get("floater") and base == "bonaparte":
            return "a Bonaparte bidder must lead his lowest trump to the first trick"
        if rules.get("floater") and base == "wellington":
            return "a Wellington bidder must lead his lowest non-trump to the first trick"
        if base == "wellington" and rules.get("wellington_lead") == "lowest_trump":
            return ("in this variant a Wellington bidder must lead the lowest card he holds of the suit he "
                    "leads to the first trick")
    return f"the rules allow only {cards_text(legal)} now" if legal else ""


def _original(legal: list[Any], choices: list[Any], value: Any) -> Any:
    return legal[choices.index(value)]


def _names(kind: str | None, value: Any) -> set[str]:
    if isinstance(value, bool):
        return {"y", "yes"} if value else {"n", "no"}
    if kind == "trumps" and isinstance(value, int) and 0 <= value < 4:
        return {SUIT_LETTERS[value].lower(), SUIT_WORDS[value], SUIT_SYMBOLS[value], suit_text(value)}
    if value is None:
        return {"keep", "none", "-"}
    if value == ():
        return {"none", "stand", "-"}
    if isinstance(value, str):
        return {value.lower()}
    return set()


def _read_cards(legal: list[Any], choices: list[Any], text: str) -> tuple[Any, str | None]:
    try:
        cards = tuple(sorted(parse(t) for t in text.replace(",", " ").split()))
    except ValueError as e:  # "none" is offered only where standing is legal (not to Sir Garnet's taker)
        return None, f"{e}: name the cards like QH 10S" + (", or type none" if () in choices else "")
    if cards in choices:
        return _original(legal, choices, cards), None
    sizes = sorted({len(c) for c in choices if isinstance(c, tuple)})
    return None, (f"{cards_text(cards) or 'none'} cannot be thrown out: "
                  f"name {' or '.join(map(str, sizes))} of your own cards")


def after_exchanges(record: dict[str, Any]) -> list[list[int]]:
    """Each seat's cards once the hand's exchanges are done (purchase, Écarté, the peep
    card, Sir Garnet's hand, the floater), from a full hand record."""
    held = [list(cards) for cards in record.get("deal", ())]
    bought = {seat: list(cards) for seat, cards in record.get("bought", ())}
    for seat, kind, answer in record.get("pre", ()):
        gone: list[Any] = []
        got: list[Any] = []
        if kind == "exchange":
            gone, got = list(answer or ()), bought.get(seat, [])
        elif kind == "peep_exchange" and answer is not None:
            gone, got = [answer], [record.get("peep_card")]
        elif kind == "garnet_discard":
            gone, got = list(answer or ()), list(record.get("garnet", ()))
        elif kind == "floater_discard":
            gone, got = [answer], [record.get("floater")]
        if seat < len(held) and (gone or got):
            held[seat] = sorted(c for c in held[seat] + [g for g in got if isinstance(g, int)] if c not in gone)
    return held


def decisions(record: dict[str, Any], seat: int) -> int:
    """The decisions `seat` was asked in a finished hand (each one of its turns at the table):
    its bids, its other decisions (peeps, exchanges, trumps…), its cards, and a card it
    revoked with (a fault, not in the tricks). Sir Garnet's taker is not asked its bid: it
    bids Nap."""
    took_garnet = any(d[0] == seat and d[1] == "garnet" and d[2] for d in record.get("pre", ()))
    asked = [s for s, _bid in record.get("bids", ()) if not (s == seat and took_garnet)]
    asked += [d[0] for d in record.get("pre", ())]
    asked += [s for _leader, plays, _winner in record.get("tricks", ()) for s, _card in plays]
    asked += [s for s, _card in record.get("trick", ())]
    asked += [f[1] for f in record.get("faults", ()) if f[2] == "play"]
    return asked.count(seat)


@dataclass
class Table:
    """Everything the seat has been told in this match, as the person may see it."""

    seat: int = 0
    seats: list[str] = field(default_factory=list)
    rules: dict[str, Any] = field(default_factory=dict)
    hands: int = 0
    match: int = 0
    view: dict[str, Any] = field(default_factory=dict)
    happened: list[str] = field(default_factory=list)   # this hand's public events, as lines
    finished: list[dict[str, Any]] = field(default_factory=list)  # hand records not yet shown
    won: list[int] = field(default_factory=list)        # chips won this match, per seat
    over: bool = False
    turn: int = 0  # the person's decisions so far this match: a new screen has a new number
    # Each hand's deal per seat, by hand number: from the checkpoint as the hand ends, or the log at the match's end.
    held: dict[int, list[Any]] = field(default_factory=dict)
    earlier: dict[str, int] = field(default_factory=dict)  # chips per alias in this run's earlier matches
    after: dict[int, list[Any]] = field(default_factory=dict)   # each hand's cards after the exchanges, where any
    ended: list[dict[str, Any]] = field(default_factory=list)  # each finished hand's last frame, not yet drawn

    def running(self) -> dict[str, int]:
        """Chips per bot over the whole run so far: earlier matches and this one."""
        totals = dict(self.earlier)
        for seat, chips in enumerate(self.won):
            if seat < len(self.seats):
                totals[self.seats[seat]] = totals.get(self.seats[seat], 0) + chips
        return totals

    def running_text(self) -> str:
        return "   ".join(f"{alias} {c:+d}" for alias, c in self.running().items())

    def feed(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "match":
            self.seat = message.get("seat", 0)
            self.seats = list(message.get("seats", []))
            self.rules = message.get("rules", {})
            self.hands = message.get("hands", 0)
            self.match = message.get("match", 0)
            self.won = [0] * len(self.seats)
        elif kind in ("decide", "hand_start"):
            self.view = message.get("view", {})
            self.turn += kind == "decide"
        elif kind == "event":
            line = self.event_text(message.get("event", {}))
            if line:
                self.happened.append(line)
        elif kind == "hand_end":
            record = message.get("record", {})
            for i, c in enumerate(record.get("chips", ())):
                if i < len(self.won):
                    self.won[i] += c
            self.finished.append(record)
            self.ended.append(self.end_frame(record))
            self.happened = []
        elif kind in ("match_end", "shutdown"):
            self.over = True

    def went_before(self, records: list[dict[str, Any]]) -> None:
        """The hands of this match played before it was resumed (its checkpoint's): their
        chips, the person's turns in them and what everybody held, as if seen at the time."""
        for record in records:
            for i, c in enumerate(record.get("chips", ())):
                if i < len(self.won):
                    self.won[i] += c
            self.turn += decisions(record, self.seat)
            n = record.get("n")
            if isinstance(n, int) and record.get("deal"):
                self.held[n], self.after[n] = record["deal"], after_exchanges(record)

    def logged(self, records: list[dict[str, Any]]) -> None:
        """The match's log, once booked: its hands' chips are the match's, whatever this
        table heard (the log is what the standings count)."""
        self.won = [0] * len(self.seats)
        for record in records:
            for i, c in enumerate(record.get("chips", ())):
                if i < len(self.won):
                    self.won[i] += c
            n = record.get("n")
            if isinstance(n, int):
                self.held[n], self.after[n] = record.get("deal", []), after_exchanges(record)

    def end_frame(self, record: dict[str, Any]) -> dict[str, Any]:
        """A finished hand as the table stood at its end, to draw it: its own header (not the
        next hand's), the last trick and who took it, the cards each seat had left (the
        person's own: those of its last decision in the hand, less what it played after)."""
        n, v = record.get("n"), self.view
        tricks = list(record.get("tricks") or ())
        plays = [p for _leader, trick, _winner in tricks for p in trick] + list(record.get("trick") or ())
        last, winner = (tricks[-1][1], tricks[-1][2]) if tricks else (list(record.get("trick") or ()), None)
        if record.get("trick"):  # a hand decided in the middle of a trick (a revoke): that trick
            last, winner = list(record["trick"]), None
        active = v.get("active") if v.get("hand_no") == n else None
        size = self.rules.get("hand_size", 5)
        held = [0 if active is not None and s not in active else max(size - sum(1 for p, _ in plays if p == s), 0)
                for s in range(len(self.seats))]
        mine = list(v.get("hand", ())) if v.get("hand_no") == n else []
        yours = [c for c in mine if c not in {c for p, c in plays if p == self.seat}]
        won = [0] * len(self.seats)
        for _leader, _trick, w in tricks:
            if isinstance(w, int) and 0 <= w < len(won):
                won[w] += 1
        return {"match": self.match, "hands": self.hands, "n": n, "dealer": record.get("dealer"),
                "contract": record.get("contract"), "bidder": record.get("bidder"), "trumps": record.get("trumps"),
                "kitty": record.get("kitty"), "result": record.get("result"), "chips": list(record.get("chips", ())),
                "won": list(self.won), "tricks": won, "trick": last, "winner": winner, "yours": yours, "held": held}

    def is_you(self, seat: Any) -> bool:
        return isinstance(seat, int) and 0 <= seat < len(self.seats) and self.seats[seat] == "you"

    def says(self, seat: Any, verb: str) -> str:
        """'heuristic bids', 'you bid': the verb agrees with its seat."""
        return f"{self.alias(seat)} {verb[:-1] if self.is_you(seat) and verb.endswith('s') else verb}"

    def alias(self, seat: Any) -> str:
        if isinstance(seat, int) and 0 <= seat < len(self.seats):
            alias = self.seats[seat]
            return alias + (" (you)" if seat == self.seat and alias != "you" else "")
        return "—" if seat is None else f"seat {seat}"

    def event_text(self, event: dict[str, Any]) -> str:
        kind, seat = event.get("type"), event.get("seat")
        if kind == "bid":
            return f"{self.says(seat, 'bids')} {event.get('bid')}"
        if kind == "play":
            return f"{self.says(seat, 'plays')} {card_text(event.get('card'))}"
        if kind == "trick":
            return f"trick to {self.alias(event.get('winner'))}"
        if kind == "peep":
            return self.says(seat, "peeps")
        if kind == "garnet":
            return f"{self.says(seat, 'takes')} up Sir Garnet"
        if kind == "exchange":
            return f"{self.says(seat, 'exchanges')} {event.get('cards')} card(s)"
        if kind == "trumps":
            return f"{self.says(seat, 'names')} trumps: {suit_text(event.get('suit'))}"
        return ""

    # --- what the person sees ------------------------------------------------------

    def screen(self) -> str:
        """The table at a decision: hand, bids, contract, trick, tricks won, chips, choices."""
        v = self.view
        lines = [f"naparena · match {self.match} · hand {v.get('hand_no', 0) + 1} of {self.hands} · turn {self.turn} · "
                 f"your seat: {self.seat} ({self.seats[self.seat] if self.seat < len(self.seats) else '?'})",
                 f"dealer: {self.alias(v.get('dealer'))}   kitty: {v.get('kitty', 0)}",
                 "chips this match: " + "   ".join(f"{self.alias(i)} {c:+d}" for i, c in enumerate(self.won)),
                 "chips in all matches: " + self.running_text(),
                 "bids: " + ("; ".join(f"{self.alias(s)} {b}" for s, b in v.get("bids", ())) or "none yet")]
        if v.get("contract") is not None:
            lines.append(f"contract: {v.get('contract')} by {self.alias(v.get('bidder'))}   "
                         f"trumps: {suit_text(v.get('trumps'))}")
        won = v.get("won", ())
        if any(won):
            lines.append("tricks won: " + "   ".join(f"{self.alias(i)} {n}" for i, n in enumerate(won)))
        tricks = v.get("tricks", ())
        if tricks:
            leader, plays, winner = tricks[-1][0], tricks[-1][1], tricks[-1][2]
            lines.append(f"last trick (led by {self.alias(leader)}): "
                         + "  ".join(f"{self.alias(s)} {card_text(c)}" for s, c in plays)
                         + f"  → {self.alias(winner)}")
        trick = v.get("trick", ())
        if trick:
            lines.append(f"this trick (led by {self.alias(trick[0][0])}): "
                         + "  ".join(f"{self.alias(s)} {card_text(c)}" for s, c in trick))
        elif v.get("kind") == "play":
            lines.append("this trick: you lead")
        if v.get("seen"):
            lines.append(f"seen: {cards_text(v.get('seen'))}")
        lines.append(f"your hand: {cards_text(v.get('hand'))}")
        lines += self.unplayable()
        return "\n".join(lines)

    def unplayable(self) -> list[str]:
        """At a card to play: the cards held that may not be played, and why (none shown is hidden unsaid)."""
        v = self.view
        if v.get("kind") != "play":
            return []
        out = [c for c in v.get("hand", ()) if c not in v.get("legal", ())]
        if not out:
            return []
        return [f"not playable now: {cards_text(out)} ({refusal(v, out[0])})"]

    def only_answer(self) -> tuple[bool, Any]:
        """(True, the answer) where a decision has nothing to choose: a purchase with the stock
        empty offers only to stand, and is not worth asking."""
        legal = self.view.get("legal", ())
        if self.view.get("kind") == "exchange" and len(legal) == 1 and not legal[0]:
            return True, legal[0]
        return False, None

    def rules_text(self) -> str:
        """The variant in a few lines: the bids and what each pays, and the extra decisions."""
        try:
            rules = Rules.from_dict(self.rules)
        except (TypeError, KeyError):
            return "the rules of this match are not known here (naparena variants shows them)"
        lines = ["bids, low to high (a contract made / beaten, per opponent):"]
        for bid in rules.bids:
            base = bid.rsplit("-", 1)[0] if bid.endswith(("-with", "-without")) else bid
            try:
                win, loss = stakes(rules, base)
            except KeyError:
                lines.append(f"  {bid}")
                continue
            need = TRICKS_NEEDED.get(base, 0)
            goal = "take no trick" if need == 0 else f"take {need} tricks"
            lines.append(f"  {bid}: {goal}; +{win} / -{loss}")
        misere = any(b in MISERE_BIDS for b in rules.bids) and not rules.misere_trumps
        lines.append("play: follow the suit led if you can; the bidder's first card led names trumps"
                     + (" (misère: no trumps)" if misere else ""))
        if rules.peep:
            lines.append("peep: before your bid, pay 1 to see the top card of the stock; the bidder may swap for it")
        if rules.purchase != "none":
            lines.append("purchase: before the bidding, throw out cards and buy as many from the stock"
                         + (" (1 a card)" if rules.purchase == "ecarte" else " (1 for any exchange)"))
        if rules.sir_garnet:
            lines.append("Sir Garnet: at your turn to bid, take up the extra hand, throw out 5, then bid Nap")
        if rules.floater:
            lines.append("floater: pay 1 to see it; a bid *with* takes it and discards one card; "
                         "Bonaparte leads his lowest trump, Wellington his lowest non-trump")
        if rules.wellington_lead == "lowest_trump":
            lines.append("Wellington: lead the lowest card you hold of the suit you lead")
        return "\n".join(lines)

    def help_text(self) -> str:
        """`help`: the rules, what is legal now, and why the other cards are not."""
        v = self.view
        options = list(v.get("legal", ()))
        if len(options) > MAX_LISTED:  # exchanges: every set of some sizes of your cards
            sizes = sorted({len(a) for a in options if isinstance(a, list | tuple)})
            legal = f"any {' or '.join(map(str, sizes))} of your cards" + (", or none" if 0 in sizes else "")
            legal = legal.replace("any 0 or ", "any ")
        else:
            legal = ", ".join(choice_text(v.get("kind"), a) for a in options) or "nothing"
        lines = [self.rules_text(), f"legal now: {legal}", *self.unplayable(),
                 "answer by number or name (QH, 10s, pass, yes, none); q leaves the table (finished matches "
                 "are kept)"]
        return "\n".join(lines)

    def choices(self) -> list[str]:
        """The legal answers as numbered lines (none when there are too many to list)."""
        v = self.view
        legal = v.get("legal", ())
        if len(legal) > MAX_LISTED:
            return []
        return [f"{i}) {choice_text(v.get('kind'), a)}" for i, a in enumerate(legal, 1)]

    def ask(self) -> str:
        kind = self.view.get("kind")
        return f"your turn: {ASKS.get(kind or '', kind)}"

    def keys(self) -> str:
        return "(help: the rules and what is legal now; q: leave the table)"

    def hand_end(self, record: dict[str, Any]) -> str:
        """A finished hand: contract and result, what each seat played and held, the settlement."""
        played: dict[int, list[Any]] = {}
        for _leader, plays, _winner in record.get("tricks", ()):
            for s, c in plays:
                played.setdefault(s, []).append(c)
        for s, c in record.get("trick", ()):
            played.setdefault(s, []).append(c)
        contract = record.get("contract")
        head = (f"hand {record.get('n', 0) + 1} over: " +
                (f"{contract} by {self.alias(record.get('bidder'))}, {record.get('result')}"
                 if contract else f"{record.get('result') or 'no contract'}"))
        lines = [head, f"trumps: {suit_text(record.get('trumps'))}"]
        if record.get("revoke") is not None:
            lines.append(f"revoke: {record.get('revoke')}")
        for fault in record.get("faults", ()):
            lines.append(f"fault: {self.alias(fault[1])} at {fault[2]}: {fault[3]}")
        lines.append("cards played:")
        for i in range(len(self.seats)):
            lines.append(f"  {self.alias(i)}: {cards_text(played.get(i, ()))}")
        deal = self.held.get(record.get("n", -1))
        after = self.after.get(record.get("n", -1))
        if deal:
            lines.append("what everybody held:")
            lines += [f"  {self.alias(s)}: {cards_text(cards)}" for s, cards in enumerate(deal) if cards]
            if after and after != deal:
                lines.append("after the exchanges:")
                lines += [f"  {self.alias(s)}: {cards_text(cards)}" for s, cards in enumerate(after) if cards]
        else:
            lines.append("what everybody held: shown when the match is over")
        chips = record.get("chips", ())
        lines.append("settlement: " + "   ".join(f"{self.alias(i)} {c:+d}" for i, c in enumerate(chips)))
        lines.append("match so far: " + "   ".join(f"{self.alias(i)} {c:+d}" for i, c in enumerate(self.won)))
        lines.append("all matches so far: " + self.running_text())
        return "\n".join(lines)

    def deals(self) -> str:
        """What everybody held, hand by hand (known once the match is logged)."""
        lines = []
        for n, deal in sorted(self.held.items()):
            lines.append(f"hand {n + 1}: " + "   ".join(f"{self.alias(s)} {cards_text(cards)}"
                                                         for s, cards in enumerate(deal) if cards))
        return "\n".join(lines)

    def snapshot(self) -> dict[str, Any]:
        """The table as plain data for the web page."""
        v = self.view
        legal = v.get("legal", ())
        return {"match": self.match, "hands": self.hands, "turn": self.turn, "seat": self.seat, "seats": self.seats,
                "hand_size": self.rules.get("hand_size", 5),
                "view": v, "won": self.won, "running": self.running(), "screen": self.screen() if v else "",
                "unplayable": self.unplayable(), "help": self.help_text() if v else "",
                "ask": self.ask() if v.get("kind") else "",
                "choices": [choice_text(v.get("kind"), a) for a in legal] if len(legal) <= MAX_LISTED else [],
                "hand": [{"card": c, "text": card_text(c), "red": isinstance(c, int) and c // 13 in (1, 2)}
                         for c in v.get("hand", ())],
                "happened": list(self.happened)}
