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
from naparena.game.engine import DECISION_KINDS, EXCHANGE, GARNET_DISCARD, PASS, PLAY
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
_B = {name: start for name, (start, _) in BLOCKS.items()}


def encode(view: View, out: np.ndarray | None = None) -> np.ndarray:
    """The view as a float32 vector in [0, 1] of OBS_SIZE; seats are counted from the
    observer (slot 0) clockwise, so one policy serves every seat and table size."""
    v = np.zeros(OBS_SIZE, np.float32) if out is None else out
    if out is not None:
        v.fill(0)
    me, n = view.seat, view.players
    hand_size = view.rules.hand_size
    if view.kind is not None:
        v[_B["kind"] + _KIND_INDEX[view.kind]] = 1
    for c in view.hand:
        v[_B["hand"] + c] = 1
    for c in view.seen:
        v[_B["seen"] + c] = 1
    for s, c in view.trick:
        v[_B["trick"] + (s - me) % n * 52 + c] = 1
    for _, plays, _ in view.tricks:
        for _, c in plays:
            v[_B["played"] + c] = 1
    for s, w in enumerate(view.won):
        v[_B["won"] + (s - me) % n] = w / hand_size
    for s, b in view.bids:
        v[_B["bids"] + (s - me) % n * len(BID_NAMES) + _BID_INDEX[b]] = 1
    if view.bidder is not None:
        v[_B["bidder"] + (view.bidder - me) % n] = 1
    if view.contract is not None:
        v[_B["contract"] + _BID_INDEX[view.contract]] = 1
    if view.trumps is not None:
        v[_B["trumps"] + view.trumps] = 1
    if view.trick:
        v[_B["led"] + view.trick[0][1] // 13] = 1
    v[_B["dealer"] + (view.dealer - me) % n] = 1
    for s in view.active:
        v[_B["active"] + (s - me) % n] = 1
    v[_B["players"] + n - 1] = 1
    for s in view.peeps:
        v[_B["peeps"] + (s - me) % n] = 1
    for s, k in view.exchanges:
        v[_B["exchanges"] + (s - me) % n] = k / EXCHANGE_HELD
    if view.garnet_taker is not None:
        v[_B["garnet_taker"] + (view.garnet_taker - me) % n] = 1
    v[_B["kitty"]] = min(view.kitty, KITTY_SCALE) / KITTY_SCALE
    return v


def action_of(kind: str, hand: Sequence[int], answer: Any) -> int:
    """The action index of one legal `answer` to a `kind` decision, holding `hand` (sorted)."""
    if kind in (PLAY, "floater_discard"):
        return CARD + answer
    if kind == "bid":
        return BID + _BID_INDEX[answer]
    if kind in ("peep", "floater_peep", "garnet"):
        return YES if answer else NO
    if kind == "peep_exchange":
        return KEEP if answer is None else CARD + answer
    if kind == "trumps":
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

    __slots__ = ("answers", "actions")

    def __init__(self, kind: str, hand: Sequence[int], legal: Sequence[Any]):
        self.answers: dict[int, Any] = {action_of(kind, hand, a): a for a in legal}
        if len(self.answers) != len(legal):
            raise AssertionError(f"two legal {kind} answers share an action")  # the map must be one to one
        self.actions = sorted(self.answers)

    @classmethod
    def of(cls, view: View) -> Decision:
        assert view.kind is not None, "a view outside its seat's turn has no decision"
        return cls(view.kind, view.hand, view.legal)

    def mask(self) -> np.ndarray:
        m = np.zeros(NUM_ACTIONS, np.int8)
        m[self.actions] = 1
        return m

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
