"""Standings from match summaries, streamed: per bot and variant, chips with confidence
intervals over independent units, contracts, faults, and paired head-to-head differences.

The independent unit is a *deal set*: one (variant, seed stream, table) — all duplicate
rotations of it share the deals, so they are not independent of each other; without
duplicate each match is its own deal set. A bot's result in a unit is its chips per
100 hands over every seat it held there.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations
from statistics import NormalDist

# Two-sided 95% Student t quantiles for small samples; the normal value beyond.
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
        16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042,
        40: 2.021, 60: 2.000, 120: 1.980}


def t95(df: int) -> float:
    if df in _T95:
        return _T95[df]
    larger = [k for k in _T95 if k > df]
    return _T95[min(larger)] if larger else NormalDist().inv_cdf(0.975)


def mean_ci(values: list[float]) -> tuple[float, float | None, float | None]:
    """Mean and its 95% confidence interval (t); no interval from fewer than two values."""
    n = len(values)
    if n == 0:
        return 0.0, None, None
    mean = sum(values) / n
    if n < 2:
        return mean, None, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t95(n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def _new_bot() -> dict:
    return {"hands": 0, "chips": 0, "bidder_hands": 0, "bidder_chips": 0, "defender_chips": 0,
            "contracts": {}, "revokes": 0, "faults": {}, "decisions": 0, "crashes": 0,
            "matches": 0}


class Standings:
    """Accumulates match summaries in schedule order; memory grows with units, not hands."""

    def __init__(self, variants: list[str], aliases: list[str]):
        self.variants, self.aliases = variants, aliases
        self.bots = {v: {a: _new_bot() for a in aliases} for v in variants}
        # unit → alias → [chips, hands]; unit = (variant, stream, table_no[, rotation])
        self.units: dict[tuple, dict[str, list[int]]] = {}
        self.streams = {v: defaultdict(lambda: defaultdict(lambda: [0, 0])) for v in variants}
        self.skipped: list[dict] = []
        self.disqualified: dict[str, dict] = {}
        self.matches = 0
        self.kitty = {v: 0 for v in variants}  # chips left in kitties at the ends of matches

    def add(self, spec: dict, summary: dict, duplicate: bool) -> None:
        variant = spec["variant"]
        unit = (variant, spec["stream"], spec["table_no"]) + (() if duplicate else (spec["rotation"],))
        per_unit = self.units.setdefault(unit, {})
        self.matches += 1
        self.kitty[variant] += summary["kitty"]
        for alias, seat in zip(spec["seats"], summary["seats"]):
            bot = self.bots[variant][alias]
            for key in ("hands", "chips", "bidder_hands", "bidder_chips", "defender_chips",
                        "revokes", "decisions"):
                bot[key] += seat[key]
            for contract, (tries, made) in seat["contracts"].items():
                c = bot["contracts"].setdefault(contract, [0, 0])
                c[0] += tries
                c[1] += made
            for kind, n in seat["faults"].items():
                bot["faults"][kind] = bot["faults"].get(kind, 0) + n
            bot["crashes"] += "crashed_at" in seat
            u = per_unit.setdefault(alias, [0, 0])
            u[0] += seat["chips"]
            u[1] += seat["hands"]
            s = self.streams[variant][spec["stream"]][alias]
            s[0] += seat["chips"]
            s[1] += seat["hands"]
        for alias in set(spec["seats"]):
            self.bots[variant][alias]["matches"] += 1

    def skip(self, spec: dict, reason: str) -> None:
        self.skipped.append({"match": spec["index"], "reason": reason})

    def fault_share(self, alias: str) -> tuple[int, int]:
        """(faults, decisions) of a bot over every variant so far."""
        faults = sum(sum(self.bots[v][alias]["faults"].values()) for v in self.variants)
        return faults, sum(self.bots[v][alias]["decisions"] for v in self.variants)

    def result(self) -> dict:
        """The standings as plain JSON-able data, bots best first within each variant."""
        out = {"matches": self.matches, "unit": "deal set",
               "variants": {}, "skipped": self.skipped, "disqualified": self.disqualified}
        for v in self.variants:
            units = [u for k, u in self.units.items() if k[0] == v]
            rows = [self._row(v, a, units) for a in self.aliases if self.bots[v][a]["hands"]]
            rows.sort(key=lambda r: (-r["per100"], r["bot"]))
            out["variants"][v] = {"bots": rows, "pairs": self._pairs(units), "kitty": self.kitty[v]}
        return out

    def _row(self, variant: str, alias: str, units: list[dict]) -> dict:
        b = self.bots[variant][alias]
        values = [u[alias][0] * 100 / u[alias][1] for u in units if alias in u and u[alias][1]]
        mean, lo, hi = mean_ci(values)
        streams = [s[alias][0] * 100 / s[alias][1]
                   for s in self.streams[variant].values() if s[alias][1]]
        tries = sum(c[0] for c in b["contracts"].values())
        made = sum(c[1] for c in b["contracts"].values())
        return {
            "bot": alias, "hands": b["hands"], "chips": b["chips"], "per100": round(mean, 3),
            "ci95": None if lo is None else [round(lo, 3), round(hi, 3)], "units": len(values),
            "streams": [round(min(streams), 3), round(max(streams), 3)] if streams else None,
            "bids_won": made, "bid_attempts": tries,
            "contracts": {k: {"bid": t, "made": m, "rate": round(m / t, 3)}
                          for k, (t, m) in sorted(b["contracts"].items())},
            "bidder_chips": b["bidder_chips"], "defender_chips": b["defender_chips"],
            "revokes": b["revokes"], "faults": dict(sorted(b["faults"].items())),
            "crashes": b["crashes"], "disqualified": alias in self.disqualified,
        }

    def _pairs(self, units: list[dict]) -> list[dict]:
        """Paired chip differences per 100 hands over the deal sets both bots played."""
        out = []
        for a, b in combinations(self.aliases, 2):
            diffs = [u[a][0] * 100 / u[a][1] - u[b][0] * 100 / u[b][1]
                     for u in units if a in u and b in u and u[a][1] and u[b][1]]
            if not diffs:
                continue
            mean, lo, hi = mean_ci(diffs)
            out.append({"a": a, "b": b, "units": len(diffs), "diff_per100": round(mean, 3),
                        "ci95": None if lo is None else [round(lo, 3), round(hi, 3)]})
        return out
