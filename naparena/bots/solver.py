"""Exact card-play solver: the game-theoretic outcome of a Nap hand with every card known.

The bidder plays against the defenders as one side. A two-sided alpha-beta search over
the remaining tricks, with a transposition table at trick boundaries, one card tried per
run of equivalent cards, sure-trick bounds from the top trumps, and a cut as soon as the
contract is decided. Hands are int bitmasks over the 52 cards, so a position costs a few
small ints.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple, TypeAlias

from naparena.bots.strategy import lead_rule
from naparena.game.cards import RANK, SUIT
from naparena.game.rules import MISERE_BIDS, Rules, lead_names_trumps

MAKE, TRICKS = "make", "tricks"

_NO_TRUMPS = 4   # a suit no card belongs to, so "is it a trump?" is always false
_BY_LEAD = -1    # trumps not set yet: the next card led names them

#: The transposition table: (every seat's hand mask…, leader, trumps) -> (lower, upper) bound
#: on the good tricks still to come.
Table: TypeAlias = dict[tuple[int, ...], tuple[int, int]]
# The search's node functions (positional ints in, good tricks out): `lead` at a trick
# boundary, `follow` within a trick.
_Lead: TypeAlias = Callable[[int, int, int, int, int, int], int]
_Follow: TypeAlias = Callable[[int, int, int, int, int, int, int, int, int, int, int], int]

SUIT_MASKS = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))


class SearchLimit(Exception):
    """The search visited more nodes than it was allowed."""


class OutOfTime(SearchLimit):
    """The search ran past its deadline (a clock, unlike a node count, makes play depend
    on the machine: a caller that cares logs it)."""


# With a deadline, the clock is read once per this many nodes: about a millisecond of
# search, so a cut comes that soon after the deadline, and the reading costs nothing.
CLOCK_EVERY = 1024


@dataclass(frozen=True)
class Position:
    """A perfect-information position: every active seat's cards, the trick so far, the contract.

    `hands` is indexed by seat like the engine's (an empty tuple for a seat out of play);
    `order` holds the active seats in playing order (a view's `active`). `need` is the
    number of tricks the contract needs in all; 0 is a misère (the bidder must win none).
    `trumps_by_lead` means trumps are not set yet and the next card led names them: only
    before the opening lead of a hand whose first lead makes trumps.
    """

    hands: tuple[tuple[int, ...], ...]
    order: tuple[int, ...]
    to_play: int
    bidder: int
    need: int
    won: int = 0
    trick: tuple[tuple[int, int], ...] = ()
    trumps: int | None = None
    trumps_by_lead: bool = False

    @property
    def misere(self) -> bool:
        return self.need == 0

    @property
    def leader(self) -> int:
        return self.trick[0][0] if self.trick else self.to_play

    @property
    def tricks_left(self) -> int:
        """Tricks still to finish, the current one included."""
        return len(self.hands[self.leader]) + (1 if self.trick else 0)


class Solution(NamedTuple):
    """The value of a position and of each legal card at its root.

    With goal "make" a value is 1 if the bidder makes the contract against best defence,
    else 0; with goal "tricks" it is the number of tricks the bidder ends the hand with
    (a misère bidder trying for fewest, the defenders for most).
    """

    value: int
    cards: dict[int, int]
    nodes: int


def made(pos: Position, tricks: int) -> bool:
    """Is the contract made when the bidder ends with `tricks` tricks?"""
    return tricks == 0 if pos.misere else tricks >= pos.need


def solve(pos: Position, legal: Iterable[int] | None = None, goal: str = MAKE, max_nodes: int | None = None,
          table: Table | None = None, deadline: float | None = None,
          clock: Callable[[], float] | None = None) -> Solution:
    """Solve `pos` exactly; `legal` restricts the root's cards (e.g. an opening-lead rule).

    `table` lets several solves of the same deal share one transposition table (its
    entries depend on the deal and the goal window only through exact bounds, so any
    solves of one deal may share it). Raises `SearchLimit` past `max_nodes` nodes, and
    `OutOfTime` once `clock()` (default `time.perf_counter`) passes `deadline`.
    """
    if goal not in (MAKE, TRICKS):
        raise ValueError(f"goal must be {MAKE!r} or {TRICKS!r}, not {goal!r}")
    order = pos.order
    n = len(order)
    index = {seat: i for i, seat in enumerate(order)}
    left = pos.tricks_left
    hands = []
    for seat in order:
        mask = 0
        for c in pos.hands[seat]:
            mask |= 1 << c
        hands.append(mask)
    to_play = index[pos.to_play]
    played = [(index[s], c) for s, c in pos.trick]
    _check(pos, hands, played, left)
    root = hands[to_play]
    if legal is None:
        cards = _legal(root, played)
    else:
        cards = tuple(legal)
        for c in cards:
            if not root >> c & 1:
                raise ValueError(f"card {c} is not in seat {pos.to_play}'s hand")
    if not cards:
        raise ValueError("no legal card at the root")
    bidder = index[pos.bidder]
    misere = pos.misere
    # "Good" tricks are the ones the bidder's side wants: his own, or in a misère the
    # defenders'. The bidder maximises good tricks, the defenders minimise them.
    good = tuple(int((i == bidder) != misere) for i in range(n))
    side = tuple(i == bidder for i in range(n))
    if pos.trumps_by_lead:
        if pos.trick:
            raise ValueError("trumps can be named by the lead only before the first card")
        trumps = _BY_LEAD
    else:
        trumps = _NO_TRUMPS if pos.trumps is None else pos.trumps
    search = _Search(hands, n, good, side, max_nodes, table, deadline, clock or time.perf_counter)
    # A misère bidder's target: every trick still to play must go to the defenders.
    target = left if misere else pos.need - pos.won
    values: dict[int, int] = {}
    group: dict[int, int] = {}
    live = search.live() | _mask(c for _, c in played)
    for c in _representatives(cards, live):
        if goal == MAKE:
            if target <= 0:
                v = 1
            elif target > left:
                v = 0
            else:
                v = int(search.root(to_play, played, c, trumps, target - 1, target, left) >= target)
        else:
            g = search.root(to_play, played, c, trumps, -1, left + 1, left)
            v = pos.won + (left - g if misere else g)
        values[c] = v
    for c in cards:
        group[c] = values[_representative_of(c, cards, live)]
    maximise = side[to_play] if goal == MAKE or not misere else not side[to_play]
    value = max(group.values()) if maximise else min(group.values())
    return Solution(value, group, search.nodes)


def opening_leads(rules: Rules, contract: str, hand: Iterable[int], trumps: int | None = None) -> tuple[int, ...]:
    """The cards the bidder may lead to the first trick (the engine's rule, RULES.md §4, §7.6).

    `trumps` is the named suit of a floater Wellington; elsewhere the lead names trumps.
    """
    held = tuple(sorted(hand))
    base = contract.split("-", 1)[0]
    how = lead_rule(rules, base)
    if how == "low":
        low: dict[int, int] = {}
        for c in held:
            low.setdefault(SUIT[c], c)
        return tuple(sorted(low.values()))
    if how == "plain":
        plain = [c for c in held if SUIT[c] != trumps]
        rank = min(RANK[c] for c in plain)
        return tuple(c for c in plain if RANK[c] == rank)
    return held


def first_lead_names_trumps(rules: Rules, contract: str) -> bool:
    """Does the opening lead name trumps for this contract? (Not in a no-trump misère,
    nor in a floater Wellington, whose trumps are named before play.)"""
    base = contract.split("-", 1)[0]
    if base in MISERE_BIDS:
        return lead_names_trumps(rules, base)
    return not (rules.floater and base == "wellington")


# --- the search --------------------------------------------------------------------------

def _mask(cards_in: Iterable[int]) -> int:
    m = 0
    for c in cards_in:
        m |= 1 << c
    return m


def _check(pos: Position, hands: list[int], played: list[tuple[int, int]], left: int) -> None:
    seen = 0
    for m in hands:
        if m & seen:
            raise ValueError("a card is in two hands")
        seen |= m
    in_trick = {i for i, _ in played}
    for i, m in enumerate(hands):
        expect = left - (1 if i in in_trick else 0)
        if m.bit_count() != expect:
            raise ValueError(f"seat {pos.order[i]} holds {m.bit_count()} cards, expected {expect}")
    if len(played) >= len(hands):
        raise ValueError("the current trick is already complete")
    if played:
        nxt = (played[-1][0] + 1) % len(hands)
        if pos.order[nxt] != pos.to_play:
            raise ValueError(f"seat {pos.to_play} is not next to play")


def _legal(hand: int, played: list[tuple[int, int]]) -> tuple[int, ...]:
    if played:
        follow = hand & SUIT_MASKS[SUIT[played[0][1]]]
        if follow:
            hand = follow
    return tuple(c for c in range(52) if hand >> c & 1)


def _representatives(legal: Iterable[int], live: int) -> list[int]:
    """One card per run of equivalent cards: same suit, no live card between them."""
    out = []
    prev = -1
    for c in sorted(legal):
        if prev >= 0 and SUIT[c] == SUIT[prev] and not live & ((1 << c) - (2 << prev)):
            prev = c
            continue
        out.append(c)
        prev = c
    return out


def _representative_of(c: int, legal: Iterable[int], live: int) -> int:
    reps = _representatives(legal, live)
    best = reps[0]
    for r in reps:
        if r <= c:
            best = r
    return best


class _Search:
    """One deal's search state: the hands (mutated in place, restored on return) and the table."""

    def __init__(self, hands: list[int], n: int, good: tuple[int, ...], side: tuple[bool, ...],
                 max_nodes: int | None, table: Table | None, deadline: float | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.hands = hands
        self.n = n
        self.good = good
        self.side = side
        self.nxt = tuple((i + 1) % n for i in range(n))
        self.max_nodes = max_nodes if max_nodes is not None else 1 << 62
        self.deadline, self.clock = deadline, clock
        # The node count at which the search next stops to look: its budget, or sooner
        # to read the clock (see `next_limit`).
        self.limit = self.max_nodes if deadline is None else min(self.max_nodes, CLOCK_EVERY)
        self.table: Table = {} if table is None else table
        self.nodes = 0
        self.lead, self.follow = self._build()

    def live(self) -> int:
        m = 0
        for h in self.hands:
            m |= h
        return m

    def root(self, seat: int, played: list[tuple[int, int]], c: int, trumps: int, alpha: int, beta: int,
             left: int) -> int:
        """Good tricks from here (the current trick included) after `seat` plays card c."""
        hands = self.hands
        live = self.live()
        for _, x in played:
            live |= 1 << x
        bit = 1 << c
        hands[seat] ^= bit
        try:
            if not played:
                tr = SUIT[c] if trumps == _BY_LEAD else trumps
                return self.follow(self.nxt[seat], 1, SUIT[c], seat, c, bit, live, tr, alpha, beta,
                                   left)
            led = SUIT[played[0][1]]
            ws, wc = played[0]
            tmask = 1 << wc
            for s, x in played[1:] + [(seat, c)]:
                tmask |= 1 << x
                if SUIT[x] == SUIT[wc]:
                    if x > wc:
                        ws, wc = s, x
                elif SUIT[x] == trumps:
                    ws, wc = s, x
            if len(played) + 1 == self.n:  # our card completes the trick
                g = self.good[ws]
                if left == 1:
                    return g
                return g + self.lead(ws, trumps, alpha - g, beta - g, left - 1, live ^ tmask)
            return self.follow(self.nxt[seat], len(played) + 1, led, ws, wc, tmask, live, trumps,
                               alpha, beta, left)
        finally:
            hands[seat] ^= bit

    def next_limit(self) -> int:
        """Past `limit`: stop if the node budget or the time is spent, else look again later."""
        if self.nodes > self.max_nodes:
            raise SearchLimit(f"more than {self.max_nodes} nodes")
        if self.deadline is not None and self.clock() > self.deadline:
            raise OutOfTime(f"past the deadline after {self.nodes} nodes")
        return min(self.max_nodes, self.nodes + CLOCK_EVERY)

    # One function per node kind, long by design: the search's inner loop, as closures over
    # local state with nothing factored out into calls (a call per node costs a tenth of the search).
    def _build(self) -> tuple[_Lead, _Follow]:  # noqa: PLR0915
        """The two mutually recursive node functions, as closures over local state (speed)."""
        hands, n, good, side, nxt = self.hands, self.n, self.good, self.side, self.nxt
        table, limit = self.table, self.limit
        suit_of, suit_masks = SUIT, SUIT_MASKS
        bidder = side.index(True)
        defenders = tuple(i for i in range(n) if i != bidder)
        misere = good[bidder] == 0
        # Does winning the trick oneself help one's side? Not in a misère, for anyone.
        helps = tuple(good[i] == side[i] for i in range(n))
        state = self

        def lead(leader: int, tr: int, alpha: int, beta: int, left: int, live: int) -> int:  # noqa: PLR0912, PLR0915
            # Trick boundary: `left` tricks to play, `leader` to lead, trumps `tr` set;
            # `live` is every card still in a hand.
            nonlocal limit
            if alpha >= left:
                return left
            if beta <= 0:
                return 0
            if left == 1:
                # Last trick: every card is forced.
                state.nodes += n
                s = leader
                wc = hands[s].bit_length() - 1
                ws = s
                ws_suit = suit_of[wc]
                for _ in range(n - 1):
                    s = nxt[s]
                    x = hands[s].bit_length() - 1
                    xs = suit_of[x]
                    if xs == ws_suit:
                        if x > wc:
                            ws, wc = s, x
                    elif xs == tr:
                        ws, wc, ws_suit = s, x, xs
                return good[ws]
            state.nodes += 1
            if state.nodes > limit:
                limit = state.next_limit()
            key = (*hands, leader, tr)
            entry = table.get(key)
            if entry is not None:
                lo, hi = entry
                if lo >= beta:
                    return lo
                if hi <= alpha:
                    return hi
                if lo > alpha:
                    alpha = lo
                if hi < beta:
                    beta = hi
            else:
                lo, hi = 0, left
            if tr != _NO_TRUMPS and tr != _BY_LEAD:  # noqa: PLR1714 - two int compares, no tuple scan
                # Sure tricks: a trump above every live trump of the other side wins the
                # trick it is played to, whenever that is.
                trumps = live & suit_masks[tr]
                mine = hands[bidder] & trumps
                sure_b = (mine >> (trumps ^ mine).bit_length()).bit_count()
                top = mine.bit_length()
                sure_d = 0
                for i in defenders:
                    k = ((hands[i] & trumps) >> top).bit_count()
                    if k > sure_d:
                        sure_d = k
                if misere:
                    lo_b, hi_b = sure_d, left - sure_b
                else:
                    lo_b, hi_b = sure_b, left - sure_d
                if lo_b > lo:
                    lo = lo_b
                if hi_b < hi:
                    hi = hi_b
                if lo >= beta:
                    return lo
                if hi <= alpha:
                    return hi
                if lo > alpha:
                    alpha = lo
                if hi < beta:
                    beta = hi
            a0, b0 = alpha, beta
            hand = hands[leader]
            # One card per run of equivalent cards, highest first within each suit:
            # cashing a top card is the most common best lead.
            moves: list[int] = []
            m = hand
            prev = -1
            while m:
                low = m & -m
                c = low.bit_length() - 1
                m ^= low
                if prev >= 0 and suit_of[c] == suit_of[prev] and not live & (low - (2 << prev)):
                    moves[-1] = c
                else:
                    moves.append(c)
                prev = c
            moves.reverse()
            maximise = side[leader]
            best = -1 if maximise else left + 1
            nseat = nxt[leader]
            for c in moves:
                bit = 1 << c
                hands[leader] = hand ^ bit
                s = suit_of[c]
                v = follow(nseat, 1, s, leader, c, bit, live, s if tr == _BY_LEAD else tr,
                           alpha, beta, left)
                if maximise:
                    if v > best:
                        best = v
                        if v > alpha:
                            alpha = v
                            if alpha >= beta:
                                break
                elif v < best:
                    best = v
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            break
            hands[leader] = hand
            if tr != _BY_LEAD:
                if best <= a0:
                    if best < hi:
                        hi = best
                elif best >= b0:
                    if best > lo:
                        lo = best
                else:
                    lo = hi = best
                table[key] = (lo, hi)
            return best

        def follow(  # noqa: PLR0912, PLR0913, PLR0915, PLR0917 - every node's state in locals
                seat: int, count: int, led: int, ws: int, wc: int, tmask: int, live: int, tr: int,
                alpha: int, beta: int, left: int) -> int:
            # Within a trick: `count` cards played, (ws, wc) winning so far, `tmask` the
            # cards on the trick; `live` holds them and every card still in a hand.
            state.nodes += 1
            hand = hands[seat]
            legal = hand & suit_masks[led] or hand
            wsuit = suit_of[wc]
            nseat = nxt[seat]
            count += 1
            if count == n:
                # The last card of the trick: score it here rather than one call deeper.
                rest = live ^ tmask
                if not legal & (legal - 1):
                    c = legal.bit_length() - 1
                    cs = suit_of[c]
                    w = seat if ((c > wc) if cs == wsuit else (cs == tr)) else ws
                    g = good[w]
                    if left == 1:
                        return g
                    hands[seat] = hand ^ legal
                    v = g + lead(w, tr, alpha - g, beta - g, left - 1, rest ^ legal)
                    hands[seat] = hand
                    return v
            elif not legal & (legal - 1):
                # A single legal card: no choice to make.
                c = legal.bit_length() - 1
                hands[seat] = hand ^ legal
                cs = suit_of[c]
                if (c > wc) if cs == wsuit else (cs == tr):
                    v = follow(nseat, count, led, seat, c, tmask | legal, live, tr, alpha, beta, left)
                else:
                    v = follow(nseat, count, led, ws, wc, tmask | legal, live, tr, alpha, beta, left)
                hands[seat] = hand
                return v
            maximise = side[seat]
            # Equivalent runs collapse to one card; then order: if the other side is
            # winning, the cheapest card that takes the trick first; else the lowest.
            moves = []
            takers = []
            m = legal
            prev = -1
            while m:
                low = m & -m
                c = low.bit_length() - 1
                m ^= low
                if prev >= 0 and suit_of[c] == suit_of[prev] and not live & (low - (2 << prev)):
                    prev = c
                    continue
                prev = c
                cs = suit_of[c]
                if (c > wc) if cs == wsuit else (cs == tr):
                    takers.append(c)
                else:
                    moves.append(c)
            if takers:
                if good[ws] == maximise or not helps[seat]:
                    moves += takers
                else:
                    moves = takers + moves
            if not helps[seat]:
                # Misère: shed the highest card that stays under the trick first.
                moves.reverse()
            best = -1 if maximise else left + 1
            last = count == n
            for c in moves:
                bit = 1 << c
                cs = suit_of[c]
                takes = (c > wc) if cs == wsuit else (cs == tr)
                if last:
                    g = good[seat] if takes else good[ws]
                    if left == 1:
                        v = g
                    else:
                        hands[seat] = hand ^ bit
                        v = g + lead(seat if takes else ws, tr, alpha - g, beta - g, left - 1,
                                     rest ^ bit)
                else:
                    hands[seat] = hand ^ bit
                    if takes:
                        v = follow(nseat, count, led, seat, c, tmask | bit, live, tr, alpha, beta, left)
                    else:
                        v = follow(nseat, count, led, ws, wc, tmask | bit, live, tr, alpha, beta, left)
                if maximise:
                    if v > best:
                        best = v
                        if v > alpha:
                            alpha = v
                            if alpha >= beta:
                                break
                elif v < best:
                    best = v
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            break
            hands[seat] = hand
            return best

        return lead, follow
