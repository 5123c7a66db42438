"""The sequential test: a normal SPRT on two bots' paired differences, one per unit of
the intervals (a board with duplicate, a round of as many hands as seats without).

H0: A − B = 0 chips per 100 hands; H1: A − B = `delta`. Boards arrive a deal set at a
time, each deal set a stratum (one seating of the pair's table: who sits after whom);
the test is judged only where every stratum has been played equally often, at the end
of each seed stream, with the log-likelihood ratio of a normal model whose variance is
the pooled variance of the boards within their strata:

    LLR = delta / s² · Σ (d_i − delta / 2)

and decides when the LLR leaves [log(β/(1−α)), log((1−β)/α)]. Why only there: in a
mixed field where a pair sits beside other bots matters, and the seating design
balances it over a whole stream. Judged after each deal set, the test read one
seating's advantage as a difference between two copies of one bot, and accepted H1 in
most runs (docs/explanation/statistics.md). Judging on boards with at least `warmup`
of them keeps the plug-in variance close to the truth; judging only between streams
makes the boundaries overshoot, which lowers both error rates. The warm-up and the error
rates are checked by simulation and on real runs (`benchmarks/calibrate.py`).

An interval printed after the test stopped a head-to-head is *conditional on the
stop*: optional stopping biases it, so the standings mark it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from naparena.stats.distributions import t_quantile

WARMUP = 200  # boards before the first verdict: see the calibration benchmark


class Sprt:
    """Sequential probability ratio test on the mean paired board difference of two bots."""

    def __init__(self, a: str, b: str, delta: float, alpha: float = 0.05, beta: float = 0.05,
                 warmup: int = WARMUP):
        self.a, self.b, self.delta, self.warmup = a, b, delta, warmup
        self.lower, self.upper = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
        self.diffs: list[float] = []
        self.strata: dict[object, list[float]] = {}
        self.llr = 0.0
        self.verdict: str | None = None
        self.checks = 0

    def add(self, diffs_per100: list[float], stratum: object = None, judge: bool = True) -> str | None:
        """Add one deal set's board differences (A − B per 100 hands) in `stratum`, and
        judge if `judge` (the strata so far are balanced: the runner's stream is done)."""
        if self.verdict:
            return self.verdict
        self.diffs.extend(diffs_per100)
        self.strata.setdefault(stratum, []).extend(diffs_per100)
        n = len(self.diffs)
        if not judge or n < max(2, self.warmup):
            return None
        self.checks += 1
        total = math.fsum(self.diffs)
        self.llr = self.delta / self._variance() * (total - n * self.delta / 2)
        if self.llr >= self.upper:
            self.verdict = f"H1: {self.a} − {self.b} ≈ {self.delta:+g} per 100 hands"
        elif self.llr <= self.lower:
            self.verdict = f"H0: no difference between {self.a} and {self.b}"
        return self.verdict

    def _variance(self) -> float:
        """A board's variance within its stratum, pooled over the strata (the seating's
        effect is balanced out of the mean, so it is no noise of it)."""
        squares, df = 0.0, 0
        for diffs in self.strata.values():
            mean = math.fsum(diffs) / len(diffs)
            squares += math.fsum((d - mean) ** 2 for d in diffs)
            df += len(diffs) - 1
        return squares / df if df > 0 and squares > 0 else 1e-9

    def result(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "delta": self.delta, "boards": len(self.diffs),
                "warmup": self.warmup, "llr": round(self.llr, 4),
                "bounds": [round(self.lower, 4), round(self.upper, 4)], "verdict": self.verdict}


def simulate(draw: Callable[[int], list[float]], delta: float, batch: int, reps: int, max_boards: int, *,
             alpha: float = 0.05, beta: float = 0.05, warmup: int = WARMUP, truth: float = 0.0) -> dict[str, Any]:
    """Run the test `reps` times on synthetic boards: `draw(k)` returns k board differences
    (per 100 hands) whose mean is `truth`. Returns how often it accepted H1 and H0, the
    average number of boards used (ASN), and how often a plain 95% t interval taken at
    the stop covered `truth` (`covers` of `decided`)."""
    h1 = h0 = covers = 0
    used = 0
    for _ in range(reps):
        s = Sprt("a", "b", delta, alpha, beta, warmup)
        while s.verdict is None and len(s.diffs) < max_boards:
            s.add(draw(batch))
        used += len(s.diffs)
        if s.verdict:
            h1 += s.verdict.startswith("H1")
            h0 += s.verdict.startswith("H0")
            n = len(s.diffs)
            mean = math.fsum(s.diffs) / n
            sd = math.sqrt(math.fsum((d - mean) ** 2 for d in s.diffs) / (n - 1))
            covers += abs(mean - truth) <= t_quantile(n - 1) * sd / math.sqrt(n)
    return {"reps": reps, "h1": h1, "h0": h0, "undecided": reps - h1 - h0, "asn": used / reps,
            "decided": h1 + h0, "covers": covers}
