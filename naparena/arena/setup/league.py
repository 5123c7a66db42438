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
    n = len(aliases)
    sat = [0] * n
    met: list[Counter[int]] = [Counter() for _ in range(n)]
    tables = [_fill([], table, sat, met, rng, range(n)) for _ in range(math.ceil(n * rounds / table))]
    _improve(tables, met, rng)
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
        sat = [0] * len(field)
        met: list[Counter[int]] = [Counter() for _ in field]
        groups = [_fill([], table - 1, sat, met, rng, range(len(field)))
                  for _ in range(math.ceil(len(field) * rounds / (table - 1)))]
        _improve(groups, met, rng)
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


def _fill(chosen: list[int], size: int, sat: list[int], met: list[Counter[int]], rng: random.Random,
          everyone: range) -> list[int]:
    """`chosen` filled to `size` bots, each taken from those that have sat least (so table
    counts stay within one) as the one that has met the bots already chosen least."""
    while len(chosen) < size:
        free = [i for i in everyone if i not in chosen]
        low = min(sat[i] for i in free)
        pool = [i for i in free if sat[i] == low]
        pool = _sample(rng, pool, min(len(pool), CANDIDATES))
        best = min(pool, key=lambda i: sum(met[i][j] ** 2 for j in chosen))
        chosen.append(best)
    for i in chosen:
        sat[i] += 1
        for j in chosen:
            if j != i:
                met[i][j] += 1
    return chosen


def _improve(tables: list[list[int]], met: list[Counter[int]], rng: random.Random) -> None:
    """Swap bots between tables to lower the sum of squared pair counts: the greedy's late
    tables take whoever is left, and swaps spread those repeats out. A swap keeps every
    bot's table count, so only pairs change. Annealed: early on a swap that costs a little
    is taken now and then, so the search leaves a design no single swap improves."""
    if len(tables) < 2:
        return
    steps = min(max(SWAPS * len(tables), MIN_SWAPS), MAX_SWAPS)
    for step in range(steps):
        heat = 1.0 * (1 - step / steps)
        x, y = _below(rng, len(tables)), _below(rng, len(tables))
        tx, ty = tables[x], tables[y]
        p, q = _below(rng, len(tx)), _below(rng, len(ty))
        a, b = tx[p], ty[q]
        if x == y or a in ty or b in tx:
            continue
        change: Counter[tuple[int, int]] = Counter()
        for c in tx:
            if c != a:
                change[(a, c)] -= 1
                change[(b, c)] += 1
        for d in ty:
            if d != b:
                change[(b, d)] -= 1
                change[(a, d)] += 1
        cost = sum((met[i][j] + k) ** 2 - met[i][j] ** 2 for (i, j), k in change.items())
        if cost > 0 and (heat < 0.05 or rng.random() >= math.exp(-cost / heat)):
            continue
        for (i, j), k in change.items():
            met[i][j] += k
            met[j][i] += k
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
