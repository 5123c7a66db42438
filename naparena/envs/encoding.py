"""One seat's view as a fixed-size vector, and one discrete action space for every decision.

Shared by the PettingZoo, Gymnasium and OpenSpiel faces and by the policy adapter, so a
policy trained in one plays in the others and at a naparena table. Needs numpy only.
The layout is documented, block by block, in docs/ENVIRONMENTS.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from naparena.game.cards import NAMES
from naparena.game.engine import BID as BID_KIND
from naparena.game.engine import (
    DECISION_KINDS,
    EXCHANGE,
    FLOATER_DISCARD,
    FLOATER_PEEP,
    GARNET,
    GARNET_DISCARD,
    PASS,
    PEEP,
    PEEP_EXCHANGE,
    PLAY,
    TRUMPS,
)
from naparena.game.rules import FLOATER_LADDER, SEVEN_LADDER, STANDARD_LADDER
from naparena.game.view import View

SEATS = 7  # the largest table: per-seat blocks have this many slots, seat 0 being the observer

# Every bid name of every ladder, "pass" first; a bid's action is BID + its place here.
BID_NAMES: tuple[str, ...] = tuple(dict.fromkeys((PASS, *STANDARD_LADDER, *SEVEN_LADDER, *FLOATER_LADDER)))
_BID_INDEX = {b: i for i, b in enumerate(BID_NAMES)}

# Sir Garnet's discard: five of the ten cards held, by their places in the sorted hand.
GARNET_HELD = 10
_GARNET_COMBOS = tuple(combinations(range(GARNET_HELD), 5))
_GARNET_INDEX: dict[tuple[int, ...], int] = {c: i for i, c in enumerate(_GARNET_COMBOS)}
EXCHANGE_HELD = 5  # an exchange is asked only in the five-card game

# The action space, in blocks. A card is its int; an exchange is the bit mask of the
# places (in the sorted hand) of the cards thrown out; a Sir Garnet discard is the place
# of its five places among the 252 combinations, in `itertools.combinations` order.
CARD, BID = 0, 52
NO, YES = BID + len(BID_NAMES), BID + len(BID_NAMES) + 1
KEEP = YES + 1                       # peep exchange: keep the hand (answer None)
SUIT_ACTION = KEEP + 1               # trumps: suit s is SUIT_ACTION + s
EXCHANGE_ACTION = SUIT_ACTION + 4    # + bit mask over up to five places
GARNET_ACTION = EXCHANGE_ACTION + 2 ** EXCHANGE_HELD
NUM_ACTIONS = GARNET_ACTION + len(_GARNET_COMBOS)

_KIND_INDEX = {k: i for i, k in enumerate(DECISION_KINDS)}
KITTY_SCALE = 100  # the kitty is shown as min(kitty, 100) / 100


def _blocks() -> dict[str, tuple[int, int]]:
    """name -> (start, size) of each block of the observation vector, in order."""
    sizes = [
        ("kind", len(DECISION_KINDS)), ("hand", 52), ("seen", 52), ("trick", SEATS * 52), ("played", 52),
        ("won", SEATS), ("bids", SEATS * len(BID_NAMES)), ("bidder", SEATS), ("contract", len(BID_NAMES)),
        ("trumps", 4), ("led", 4), ("dealer", SEATS), ("active", SEATS), ("players", SEATS),
        ("peeps", SEATS), ("exchanges", SEATS), ("garnet_taker", SEATS), ("kitty", 1),
    ]
    out, start = {}, 0
    for name, size in sizes:
        out[name] = (start, size)
        start += size
    return out


BLOCKS = _blocks()
OBS_SIZE = sum(size for _, size in BLOCKS.values())
(_KIND, _HAND, _SEEN, _TRICK, _PLAYED, _WON, _BIDS, _BIDDER, _CONTRACT, _TRUMPS, _LED, _DEALER, _ACTIVE,
 _PLAYERS, _PEEPS, _EXCHANGES, _GARNET, _KITTY) = (start for start, _ in BLOCKS.values())
_NBIDS = len(BID_NAMES)


def encode(view: View, out: np.ndarray | None = None) -> np.ndarray:
    """The view as a float32 vector in [0, 1] of OBS_SIZE; seats are counted from the
    observer (slot 0) clockwise, so one policy serves every seat and table size."""
    v = np.zeros(OBS_SIZE, np.float32) if out is None else out
    if out is not None:
        v.fill(0)
    me, n = view.seat, view.players
    # The ones go in by one fancy assignment: item by item costs a numpy call each.
    ones = [_HAND + c for c in view.hand]
    ones += [_SEEN + c for c in view.seen]
    ones += [_TRICK + (s - me) % n * 52 + c for s, c in view.trick]
    ones += [_PLAYED + c for _, plays, _ in view.tricks for _, c in plays]
    ones += [_BIDS + (s - me) % n * _NBIDS + _BID_INDEX[b] for s, b in view.bids]
    ones += [_ACTIVE + (s - me) % n for s in view.active]
    ones += [_PEEPS + (s - me) % n for s in view.peeps]
    ones.append(_DEALER + (view.dealer - me) % n)
    ones.append(_PLAYERS + n - 1)
    if view.kind is not None:
        ones.append(_KIND + _KIND_INDEX[view.kind])
    if view.bidder is not None:
        ones.append(_BIDDER + (view.bidder - me) % n)
    if view.contract is not None:
        ones.append(_CONTRACT + _BID_INDEX[view.contract])
    if view.trumps is not None:
        ones.append(_TRUMPS + view.trumps)
    if view.trick:
        ones.append(_LED + view.trick[0][1] // 13)
    if view.garnet_taker is not None:
        ones.append(_GARNET + (view.garnet_taker - me) % n)
    v[ones] = 1
    hand_size = view.rules.hand_size
    for s, w in enumerate(view.won):
        if w:
            v[_WON + (s - me) % n] = w / hand_size
    for s, k in view.exchanges:
        v[_EXCHANGES + (s - me) % n] = k / EXCHANGE_HELD
    if view.kitty:
        v[_KITTY] = min(view.kitty, KITTY_SCALE) / KITTY_SCALE
    return v


def action_of(kind: str, hand: Sequence[int], answer: Any) -> int:
    """The action index of one legal `answer` to a `kind` decision, holding `hand` (sorted)."""
    if kind in (PLAY, FLOATER_DISCARD):
        return CARD + answer
    if kind == BID_KIND:
        return BID + _BID_INDEX[answer]
    if kind in (PEEP, FLOATER_PEEP, GARNET):
        return YES if answer else NO
    if kind == PEEP_EXCHANGE:
        return KEEP if answer is None else CARD + answer
    if kind == TRUMPS:
        return SUIT_ACTION + answer
    if kind == EXCHANGE:
        if len(hand) > EXCHANGE_HELD:
            raise ValueError(f"an exchange from {len(hand)} cards has no action (at most {EXCHANGE_HELD})")
        return EXCHANGE_ACTION + sum(1 << hand.index(c) for c in answer)
    if kind == GARNET_DISCARD:
        return GARNET_ACTION + _GARNET_INDEX[tuple(hand.index(c) for c in answer)]
    raise ValueError(f"unknown decision kind {kind!r}")


class Decision:
    """The legal answers of one decision as actions: the mask and the way back."""

    __slots__ = ("answers", "actions", "_mask")

    def __init__(self, kind: str, hand: Sequence[int], legal: Sequence[Any]):
        if kind == PLAY:  # most decisions: a card is its own action (CARD is 0)
            self.answers: dict[int, Any] = dict(zip(legal, legal))
        else:
            self.answers = {action_of(kind, hand, a): a for a in legal}
        if len(self.answers) != len(legal):
            raise AssertionError(f"two legal {kind} answers share an action")  # the map must be one to one
        self.actions = sorted(self.answers)
        self._mask: np.ndarray | None = None

    @classmethod
    def of(cls, view: View) -> Decision:
        assert view.kind is not None, "a view outside its seat's turn has no decision"
        return cls(view.kind, view.hand, view.legal)

    def mask(self) -> np.ndarray:
        """The legal actions as NUM_ACTIONS int8 flags (a fresh array each call: a caller may write it)."""
        if self._mask is None:
            self._mask = np.zeros(NUM_ACTIONS, np.int8)
            self._mask[self.actions] = 1
        return self._mask.copy()

    def answer(self, action: int) -> Any:
        """The engine's answer for a legal action; KeyError for an illegal one."""
        return self.answers[int(action)]


def action_name(action: int) -> str:
    """A short readable name of an action (for renders and OpenSpiel's action strings)."""
    if CARD <= action < BID:
        return NAMES[action]
    if BID <= action < NO:
        return BID_NAMES[action - BID]
    if action in (NO, YES):
        return "yes" if action == YES else "no"
    if action == KEEP:
        return "keep"
    if SUIT_ACTION <= action < EXCHANGE_ACTION:
        return "trumps " + "CDHS"[action - SUIT_ACTION]
    if EXCHANGE_ACTION <= action < GARNET_ACTION:
        bits = action - EXCHANGE_ACTION
        return "exchange places " + (",".join(str(i) for i in range(EXCHANGE_HELD) if bits >> i & 1) or "none")
    if GARNET_ACTION <= action < NUM_ACTIONS:
        return "discard places " + ",".join(map(str, _GARNET_COMBOS[action - GARNET_ACTION]))
    raise ValueError(f"no action {action}")
