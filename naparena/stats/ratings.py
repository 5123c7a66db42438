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
    """Bots best first over every variant they played: mean of their per-variant ratings."""
    per_bot: dict[str, list[dict]] = {}
    for data in result["variants"].values():
        for row in data["bots"]:
            per_bot.setdefault(row["bot"], []).append(row)
    out = []
    for bot, rows in per_bot.items():
        k = len(rows)
        mean = math.fsum(r["per100"] for r in rows) / k
        ci = None
        if all(r["se"] is not None for r in rows):
            parts = [((r["se"] / k) ** 2, math.inf if r["df"] is None else r["df"]) for r in rows]
            se = math.sqrt(math.fsum(v for v, _ in parts))
            half = t_quantile(welch_df(parts)) * se
            ci = [round(mean - half, 3), round(mean + half, 3)]
        out.append({"bot": bot, "per100": round(mean, 3), "ci95": ci, "variants": k})
    out.sort(key=lambda r: (-r["per100"], r["bot"]))
    for rank, row in enumerate(out, 1):
        row["rank"] = rank
    return out


def crosstable(pairs: list[dict], bots: list[str]) -> dict[str, dict[str, dict]]:
    """row bot → column bot → {diff, ci95}: row − column chips per 100 hands on shared boards."""
    table: dict[str, dict[str, dict]] = {b: {} for b in bots}
    for p in pairs:
        ci = p["ci95"]
        table.setdefault(p["a"], {})[p["b"]] = {"diff": p["diff_per100"], "ci95": ci}
        table.setdefault(p["b"], {})[p["a"]] = {"diff": -p["diff_per100"],
                                                 "ci95": None if ci is None else [-ci[1], -ci[0]]}
    return table
