"""One seat's view as a fixed-size vector, and one discrete action space for every decision.

Shared by the PettingZoo, Gymnasium and OpenSpiel faces and by the policy adapter, so a
policy trained in one plays in the others and at a naparena table. Needs numpy only.
The layout is documented, block by block, in docs/ENVIRONMENTS.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


def _cells_of(vector: np.ndarray) -> memoryview[float]:
    """The vector's floats as a memoryview: one set through it costs half numpy's item set."""
    return cast("memoryview[float]", vector.data)


def encode(view: View, out: np.ndarray | None = None) -> np.ndarray:
    """The view as a float32 vector in [0, 1] of OBS_SIZE; seats are counted from the
    observer (slot 0) clockwise, so one policy serves every seat and table size."""
    v = np.zeros(OBS_SIZE, np.float32) if out is None else out
    if out is not None:
        v.fill(0)
    # Cell by cell through a memoryview: a numpy item set, or a fancy assignment from a
    # list of places, costs more than the whole view's thirty-odd cells this way.
    cell, me, n = _cells_of(v), view.seat, view.players
    for c in view.hand:
        cell[_HAND + c] = 1.0
    for c in view.seen:
        cell[_SEEN + c] = 1.0
    for s, c in view.trick:
        cell[_TRICK + (s - me) % n * 52 + c] = 1.0
    for _, plays, _ in view.tricks:
        for _, c in plays:
            cell[_PLAYED + c] = 1.0
    for s, b in view.bids:
        cell[_BIDS + (s - me) % n * _NBIDS + _BID_INDEX[b]] = 1.0
    for s in view.active:
        cell[_ACTIVE + (s - me) % n] = 1.0
    for s in view.peeps:
        cell[_PEEPS + (s - me) % n] = 1.0
    cell[_DEALER + (view.dealer - me) % n] = 1.0
    cell[_PLAYERS + n - 1] = 1.0
    if view.kind is not None:
        cell[_KIND + _KIND_INDEX[view.kind]] = 1.0
    if view.bidder is not None:
        cell[_BIDDER + (view.bidder - me) % n] = 1.0
    if view.contract is not None:
        cell[_CONTRACT + _BID_INDEX[view.contract]] = 1.0
    if view.trumps is not None:
        cell[_TRUMPS + view.trumps] = 1.0
    if view.trick:
        cell[_LED + view.trick[0][1] // 13] = 1.0
    if view.garnet_taker is not None:
        cell[_GARNET + (view.garnet_taker - me) % n] = 1.0
    hand_size = view.rules.hand_size
    for s, w in enumerate(view.won):
        if w:
            cell[_WON + (s - me) % n] = w / hand_size
    for s, k in view.exchanges:
        cell[_EXCHANGES + (s - me) % n] = k / EXCHANGE_HELD
    if view.kitty:
        cell[_KITTY] = min(view.kitty, KITTY_SCALE) / KITTY_SCALE
    return v


# A View is a tuple: each field's place in it, for `SeatVector`'s loop over the rare fields.
_PLACE = {name: i for i, name in enumerate(View._fields)}

_Cells = dict[int, float]  # nonzero places of the vector -> their values


def _seen_cells(seen: tuple[int, ...], me: int, n: int) -> _Cells:
    return dict.fromkeys([_SEEN + c for c in seen], 1.0)


def _trumps_cells(trumps: int | None, me: int, n: int) -> _Cells:
    return {} if trumps is None else {_TRUMPS + trumps: 1.0}


def _bids_cells(bids: tuple[tuple[int, str], ...], me: int, n: int) -> _Cells:
    return dict.fromkeys([_BIDS + (s - me) % n * _NBIDS + _BID_INDEX[b] for s, b in bids], 1.0)


def _bidder_cells(bidder: int | None, me: int, n: int) -> _Cells:
    return {} if bidder is None else {_BIDDER + (bidder - me) % n: 1.0}


def _contract_cells(contract: str | None, me: int, n: int) -> _Cells:
    return {} if contract is None else {_CONTRACT + _BID_INDEX[contract]: 1.0}


def _dealer_cells(dealer: int, me: int, n: int) -> _Cells:
    return {_DEALER + (dealer - me) % n: 1.0}


def _active_cells(active: tuple[int, ...], me: int, n: int) -> _Cells:
    return dict.fromkeys([_ACTIVE + (s - me) % n for s in active], 1.0)


def _kitty_cells(kitty: int, me: int, n: int) -> _Cells:
    return {_KITTY: min(kitty, KITTY_SCALE) / KITTY_SCALE} if kitty else {}


def _peeps_cells(peeps: tuple[int, ...], me: int, n: int) -> _Cells:
    return dict.fromkeys([_PEEPS + (s - me) % n for s in peeps], 1.0)


def _exchanges_cells(exchanges: tuple[tuple[int, int], ...], me: int, n: int) -> _Cells:
    return {_EXCHANGES + (s - me) % n: k / EXCHANGE_HELD for s, k in exchanges}


def _garnet_cells(taker: int | None, me: int, n: int) -> _Cells:
    return {} if taker is None else {_GARNET + (taker - me) % n: 1.0}


# The fields that change at most a few times a hand, and the cells each sets (the bids
# grow by one at a time, so `SeatVector` adds the new ones itself).
_RARE_FIELDS: tuple[tuple[int, Callable[[Any, int, int], _Cells]], ...] = (
    (_PLACE["seen"], _seen_cells), (_PLACE["trumps"], _trumps_cells), (_PLACE["bidder"], _bidder_cells),
    (_PLACE["contract"], _contract_cells), (_PLACE["dealer"], _dealer_cells), (_PLACE["active"], _active_cells),
    (_PLACE["kitty"], _kitty_cells), (_PLACE["peeps"], _peeps_cells), (_PLACE["exchanges"], _exchanges_cells),
    (_PLACE["garnet_taker"], _garnet_cells),
)


class SeatVector:
    """One seat's observation vector, kept from view to view: `update(view)` rewrites only
    the cells of the fields that changed since the seat's last view, and equals `encode(view)`.

    The engine replaces a field's tuple rather than changing it, so a field that is the
    same object as last time holds the same values and its cells stand (a field equal
    but new is written again: slower, never wrong); a changed field's old cells come from
    the last view. Between two turns of a seat a card or two move; encoding the whole
    view again costs more than the engine's step.
    """

    __slots__ = ("vector", "_cell", "_last")

    def __init__(self) -> None:
        self.vector = np.zeros(OBS_SIZE, np.float32)
        self._cell = _cells_of(self.vector)
        self._last: View | None = None

    def update(self, view: View) -> np.ndarray:
        """The vector of `view` (this object's array: copy it to keep it past the next update)."""
        last = self._last
        me, n = view.seat, view.players
        if (last is None or last.seat != me or last.players != n or last.rules is not view.rules
                or last.dealer is not view.dealer):
            encode(view, self.vector)  # another seat, table or hand: little stands
        elif view is not last:
            self._play_fields(last, view, me, n)
            if (view.bids is not last.bids or view.trumps is not last.trumps
                    or view.kitty is not last.kitty or view.seen is not last.seen
                    or view.bidder is not last.bidder or view.contract is not last.contract
                    or view.active is not last.active or view.peeps is not last.peeps
                    or view.exchanges is not last.exchanges or view.garnet_taker is not last.garnet_taker):
                self._bids(last.bids, view.bids, me, n)
                for field, cells in _RARE_FIELDS:  # bidding and the steps before play
                    if view[field] is not last[field]:
                        self._swap(cells(last[field], me, n), cells(view[field], me, n))
        self._last = view
        return self.vector

    def _swap(self, old: _Cells, new: _Cells) -> None:
        cell = self._cell
        for place in old:
            cell[place] = 0.0
        for place, x in new.items():
            cell[place] = x

    def _bids(self, said: tuple[tuple[int, str], ...], bids: tuple[tuple[int, str], ...], me: int, n: int) -> None:
        if bids is said:
            return
        k = len(said)
        if len(bids) < k or (k and bids[k - 1] is not said[k - 1]):  # not these bids grown: start again
            self._swap(_bids_cells(said, me, n), {})
            k = 0
        cell = self._cell
        for s, b in bids[k:]:
            cell[_BIDS + (s - me) % n * _NBIDS + _BID_INDEX[b]] = 1.0

    def _play_fields(self, last: View, view: View, me: int, n: int) -> None:
        """The fields that change from one turn to the next, written out for speed."""
        cell = self._cell
        if view.kind is not last.kind:
            if last.kind is not None:
                cell[_KIND + _KIND_INDEX[last.kind]] = 0.0
            if view.kind is not None:
                cell[_KIND + _KIND_INDEX[view.kind]] = 1.0
        if view.hand is not last.hand:
            for c in last.hand:
                cell[_HAND + c] = 0.0
            for c in view.hand:
                cell[_HAND + c] = 1.0
        trick, before = view.trick, last.trick
        if trick is not before:
            if before:
                for s, c in before:
                    cell[_TRICK + (s - me) % n * 52 + c] = 0.0
                cell[_LED + before[0][1] // 13] = 0.0
            if trick:
                for s, c in trick:
                    cell[_TRICK + (s - me) % n * 52 + c] = 1.0
                cell[_LED + trick[0][1] // 13] = 1.0
        if view.won is not last.won:
            hand_size = view.rules.hand_size
            for s, w in enumerate(view.won):
                cell[_WON + (s - me) % n] = w / hand_size
        tricks, done = view.tricks, last.tricks
        if tricks is not done:
            k = len(done)
            if len(tricks) < k or (k and tricks[k - 1] is not done[k - 1]):
                self.vector[_PLAYED:_PLAYED + 52] = 0  # another hand's tricks: start the block again
                k = 0
            for _, plays, _ in tricks[k:]:
                for _, c in plays:
                    cell[_PLAYED + c] = 1.0


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
        if kind in (EXCHANGE, GARNET_DISCARD):
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
        if self._answers is None:
            return action if action in self.actions else default
        return self._answers.get(action, default)

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
