"""Board statistics: the unit of every interval is a *board* — hand n of one deal set,
played in each of that deal set's rotations — and the line-up is a stratum.

Why boards: hands of one match are dealt independently (every hand in `every_hand`
variants; from their own board seeds in duplicate runs of the others), and a board's
results across its rotations are averaged inside the board, so the negative correlation
between rotations stays inside the unit instead of being mistaken for noise. Measured
on seeded runs, neighbouring boards are as good as uncorrelated, and boards give an
interval even with `seeds = 1`.

Why strata: with more bots than seats a bot plays several line-ups (tables), and how it
does against each line-up is a fixed part of the design, the same in every run. So a
mean is taken per stratum (variant, table, seats held) and the strata are combined with
their board counts as weights; the variance is the stratified one, its degrees of
freedom Welch–Satterthwaite's. A bot holding two seats averages them inside each board.

Sums are kept as exact integers (chips, with the board's seat count as the scale), so
the standings are the same numbers on every Python version.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from fractions import Fraction
from itertools import combinations
from typing import Any, Protocol

from naparena.stats.distributions import t_quantile, t_two_sided_p, welch_df
from naparena.stats.strength import Lineup, LineupSums

#: A deal set: (variant, seed stream, table number, and the table's deal set with duplicate,
#: the rotation without: its own deals); a table's one deal set may leave the last out.
DealSet = tuple[str, int, int] | tuple[str, int, int, int]
#: A stratum of one bot, pair or position: the table number, then the seats or rotations behind
#: each board value (they set its scale).
Stratum = tuple[int, ...]


class Scheduled(Protocol):
    """What the standings need to know of a match of the schedule (the runner's
    `MatchSpec` is one; stats imports nothing from the runner)."""

    @property
    def index(self) -> int: ...
    @property
    def variant(self) -> str: ...
    @property
    def stream(self) -> int: ...
    @property
    def table_no(self) -> int: ...
    @property
    def rotation(self) -> int: ...
    @property
    def seats(self) -> tuple[str, ...]: ...  # the bots the schedule seats, seat by seat
    @property
    def boards(self) -> bool: ...
    @property
    def deal_set(self) -> int: ...  # with duplicate, the table's cyclic order of seats (0: the first)


# A stratum's number: table × this + the deal set (with duplicate) or the seating (without);
# seatings per table < 1,000.
SEATINGS_MAX = 1000


class Moments:
    """Exact power sums of integer board values x (each meaning x / scale)."""

    __slots__ = ("scale", "n", "s1", "s2", "s3", "s4", "above", "ties")

    def __init__(self, scale: int):
        self.scale = scale
        self.n = self.s1 = self.s2 = self.s3 = self.s4 = self.above = self.ties = 0

    def add(self, x: int) -> None:
        self.n += 1
        x2 = x * x
        self.s1 += x
        self.s2 += x2
        self.s3 += x2 * x
        self.s4 += x2 * x2
        self.above += x > 0
        self.ties += x == 0

    def mean(self) -> Fraction:
        return Fraction(self.s1, self.n * self.scale)

    def var(self) -> Fraction:
        """Sample variance (n − 1) of x / scale."""
        n = self.n
        return Fraction(n * self.s2 - self.s1 * self.s1, n * (n - 1) * self.scale ** 2)

    def central(self) -> tuple[Fraction, Fraction]:
        """Sums of squared and fourth-power deviations from the stratum mean, of x / scale."""
        n, m = self.n, Fraction(self.s1, self.n)
        c2 = self.s2 - m * self.s1
        c4 = self.s4 - 4 * m * self.s3 + 6 * m * m * self.s2 - 4 * m ** 3 * self.s1 + n * m ** 4
        return c2 / self.scale ** 2, c4 / self.scale ** 4

    def as_list(self) -> list[int]:
        return [self.scale, self.n, self.s1, self.s2, self.s3, self.s4, self.above, self.ties]


def estimate(strata: list[Moments], per: int = 100) -> dict[str, Any]:
    """Stratified mean of the board values (times `per`), its standard error, degrees of
    freedom, 95% interval and two-sided p-value against 0; `pooled_var` is the
    within-stratum variance of one board and `kurtosis` its pooled fourth moment over the
    square of the second (3 for normal data), which compare's variance ratio needs."""
    strata = [s for s in strata if s.n]
    total = sum(s.n for s in strata)
    out: dict[str, Any] = {"mean": 0.0, "boards": total, "se": None, "df": None, "ci95": None, "p_value": None,
           "p_above": None, "pooled_var": None, "kurtosis": None}
    if not total:
        return out
    mean = sum(s.n * s.mean() for s in strata) / total
    out["mean"] = float(mean * per)
    out["p_above"] = float(Fraction(sum(2 * s.above + s.ties for s in strata), 2 * total))
    if any(s.n < 2 for s in strata):
        return out  # a stratum of one board says nothing about its own spread
    parts = [(s.n * s.var() / total ** 2, s.n - 1) for s in strata]
    se2 = sum(v for v, _ in parts)
    c2 = c4 = Fraction(0)
    for s in strata:
        a, b = s.central()
        c2 += a
        c4 += b
    out["pooled_var"] = float(c2 / (total - len(strata)) * per * per)
    out["kurtosis"] = float(c4 * total / (c2 * c2)) if c2 else None
    se = math.sqrt(se2) * per
    df = welch_df([(float(v), d) for v, d in parts])
    out["se"], out["df"] = se, df
    if se == 0:
        out["ci95"] = [out["mean"], out["mean"]]
        out["p_value"] = 1.0 if mean == 0 else 0.0
        return out
    half = t_quantile(df) * se
    out["ci95"] = [out["mean"] - half, out["mean"] + half]
    out["p_value"] = t_two_sided_p(out["mean"] / se, df)
    return out


def no_interval(strata: list[Moments]) -> str:
    """Why `estimate` gives these strata no interval, in words: a stratum (a line-up, and
    with duplicate a deal set of it) holding one board has no spread of its own."""
    held = [m for m in strata if m.n]
    if not held:
        return "no board held in full"
    single = sum(1 for m in held if m.n < 2)
    return (f"{single} of its {len(held)} line-ups and deal sets hold a single board, and a spread needs "
            "two in each: play more hands or seed streams")


class _Open:
    """A deal set being played: per board, each bot's chips (by slot), each seat's chips
    over the rotations, and whether every rotation got the same deal.

    The line-up is the schedule's: a bot whose seat died, or was taken by the stand-in,
    still has its slot. `played[i]` is the first board bot i did not hold in full in every
    rotation (a seat dies for the rest of its match, so what a bot misses is a suffix of
    the boards); its chips from there on are the stand-in's and never read."""

    def __init__(self, table_no: int, seats: Sequence[str], order: dict[str, int], hands: int, unit: int = 1):
        self.table_no, self.players, self.unit = table_no, len(seats), unit
        self.names = sorted(set(seats), key=order.__getitem__)
        self.slot = {a: i for i, a in enumerate(self.names)}
        self.seats_held = [0] * len(self.names)  # hands a bot holds on each board
        self.played = [hands] * len(self.names)  # boards 0 .. played[i] - 1 bot i held in full
        self.chips = [[0] * len(self.names) for _ in range(hands)]
        self.squares = [[0] * len(self.names) for _ in range(hands)]  # sum of each hand's square
        self.seat_chips = [[0] * self.players for _ in range(hands)]
        self.dealer: int | None = None
        self.keys: list[int] | None = None
        self.same = [True] * hands
        self.rotations = 0
        self.incomplete = False

    def boards(self) -> list[dict[str, list[int]]]:
        """Per board, alias → [chips, hands held], for the bots that held it in full."""
        return [{a: [c, k] for a, c, k, p in zip(self.names, row, self.seats_held, self.played) if n < p}
                for n, row in enumerate(self.chips)]

    def diffs(self, a: str, b: str, span: int = 1) -> list[float]:
        """Per unit of `span` hands both held in full (a board, or a round without
        duplicate: see `BoardBook.span`), A − B chips per 100 hands; empty if either did
        not play here."""
        if a not in self.slot or b not in self.slot:
            return []
        i, j = self.slot[a], self.slot[b]
        ka, kb = self.seats_held[i] * span * self.unit, self.seats_held[j] * span * self.unit
        shared = min(self.played[i], self.played[j])
        return [row[i] * 100 / ka - row[j] * 100 / kb for row in _boards(self.chips, shared, span)]


class BoardBook:
    """Boards of every variant, streamed: a deal set is held until it is closed (schedule
    order), then folded into per-stratum sums. Memory grows with strata, not hands.
    Each hand's result is an integer in units of 1 / `unit` chip: chips (1), or the
    luck-adjusted estimator's millionths (`naparena.table.luck`)."""

    def __init__(self, variants: list[str], aliases: list[str], duplicate: bool, unit: int = 1):
        self.aliases, self.duplicate, self.unit = aliases, duplicate, unit
        self.order = {a: i for i, a in enumerate(aliases)}
        self.open: dict[DealSet, _Open] = {}
        self.bots: dict[str, defaultdict[str, dict[Stratum, Moments]]] = {
            v: defaultdict(dict) for v in variants}  # alias → stratum → Moments
        # alias → stratum → [hands, sum, sum of squares] of its single hands: what as many
        # independent hands would vary by, against which a board's spread is judged
        self.hands: dict[str, defaultdict[str, dict[Stratum, list[int]]]] = {
            v: defaultdict(dict) for v in variants}
        self.pairs: dict[str, defaultdict[tuple[str, str], dict[Stratum, Moments]]] = {
            v: defaultdict(dict) for v in variants}  # (a, b) → stratum → Moments
        self.positions: dict[str, defaultdict[int, dict[Stratum, Moments]]] = {
            v: defaultdict(dict) for v in variants}  # position → stratum → Moments
        self.identical = {v: [0, 0] for v in variants}             # [boards dealt identically, boards]
        self.left_out = dict.fromkeys(variants, 0)                   # boards of incomplete deal sets
        # alias → boards of its deal sets it did not hold in full (a seat of its died or was
        # stood in for): left out of its intervals, kept in the other bots'
        self.bots_left_out: dict[str, dict[str, int]] = {v: {} for v in variants}
        self.board_seeds = dict.fromkeys(variants, False)            # dealt board by board
        # line-up → its boards' sums, for the many-player ratings (`strength`)
        self.lineups: dict[str, dict[Lineup, LineupSums]] = {v: {} for v in variants}

    def add(self, unit: DealSet, match: Scheduled, summary: dict[str, Any], own: list[int] | None = None,
            per_hand: list[list[int]] | None = None) -> None:
        """One match of deal set `unit`: seat `s` is `match.seats[s]` as scheduled, and its
        bot played the first `own[s]` hands itself (`own_hands`; None: every seat all of them).
        `per_hand`: each hand's results per seat in this book's unit (None: the summary's chips)."""
        seats = match.seats
        if per_hand is None:
            per_hand = summary.get("hand_chips")
        if per_hand is None:  # a log from before boards: the whole match is one board
            per_hand = [[s["chips"] for s in summary["seats"]]]
        u = self.open.get(unit)
        if u is None:
            u = self.open[unit] = _Open(match.table_no, seats, self.order, len(per_hand), self.unit)
        u.rotations += 1
        if match.boards:
            self.board_seeds[unit[0]] = True
        if len(per_hand) != len(u.chips) or set(seats) != set(u.names):
            u.incomplete = True
            return
        slots = [u.slot[a] for a in seats]
        for i in slots:
            u.seats_held[i] += 1
        if own is not None:  # a seat died or was stood in: its bot misses the boards from there
            played = u.played
            for i, end in zip(slots, own):
                if end < played[i]:
                    played[i] = end
        # The hot loop of the parent process: plain lists, one pass per hand.
        for row, seat_row, square, chips in zip(u.chips, u.seat_chips, u.squares, per_hand):
            for s, (i, c) in enumerate(zip(slots, chips)):
                row[i] += c
                seat_row[s] += c
                square[i] += c * c
        if u.dealer is None:
            u.dealer = summary.get("dealer")
        keys = summary.get("deal_keys")
        if keys is not None:
            if u.keys is None:
                u.keys = list(keys)
            else:
                u.same = [same and k == first_k for same, k, first_k in zip(u.same, keys, u.keys)]

    def design_effect(self, variant: str, alias: str) -> float | None:
        """How much a bot's board varies against as many independent hands of its own: the
        within-stratum variance of its boards over what its single hands' variance makes of
        a board of k hands. 1: a board is worth its k hands; above 1, a bot's hands on one
        board go together (with duplicate: its replays of a deal in other seats) and its
        interval is wider than as many independent hands would give. None where a stratum
        has fewer than two boards."""
        strata, hands = self.bots[variant].get(alias, {}), self.hands[variant].get(alias, {})
        spread = expected = within = Fraction(0)
        count = 0
        for key, m in strata.items():
            h = hands.get(key)
            if m.n < 2 or h is None:
                return None
            spread += m.central()[0]  # boards' squared deviations, in (chips a hand)²
            expected += Fraction(m.n * (m.n - 1), h[0])  # (boards − 1) / hands a board
            within += Fraction(h[2] * h[0] - h[1] * h[1], h[0])  # single hands', in units²
            count += h[0] - 1
        if not strata or count <= 0 or within == 0:
            return None
        var = within / count / self.unit ** 2  # a single hand's variance, in chips²
        return float(spread / (var * expected))

    def skip(self, unit: DealSet) -> None:
        """A match of this deal set was not played: its boards are not balanced over seats."""
        u = self.open.get(unit)
        if u is None:
            u = self.open[unit] = _Open(0, [], self.order, 0)
        u.incomplete = True

    def span(self, u: _Open) -> int:
        """Hands in one unit of the intervals (and of the sequential test): a board with
        duplicate; without, a round of as many hands as seats (see `close`)."""
        return 1 if self.duplicate else u.players

    def close(self, unit: DealSet) -> _Open | None:
        """Fold a finished deal set into the strata; return it (None if it is left out)."""
        u = self.open.pop(unit, None)
        if u is None or not u.rotations:
            return None
        variant = unit[0]
        if self.duplicate and u.keys is not None:
            ident = self.identical[variant]
            ident[0] += sum(u.same)
            ident[1] += len(u.same)
        if u.incomplete:
            self.left_out[variant] += len(u.chips)
            return None
        held, played, names = u.seats_held, u.played, u.names
        left_out = self.bots_left_out[variant]
        for a, p in zip(names, played):
            if p < len(u.chips):
                left_out[a] = left_out.get(a, 0) + len(u.chips) - p
        # Each bot over the boards it held in full; each pair over the boards both did;
        # positions over the boards every bot did (the same players in every rotation).
        # Without duplicate a hand is played in one seating only, and where a bot sits
        # relative to the dealer is part of its value; the deal passes left every hand, so
        # a round of as many hands as seats puts every bot in every position once. The
        # round is then the board: the position effect cancels inside it instead of being
        # counted as noise (mixed fields: intervals covered 0.98, not 0.95, without it).
        # The seating is fixed there too, balanced over the design: a stratum of its own.
        # With duplicate, a deal set is one cyclic order's rotations: who sits after whom
        # is fixed in it and balanced over the table's deal sets, so each is a stratum too.
        span = self.span(u)
        table = u.table_no * SEATINGS_MAX + (unit[3] if len(unit) > 3 else 0)
        for i, a in enumerate(names):
            k = held[i] * span  # hands bot i holds on a board
            if played[i] >= span:
                m = _moments(self.bots[variant][a], (table, k), k * self.unit)
                for row in _boards(u.chips, played[i], span):
                    m.add(row[i])
                h = self.hands[variant][a].setdefault((table, k), [0, 0, 0])
                boards = played[i] // span * span
                h[0] += boards * held[i]
                h[1] += sum(row[i] for row in u.chips[:boards])
                h[2] += sum(row[i] for row in u.squares[:boards])
        for i, j in combinations(range(len(names)), 2):
            shared = min(played[i], played[j])
            if shared >= span:
                ki, kj = held[i] * span, held[j] * span
                m = _moments(self.pairs[variant][(names[i], names[j])], (table, ki, kj), ki * kj * self.unit)
                for row in _boards(u.chips, shared, span):
                    m.add(row[i] * kj - row[j] * ki)
        full = min(played, default=0)
        if full >= span:  # the ratings take boards every bot of the line-up held in full
            key = (tuple(names), tuple(k * span for k in held))
            sums = self.lineups[variant].get(key)
            if sums is None:
                sums = self.lineups[variant][key] = LineupSums(key[1], self.unit)
            for row in _boards(u.chips, full, span):
                sums.add(row)
        if u.dealer is not None and full:
            players = u.players
            positions = [_moments(self.positions[variant][p], (u.table_no, u.rotations), u.rotations * self.unit)
                         for p in range(players)]
            for n, seat_row in enumerate(u.seat_chips[:full]):
                # Position 0 is the eldest hand (left of the dealer), who bids first.
                first = (u.dealer + n + 1) % players
                for p, m in enumerate(positions):
                    m.add(seat_row[(first + p) % players])
        return u

    def identity(self, variant: str) -> dict[str, Any] | None:
        """Share of boards dealt identically in every rotation (duplicate runs only)."""
        same, boards = self.identical[variant]
        if not self.duplicate or not boards:
            return None
        dealing = ("each board from its own seed: duplicate boards replace gather-and-cut"
                   if self.board_seeds[variant] else "every hand shuffled from the match seed")
        return {"identical": same, "boards": boards, "share": same / boards, "dealing": dealing}


def own_hands(match: Scheduled, booked: Sequence[str], summary: dict[str, Any]) -> list[int] | None:
    """Per seat, how many hands from the first its scheduled bot played itself: all, or
    those before the hand its seat died in (a crash, a time-out or a broken seat process:
    `crashed_at`), or none where the stand-in held the seat from the start (`booked` names
    someone else there than the schedule's `match.seats`).
    The hand of death is the stand-in's too: the bot did not finish it. None when every
    bot played every hand, the common case. A log from before `hand_chips` cannot be
    split and is booked as played."""
    hands = summary["hands"]
    split = "hand_chips" in summary
    out = None
    for s, seat in enumerate(summary["seats"]):
        if booked[s] != match.seats[s]:
            end = 0
        elif split and "crashed_at" in seat:
            end = min(max(seat["crashed_at"], 0), hands)
        else:
            continue
        if end < hands:
            out = out or [hands] * len(summary["seats"])
            out[s] = end
    return out


def _boards(rows: list[list[int]], limit: int, span: int) -> Iterator[list[int]]:
    """The first `limit` hands' chips as boards of `span` hands each (a trailing part
    round is left out of the intervals; its chips still count in the totals)."""
    if span == 1:
        yield from rows[:limit]
        return
    for start in range(0, limit - span + 1, span):
        yield [sum(col) for col in zip(*rows[start:start + span])]


def _moments(strata: dict[Stratum, Moments], key: Stratum, scale: int) -> Moments:
    m = strata.get(key)
    if m is None:
        m = strata[key] = Moments(scale)
    return m
