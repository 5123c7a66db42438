"""Ratings across many bots: one ranking per variant and one overall, each bot with a 95%
interval, and the crosstable of head-to-head results.

A bot's rating in a variant is its standings figure: chips per 100 hands over boards,
stratified by line-up — in a zero-sum game, its effect against the field it met. The
overall rating averages a bot's variants with equal weight; variants are dealt
independently, so their variances add (Welch–Satterthwaite degrees of freedom).

Beside the ranking, each bot's gap to the leader: the paired head-to-head difference on
the boards both played, far narrower than either bot's own interval because the deals
cancel, and the direct answer to "is the leader really better than this bot?".
"""

from __future__ import annotations

import math
from typing import Any

from naparena.stats.distributions import t_quantile, t_two_sided_p, welch_df


def ranking(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Bots best first over every variant they played: mean of their per-variant ratings.
    A bot rated over boards in every variant comes first; then one rated in some variant
    only over its own hands (no board played in full), then one with no hands of its own
    in some variant (its `basis` is the weakest of its variants'), so neither can rank
    above a bot that played its boards."""
    per_bot: dict[str, list[dict[str, Any]]] = {}
    for data in result["variants"].values():
        for row in data["bots"]:
            per_bot.setdefault(row["bot"], []).append(row)
    out = []
    for bot, rows in per_bot.items():
        k = len(rows)
        rates = [r["per100"] for r in rows if r["per100"] is not None]
        mean = math.fsum(rates) / len(rates) if rates else None
        ci = None
        if mean is not None and all(r["se"] is not None for r in rows):
            parts = [((r["se"] / k) ** 2, math.inf if r["df"] is None else r["df"]) for r in rows]
            se = math.sqrt(math.fsum(v for v, _ in parts))
            half = t_quantile(welch_df(parts)) * se
            ci = [round(mean - half, 3), round(mean + half, 3)]
        basis = max((r["basis"] for r in rows), key=_TIERS.__getitem__)
        out.append({"bot": bot, "per100": None if mean is None else round(mean, 3), "ci95": ci,
                    "variants": k, "basis": basis})
    out.sort(key=rank_key)
    for rank, row in enumerate(out, 1):
        row["rank"] = rank
    return out


_TIERS: dict[str | None, int] = {"boards": 0, "hands": 1, None: 2}  # what a rating is measured over, best first


def rank_key(row: dict[str, Any]) -> tuple[int, float, str]:
    """Best first: bots rated over boards, then bots rated over their own hands only,
    then bots with no hands of their own; so a bot that never played a board in full
    cannot rank above one that did, whatever its chips."""
    return _TIERS[row["basis"]], -(row["per100"] or 0.0), row["bot"]


def crosstable(pairs: list[dict[str, Any]], bots: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """row bot → column bot → {diff, ci95}: row − column chips per 100 hands on shared boards."""
    table: dict[str, dict[str, dict[str, Any]]] = {b: {} for b in bots}
    for p in pairs:
        ci = p["ci95"]
        table.setdefault(p["a"], {})[p["b"]] = {"diff": p["diff_per100"], "ci95": ci}
        table.setdefault(p["b"], {})[p["a"]] = {"diff": -p["diff_per100"],
                                                 "ci95": None if ci is None else [-ci[1], -ci[0]]}
    return table


def oriented(pair: dict[str, Any], a: str) -> dict[str, Any]:
    """A head-to-head row turned so that `a` is its A: A − B, interval and share flipped."""
    if pair["a"] == a:
        return pair
    ci, sup = pair["ci95"], pair.get("p_superior")
    return {**pair, "a": pair["b"], "b": pair["a"], "diff_per100": -pair["diff_per100"],
            "ci95": None if ci is None else [-ci[1], -ci[0]],
            "p_superior": None if sup is None else round(1 - sup, 3)}


def pair_verdict(pair: dict[str, Any]) -> str:
    """What a head-to-head row says in words: who is better, if its 95% interval excludes 0."""
    ci = pair["ci95"]
    verdict = "too few boards" if ci is None else (
        f"{pair['a']} better" if ci[0] > 0 else f"{pair['b']} better" if ci[1] < 0 else "no clear difference")
    return verdict + (" (conditional: test stopped)" if pair.get("conditional") else "")


def gaps_to(leader: str, pairs_by_variant: list[list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """bot → its difference from `leader` (bot − leader, chips per 100 hands), averaged over
    the variants in which the two met like the ranking averages rates: {diff, ci95,
    p_value, variants, boards}. One variant gives its head-to-head row as it is."""
    per_bot: dict[str, list[dict[str, Any]]] = {}
    for pairs in pairs_by_variant:
        for p in pairs:
            if leader in (p["a"], p["b"]):
                row = oriented(p, p["b"] if p["a"] == leader else p["a"])
                per_bot.setdefault(row["a"], []).append(row)
    out = {}
    for bot, rows in per_bot.items():
        k = len(rows)
        mean = math.fsum(r["diff_per100"] for r in rows) / k
        gap = {"diff": round(mean, 3), "ci95": None, "p_value": None, "variants": k,
               "boards": sum(r["units"] for r in rows)}
        if k == 1:
            gap.update(ci95=rows[0]["ci95"], p_value=rows[0]["p_value"])
        elif all(r.get("se") is not None for r in rows):
            parts = [((r["se"] / k) ** 2, math.inf if r["df"] is None else r["df"]) for r in rows]
            se, df = math.sqrt(math.fsum(v for v, _ in parts)), welch_df(parts)
            if se > 0:
                half = t_quantile(df) * se
                gap.update(ci95=[round(mean - half, 3), round(mean + half, 3)],
                           p_value=float(f"{t_two_sided_p(mean / se, df):.4g}"))
        out[bot] = gap
    return out
