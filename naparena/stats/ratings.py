"""Ratings across many bots: one ranking per variant and one overall, each bot with a 95%
interval, and the crosstable of head-to-head results.

A bot's rating in a variant is its standings figure: chips per 100 hands over boards,
stratified by line-up — in a zero-sum game, its effect against the field it met. The
overall rating averages a bot's variants with equal weight; variants are dealt
independently, so their variances add (Welch–Satterthwaite degrees of freedom).
"""

from __future__ import annotations

import math

from naparena.stats.distributions import t_quantile, welch_df


def ranking(result: dict) -> list[dict]:
    """Bots best first over every variant they played: mean of their per-variant ratings.
    A bot rated over boards in every variant comes first; then one rated in some variant
    only over its own hands (no board played in full), then one with no hands of its own
    in some variant (its `basis` is the weakest of its variants'), so neither can rank
    above a bot that played its boards."""
    per_bot: dict[str, list[dict]] = {}
    for data in result["variants"].values():
        for row in data["bots"]:
            per_bot.setdefault(row["bot"], []).append(row)
    out = []
    for bot, rows in per_bot.items():
        k = len(rows)
        rates = [r["per100"] for r in rows if r["per100"] is not None]
        mean = math.fsum(rates) / len(rates) if rates else None
        ci = None
        if all(r["se"] is not None for r in rows):
            parts = [((r["se"] / k) ** 2, math.inf if r["df"] is None else r["df"]) for r in rows]
            se = math.sqrt(math.fsum(v for v, _ in parts))
            half = t_quantile(welch_df(parts)) * se
            ci = [round(mean - half, 3), round(mean + half, 3)]
        basis = max((r["basis"] for r in rows), key=_TIERS.get)
        out.append({"bot": bot, "per100": None if mean is None else round(mean, 3), "ci95": ci,
                    "variants": k, "basis": basis})
    out.sort(key=rank_key)
    for rank, row in enumerate(out, 1):
        row["rank"] = rank
    return out


_TIERS = {"boards": 0, "hands": 1, None: 2}  # what a rating is measured over, best first


def rank_key(row: dict) -> tuple:
    """Best first: bots rated over boards, then bots rated over their own hands only,
    then bots with no hands of their own; so a bot that never played a board in full
    cannot rank above one that did, whatever its chips."""
    return _TIERS[row["basis"]], -(row["per100"] or 0.0), row["bot"]


def crosstable(pairs: list[dict], bots: list[str]) -> dict[str, dict[str, dict]]:
    """row bot → column bot → {diff, ci95}: row − column chips per 100 hands on shared boards."""
    table: dict[str, dict[str, dict]] = {b: {} for b in bots}
    for p in pairs:
        ci = p["ci95"]
        table.setdefault(p["a"], {})[p["b"]] = {"diff": p["diff_per100"], "ci95": ci}
        table.setdefault(p["b"], {})[p["a"]] = {"diff": -p["diff_per100"],
                                                 "ci95": None if ci is None else [-ci[1], -ci[0]]}
    return table
