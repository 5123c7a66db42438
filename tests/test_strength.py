"""Ratings of many-player tables (`stats.strength`) on synthetic boards of known strengths:
the order and the values come back, the intervals cover the truth about as often as they
say, sums merge exactly, and a field that never met is not rated."""

from __future__ import annotations

import json
import math
import random

import pytest

from naparena.arena.setup.league import league_tables
from naparena.stats import strength
from naparena.stats.distributions import t_quantile
from naparena.stats.strength import LineupSums, merge, rate

HELD = 6  # hands each bot holds on a board (its seatings)


def spearman(order: list[str], truth: dict[str, float]) -> float:
    n = len(order)
    rank = {b: i for i, b in enumerate(sorted(order, key=lambda b: -truth[b]))}
    return 1 - 6 * sum((i - rank[b]) ** 2 for i, b in enumerate(order)) / (n * (n * n - 1))


def boards(truth: dict[str, float], table: int, rounds: int, per_table: int, seed: int,
           kitty: int = 0) -> dict:
    """Line-up sums of a league whose bots win, per hand, their strength less their table's
    mean plus heavy-tailed zero-sum noise (chips are whole numbers); `kitty` chips a hand
    leave the table (the sums no longer add to zero)."""
    rng = random.Random(seed)
    sums: dict = {}
    for seats in league_tables(sorted(truth), table, rounds, seed):
        key = (seats, (HELD,) * table)
        s = sums.setdefault(key, LineupSums(key[1]))
        mean = sum(truth[b] for b in seats) / table
        for _ in range(per_table):
            noise = [rng.choice((-1, 1)) * rng.expovariate(1 / 30) for _ in seats]
            centre = sum(noise) / table
            s.add([round(HELD * (truth[b] - mean + e - centre)) - kitty * HELD for b, e in zip(seats, noise)])
    return sums


TRUTH = {f"b{i:02d}": (i - 7.5) * 3.0 for i in range(16)}  # chips per hand


def test_margins_recover_known_strengths_in_value_and_order():
    rated = rate(boards(TRUTH, 4, 12, 20, seed=1))
    rows = {r["bot"]: r for r in rated["bots"]}
    assert rated["connected"] and len(rows) == 16
    assert spearman([r["bot"] for r in rated["bots"]], TRUTH) > 0.97
    # The rating is chips per 100 hands at a table of average bots: 3/4 of the strength at tables of four.
    covered = [rows[b]["ci95"][0] <= 100 * v * 3 / 4 <= rows[b]["ci95"][1] for b, v in TRUTH.items()]
    assert sum(covered) >= 14
    assert all(r["boards"] == 12 * 20 for r in rated["bots"])


def test_places_recover_the_order():
    rated = rate(boards(TRUTH, 4, 12, 20, seed=2), "places")
    assert spearman([r["bot"] for r in rated["bots"]], TRUTH) > 0.95
    assert rated["bots"][0]["rating"] > 0 > rated["bots"][-1]["rating"]


@pytest.mark.slow  # 300 simulated leagues a model: minutes of CPU
@pytest.mark.parametrize("model", ["margins", "places"])
def test_intervals_cover_the_truth_about_as_often_as_they_say(model):
    # Identical bots: every true rating is 0. 300 leagues of 8 bots, the first bot's interval each time.
    truth = {f"a{i}": 0.0 for i in range(8)}
    covered = 0
    for seed in range(300):
        rows = rate(boards(truth, 4, 6, 8, seed=seed), model)["bots"]
        ci = next(r["ci95"] for r in rows if r["bot"] == "a0")
        covered += ci[0] <= 0 <= ci[1]
    assert 0.90 <= covered / 300 <= 0.99, covered  # 95% ± 3 binomial sd


def test_a_kitty_taken_from_every_seat_changes_no_rating():
    plain = rate(boards(TRUTH, 4, 6, 10, seed=3))
    taxed = rate(boards(TRUTH, 4, 6, 10, seed=3, kitty=2))
    assert [(r["bot"], r["rating"], r["ci95"]) for r in plain["bots"]] == \
        [(r["bot"], r["rating"], r["ci95"]) for r in taxed["bots"]]


def test_sums_merged_rate_as_all_the_boards_at_once():
    rng = random.Random(4)
    rows = [(seats, [rng.randrange(-60, 61) for _ in range(3)])
            for seats in league_tables(sorted(TRUTH), 3, 6, 4) for _ in range(5)]
    rows = [(seats, [*row[:2], -sum(row[:2])]) for seats, row in rows]

    def book(part: list) -> dict:
        out: dict = {}
        for seats, row in part:
            out.setdefault((seats, (HELD,) * 3), LineupSums((HELD,) * 3)).add(row)
        return out

    halves: dict = {}
    merge(halves, book(rows[::2]).items())
    merge(halves, book(rows[1::2]).items())
    assert rate(halves) == rate(book(rows))
    assert rate(book(rows[::2])) != rate(book(rows))


def test_bots_that_never_met_are_not_rated():
    sums = {}
    for seats in (("a", "b", "c"), ("d", "e", "f")):
        s = sums[(seats, (HELD,) * 3)] = LineupSums((HELD,) * 3)
        for n in range(5):
            s.add([6 * n, -3 * n, -3 * n])
    rated = rate(sums)
    assert not rated["connected"] and rated["bots"] == []


def test_one_bot_holding_two_slots_counts_its_boards_once():
    s = LineupSums((HELD,) * 3)
    for n in range(6):
        s.add([n, n, -2 * n])
    rated = rate({(("a", "a", "b"), (HELD,) * 3): s})
    assert {r["bot"]: r["boards"] for r in rated["bots"]} == {"a": 6, "b": 6}


@pytest.mark.parametrize("model", ["margins", "places"])
def test_each_bot_s_t_quantile_has_its_own_boards_degrees_of_freedom(model):
    # 16 bots at tables of four, 3 rounds of 4 boards: 12 boards a bot, 48 in the league.
    # A bot's variance rests on its own 12 boards: t with 11 df, not the fit's 48 − 16 + 1.
    rated = rate(boards(TRUTH, 4, 3, 4, seed=3), model)
    assert rated["df"] == 33
    for row in rated["bots"]:
        assert row["boards"] == 12
        half = (row["ci95"][1] - row["ci95"][0]) / 2
        assert half / row["se"] == pytest.approx(t_quantile(11), rel=0.01)  # 2.201, not 2.035 (rounding: 3 decimals)


def _dense_inverse_sum_zero(a: list) -> list | None:
    """The fits' algebra before it scaled (issue 33): Gauss–Jordan on a + c·11ᵀ beside I."""
    n = len(a)
    c = max(a[i][i] for i in range(n)) / n or 1.0
    m = [[a[i][j] + c for j in range(n)] + [float(i == j) for j in range(n)] for i in range(n)]
    scale = max(a[i][i] for i in range(n)) or 1.0
    for k in range(n):
        pivot = max(range(k, n), key=lambda i: abs(m[i][k]))
        if abs(m[pivot][k]) < 1e-9 * scale:
            return None
        m[k], m[pivot] = m[pivot], m[k]
        m[k] = [x / m[k][k] for x in m[k]]
        for i in range(n):
            if i != k:
                m[i] = [x - m[i][k] * y for x, y in zip(m[i], m[k])]
    return [r[n:] for r in m]


def _dense_sandwich(b: list, meat: list, tables: list, n: int) -> tuple[list[float], float]:
    g = sum(s.n for _, s in tables)
    var = [sum(b[i][idx[p]] * d[p][q] * b[i][idx[q]] for idx, d in meat
               for p in range(len(idx)) for q in range(len(idx))) for i in range(n)]
    values = sum(s.n * (len(idx) - 1) for idx, s in tables)
    factor = g / (g - 1) * values / (values - n + 1)  # CR1, written out again
    return [math.sqrt(max(v, 0.0) * factor) for v in var], float(g - n + 1)


def _dense_newton_step(h: list, g: list) -> list | None:
    n = len(g)
    b = _dense_inverse_sum_zero([[row.get(j, 0.0) for j in range(n)] for row in h])
    return None if b is None else [sum(b[i][j] * g[j] for j in range(n)) for i in range(n)]


@pytest.mark.parametrize("model", ["margins", "places"])
def test_the_sparse_fits_agree_with_the_dense_ones(model, monkeypatch):
    # Cholesky, conjugate gradients and a sparse meat against Gauss–Jordan and the full
    # B M B, on an unbalanced league (12 rounds of 16 bots at tables of four, 3 to 9 boards).
    sums = boards(TRUTH, 4, 12, 5, seed=6)
    for key, s in list(sums.items())[::3]:
        s.merge(boards(TRUTH, 4, 12, 4, seed=7).get(key, LineupSums(s.hands)))
    bots = sorted(TRUTH)
    tables = [([bots.index(b) for b in names], s) for (names, _), s in sums.items()]
    fit = strength._fit_margins if model == "margins" else strength._fit_places
    fast = fit(tables, len(bots))
    monkeypatch.setattr(strength, "_inverse_sum_zero", _dense_inverse_sum_zero)
    monkeypatch.setattr(strength, "_sandwich", _dense_sandwich)
    monkeypatch.setattr(strength, "_conjugate_gradients", _dense_newton_step)
    dense = fit(tables, len(bots))
    assert fast is not None and dense is not None
    for x, y in zip(fast[0] + fast[1], dense[0] + dense[1]):
        assert x == pytest.approx(y, rel=1e-9, abs=1e-9)


def test_places_rate_a_league_where_one_bot_never_placed_above_another():
    # c finishes last on every board: without the prior its strength runs to −∞ and the
    # old fit rated nothing (half of 300 varied leagues); with it, every bot gets a finite
    # rating, c last, its interval below a's.
    first, second = LineupSums((HELD,) * 3), LineupSums((HELD,) * 3)
    for n in range(5):
        first.add([6 * n + 1, 3, -6 * n - 4])
        second.add([n + 1, -n, -1])
    rated = rate({(("a", "b", "c"), (HELD,) * 3): first, (("a", "d", "c"), (HELD,) * 3): second}, "places")
    rows = {r["bot"]: r for r in rated["bots"]}
    assert rated["connected"] and set(rows) == {"a", "b", "c", "d"}
    assert all(math.isfinite(r["rating"]) and r["ci95"] is not None for r in rows.values())
    assert rows["a"]["rating"] > rows["c"]["rating"] and rows["c"]["ci95"][1] < rows["a"]["ci95"][0]




def _with_lineup_effects(sums: dict, sd: float, seed: int) -> dict:
    """The same boards, each line-up's seats moved by an effect of its own (how these bots
    fare with these opponents), shared by all its boards."""
    rng = random.Random(seed)
    out = {}
    for key, s in sums.items():
        k, held = len(key[0]), key[1]
        shift = [round(HELD * rng.gauss(0, sd)) for _ in range(k)]
        shift[-1] = -sum(shift[:-1])
        moved = LineupSums(held)
        moved.n, moved.chips = s.n, [c + s.n * d for c, d in zip(s.chips, shift)]
        moved.chips2 = [[s.chips2[p][q] + shift[p] * s.chips[q] + s.chips[p] * shift[q] + s.n * shift[p] * shift[q]
                         for q in range(k)] for p in range(k)]
        moved.places, moved.places2 = s.places, s.places2
        out[key] = moved
    return out


def test_margins_intervals_widen_with_line_up_effects_the_boards_cannot_see(monkeypatch):
    # Boards of one line-up share its effect: across leagues (other line-ups drawn) a
    # bot's rating moves with it, though within the league its boards agree. A sandwich
    # over boards alone (the old one) gives the same width with or without the effect.
    plain = boards(TRUTH, 4, 6, 10, seed=8)
    moved = _with_lineup_effects(plain, 15.0, seed=9)
    se_plain = {r["bot"]: r["se"] for r in rate(plain)["bots"]}
    se_moved = {r["bot"]: r["se"] for r in rate(moved)["bots"]}
    assert sum(se_moved.values()) > 1.3 * sum(se_plain.values())
    monkeypatch.setattr(strength, "_between_lineups", lambda *args: (0.0, 0.0))
    board_only = {r["bot"]: r["se"] for r in rate(plain)["bots"]}
    # Where there is no such effect, its estimate is near 0 and the width near the boards' alone.
    assert sum(se_plain.values()) == pytest.approx(sum(board_only.values()), rel=0.1)


def _book(rows: list, slots: list[int] | None = None) -> dict:
    """Line-up sums of `rows` (seats, hands held, chips), each line-up's slots taken in the
    order `slots` (as another run's aliases would order its bots)."""
    out: dict = {}
    for seats, held, chips in rows:
        order = slots or list(range(len(seats)))
        key = (tuple(seats[p] for p in order), tuple(held[p] for p in order))
        out.setdefault(key, LineupSums(key[1])).add([chips[p] for p in order])
    return out


def test_the_same_boards_booked_in_any_order_rate_byte_identically():
    # The line-ups' own effect groups boards by line-up: a line-up must be the bots at the
    # table, whatever order a run's aliases put them in, which run booked a shared match
    # first, or which of two aliases of one bot a board's chips went to. Before, the same
    # boards under another slot order were another line-up, and the ratings moved.
    rng = random.Random(11)
    tables = [(seats, (HELD,) * 3) for seats in league_tables(sorted(TRUTH), 3, 6, 4)]
    tables += [(("b00", "b00", "b01"), (HELD,) * 3)] * 2  # one bot under two aliases at a table
    rows = []
    for seats, held in tables:
        for _ in range(5):
            chips = [rng.randrange(-60, 61) for _ in range(2)]
            rows.append((seats, held, [*chips, -sum(chips)]))
    # Another order: boards reversed, split over two runs whose aliases order each table's
    # bots the other way, and the two aliases of b00 swapped on every other board.
    swapped = [(s, h, [c[1], c[0], c[2]] if s[0] == s[1] and n % 2 else c) for n, (s, h, c) in enumerate(rows)]
    other: dict = {}
    merge(other, _book(swapped[::-1][::2], slots=[2, 1, 0]).items())
    merge(other, _book(swapped[::-1][1::2]).items())
    first = _book(rows)
    for model in strength.MODELS:
        assert json.dumps(rate(first, model)) == json.dumps(rate(other, model))
    assert rate(first)["bots"] != rate(_book(rows[:-10]))["bots"]  # the boards matter
