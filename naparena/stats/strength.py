"""Ratings from many-player tables: every seat's result on every board, adjusted for who
else sat at the table, with 95% intervals. Two models over the same board sums:

- `margins` (the one naparena shows): chips per hand on a board are a bot's strength less
  the mean strength of its table, plus noise; least squares on the board's chips less the
  table's mean (the kitty's share cancels). The rating is the chips per 100 hands the bot
  would win at a table of average bots of the list.
- `places`: Bradley–Terry on the board's places: each pair of bots at a table on a board
  is a game won by the one with more chips per hand (a tie is half each), fitted by its
  composite likelihood. Its scale is the log-odds of finishing ahead of an average bot.

Both get their intervals from a sandwich over boards (a board's results are one draw,
however many pairs it holds), so neither assumes the noise is normal or the pairs
independent; margins add the line-ups' own effect (`_between_lineups`), over line-ups
made canonical (`canonical`), so a league's draw of tables is in the interval. Both
need only, per line-up, the board count and the sums and products of the per-bot
values, kept as exact integers: sums add, so rating two runs' sums is
rating the two runs merged, and memory grows with line-ups, not boards.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from operator import mul
from typing import Any

from naparena.stats.distributions import t_quantile

#: A line-up: the bots at one table (each once), in a fixed order, and the hands each holds
#: on a board (its seats times the rotations).
Lineup = tuple[tuple[str, ...], tuple[int, ...]]


class LineupSums:
    """One line-up's boards, as exact power sums per bot: chips (each bot's on a board, over
    `hands[i]` hands it held, in units of 1 / `unit` chip: the luck-adjusted estimator's
    are millionths) and places (opponents it finished ahead of, ties half: doubled so they
    stay integers). `add` takes a board; `merge` adds another's sums."""

    __slots__ = ("hands", "unit", "n", "chips", "chips2", "places", "places2")

    def __init__(self, hands: Sequence[int], unit: int = 1):
        k = len(hands)
        self.hands, self.unit = tuple(hands), unit
        self.n = 0
        self.chips, self.places = [0] * k, [0] * k
        self.chips2 = [[0] * k for _ in range(k)]
        self.places2 = [[0] * k for _ in range(k)]

    def add(self, chips: Sequence[int]) -> None:
        h, k = self.hands, len(self.hands)
        places = [sum(_beats(chips[i] * h[j], chips[j] * h[i]) for j in range(k) if j != i) for i in range(k)]
        self.n += 1
        for i in range(k):
            self.chips[i] += chips[i]
            self.places[i] += places[i]
            row_c, row_p = self.chips2[i], self.places2[i]
            for j in range(k):
                row_c[j] += chips[i] * chips[j]
                row_p[j] += places[i] * places[j]

    def merge(self, other: LineupSums) -> None:
        assert other.hands == self.hands and other.unit == self.unit, \
            "line-ups merge only with the same hands held, counted in the same unit"
        self.n += other.n
        for i in range(len(self.hands)):
            self.chips[i] += other.chips[i]
            self.places[i] += other.places[i]
            for j in range(len(self.hands)):
                self.chips2[i][j] += other.chips2[i][j]
                self.places2[i][j] += other.places2[i][j]

    def permuted(self, order: Sequence[int]) -> LineupSums:
        """The same boards with slot p taken from slot `order[p]`."""
        out = LineupSums([self.hands[i] for i in order], self.unit)
        out.n = self.n
        out.chips, out.places = [self.chips[i] for i in order], [self.places[i] for i in order]
        out.chips2 = [[self.chips2[i][j] for j in order] for i in order]
        out.places2 = [[self.places2[i][j] for j in order] for i in order]
        return out

    def values(self, model: str) -> tuple[list[float], list[list[float]]]:
        """Sums of the model's per-bot board values and of their products, as floats:
        chips per 100 hands (margins), or places (opponents beaten, ties half)."""
        if model == "margins":
            per = [100 / (h * self.unit) for h in self.hands]
            s, ss = self.chips, self.chips2
        else:
            per = [0.5] * len(self.hands)
            s, ss = self.places, self.places2
        return ([s[i] * per[i] for i in range(len(s))],
                [[ss[i][j] * per[i] * per[j] for j in range(len(s))] for i in range(len(s))])


def _beats(a: int, b: int) -> int:
    return 2 if a > b else 1 if a == b else 0


MODELS = ("margins", "places")

#: A fit: strengths, their standard errors, the fit's degrees of freedom, and a cap on a
#: bot's (the line-ups' residual degrees of freedom where their effect widened it).
Fit = tuple[list[float], list[float], float, float]


def rate(lineups: dict[Lineup, LineupSums], model: str = "margins") -> dict[str, Any]:
    """Every bot's rating with its 95% interval and boards behind it, best first, under
    `model`. `connected` is False when some bots never met the others through any chain
    of tables (their ratings cannot be compared, and none are given)."""
    lineups = canonical(lineups)
    bots = sorted({b for names, _ in lineups for b in names})
    index = {b: i for i, b in enumerate(bots)}
    boards = [0] * len(bots)
    for (names, _), sums in lineups.items():
        for b in set(names):  # one bot may hold two slots of a line-up (two aliases of it)
            boards[index[b]] += sums.n
    out: dict[str, Any] = {"model": model, "bots": [], "boards": sum(s.n for s in lineups.values()),
                           "connected": True}
    if len(bots) < 2:
        return out
    tables = [([index[b] for b in names], sums) for (names, _), sums in lineups.items()]
    if not _connected(tables, len(bots)):
        out["connected"] = False
        return out
    fit = _fit_margins(tables, len(bots)) if model == "margins" else _fit_places(tables, len(bots))
    if fit is None:
        out["connected"] = False
        return out
    theta, se, df, cap = fit  # cap: the line-ups' residual df where their effect widened the interval
    # Fewer boards than ratings to fit leave no spread to measure: a rating, no interval
    # (null in JSON, with the reason beside it; never an infinite standard error).
    none = None if df > 0 else (f"{out['boards']} boards for {len(bots)} bots: an interval needs at least "
                                "as many boards as bots; play more rounds, hands or seeds")
    rows: list[dict[str, Any]] = []
    for i, b in enumerate(bots):
        scale = 1.0
        if model == "margins":  # at a table of average bots: k − 1 of the k shares are others'
            scale = _mean_table_share(tables, i)
        r, s = theta[i] * scale, se[i] * scale
        # A bot's variance rests on its own boards (the clusters its estimate moves with),
        # not on the whole league's: its t quantile has their degrees of freedom. With the
        # league's (550 where a bot had 48 boards) the intervals covered 0.93, not 0.95;
        # with few boards a bot it is conservative (docs/how-to/leagues.md). A Satterthwaite
        # count of the boards a bot's variance rests on gave fewer still (6 for 8 boards).
        own = min(df, boards[i] - 1, cap)
        q = t_quantile(own) if own > 0 else math.inf
        finite = none is None and math.isfinite(s) and math.isfinite(q)
        why = none or (None if finite else f"{boards[i]} board(s): too few for an interval; "
                       "play more rounds, hands or seeds")
        rows.append({"bot": b, "rating": round(r, 3), "se": round(s, 3) if none is None and math.isfinite(s) else None,
                     "ci95": [round(r - q * s, 3), round(r + q * s, 3)] if finite else None,
                     "no_interval": why, "boards": boards[i]})
    rows.sort(key=lambda row: (-row["rating"], row["bot"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    out["bots"] = rows
    out["df"] = round(df, 1) if df > 0 else None
    if none is not None:
        out["no_interval"] = none
    return out


def canonical(lineups: dict[Lineup, LineupSums]) -> dict[Lineup, LineupSums]:
    """The line-ups as what was played made them, whatever booked them: each one's slots
    ordered by (bot, hands held), boards of the same bots at one table added into one
    line-up, the line-ups in sorted order. How runs named their bots, which run booked a
    shared match first, and in what order the boards came in, change nothing: the fit,
    and the line-ups' own effect (which groups boards by line-up), see the same sums
    summed in the same order."""
    out: dict[Lineup, LineupSums] = {}
    for (names, hands), sums in lineups.items():
        if not sums.n:
            continue
        order = sorted(range(len(names)), key=lambda p: (names[p], hands[p]))
        key = (tuple(names[p] for p in order), tuple(hands[p] for p in order))
        have = out.get(key)
        if have is None:
            have = out[key] = LineupSums(key[1], sums.unit)
        have.merge(sums.permuted(order))
    return dict(sorted(out.items(), key=lambda item: item[0]))


def _exchangeable(idx: list[int], hands: tuple[int, ...], sx: list[float],
                  sxx: list[list[float]]) -> tuple[list[float], list[list[float]]]:
    """The sums with the slots one bot holds alike (two aliases of it, the same hands)
    made interchangeable: each entry the mean over the slots' permutations (exact sums,
    so in any order the same floats). Which of those slots a board's chips went to
    depends on the aliases of the run that booked it, not on the play; the fit and the
    board sandwich add such slots anyway, and the line-ups' own effect now does too."""
    group = [(idx[p], hands[p]) for p in range(len(idx))]
    if len(set(group)) == len(group):
        return sx, sxx
    k = len(idx)
    ones: dict[tuple[int, int], list[float]] = {}
    for p in range(k):
        ones.setdefault(group[p], []).append(sx[p])
    pairs: dict[tuple[tuple[int, int], tuple[int, int], bool], list[float]] = {}
    for p in range(k):
        for q in range(k):
            pairs.setdefault((group[p], group[q], p == q), []).append(sxx[p][q])
    mean = {g: math.fsum(v) / len(v) for g, v in ones.items()}
    means = {g: math.fsum(v) / len(v) for g, v in pairs.items()}
    return ([mean[group[p]] for p in range(k)],
            [[means[group[p], group[q], p == q] for q in range(k)] for p in range(k)])


def _mean_table_share(tables: list[tuple[list[int], LineupSums]], i: int) -> float:
    """(k − 1) / k over the boards bot i played: strength above a table of average bots."""
    n = sum(s.n for idx, s in tables if i in idx)
    return sum(s.n * (len(idx) - 1) / len(idx) for idx, s in tables if i in idx) / n


def _fit_margins(tables: list[tuple[list[int], LineupSums]], n: int) -> Fit | None:
    """Least squares of centred board values on strengths (sum zero), and its sandwich."""
    a = [[0.0] * n for _ in range(n)]
    r = [0.0] * n
    sums = []
    for idx, s in tables:
        k = len(idx)
        sx, sxx = _exchangeable(idx, s.hands, *s.values("margins"))
        sums.append((sx, sxx))
        mean = sum(sx) / k
        for p, i in enumerate(idx):
            r[i] += sx[p] - mean
            for q, j in enumerate(idx):
                a[i][j] += s.n * ((p == q) - 1 / k)
    b = _inverse_sum_zero(a)
    if b is None:
        return None
    theta = [sum(map(mul, row, r)) for row in b]
    between, lineup_df = _between_lineups(tables, sums, theta, b, n)
    meat = []
    for (idx, s), (sx, sxx) in zip(tables, sums):
        t = [theta[i] for i in idx]
        k = len(idx)
        # Σ over boards of (x − θ)(x − θ)ᵀ, then centred on both sides (x and θ enter centred);
        # plus the line-up's own effect, shared by its boards: n² of it where the boards saw n.
        d = _centre([[sxx[p][q] - sx[p] * t[q] - t[p] * sx[q] + s.n * t[p] * t[q] for q in range(k)]
                     for p in range(k)])
        extra = between * s.n * (s.n - 1)
        meat.append((idx, [[d[p][q] + extra * ((p == q) - 1 / k) for q in range(k)] for p in range(k)]))
    se, df = _sandwich(b, meat, tables, n)
    return theta, se, df, lineup_df if between else math.inf


def _between_lineups(tables: list[tuple[list[int], LineupSums]], sums: list[tuple[list[float], list[list[float]]]],
                     theta: list[float], b: list[list[float]], n: int) -> tuple[float, float]:
    """The variance σ² of a line-up's own effect on each seat (how a bot fares with these
    particular opponents beyond their strengths), by moments, and its degrees of freedom.

    A bot's margin depends on whom it sat with beyond what its opponents' ratings add up
    to; a board-clustered sandwich is conditional on the line-ups a league drew, and its
    intervals covered 0.88, not 0.95, across draws among a varied field. The line-ups'
    weighted residual sum of squares, RSS = Σ n ‖P(x̄ − θ)‖², has expectation
    σ² (Σ n (k − 1) − Σ n² tr PBP) + Σ (tr PSP − n tr(PBP · PSP)) for S the covariance of
    a board's values within the line-up (from its boards, or pooled where it had one),
    B the fit's inverse, P centring; solved for σ² (0 if negative). Its degrees of
    freedom are the line-ups' Σ (k − 1) less the n − 1 strengths."""
    pooled_num, pooled_den = 0.0, 0.0
    within: list[list[list[float]] | None] = []
    for (idx, s), (sx, sxx) in zip(tables, sums):
        k = len(idx)
        if s.n < 2:
            within.append(None)
            continue
        w = _centre([[(sxx[p][q] - sx[p] * sx[q] / s.n) / (s.n - 1) for q in range(k)] for p in range(k)])
        within.append(w)
        pooled_num += sum(w[p][p] for p in range(k)) * (s.n - 1)
        pooled_den += (k - 1) * (s.n - 1)
    if not pooled_den:
        return 0.0, 0.0
    pooled = pooled_num / pooled_den
    rss = c_between = c_within = 0.0
    lineup_df = 1.0 - n
    for (idx, s), (sx, _), cov in zip(tables, sums, within):
        k = len(idx)
        res = [sx[p] / s.n - theta[i] for p, i in enumerate(idx)]
        mean = sum(res) / k
        rss += s.n * sum((x - mean) ** 2 for x in res)
        pbp = _centre([[b[i][j] for j in idx] for i in idx])
        c_between += s.n * (k - 1) - s.n ** 2 * sum(pbp[p][p] for p in range(k))
        if cov is None:  # a board's covariance taken as the pooled σ² P
            c_within += pooled * ((k - 1) - s.n * sum(pbp[p][p] for p in range(k)))
        else:
            c_within += sum(cov[p][p] for p in range(k)) - s.n * sum(
                pbp[p][q] * cov[q][p] for p in range(k) for q in range(k))
        lineup_df += k - 1
    if c_between <= 0 or lineup_df < 1:
        return 0.0, 0.0
    return max(0.0, (rss - c_within) / c_between), lineup_df


#: The places model's prior: each log-strength normal about 0 with standard deviation 2
#: (an even chance against an average bot, ±1 sd from 12% to 88%), as a penalty 1/2² · β²/2.
#: Without it a league where some bots never placed above the rest has no fit (their
#: strengths run to infinity): the fit rated 149 of 300 varied leagues. It weighs as much
#: as a quarter of a board against an average bot, so a played league barely moves.
PRIOR = 0.25


def _fit_places(tables: list[tuple[list[int], LineupSums]], n: int,
                steps: int = 200) -> Fit | None:
    """Bradley–Terry on board places by Newton steps on the composite log-likelihood
    with a weak normal prior (`PRIOR`; log-strengths, sum zero), each step solved by conjugate gradients on the sparse
    Hessian (a weighted Laplacian of who met whom); the sandwich's meat is each board's
    score (places less their expectation), from the same sums."""
    beta = [0.0] * n
    wins = [0.0] * n
    for idx, s in tables:
        sx, _ = s.values("places")
        for p, i in enumerate(idx):
            wins[i] += sx[p]
    for _ in range(steps):
        grad = [w - PRIOR * x for w, x in zip(wins, beta)]
        h: list[dict[int, float]] = [{i: PRIOR} for i in range(n)]
        for idx, s in tables:
            for p, i in enumerate(idx):
                for j in idx[p + 1:]:
                    pij = 1 / (1 + math.exp(beta[j] - beta[i]))
                    grad[i] -= s.n * pij
                    grad[j] -= s.n * (1 - pij)
                    w = s.n * pij * (1 - pij)
                    hi, hj = h[i], h[j]
                    hi[i] = hi.get(i, 0.0) + w
                    hj[j] = hj.get(j, 0.0) + w
                    hi[j] = hi.get(j, 0.0) - w
                    hj[i] = hj.get(i, 0.0) - w
        step = _conjugate_gradients(h, grad)
        if step is None:
            return None
        beta = [x + d for x, d in zip(beta, step)]
        if max(abs(d) for d in step) < 1e-10:
            break
    b = _inverse_sum_zero([[row.get(j, 0.0) for j in range(n)] for row in h])
    if b is None:
        return None
    meat = []
    for idx, s in tables:
        sx, sxx = s.values("places")
        e = [sum(1 / (1 + math.exp(beta[j] - beta[i])) for j in idx if j != i) for i in idx]
        k = len(idx)
        meat.append((idx, [[sxx[p][q] - sx[p] * e[q] - e[p] * sx[q] + s.n * e[p] * e[q] for q in range(k)]
                           for p in range(k)]))
    return beta, *_sandwich(b, meat, tables, n), math.inf


def _conjugate_gradients(h: list[dict[int, float]], g: list[float]) -> list[float] | None:
    """x with H x = g for a weighted Laplacian H (rows as {column: value}; places add the
    prior's diagonal) and g summing to zero: the sum-zero solution, as the iterates stay
    in H's range. A league's
    Laplacian is well conditioned (an expander: every bot met many), so tens of sparse
    products replace the dense solve. None where it does not converge (the field falls
    apart: a pair's weight vanished)."""
    rows = [(list(r), list(r.values())) for r in h]
    x = [0.0] * len(g)
    res = g[:]
    d = res[:]
    rr = sum(map(mul, res, res))
    # Relative to the first residual, or near rounding for the Hessian's scale (the last
    # Newton steps solve for a gradient already at rounding level).
    scale = max((r.get(i, 0.0) for i, r in enumerate(h)), default=1.0)
    stop = max(1e-26 * rr, 1e-28 * scale * scale * len(g))
    for _ in range(2 * len(g) + 50):  # n steps in exact arithmetic
        if rr <= stop:
            return x
        hd = [sum(map(mul, vals, [d[j] for j in cols])) for cols, vals in rows]
        dhd = sum(map(mul, d, hd))
        if dhd <= 0:
            return None
        alpha = rr / dhd
        x = [a + alpha * b for a, b in zip(x, d)]
        res = [a - alpha * b for a, b in zip(res, hd)]
        new = sum(map(mul, res, res))
        d = [a + (new / rr) * b for a, b in zip(res, d)]
        rr = new
    return None


def _sandwich(b: list[list[float]], meat: list[tuple[list[int], list[list[float]]]],
              tables: list[tuple[list[int], LineupSums]], n: int) -> tuple[list[float], float]:
    """Standard errors from B M B with boards as clusters (only the diagonal is formed:
    the meat, summed table by table, is sparse, so B M costs a row of B per entry of M);
    the small-sample factor of clustered least squares (CR1: G / (G − 1) for G boards,
    times N / (N − n + 1) for the N values the fit has, k − 1 a board of k seats once
    each board is centred), and the fit's G − n + 1 degrees of freedom (each bot's t
    quantile takes the fewer of these and its own boards less one: see `rate`).

    The factor was G / (G − n + 1), as if a board were one value: with tables of 3 and
    16 bots on 44 boards it made the standard errors 1.23 times the factor's, and the
    ratings' spread was 0.94 of the se printed (docs/how-to/leagues.md)."""
    g = sum(s.n for _, s in tables)
    df = g - n + 1
    values = sum(s.n * (len(idx) - 1) for idx, s in tables)
    factor = g / (g - 1) * values / (values - n + 1) if df > 0 and g > 1 else math.inf
    m: list[dict[int, float]] = [{} for _ in range(n)]
    for idx, d in meat:
        for p, i in enumerate(idx):
            row = m[i]
            for q, j in enumerate(idx):
                row[j] = row.get(j, 0.0) + d[p][q]
    var = [0.0] * n
    for q in range(n):  # B symmetric: (B M B)ᵢᵢ = Σ_q B[q][i] (M B)[q][i]
        mb = [0.0] * n
        for p, v in m[q].items():
            mb = [x + v * y for x, y in zip(mb, b[p])]
        var = [s + x * y for s, x, y in zip(var, b[q], mb)]
    return [math.sqrt(max(v, 0.0) * factor) for v in var], float(df)


def _centre(d: list[list[float]]) -> list[list[float]]:
    """P D P with P = I − J/k: rows and columns less their means."""
    k = len(d)
    rows = [sum(r) / k for r in d]
    cols = [sum(d[p][q] for p in range(k)) / k for q in range(k)]
    total = sum(rows) / k
    return [[d[p][q] - rows[p] - cols[q] + total for q in range(k)] for p in range(k)]


def _inverse_sum_zero(a: list[list[float]]) -> list[list[float]] | None:
    """The inverse of a + c·11ᵀ for a Laplacian-like `a` (rows sum to zero): on vectors
    summing to zero it solves `a`, giving the sum-zero solution. None when the bots do not
    form one connected field (a pivot vanishes)."""
    n = len(a)
    c = max(a[i][i] for i in range(n)) / n or 1.0
    low = _cholesky([[x + c for x in row] for row in a])
    return None if low is None else _inverse(low)


def _connected(tables: list[tuple[list[int], LineupSums]], n: int) -> bool:
    """Do the bots form one field, every two joined by a chain of shared tables?"""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for idx, _ in tables:
        for j in idx[1:]:
            parent[root(j)] = root(idx[0])
    return len({root(i) for i in range(n)}) == 1


def _cholesky(a: list[list[float]]) -> list[list[float]] | None:
    """The lower factor L of a symmetric positive definite `a` (row i holds L[i][:i + 1]),
    or None where a pivot vanishes. Dot products over the rows so far: n³/6 steps, each
    in C (`sum(map(mul))`), where the old Gauss–Jordan sweep took 2n³ in Python."""
    n = len(a)
    scale = max((a[i][i] for i in range(n)), default=1.0) or 1.0
    low: list[list[float]] = []
    for i in range(n):
        row = [0.0] * (i + 1)
        ai = a[i]
        for j in range(i):
            lj = low[j]
            row[j] = (ai[j] - sum(map(mul, row, lj))) / lj[j]  # row[j:] is still 0
        d = ai[i] - sum(map(mul, row, row))
        if d <= 1e-9 * scale:
            return None
        row[i] = math.sqrt(d)
        low.append(row)
    return low


def _inverse(low: list[list[float]]) -> list[list[float]]:
    """(L Lᵀ)⁻¹ from the factor: the columns of L⁻¹ by forward substitution, then each
    entry as the dot product of two of them."""
    n = len(low)
    cols: list[list[float]] = []  # cols[j] = (L⁻¹)[j:, j]
    for j in range(n):
        u = [1 / low[j][j]]
        for i in range(j + 1, n):
            li = low[i]
            u.append(-sum(map(mul, li[j:i], u)) / li[i])
        cols.append(u)
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        ci = cols[i]
        for j in range(i + 1):
            out[i][j] = out[j][i] = sum(map(mul, ci, cols[j][i - j:]))
    return out


def merge(into: dict[Lineup, LineupSums], more: Iterable[tuple[Lineup, LineupSums]]) -> None:
    """Add line-up sums (another run's, or another deal set's) to `into`, in place."""
    for lineup, sums in more:
        have = into.get(lineup)
        if have is None:
            have = into[lineup] = LineupSums(sums.hands, sums.unit)
        have.merge(sums)
