"""The seating design: which seatings of one table are played, and which of them share
their deals, so that a verdict is about the bots and not about where they sat, who sat
beside them, or which cards they were dealt.

In Nap the players before you decide what you may still bid, and the bidder is paid by,
or pays, everyone else: a bot that always bids right after the same opponent is judged
with that opponent. So each table plays a set of cyclic orders of its slots in every
rotation. The rotations put every slot in every seat equally often; the set of orders is
chosen so that every ordered pair of slots sits at every offset (the second d seats after
the first, cyclically) equally often.

With duplicate, each cyclic order is a deal set of its own: its rotations replay one
set of deals, so every bot holds every hand in every seat, and the orders balance the
offsets across the deal sets. Replaying a deal in every seating of every order paid for
how far a deal lets each bot's edge show once per seating (24 times at a table of
four): intervals wider than plain play on the same hands (docs/explanation/statistics.md).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import TypedDict

# Per table size, the cyclic orders of the slots whose rotations are played. Each set
# was found by exhaustive search over sets of cyclic orders and is the smallest that
# balances the offsets (tests/test_seating.py checks the balance of every set):
#   2, 3: every cyclic order.
#   4: no 3 orders balance, so all 6 (all 24 seatings).
#   5, 7 (prime): the multiples i*k mod n for k = 1..n-1; a pair of slots a, b then
#       sits (b - a) * k apart, which runs through every nonzero offset once.
#   6: no 5 or 10 orders balance. These 20 are the orbit of one order under PSL(2, 5)
#       acting on the projective line over GF(5) (slot 5 is infinity): a group that maps
#       any ordered pair of slots to any other spreads each offset over all pairs alike.
#       A randomized search found no 15; if a set of 15 exists it can replace these.
SEATING_ORDERS: dict[int, tuple[tuple[int, ...], ...]] = {
    2: ((0, 1),),
    3: ((0, 1, 2), (0, 2, 1)),
    4: ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 1, 3), (0, 2, 3, 1), (0, 3, 1, 2), (0, 3, 2, 1)),
    5: ((0, 1, 2, 3, 4), (0, 2, 4, 1, 3), (0, 3, 1, 4, 2), (0, 4, 3, 2, 1)),
    6: ((0, 1, 2, 4, 3, 5), (0, 1, 3, 2, 5, 4), (0, 1, 4, 2, 5, 3), (0, 1, 5, 4, 3, 2),
        (0, 2, 1, 5, 3, 4), (0, 2, 3, 1, 4, 5), (0, 2, 4, 5, 3, 1), (0, 2, 5, 1, 4, 3),
        (0, 3, 1, 5, 2, 4), (0, 3, 2, 4, 1, 5), (0, 3, 4, 5, 2, 1), (0, 3, 5, 4, 1, 2),
        (0, 4, 1, 3, 5, 2), (0, 4, 2, 3, 5, 1), (0, 4, 3, 1, 2, 5), (0, 4, 5, 1, 2, 3),
        (0, 5, 1, 3, 4, 2), (0, 5, 2, 3, 4, 1), (0, 5, 3, 2, 1, 4), (0, 5, 4, 2, 1, 3)),
    7: ((0, 1, 2, 3, 4, 5, 6), (0, 2, 4, 6, 1, 3, 5), (0, 3, 6, 2, 5, 1, 4),
        (0, 4, 1, 5, 2, 6, 3), (0, 5, 3, 1, 6, 4, 2), (0, 6, 5, 4, 3, 2, 1)),
}

DESIGN = ("every rotation of each cyclic order of the slots: every bot in every seat, and every "
          "other bot at every offset from it, equally often; with duplicate each order's rotations "
          "replay one deal set, so every bot holds every deal in every seat")


def seatings(slots: Sequence[str]) -> list[tuple[str, ...]]:
    """The seatings (aliases in seat order) one table plays on a deal set, in order.

    `slots` names the bot in each slot. Rotation r of an order puts slot order[(s + r) % n]
    in seat s. A bot holding several slots (fewer bots than seats) makes some seatings
    repeat: they are dropped only when every distinct seating repeats equally often,
    which scales every count alike and so keeps the balance; otherwise all are played.
    """
    return _distinct(_played(slots, orders_for(slots)))


def deal_sets(slots: Sequence[str]) -> list[int]:
    """Per seating of `seatings(slots)`, the deal set it belongs to with duplicate: the
    rotations of one cyclic order share their deals (the number of the order), which
    puts every slot in every seat once on each deal. Where repeats were dropped (a bot
    holding several slots) the orders no longer map to seatings: one deal set of all."""
    played = _played(slots, orders_for(slots))
    if len(_distinct(played)) != len(played):
        return [0] * len(_distinct(played))
    n = len(slots)
    return [i // n for i in range(len(played))]


def orders_for(slots: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """The cyclic orders a table with these slots plays: the table size's set, or every
    cyclic order when a bot holds several slots and that leaves fewer distinct seatings
    (two bots at a table of six: every order gives 20, the set of 20 orders gives 120)."""
    n = len(slots)
    options = [SEATING_ORDERS[n]]
    if len(set(slots)) < n:
        options.append(tuple((0, *p) for p in itertools.permutations(range(1, n))))
    return min(options, key=lambda orders: len(_distinct(_played(slots, orders))))


def _played(slots: Sequence[str], orders: Sequence[Sequence[int]]) -> list[tuple[str, ...]]:
    n = len(slots)
    return [tuple(slots[order[(seat + r) % n]] for seat in range(n)) for order in orders for r in range(n)]


def _distinct(played: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Repeats dropped when every seating repeats equally often, else all kept."""
    return list(dict.fromkeys(played)) if len(set(Counter(played).values())) == 1 else played


class SeatingDesign(TypedDict):
    """The seating design as the manifest records it."""
    design: str
    orders: list[list[int]]
    seatings_per_deal_set: int
    deal_sets_per_table: int


#: A relation `balance` counts: ("seat", bot, seat) or ("offset", a, b, seats after a).
Relation = tuple[str, str, int] | tuple[str, str, str, int]


def design(slots: Sequence[str], duplicate: bool = True) -> SeatingDesign:
    """The design as the manifest records it, for a table whose slots hold `slots`
    (without duplicate every seating is a deal set of its own)."""
    sets = deal_sets(slots) if duplicate else list(range(len(seatings(slots))))
    count = max(sets) + 1
    return {"design": DESIGN, "orders": [list(o) for o in orders_for(slots)],
            "seatings_per_deal_set": len(sets) // count, "deal_sets_per_table": count}


def balance(matches: Iterable[tuple[Sequence[str], int]]) -> dict[Relation, Fraction]:
    """Hands played in each relation, from (seats, hands) of matches.

    ("seat", bot, s): hands the bot played in seat s; ("offset", a, b, d): hands b sat d
    seats after a (a != b). Each is divided by the seats the bots hold at that match's
    table, so a bot holding two seats of four is not counted as twice as exposed. The
    design is balanced when every value of each kind is the same; a relation of bots that
    played but never so counts as 0.
    """
    out: dict[Relation, Fraction] = defaultdict(Fraction)
    bots: set[str] = set()
    n = 0
    for seats, hands in matches:
        n, held = len(seats), Counter(seats)
        bots.update(held)
        for s, a in enumerate(seats):
            out[("seat", a, s)] += Fraction(hands, held[a])
            for d in range(1, n):
                b = seats[(s + d) % n]
                if b != a:
                    out[("offset", a, b, d)] += Fraction(hands, held[a] * held[b])
    # A relation never seen counts too: it is the imbalance rotations of one seating make.
    for a in sorted(bots):  # sorted: the message naming the first imbalance is reproducible
        for s in range(n):
            out[("seat", a, s)] += 0
        for b in sorted(bots - {a}):
            for d in range(1, n):
                out[("offset", a, b, d)] += 0
    return dict(out)


def imbalance(counts: dict[Relation, Fraction]) -> str | None:
    """What breaks the balance of `balance`'s counts, or None when each kind is even."""
    for kind in ("seat", "offset"):
        values = {k: v for k, v in counts.items() if k[0] == kind}
        if len(set(values.values())) > 1:
            low, high = min(values, key=values.__getitem__), max(values, key=values.__getitem__)
            return (f"{_relation(low)} on {_hands(values[low])} hands but "
                    f"{_relation(high)} on {_hands(values[high])}")
    return None


def _relation(key: Relation) -> str:
    if len(key) == 3:  # ("seat", bot, seat): the only three-part relation
        return f"{key[1]} sat in seat {key[2]}"
    return f"{key[2]} sat {key[3]} seat{'s' if key[3] > 1 else ''} after {key[1]}"


def _hands(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.1f}"
