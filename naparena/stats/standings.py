"""Standings from match summaries, streamed: per bot and variant, chips with confidence
intervals over boards stratified by line-up (see `boards`), contracts, faults, paired
head-to-head differences, position effects, and the sequential test.

A *deal set* is one (variant, seed stream, table, deal set of the table): the duplicate
seatings that replay its deals (the rotations of one cyclic order); without duplicate
each match is its own deal set. A *board* is hand n of a deal set, across its
rotations: the independent unit of every interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from typing import Any, Protocol

from naparena.stats.boards import BoardBook, DealSet, Moments, Scheduled, Stratum, estimate, no_interval, own_hands
from naparena.stats.distributions import betainc, t_quantile, t_two_sided_p, welch_df
from naparena.stats.ratings import rank_key, ranking
from naparena.stats.sequential import Sprt
from naparena.stats.strength import rate

#: Who is booked for the hands a seat's own bot did not play (a dead seat, a disqualified
#: bot's seat); arena.tournament takes it from here, as stats imports nothing from arena.
STAND_IN_ALIAS = "stand-in"

__all__ = ["Scheduled", "Standings", "Sprt", "betainc", "compare", "mean_ci", "t95", "t_two_sided_p"]

#: How chips are counted in the intervals: "adjusted" takes out the luck of answers drawn
#: with known odds (`naparena.table.luck`), "plain" counts chips as they fell.
ADJUSTED, PLAIN = "adjusted", "plain"
ESTIMATORS = (ADJUSTED, PLAIN)


def t95(df: float) -> float:
    """The two-sided 95% quantile of Student's t."""
    return t_quantile(df)


def mean_ci(values: list[float]) -> tuple[float, float | None, float | None]:
    """Mean and its 95% confidence interval (t); no interval from fewer than two values."""
    n = len(values)
    if n == 0:
        return 0.0, None, None
    mean = math.fsum(values) / n
    if n < 2:
        return mean, None, None
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = t95(n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def _new_bot() -> dict[str, Any]:
    return {"hands": 0, "chips": 0, "bidder_hands": 0, "bidder_chips": 0, "defender_chips": 0,
            "contracts": {}, "revokes": 0, "faults": {}, "decisions": 0, "crashes": 0,
            "matches": 0, "stood_in_hands": 0}


def _book(bot: dict[str, Any], stream: list[int], hands: int, chips: int, bidder_chips: int) -> None:
    bot["hands"] += hands
    bot["chips"] += chips
    bot["defender_chips"] += chips - bidder_chips
    stream[0] += chips
    stream[1] += hands


class SprtSettings(Protocol):
    """What the sequential test is set up from: a tournament's [sprt] table."""

    @property
    def a(self) -> str: ...
    @property
    def b(self) -> str: ...
    @property
    def delta(self) -> float: ...
    @property
    def alpha(self) -> float: ...
    @property
    def beta(self) -> float: ...
    @property
    def variant(self) -> str: ...


class Standings:
    """Accumulates match summaries in schedule order; memory grows with strata and the
    deal sets still open, not with hands."""

    def __init__(self, variants: list[str], aliases: list[str], duplicate: bool = True,
                 sprt: SprtSettings | None = None, strength: bool = False, estimator: str = PLAIN,
                 luck_unit: int = 1):
        # The stand-in can take any dead seat: always bookable, shown only once it played.
        aliases = aliases if STAND_IN_ALIAS in aliases else [*aliases, STAND_IN_ALIAS]
        self.variants, self.aliases, self.duplicate = variants, aliases, duplicate
        self.sprt = Sprt(sprt.a, sprt.b, sprt.delta, sprt.alpha, sprt.beta) if sprt else None
        self.sprt_variant = sprt.variant if sprt else None
        self.bots = {v: {a: _new_bot() for a in aliases} for v in variants}
        self.book = BoardBook(variants, aliases, duplicate)
        # The luck-adjusted results, booked beside the chips when the run computes them:
        # each hand's chips less its logged correction (`hand_luck`, in 1/`luck_unit` of a
        # chip, as the run's `table.luck` wrote it; none logged: nothing had known odds, and
        # the correction is 0). stats imports nothing of the table, so the unit is handed in.
        self.luck_unit = luck_unit
        self.adjusted = BoardBook(variants, aliases, duplicate, luck_unit) if estimator == ADJUSTED else None
        self.corrected = dict.fromkeys(variants, 0)  # hands whose luck was corrected
        # variant → seed stream → alias → [chips, hands]: the spread of a bot's rate over streams
        self.streams: dict[str, defaultdict[int, defaultdict[str, list[int]]]] = {
            v: defaultdict(lambda: defaultdict(lambda: [0, 0])) for v in variants}
        self.skipped: list[dict[str, Any]] = []
        self.disqualified: dict[str, dict[str, Any]] = {}
        self.matches = 0
        self.kitty = dict.fromkeys(variants, 0)  # chips left in kitties at the ends of matches
        self.strength = strength  # rate the line-ups (leagues, gauntlets): `strength.rate`

    def unit_of(self, match: Scheduled) -> DealSet:
        """The deal set a match belongs to: with duplicate, the seatings that share its
        deals (its table's `deal_set`: 0 in logs from before deal sets, when every
        seating of a table shared them); without, the match alone."""
        if self.duplicate:
            if not match.deal_set:  # a table's first (or only) deal set
                return (match.variant, match.stream, match.table_no)
            return (match.variant, match.stream, match.table_no, match.deal_set)
        return (match.variant, match.stream, match.table_no, match.rotation)

    def close_unit(self, unit: DealSet, stream_done: bool = True) -> None:
        """A deal set is complete: fold its boards in, and feed the sequential test if it
        watches this pair: one difference per unit both bots played, the intervals' unit
        (a board with duplicate, a round without), so the two judge the same data, each
        deal set's in its stratum (the unit less its seed stream). The test is judged when
        `stream_done`: the last deal set of a seed stream, where every seating of the
        pair has been played as often as every other."""
        closed = self.book.close(unit)
        if self.adjusted is not None:  # the test judges the estimator the run asked for
            closed = self.adjusted.close(unit)
        if self.sprt is None or unit[0] != self.sprt_variant or closed is None:
            return
        diffs = closed.diffs(self.sprt.a, self.sprt.b, self.book.span(closed))
        if diffs or stream_done:
            self.sprt.add(diffs, (unit[0], *unit[2:]), stream_done)

    def sprt_decided(self, match: Scheduled) -> bool:
        """Does a decided sequential test end this match's head-to-head?"""
        s = self.sprt
        return bool(s and s.verdict and match.variant == self.sprt_variant
                    and s.a in match.seats and s.b in match.seats)

    def add(self, match: Scheduled, summary: dict[str, Any], booked: Sequence[str] | None = None,
            duplicate: bool | None = None) -> None:
        """Book one match. `booked` names who is booked for each seat (the stand-in where
        it held a disqualified bot's seat; None: the schedule's `match.seats`).
        A seat that died is booked to its bot up to the hand it died in, and from that
        hand on to the stand-in, which played it: a bot is never credited for the
        stand-in's chips. Whole-match tallies (contracts, faults, decisions, crashes)
        stay with the bot; its chips as defender are its chips less those as bidder."""
        variant, lineup = match.variant, match.seats
        seats = lineup if booked is None else tuple(booked)
        if duplicate is not None:
            self.duplicate = self.book.duplicate = duplicate
            if self.adjusted is not None:
                self.adjusted.duplicate = duplicate
        own = own_hands(match, seats, summary)
        unit = self.unit_of(match)
        self.book.add(unit, match, summary, own)
        if self.adjusted is not None:
            luck = summary.get("hand_luck")
            if luck:
                self.corrected[variant] += sum(1 for row in luck if any(row))
            self.adjusted.add(unit, match, summary, own, adjusted_hands(summary, luck, self.luck_unit))
        self.matches += 1
        self.kitty[variant] += summary["kitty"]
        bots, stream = self.bots[variant], self.streams[variant][match.stream]
        at_table = set(seats)
        for s, (alias, seat) in enumerate(zip(seats, summary["seats"])):
            bot = bots[alias]
            for key in ("bidder_hands", "bidder_chips", "revokes", "decisions"):
                bot[key] += seat[key]
            for contract, (tries, made) in seat["contracts"].items():
                c = bot["contracts"].setdefault(contract, [0, 0])
                c[0] += tries
                c[1] += made
            for kind, n in seat["faults"].items():
                bot["faults"][kind] = bot["faults"].get(kind, 0) + n
            bot["crashes"] += "crashed_at" in seat
            hands, chips = seat["hands"], seat["chips"]
            end = hands if own is None else own[s]
            if end < hands:
                bots[lineup[s]]["stood_in_hands"] += hands - end
                if alias != STAND_IN_ALIAS:  # the seat died: the stand-in played from `end` on
                    own_chips = sum(row[s] for row in summary["hand_chips"][:end])
                    _book(bots[STAND_IN_ALIAS], stream[STAND_IN_ALIAS], hands - end, chips - own_chips, 0)
                    at_table.add(STAND_IN_ALIAS)
                    hands, chips = end, own_chips
            _book(bot, stream[alias], hands, chips, seat["bidder_chips"])
        for alias in at_table:
            bots[alias]["matches"] += 1

    def skip(self, match: Scheduled, reason: str) -> None:
        self.skipped.append({"match": match.index, "reason": reason})
        self.book.skip(self.unit_of(match))
        if self.adjusted is not None:
            self.adjusted.skip(self.unit_of(match))

    def fault_share(self, alias: str) -> tuple[int, int]:
        """(faults, decisions) of a bot over every variant so far."""
        faults = sum(sum(self.bots[v][alias]["faults"].values()) for v in self.variants)
        return faults, sum(self.bots[v][alias]["decisions"] for v in self.variants)

    def estimator_of(self, variant: str) -> str:
        """The estimator a variant's figures are shown with: adjusted where the run
        computed it and some hand's luck was corrected, plain otherwise."""
        return ADJUSTED if self.adjusted is not None and self.corrected[variant] else PLAIN

    def shown(self, variant: str) -> BoardBook:
        """The book of the estimator `estimator_of` names."""
        return self.adjusted if self.adjusted is not None and self.corrected[variant] else self.book

    def estimate(self, variant: str, alias: str, book: BoardBook | None = None) -> dict[str, Any]:
        return estimate(list((book or self.shown(variant)).bots[variant][alias].values()))

    def result(self) -> dict[str, Any]:
        """The standings as plain JSON-able data, bots best first within each variant."""
        out: dict[str, Any] = {"matches": self.matches, "unit": "board",
               "variants": {}, "skipped": self.skipped, "disqualified": self.disqualified}
        if self.sprt is not None:  # judged on the estimator the run asked for, luck or none
            out["sprt"] = {**self.sprt.result(), "estimator": PLAIN if self.adjusted is None else ADJUSTED}
        for v in self.variants:
            rows = [self._row(v, a) for a in self.aliases if self.bots[v][a]["matches"]]
            rows.sort(key=rank_key)
            out["variants"][v] = {"bots": rows, "pairs": self._pairs(v), "kitty": self.kitty[v],
                                  "positions": self._positions(v), "identity": self.book.identity(v),
                                  "left_out": self.book.left_out[v], "estimator": self.estimator_of(v),
                                  "corrected_hands": self.corrected[v]}
        out["ranking"] = ranking(out)
        if self.strength:
            out["strength"] = {v: {**rate(self.shown(v).lineups[v]), "estimator": self.estimator_of(v)}
                               for v in self.variants}
        return out

    def _row(self, variant: str, alias: str) -> dict[str, Any]:
        b = self.bots[variant][alias]
        e = self.estimate(variant, alias)
        plain = None if self.shown(variant) is self.book else self.estimate(variant, alias, self.book)
        streams = [s[alias][0] * 100 / s[alias][1]
                   for s in self.streams[variant].values() if s[alias][1]]
        tries = sum(c[0] for c in b["contracts"].values())
        made = sum(c[1] for c in b["contracts"].values())
        left_out = self.book.bots_left_out[variant].get(alias, 0)
        per100, basis, why = _rate(b, e, left_out, alias == STAND_IN_ALIAS)
        if why == TOO_FEW:
            why = no_interval(list(self.shown(variant).bots[variant][alias].values()))
        return {
            "bot": alias, "hands": b["hands"], "chips": b["chips"], "per100": per100, "basis": basis,
            "ci95": _rounded(e["ci95"]), "no_interval": why, "units": e["boards"],
            "boards_left_out": left_out, "stood_in_hands": b["stood_in_hands"],
            "se": None if e["se"] is None else round(e["se"], 3),
            "df": None if e["df"] is None else _round_df(e["df"]),
            "plain": None if plain is None else _figures(plain),
            "duplicate_effect": self._duplicate_effect(variant, alias, e),
            "streams": [round(min(streams), 3), round(max(streams), 3)] if streams else None,
            "bids_won": made, "bid_attempts": tries,
            "contracts": {k: {"bid": t, "made": m, "rate": round(m / t, 3)}
                          for k, (t, m) in sorted(b["contracts"].items())},
            "bidder_chips": b["bidder_chips"], "defender_chips": b["defender_chips"],
            "revokes": b["revokes"], "faults": dict(sorted(b["faults"].items())),
            "crashes": b["crashes"], "disqualified": alias in self.disqualified,
        }

    def _duplicate_effect(self, variant: str, alias: str, e: dict[str, Any]) -> float | None:
        """With duplicate, a bot's board variance over what as many independent hands of
        its own would give (`BoardBook.design_effect`): above 1, replaying the deals
        widened its interval (docs/explanation/statistics.md); None without duplicate or
        an interval."""
        if not self.duplicate or e["ci95"] is None:
            return None
        effect = self.shown(variant).design_effect(variant, alias)
        return None if effect is None else round(effect, 3)

    def _pairs(self, variant: str) -> list[dict[str, Any]]:
        """Paired board differences, A − B per 100 hands, over the boards both bots played."""
        out = []
        sprt = self.sprt
        # The pair whose test stopped, if it stopped in this variant.
        stopped = {sprt.a, sprt.b} if sprt is not None and sprt.verdict and variant == self.sprt_variant else None
        book = self.shown(variant)
        for a, b in combinations(self.aliases, 2):
            strata = book.pairs[variant].get((a, b))
            if not strata:
                continue
            row = pair_row(a, b, strata)
            plain = None if book is self.book else estimate(list(self.book.pairs[variant][(a, b)].values()))
            row["plain"] = None if plain is None else _figures(plain)
            if {a, b} == stopped:
                row["conditional"] = "after the sequential test stopped: optional stopping biases this interval"
            out.append(row)
        return out

    def _positions(self, variant: str) -> list[dict[str, Any]]:
        """Chips per 100 hands by position at the table, 0 = eldest hand (left of the dealer)."""
        out = []
        for p, strata in sorted(self.book.positions[variant].items()):
            e = estimate(list(strata.values()))
            out.append({"position": p, "per100": round(e["mean"], 3), "ci95": _rounded(e["ci95"]),
                        "units": e["boards"]})
        return out


def adjusted_hands(summary: dict[str, Any], luck: list[list[int]] | None, unit: int) -> list[list[int]]:
    """Each hand's luck-adjusted result per seat, in 1/`unit` of a chip: its chips less
    the logged correction (none logged: 0)."""
    chips = summary.get("hand_chips") or [[s["chips"] for s in summary["seats"]]]
    if not luck:
        return [[c * unit for c in row] for row in chips]
    return [[c * unit - x for c, x in zip(row, fix)] for row, fix in zip(chips, luck)]


def _figures(e: dict[str, Any]) -> dict[str, Any]:
    """An estimate's mean, interval, standard error and degrees of freedom, as shown."""
    return {"per100": round(e["mean"], 3), "ci95": _rounded(e["ci95"]),
            "se": None if e["se"] is None else round(e["se"], 3),
            "df": None if e["df"] is None else _round_df(e["df"])}


TOO_FEW = "too few boards"


def _rate(bot: dict[str, Any], e: dict[str, Any], left_out: int,
          stand_in: bool) -> tuple[float | None, str | None, str | None]:
    """(per 100, what it is measured over, why there is no interval): over boards when
    the bot held any in full; else from its own chips and hands, with no interval; else
    none at all (the stand-in played every hand of its seats)."""
    if e["boards"]:
        return round(e["mean"], 3), "boards", None if e["ci95"] else TOO_FEW
    if bot["hands"]:
        why = ("the stand-in is never rated over boards" if stand_in else
               f"no board it played in every rotation ({left_out} left out): per 100 of its own hands")
        return round(bot["chips"] * 100 / bot["hands"], 3), "hands", why
    return None, None, "no hands of its own: the stand-in played every hand of its seats"


def pair_row(a: str, b: str, strata: dict[Stratum, Moments]) -> dict[str, Any]:
    """One head-to-head: mean difference with its interval and p-value, the share of boards
    A beat B (ties half), and the sd of the difference per hand (comparable across runs)."""
    e = estimate(list(strata.values()))
    sd_hand = sd_per_hand(strata, e)
    return {"a": a, "b": b, "units": e["boards"], "diff_per100": round(e["mean"], 3),
            "ci95": _rounded(e["ci95"]),
            "p_value": None if e["p_value"] is None else float(f"{e['p_value']:.4g}"),
            "p_superior": None if e["p_above"] is None else round(e["p_above"], 3),
            "sd_per_hand": None if sd_hand is None else round(sd_hand, 3),
            "se": None if e["se"] is None else round(e["se"], 3),
            "df": None if e["df"] is None else _round_df(e["df"]),
            "no_interval": None if e["ci95"] is not None else no_interval(list(strata.values())),
            "conditional": None}


def sd_per_hand(strata: dict[Stratum, Moments], e: dict[str, Any]) -> float | None:
    """The sd of a pair's difference per hand: the pooled board variance times the hands
    each bot holds on a board (its seats times the rotations), in chips."""
    if e["pooled_var"] is None:
        return None
    hands = sum(m.n * min(ka, kb) for (_, ka, kb), m in strata.items()) / e["boards"]
    return math.sqrt(e["pooled_var"] * hands) / 100


def _rounded(ci: list[float] | None) -> list[float] | None:
    return None if ci is None else [round(ci[0], 3), round(ci[1], 3)]


def _round_df(df: float) -> float | None:
    return None if math.isinf(df) else round(df, 1)


def welch(est_a: dict[str, Any], est_b: dict[str, Any]) -> dict[str, Any]:
    """Difference of two independent estimates (each with `mean`, `se`, `df`): the
    estimate, its 95% interval and two-sided p, Welch–Satterthwaite degrees of freedom."""
    diff = est_a["mean"] - est_b["mean"]
    out = {"diff": round(diff, 3), "ci95": None, "p_value": None}
    if est_a["se"] is None or est_b["se"] is None:
        return out
    se2 = est_a["se"] ** 2 + est_b["se"] ** 2
    if se2 == 0:
        return out
    df = welch_df([(est_a["se"] ** 2, est_a["df"]), (est_b["se"] ** 2, est_b["df"])])
    half = t_quantile(df) * math.sqrt(se2)
    out["ci95"] = [round(diff - half, 3), round(diff + half, 3)]
    out["p_value"] = float(f"{t_two_sided_p(diff / math.sqrt(se2), df):.4g}")
    return out


def variance_ratio(var_a: float, kurt_a: float, n_a: int, var_b: float, kurt_b: float, n_b: int) -> dict[str, Any]:
    """var_b / var_a with a 95% interval that does not assume normal data: log s² has
    asymptotic variance (kurtosis − 1) / n (2 / n for normal data, where the F interval
    is exact; chip differences are heavy-tailed, where F intervals are far too narrow)."""
    ratio = var_b / var_a
    spread = math.sqrt(max(kurt_a - 1, 0) / n_a + max(kurt_b - 1, 0) / n_b)
    z = 1.959963984540054
    return {"ratio": round(ratio, 3),
            "ci95": [round(ratio * math.exp(-z * spread), 3), round(ratio * math.exp(z * spread), 3)]}


def compare(a: Standings, b: Standings) -> dict[str, Any]:
    """The same bots across two runs: is each bot's result different (Welch interval for
    the difference), and how noisy is each run's head-to-head (sd of the paired difference
    per hand, and the ratio of its squares with an interval: between a duplicate and a
    non-duplicate run, the variance-reduction factor of duplicate deals). Each run's
    figures are its shown estimator's (`a_estimator`, `b_estimator`)."""
    out: dict[str, Any] = {"variants": {}}
    for variant in [v for v in a.variants if v in b.variants]:
        bots = []
        for alias in [x for x in a.aliases if x in b.aliases]:
            ea, eb = a.estimate(variant, alias), b.estimate(variant, alias)
            if not ea["boards"] or not eb["boards"]:
                continue
            row = {"bot": alias, "a_per100": round(ea["mean"], 3), "b_per100": round(eb["mean"], 3),
                   "a_units": ea["boards"], "b_units": eb["boards"], **welch(ea, eb)}
            ci = row["ci95"]
            row["verdict"] = ("too few boards" if ci is None else
                              "no real difference" if ci[0] <= 0 <= ci[1] else "differs")
            bots.append(row)
        pairs = []
        for key, strata_b in b.shown(variant).pairs[variant].items():
            strata_a = a.shown(variant).pairs[variant].get(key)
            if not strata_a:
                continue
            qa, qb = estimate(list(strata_a.values())), estimate(list(strata_b.values()))
            sa, sb = sd_per_hand(strata_a, qa), sd_per_hand(strata_b, qb)
            if not sa or not sb or not qa["kurtosis"] or not qb["kurtosis"]:
                continue
            r = variance_ratio(sa ** 2, qa["kurtosis"], qa["boards"], sb ** 2, qb["kurtosis"], qb["boards"])
            pairs.append({"a": key[0], "b": key[1], "a_sd_per_hand": round(sa, 3),
                          "b_sd_per_hand": round(sb, 3), "variance_ratio_b_over_a": r["ratio"],
                          "ratio_ci95": r["ci95"]})
        out["variants"][variant] = {"bots": bots, "pairs": pairs, "a_estimator": a.estimator_of(variant),
                                    "b_estimator": b.estimator_of(variant)}
    return out
