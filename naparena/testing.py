"""Helpers for unit-testing a bot: build the `View` a seat sees from cards written as
"AS KS 10H", and play hands in-process against chosen bots.

    from naparena.testing import view, play_hand

    v = view("AS KS QS 2H 3C", kind="bid")
    assert MyBot.new().bid(v) == "nap"

Every view comes from the real engine (a deal stacked to give the seat those cards),
so `legal` is exactly what a tournament would allow. Like the top-level names, this
module is stable for bot authors.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from naparena.bots.bot import Bot
from naparena.bots.plugins import load_registry
from naparena.game import cards
from naparena.game.engine import BID, PASS, PLAY, Hand, Match, deal_order
from naparena.game.rules import Rules
from naparena.game.view import View
from naparena.table import Seat, Supervisor, Table, rules_of

__all__ = ["IllegalAnswer", "deal", "play_hand", "view"]


class IllegalAnswer(AssertionError):
    """A bot gave an illegal answer (or raised) in `play_hand(..., strict=True)`."""


def deal(hands: Mapping[int, str], *, variant: str = "classic", players: int = 4, dealer: int | None = None,
         overrides: Mapping[str, Any] | None = None, rules_overrides: Mapping[str, Any] | None = None) -> Hand:
    """A fresh engine hand in which each seat in `hands` holds the cards written there
    ("AS KS 10H QD 2C"); every other card is dealt from the rest of the pack, in order.
    `dealer` defaults to the seat on the right of the lowest seat named. `overrides`: rule
    options on top of the variant's, as the environments take them (`rules_overrides`, its
    old name, still works and warns)."""
    rules = _rules(variant, _overrides(overrides, rules_overrides))
    rules.check_players(players)
    if dealer is None:
        dealer = (min(hands, default=0) - 1) % players
    _, slots = deal_order(rules, players, dealer)
    pack = cards.pack(rules.pack_size(players))
    deck: list[int | None] = [None] * len(pack)
    used: set[int] = set()
    for seat, text in hands.items():
        chosen = cards.parse_many(text)
        if not slots[seat]:
            raise ValueError(f"seat {seat} sits out as dealer and holds no cards")
        if len(chosen) != len(slots[seat]):
            raise ValueError(f"seat {seat} needs {len(slots[seat])} cards in {variant}, got {len(chosen)}: {text!r}")
        outside = [cards.name(c) for c in chosen if c not in pack]
        if outside:
            raise ValueError(f"{' '.join(outside)} not in the {len(pack)}-card pack of {variant} at "
                             f"{players} players (its cards: {' '.join(map(cards.name, pack))})")
        twice = used.intersection(chosen) | {c for i, c in enumerate(chosen) if c in chosen[:i]}
        if twice:
            raise ValueError(f"{' '.join(map(cards.name, sorted(twice)))} dealt twice (seat {seat}: {text!r});"
                             " a pack holds each card once")
        for position, c in zip(slots[seat], chosen):
            deck[position] = c
        used.update(chosen)
    rest = iter(c for c in pack if c not in used)
    return Hand(rules, players, dealer, [c if c is not None else next(rest) for c in deck],
                (0,) * players, 0)


def _rules(variant: str, overrides: Mapping[str, Any] | None) -> Rules:
    """The variant's rules, read as every table reads them (an unknown name: `RulesError`)."""
    return rules_of(variant, dict(overrides or {}))


def _overrides(overrides: Mapping[str, Any] | None, old: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """`overrides`, or the deprecated `rules_overrides` under its old name."""
    if old is None:
        return overrides
    warnings.warn("rules_overrides= is deprecated: give overrides= (the name the environments use)",
                  DeprecationWarning, stacklevel=3)
    if overrides is not None:
        raise TypeError("give overrides= alone, not with rules_overrides=")
    return old


def view(  # noqa: PLR0913 - a public helper for bot authors: each part of the situation is a keyword
        hand: str, kind: str = "play", *, seat: int = 0, variant: str = "classic", players: int = 4,
        bids: Sequence[str] = (), contract: str | None = None, trick: str = "",
        overrides: Mapping[str, Any] | None = None, rules_overrides: Mapping[str, Any] | None = None) -> View:
    """The view of `seat`, holding `hand`, at its first decision of `kind`.

    kind="bid": the seats before it (in bidding order) have bid `bids`, e.g. ("pass", "three").
    kind="play": the first trick; the seats before it have played `trick` ("KS 2S"), the
    first of them the bidder, who won the bidding with `contract` (default: the lowest
    bid of the variant; trumps are set by the bidder's lead, as in play). An empty
    `trick` makes `seat` the bidder, on lead.
    Decisions before that (peeps, exchanges, Sir Garnet) get the base `Bot`'s defaults.
    """
    overrides = _overrides(overrides, rules_overrides)
    if kind not in (BID, PLAY):
        raise ValueError(f"kind must be {BID!r} or {PLAY!r}; build other decisions with deal()")
    led = cards.parse_many(trick) if kind == PLAY else []
    before = len(bids) if kind == BID else len(led)
    eldest = (seat - before) % players
    dealer = (eldest - 1) % players
    h = deal({seat: hand}, variant=variant, players=players, dealer=dealer, overrides=overrides)
    if led:
        # The seats that played to the trick hold those cards (and, if they did not
        # follow suit, none of the suit led); the dealer sits on the bidder's right.
        promised = set(cards.parse_many(hand)) | set(led)
        if len(promised) < len(led) + len(h.hands[seat]):
            raise ValueError(f"a card of {trick!r} is also in the hand under test, or played twice")
        spare = [c for c in cards.pack(h.rules.pack_size(players)) if c not in promised]
        dealt = {seat: hand}
        for s, c in zip(_order(h, eldest), led):
            fits = [x for x in spare if cards.SUIT[c] == cards.SUIT[led[0]] or cards.SUIT[x] != cards.SUIT[led[0]]]
            chosen = [c] + fits[:h.rules.hand_size - 1]
            spare = [x for x in spare if x not in chosen]
            dealt[s] = " ".join(map(cards.name, chosen))
        h = deal(dealt, variant=variant, players=players, dealer=dealer, overrides=overrides)
    base = Bot(random.Random(0), 0)
    pending_bids = list(bids)
    bid_with = contract or h.rules.bids[0] if kind == PLAY else None
    plays = iter(led)
    answer: Any
    for _ in range(1000):
        if h.kind is None:
            raise ValueError("the hand ended before the decision asked for (everyone passed?)")
        if h.to_act == seat and h.kind == kind and (kind == BID or h.trick == tuple(zip(_order(h, eldest), led))):
            return h.view()
        if h.kind == BID:
            if kind == BID:
                answer = pending_bids.pop(0) if pending_bids else PASS
            else:
                answer = bid_with if h.to_act == eldest else PASS
        elif h.kind == PLAY:
            answer = next(plays)
        else:
            answer = getattr(base, h.kind)(h.view())
        h.apply(answer)
        if h.faults:
            raise ValueError(f"cannot reach that decision: {h.faults[-1][3]}")
    raise ValueError("cannot reach that decision")


def _order(h: Hand, eldest: int) -> list[int]:
    return [h.active[(h.active.index(eldest) + i) % len(h.active)] for i in range(len(h.active))]


def play_hand(bots: Sequence[Bot | type[Bot] | str], *, variant: str = "classic", seed: int = 0,
              hands: Mapping[int, str] | None = None, dealer: int = 0, strict: bool = True,
              overrides: Mapping[str, Any] | None = None,
              rules_overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Play one hand in this process; return its record (bids, tricks, result, chips…).

    `bots`: one per seat, each an instance, a `Bot` subclass (made with a seeded rng) or
    a registered name ("random", "heuristic", a drop-in in ./bots). `hands` stacks the
    deal (seat → "AS KS …"); without it the deal is shuffled from `seed`. The hand is
    played at the table a tournament plays at: the bots' hooks are called (`start_match`,
    `start_hand`, events, `end_hand`, `end_match`) and a bot that raises or answers
    illegally faults that decision (the documented default applies). With `strict`, the
    hand's first fault then raises `IllegalAnswer`, naming the decision. No clock is kept.
    """
    overrides = _overrides(overrides, rules_overrides)
    players = len(bots)
    rules = _rules(variant, overrides)
    if hands is not None:
        h = deal(hands, variant=variant, players=players, dealer=dealer, overrides=overrides)
    else:
        h = Match(rules, players, seed).next_hand()
    seats = [_bot(b, seat, seed) for seat, b in enumerate(bots)]
    table = Table([Seat(b, type(b).__name__) for b in seats], Supervisor(None, math.inf))
    table.start_match(0, [type(b).__name__ for b in seats], rules, 1, math.inf)
    table.play_hand(h)
    table.end_match(1)
    if strict and h.faults:
        _, seat, kind, reason = h.faults[0]
        raise IllegalAnswer(f"seat {seat} ({type(seats[seat]).__name__}), {kind}: {reason}")
    return h.record()


def _bot(b: Bot | type[Bot] | str, seat: int, seed: int) -> Bot:
    rng = random.Random(f"{seed}|{seat}")
    if isinstance(b, Bot):
        return b
    if isinstance(b, type) and issubclass(b, Bot):
        return b(rng, seat)
    return load_registry().make(b, {}, rng, seat)
