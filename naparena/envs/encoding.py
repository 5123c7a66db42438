"""One seat's view as a fixed-size vector, and one discrete action space for every decision.

Shared by the PettingZoo, Gymnasium and OpenSpiel faces and by the policy adapter, so a
policy trained in one plays in the others and at a naparena table. Needs numpy only.
The layout is documented, block by block, in docs/ENVIRONMENTS.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any, cast

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
GARNET_ACTION: int = EXCHANGE_ACTION + 2 ** EXCHANGE_HELD
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


def cells_of(vector: np.ndarray) -> memoryview[float]:
    """The vector's floats as a memoryview: one set through it costs half numpy's item set."""
    return cast("memoryview[float]", vector.data)


def encode(view: View, out: np.ndarray | None = None, cleared: bool = False) -> np.ndarray:
    """The view as a float32 vector in [0, 1] of OBS_SIZE; seats are counted from the
    observer (slot 0) clockwise, so one policy serves every seat and table size. Into
    `out` if given (zeroed first, unless `cleared` says it already is)."""
    v = np.zeros(OBS_SIZE, np.float32) if out is None else out
    if out is not None and not cleared:
        v.fill(0)
    write(cells_of(v), view)
    return v


def write(cell: memoryview[float], view: View) -> None:
    """The view's cells written into `cell` (a zeroed float32 vector of OBS_SIZE, or the
    row of a batch, as a memoryview): the one writer of the layout, for `encode` and the
    batched environments."""
    # Cell by cell through a memoryview: a numpy item set, or a fancy assignment from a
    # list of places, costs more than the whole view's twenty-odd cells this way. The view
    # is unpacked at once (one tuple unpacking, not 22 field reads), and an empty block
    # costs a test, not a loop's set-up: this runs at every step of every batched table.
    (kind, me, _, hand, trumps, trick, tricks, won, seen, bids, bidder, contract, rules, n, dealer, active,
     _, _, kitty, peeps, exchanges, garnet_taker) = view
    place = _PLACES[n][me]  # seat -> its place counted from the observer
    for c in hand:
        cell[_HAND + c] = 1.0
    if trick:
        for s, c in trick:
            cell[_TRICK + place[s] * 52 + c] = 1.0
        cell[_LED + trick[0][1] // 13] = 1.0
    if tricks:
        for _, plays, _ in tricks:
            for _, c in plays:
                cell[_PLAYED + c] = 1.0
        size = rules.hand_size
        for s, w in enumerate(won):
            if w:
                cell[_WON + place[s]] = w / size
    if bids:
        for s, b in bids:
            cell[_BIDS + place[s] * _NBIDS + _BID_INDEX[b]] = 1.0
    for s in active:
        cell[_ACTIVE + place[s]] = 1.0
    cell[_DEALER + place[dealer]] = 1.0
    cell[_PLAYERS + n - 1] = 1.0
    if kind is not None:
        cell[_KIND_CELL[kind]] = 1.0
    if bidder is not None:
        cell[_BIDDER + place[bidder]] = 1.0
    if contract is not None:
        cell[_CONTRACT + _BID_INDEX[contract]] = 1.0
    if trumps is not None:
        cell[_TRUMPS + trumps] = 1.0
    if seen or peeps or exchanges or kitty or garnet_taker is not None:
        _write_extras(cell, place, seen, peeps, exchanges, kitty, garnet_taker)


def _write_extras(cell: memoryview[float], place: tuple[int, ...], seen: tuple[int, ...], peeps: tuple[int, ...],
                  exchanges: tuple[tuple[int, int], ...], kitty: int, garnet_taker: int | None) -> None:
    """The blocks only some variants fill (peeps, exchanges, Sir Garnet, a kitty)."""
    for c in seen:
        cell[_SEEN + c] = 1.0
    for s in peeps:
        cell[_PEEPS + place[s]] = 1.0
    for s, k in exchanges:
        cell[_EXCHANGES + place[s]] = k / EXCHANGE_HELD
    if kitty:
        cell[_KITTY] = min(kitty, KITTY_SCALE) / KITTY_SCALE
    if garnet_taker is not None:
        cell[_GARNET + place[garnet_taker]] = 1.0


# _PLACES[n][me][s]: seat s's place counted clockwise from the observer `me` at a table of n.
_PLACES = [[tuple((s - me) % n for s in range(n)) for me in range(n)] if n else [] for n in range(SEATS + 1)]
_KIND_CELL = {k: _KIND + i for k, i in _KIND_INDEX.items()}


LEAN_SIZE = OBS_SIZE + NUM_ACTIONS  # the lean observation: the vector, then the mask as 0/1 floats


def lean(view: View, actions: Sequence[int]) -> np.ndarray:
    """The lean observation: one fresh float32 vector, `encode(view)` then the legal
    `actions` flagged (the mask), so a learner's batch is one array and the step
    allocates one array instead of a vector, a mask and a dict."""
    v = np.zeros(LEAN_SIZE, np.float32)
    encode(view, v[:OBS_SIZE], cleared=True)
    cell = cells_of(v)
    for a in actions:
        cell[OBS_SIZE + a] = 1.0
    return v


def action_of(kind: str, hand: Sequence[int], answer: Any) -> int:
    """The action index of one legal `answer` to a `kind` decision, holding `hand` (sorted)."""
    if kind in (PLAY, FLOATER_DISCARD):
        card: int = answer
        return CARD + card
    if kind == BID_KIND:
        return BID + _BID_INDEX[answer]
    if kind in (PEEP, FLOATER_PEEP, GARNET):
        return YES if answer else NO
    if kind == PEEP_EXCHANGE:
        given: int | None = answer
        return KEEP if given is None else CARD + given
    if kind == TRUMPS:
        suit: int = answer
        return SUIT_ACTION + suit
    if kind == EXCHANGE:
        if len(hand) > EXCHANGE_HELD:
            raise ValueError(f"an exchange from {len(hand)} cards has no action (at most {EXCHANGE_HELD})")
        return EXCHANGE_ACTION + sum(1 << hand.index(c) for c in answer)
    if kind == GARNET_DISCARD:
        return GARNET_ACTION + _GARNET_INDEX[tuple(hand.index(c) for c in answer)]
    raise ValueError(f"unknown decision kind {kind!r}")


def _by_places(kind: str, hand: Sequence[int], legal: Sequence[Any]) -> dict[int, Any]:
    """`action_of` for every exchange or discard answer, the hand's places looked up once
    (an exchange has up to 32 answers, a Sir Garnet discard 252)."""
    if kind == EXCHANGE:
        if len(hand) > EXCHANGE_HELD:
            raise ValueError(f"an exchange from {len(hand)} cards has no action (at most {EXCHANGE_HELD})")
        bit = {c: 1 << i for i, c in enumerate(hand)}
        return {EXCHANGE_ACTION + sum(map(bit.__getitem__, a)): a for a in legal}
    place = {c: i for i, c in enumerate(hand)}
    return {GARNET_ACTION + _GARNET_INDEX[tuple(map(place.__getitem__, a))]: a for a in legal}


class Decision:
    """The legal answers of one decision as actions: the mask and the way back."""

    __slots__ = ("actions", "_answers")

    def __init__(self, kind: str, hand: Sequence[int], legal: Sequence[Any]):
        self.actions: list[int]
        self._answers: dict[int, Any] | None
        if kind == PLAY:  # most decisions: a card is its own action (CARD is 0), no map needed
            self.actions, self._answers = sorted(legal), None
            return
        if kind == BID_KIND:  # the other common decision: a bid's action is BID + its place
            self._answers = {BID + _BID_INDEX[b]: b for b in legal}
        elif kind in (EXCHANGE, GARNET_DISCARD):
            self._answers = _by_places(kind, hand, legal)
        else:
            self._answers = {action_of(kind, hand, a): a for a in legal}
        if len(self._answers) != len(legal):
            raise AssertionError(f"two legal {kind} answers share an action")  # the map must be one to one
        self.actions = sorted(self._answers)

    @property
    def answers(self) -> dict[int, Any]:
        """Each legal action -> the engine's answer."""
        if self._answers is None:
            self._answers = dict(zip(self.actions, self.actions))
        return self._answers

    def get(self, action: int, default: Any = None) -> Any:
        """The engine's answer for `action`, or `default` for an action outside the mask."""
        if self._answers is None:  # a card: the engine wants a plain int, not a numpy one
            return int(action) if action in self.actions else default
        return self._answers.get(int(action), default)

    @classmethod
    def of(cls, view: View) -> Decision:
        assert view.kind is not None, "a view outside its seat's turn has no decision"
        return cls(view.kind, view.hand, view.legal)

    def mask(self) -> np.ndarray:
        """The legal actions as NUM_ACTIONS int8 flags (a fresh array each call: a caller may write it)."""
        # Flags set one by one in a bytearray, which numpy then takes without a copy:
        # a numpy array's allocation and fancy assignment cost about three of these.
        flags = bytearray(NUM_ACTIONS)
        for action in self.actions:
            flags[action] = 1
        return np.frombuffer(flags, np.int8)

    def answer(self, action: int) -> Any:
        """The engine's answer for a legal action; KeyError for an illegal one."""
        answer = self.get(int(action), _ILLEGAL)
        if answer is _ILLEGAL:
            raise KeyError(action)
        return answer


_ILLEGAL = object()


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
