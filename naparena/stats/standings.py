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
from functools import lru_cache
from itertools import combinations


@lru_cache(maxsize=None)
def t95(df: int) -> float:
    """The two-sided 95% quantile of Student's t, found by bisection on its tail."""
    lo, hi = 1.959, 13.0  # the normal quantile is the limit; df = 1 gives 12.706
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_two_sided_p(mid, df) > 0.05 else (lo, mid)
    return hi


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-12:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| ≥ |t|) for Student's t with `df` degrees of freedom."""
    return betainc(df / 2, 0.5, df / (df + t * t))


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

    def __init__(self, variants: list[str], aliases: list[str], duplicate: bool = True, sprt=None):
        self.variants, self.aliases, self.duplicate = variants, aliases, duplicate
        self.sprt = Sprt(sprt.a, sprt.b, sprt.delta, sprt.alpha, sprt.beta) if sprt else None
        self.sprt_variant = sprt.variant if sprt else None
        self.bots = {v: {a: _new_bot() for a in aliases} for v in variants}
        # unit → alias → [chips, hands]; unit = (variant, stream, table_no[, rotation])
        self.units: dict[tuple, dict[str, list[int]]] = {}
        self.streams = {v: defaultdict(lambda: defaultdict(lambda: [0, 0])) for v in variants}
        self.skipped: list[dict] = []
        self.disqualified: dict[str, dict] = {}
        self.matches = 0
        self.kitty = {v: 0 for v in variants}  # chips left in kitties at the ends of matches

    def unit_of(self, spec: dict) -> tuple:
        """The deal set a match belongs to: its rotations share the deals."""
        own = () if self.duplicate else (spec["rotation"],)
        return (spec["variant"], spec["stream"], spec["table_no"]) + own

    def close_unit(self, unit: tuple) -> None:
        """A deal set is complete: feed the sequential test if it watches this pair."""
        if self.sprt is None or unit[0] != self.sprt_variant:
            return
        u = self.units.get(unit, {})
        a, b = self.sprt.a, self.sprt.b
        if a in u and b in u and u[a][1] and u[b][1]:
            self.sprt.add(u[a][0] * 100 / u[a][1] - u[b][0] * 100 / u[b][1])

    def sprt_decided(self, spec: dict) -> bool:
        """Does a decided sequential test end this match's head-to-head?"""
        s = self.sprt
        return bool(s and s.verdict and spec["variant"] == self.sprt_variant
                    and s.a in spec["seats"] and s.b in spec["seats"])

    def add(self, spec: dict, summary: dict, duplicate: bool | None = None) -> None:
        variant = spec["variant"]
        if duplicate is not None:
            self.duplicate = duplicate
        unit = self.unit_of(spec)
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
        if self.sprt is not None:
            out["sprt"] = self.sprt.result()
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
            both = [u for u in units if a in u and b in u and u[a][1] and u[b][1]]
            if both:
                out.append(paired(a, b, [(u[a][0], u[a][1], u[b][0], u[b][1]) for u in both]))
        return out


def paired(a: str, b: str, units: list[tuple[int, int, int, int]]) -> dict:
    """Compare two bots over shared deal sets: units of (chips A, hands A, chips B, hands B).

    Returns the mean difference per 100 hands with its 95% CI, a two-sided paired
    t-test p-value, the probability that A beats B on a deal set (ties count half),
    and the standard deviation of the difference per hand — comparable across runs, so
    it measures how much duplicate deals reduce the variance.
    """
    diffs = [ca * 100 / ha - cb * 100 / hb for ca, ha, cb, hb in units]
    mean, lo, hi = mean_ci(diffs)
    n = len(diffs)
    p = sd_hand = None
    if n >= 2:
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        hands = sum(min(ha, hb) for _, ha, _, hb in units) / n
        sd_hand = math.sqrt(var * hands) / 100
        p = 1.0 if var == 0 and mean == 0 else 0.0 if var == 0 else t_two_sided_p(mean / math.sqrt(var / n), n - 1)
    wins = sum(1.0 if d > 0 else 0.5 if d == 0 else 0.0 for d in diffs)
    return {"a": a, "b": b, "units": n, "diff_per100": round(mean, 3),
            "ci95": None if lo is None else [round(lo, 3), round(hi, 3)],
            "p_value": None if p is None else float(f"{p:.4g}"),
            "p_superior": round(wins / n, 3) if n else None,
            "sd_per_hand": None if sd_hand is None else round(sd_hand, 3)}


class Sprt:
    """Sequential probability ratio test on the mean paired difference of two bots.

    H0: A − B = 0 chips per 100 hands; H1: A − B = `delta`. Each completed deal set adds
    log N(x; delta, s²) − log N(x; 0, s²) with s² the sample variance so far (a
    normal approximation, so the first few deal sets only collect variance). Decided
    when the log-likelihood ratio leaves [log(β/(1−α)), log((1−β)/α)].
    """

    def __init__(self, a: str, b: str, delta: float, alpha: float = 0.05, beta: float = 0.05, warmup: int = 5):
        self.a, self.b, self.delta, self.warmup = a, b, delta, warmup
        self.lower, self.upper = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
        self.diffs: list[float] = []
        self.llr = 0.0
        self.verdict: str | None = None

    def add(self, diff_per100: float) -> str | None:
        """Add one deal set's difference; return the verdict once there is one."""
        if self.verdict:
            return self.verdict
        self.diffs.append(diff_per100)
        n = len(self.diffs)
        if n < self.warmup:
            return None
        mean = sum(self.diffs) / n
        var = sum((d - mean) ** 2 for d in self.diffs) / (n - 1) or 1e-9
        self.llr = self.delta / var * sum(d - self.delta / 2 for d in self.diffs)
        if self.llr >= self.upper:
            self.verdict = f"H1: {self.a} − {self.b} ≈ {self.delta:+g} per 100 hands"
        elif self.llr <= self.lower:
            self.verdict = f"H0: no difference between {self.a} and {self.b}"
        return self.verdict

    def result(self) -> dict:
        return {"a": self.a, "b": self.b, "delta": self.delta, "deal_sets": len(self.diffs),
                "llr": round(self.llr, 4), "bounds": [round(self.lower, 4), round(self.upper, 4)],
                "verdict": self.verdict}


def _mean_var(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    return mean, (sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else float("nan"))


def welch(a: list[float], b: list[float]) -> dict:
    """Difference of two independent means (Welch): estimate, 95% CI, two-sided p."""
    (ma, va), (mb, vb) = _mean_var(a), _mean_var(b)
    out = {"diff": round(ma - mb, 3), "ci95": None, "p_value": None}
    if len(a) < 2 or len(b) < 2:
        return out
    se2 = va / len(a) + vb / len(b)
    if se2 == 0:
        return out
    df = se2 ** 2 / ((va / len(a)) ** 2 / (len(a) - 1) + (vb / len(b)) ** 2 / (len(b) - 1))
    half = t95(max(1, int(df))) * math.sqrt(se2)
    out["ci95"] = [round(ma - mb - half, 3), round(ma - mb + half, 3)]
    out["p_value"] = float(f"{t_two_sided_p((ma - mb) / math.sqrt(se2), max(1, int(df))):.4g}")
    return out


def unit_values(st: "Standings", variant: str, alias: str) -> list[float]:
    return [u[alias][0] * 100 / u[alias][1] for k, u in st.units.items()
            if k[0] == variant and alias in u and u[alias][1]]


def compare(a: "Standings", b: "Standings") -> dict:
    """The same bots across two runs: is each bot's result different, and how noisy is each
    run's head-to-head (sd of the paired difference per hand; its square's ratio between a
    duplicate and a non-duplicate run is the variance-reduction factor)."""
    out = {"variants": {}}
    results = a.result(), b.result()
    for variant in [v for v in a.variants if v in b.variants]:
        bots = []
        for alias in [x for x in a.aliases if x in b.aliases]:
            va, vb = unit_values(a, variant, alias), unit_values(b, variant, alias)
            if not va or not vb:
                continue
            row = {"bot": alias, "a_per100": round(sum(va) / len(va), 3), "b_per100": round(sum(vb) / len(vb), 3),
                   "a_units": len(va), "b_units": len(vb), **welch(va, vb)}
            ci = row["ci95"]
            row["verdict"] = ("too few deal sets" if ci is None else
                              "no real difference" if ci[0] <= 0 <= ci[1] else "differs")
            bots.append(row)
        pairs = []
        a_pairs = {(p["a"], p["b"]): p for p in results[0]["variants"][variant]["pairs"]}
        for p in results[1]["variants"][variant]["pairs"]:
            q = a_pairs.get((p["a"], p["b"]))
            if q is None or not q["sd_per_hand"] or not p["sd_per_hand"]:
                continue
            pairs.append({"a": p["a"], "b": p["b"], "a_sd_per_hand": q["sd_per_hand"], "b_sd_per_hand": p["sd_per_hand"],
                          "variance_ratio_b_over_a": round((p["sd_per_hand"] / q["sd_per_hand"]) ** 2, 3)})
        out["variants"][variant] = {"bots": bots, "pairs": pairs}
    return out
