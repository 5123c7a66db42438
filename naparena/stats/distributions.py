"""The few distributions the statistics need, in pure Python: Student's t (any real
degrees of freedom), the normal, and binomial intervals. Pinned against scipy in the tests.
"""

from __future__ import annotations

import math
from functools import lru_cache


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


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with `df` (real, > 0) degrees of freedom."""
    if math.isinf(df):
        return math.erfc(abs(t) / math.sqrt(2))
    return betainc(df / 2, 0.5, df / (df + t * t))


@lru_cache(maxsize=4096)
def t_quantile(df: float, level: float = 0.95) -> float:
    """The two-sided `level` quantile of Student's t: P(|T| ≤ q) = level. Bisection, so it
    is the same number on every platform; df may be fractional (Welch–Satterthwaite)."""
    if math.isinf(df):
        return norm_ppf(0.5 + level / 2)
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > 1 - level:
        hi *= 2
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_two_sided_p(mid, df) > 1 - level else (lo, mid)
    return hi


def norm_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def norm_ppf(p: float) -> float:
    """The normal quantile, by bisection on erfc (exact to the last bits that matter here)."""
    if not 0 < p < 1:
        raise ValueError("p must be in (0, 1)")
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if norm_cdf(mid) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return (lo + hi) / 2


def beta_ppf(q: float, a: float, b: float) -> float:
    """The `q` quantile of Beta(a, b), by bisection on the incomplete beta."""
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if betainc(a, b, mid) < q else (lo, mid)
    return (lo + hi) / 2


def binom_ci(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Clopper–Pearson (exact) interval for a binomial proportion k / n."""
    tail = (1 - level) / 2
    lo = 0.0 if k == 0 else beta_ppf(tail, k, n - k + 1)
    hi = 1.0 if k == n else beta_ppf(1 - tail, k + 1, n - k)
    return lo, hi


def welch_df(parts: list[tuple[float, float]]) -> float:
    """Welch–Satterthwaite degrees of freedom of a sum of variances: parts of (variance
    component, its degrees of freedom). Infinite when every component is zero."""
    num = math.fsum(v for v, _ in parts) ** 2
    den = math.fsum(v * v / df for v, df in parts if v)
    return num / den if den else math.inf
