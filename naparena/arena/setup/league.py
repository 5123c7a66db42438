"""Line-ups for many bots: a league's tables sampled so that every bot sits at about as
many tables as every other and every pair of bots shares about as many tables, and a
gauntlet's tables, each a challenger with part of the field. Seeded and pure, so any
process rebuilds the same line-ups from the file.

The design is greedy, in rounds: each table is filled slot by slot from the bots that have
sat least so far, taking the one that has shared fewest tables with the bots already
seated (squared counts, so a pair meeting a third time costs more than two pairs meeting
a second time). Bots' table counts never differ by more than one, and a pair meets twice
only once the design cannot avoid it. A balanced incomplete design (every pair exactly
equally often) is found where the greedy reaches one; otherwise it is near-balanced, and
`cooccurrence` counts how near.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence

# Candidates weighed for each slot: enough to find a fresh pair in a large league while
# keeping the design linear in the number of tables.
CANDIDATES = 64
# Swaps tried per table after the greedy pass, and at most in all (a league of 1,000 bots).
SWAPS = 200
MAX_SWAPS = 600_000
MIN_SWAPS = 100_000


def league_tables(aliases: Sequence[str], table: int, rounds: int, seed: int) -> list[tuple[str, ...]]:
    """ceil(bots × rounds / table) tables of `table` different bots: every bot at `rounds`
    tables, or one more where bots × rounds does not fill the last table."""
    rng = random.Random(seed)
    design = _Design(len(aliases))
    tables = [design.fill(table, rng) for _ in range(math.ceil(len(aliases) * rounds / table))]
    _improve(tables, design.met, rng)
    return [tuple(aliases[i] for i in chosen) for chosen in tables]


def gauntlet_tables(aliases: Sequence[str], challengers: Sequence[str], table: int, rounds: int,
                    seed: int) -> list[tuple[str, ...]]:
    """Each challenger at tables of its own with `table` − 1 bots of the field (the bots
    that are not challengers), so the field never plays itself without a challenger:
    every combination of the field when `rounds` is 0, else tables sampled like a
    league's, each field bot at `rounds` tables with each challenger."""
    field = [a for a in aliases if a not in challengers]
    out: list[tuple[str, ...]] = []
    for challenger in challengers:
        if rounds == 0:
            out += [(challenger, *c) for c in itertools.combinations(field, table - 1)]
            continue
        rng = random.Random(f"{seed}|gauntlet|{challenger}")
        design = _Design(len(field))
        groups = [design.fill(table - 1, rng) for _ in range(math.ceil(len(field) * rounds / (table - 1)))]
        _improve(groups, design.met, rng)
        out += [(challenger, *(field[i] for i in chosen)) for chosen in groups]
    return out


def gauntlet_size(bots: int, challengers: int, table: int, rounds: int) -> int:
    """Tables of a gauntlet, counted without building it."""
    field = bots - challengers
    if rounds == 0:
        return challengers * math.comb(field, table - 1)
    return challengers * math.ceil(field * rounds / (table - 1))


def league_size(bots: int, table: int, rounds: int) -> int:
    return math.ceil(bots * rounds / table)


class _Design:
    """The greedy's state: the tables each bot has sat at, the tables each pair has shared
    (a full matrix, symmetric: a league has at most 1,000 bots), and the bots at each
    table count in ascending order, so a slot's candidates are found without scanning
    every bot."""

    def __init__(self, n: int):
        self.sat = [0] * n
        self.met = [[0] * n for _ in range(n)]
        self.levels: dict[int, list[int]] = {0: list(range(n))}

    def fill(self, size: int, rng: random.Random) -> list[int]:
        """A table of `size` bots, each taken from those that have sat least (so table
        counts stay within one) as the one that has met the bots already chosen least."""
        chosen: list[int] = []
        while len(chosen) < size:
            pool = self._least_sat(chosen)
            pool = _sample(rng, pool, min(len(pool), CANDIDATES))
            rows = [self.met[j] for j in chosen]  # met is symmetric: row j, column i
            chosen.append(min(pool, key=lambda i: sum(row[i] ** 2 for row in rows)))
        self._seat(chosen)
        return chosen

    def _least_sat(self, chosen: list[int]) -> list[int]:
        """The bots not chosen yet that have sat at fewest tables, in ascending order."""
        for level in sorted(self.levels):
            pool = self.levels[level][:]
            for i in chosen:
                if self.sat[i] == level:
                    pool.remove(i)
            if pool:
                return pool
        raise ValueError("a table larger than the league")

    def _seat(self, chosen: list[int]) -> None:
        """Count the table: each bot one level up, each pair once more."""
        sat, levels, met = self.sat, self.levels, self.met
        for i in chosen:
            level = sat[i]
            levels[level].remove(i)
            if not levels[level]:
                del levels[level]
            sat[i] = level + 1
            bisect.insort(levels.setdefault(level + 1, []), i)
            row = met[i]
            for j in chosen:
                if j != i:
                    row[j] += 1


def _improve(tables: list[list[int]], met: list[list[int]], rng: random.Random) -> None:
    """Swap bots between tables to lower the sum of squared pair counts: the greedy's late
    tables take whoever is left, and swaps spread those repeats out. A swap keeps every
    bot's table count, so only pairs change. Annealed: early on a swap that costs a little
    is taken now and then, so the search leaves a design no single swap improves.

    The draws are `_below`'s, inlined: this loop is most of a large league's design."""
    count = len(tables)
    if count < 2:
        return
    steps = min(max(SWAPS * count, MIN_SWAPS), MAX_SWAPS)
    draw = rng.random
    for step in range(steps):
        heat = 1.0 * (1 - step / steps)
        x, y = int(draw() * count), int(draw() * count)
        x, y = x if x < count else count - 1, y if y < count else count - 1
        tx, ty = tables[x], tables[y]
        p, q = int(draw() * len(tx)), int(draw() * len(ty))
        p, q = p if p < len(tx) else len(tx) - 1, q if q < len(ty) else len(ty) - 1
        a, b = tx[p], ty[q]
        if x == y or a in ty or b in tx:
            continue
        cost = _swap_cost(met, tx, ty, a, b)
        if cost > 0 and (heat < 0.05 or draw() >= math.exp(-cost / heat)):
            continue
        _swap(met, tx, ty, p, q)


def _swap_cost(met: list[list[int]], tx: list[int], ty: list[int], a: int, b: int) -> int:
    """What swapping a (of table tx) with b (of ty) adds to the sum of squared pair counts:
    a's pairs with tx's others move to b, b's with ty's others to a (a bot at both tables
    keeps both), and a count m moved by ±1 changes m² by ±2m + 1."""
    ma, mb = met[a], met[b]
    half = 0
    for c in tx:
        if c != a and c not in ty:
            half += mb[c] - ma[c] + 1
    for d in ty:
        if d != b and d not in tx:
            half += ma[d] - mb[d] + 1
    return 2 * half


def _swap(met: list[list[int]], tx: list[int], ty: list[int], p: int, q: int) -> None:
    """Swap tx[p] and ty[q], moving their pairs (see `_swap_cost`) in both halves of `met`."""
    a, b = tx[p], ty[q]
    ma, mb = met[a], met[b]
    for c in tx:
        if c != a and c not in ty:  # a's partner, b's now
            met[c][a] -= 1
            met[c][b] += 1
            ma[c] -= 1
            mb[c] += 1
    for d in ty:
        if d != b and d not in tx:
            met[d][b] -= 1
            met[d][a] += 1
            mb[d] -= 1
            ma[d] += 1
    tx[p], ty[q] = b, a


# Only `random()` is promised the same sequence on every Python version (not randrange,
# shuffle or sample), and the line-ups must be the same wherever a run is resumed or verified.
def _below(rng: random.Random, n: int) -> int:
    return min(int(rng.random() * n), n - 1)


def _sample(rng: random.Random, items: list[int], k: int) -> list[int]:
    """k of `items` in random order (a partial Fisher–Yates shuffle on a copy)."""
    items = items[:]
    for i in range(k):
        j = i + _below(rng, len(items) - i)
        items[i], items[j] = items[j], items[i]
    return items[:k]


def cooccurrence(tables: Iterable[Sequence[str]]) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """Tables each bot sits at, and tables each pair of bots shares (pairs that never met
    are absent: count them as 0)."""
    bots: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    for seats in tables:
        bots.update(set(seats))
        pairs.update(itertools.combinations(sorted(set(seats)), 2))
    return bots, pairs
