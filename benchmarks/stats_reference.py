"""Reference values for tests/test_stats.py, computed with scipy (run once; scipy is not a
dependency of naparena, so the tests pin these numbers instead of importing it).

    pip install scipy && python benchmarks/stats_reference.py
"""

from __future__ import annotations

import random

import numpy as np
from scipy import special, stats


def data():
    """The same seeded samples the tests build."""
    rng = random.Random(12)
    one = [rng.randint(-40, 60) for _ in range(37)]
    strata = [[rng.randint(-30, 30) + 10 * s for _ in range(n)] for s, n in enumerate((25, 9, 14))]
    other = [rng.randint(-90, 80) for _ in range(21)]
    return one, strata, other


def main() -> None:
    print("t quantiles (0.975):", {df: float(stats.t.ppf(0.975, df)) for df in (1, 2.5, 7, 30, 123.4)})
    print("t two-sided p:", {(t, df): float(2 * stats.t.sf(t, df)) for t, df in ((2.0, 10), (0.7, 3.5), (4.2, 61.3))})
    print("normal quantiles:", {p: float(stats.norm.ppf(p)) for p in (0.975, 0.01, 0.6)})
    print("betainc:", {(a, b, x): float(special.betainc(a, b, x)) for a, b, x in ((2.5, 1.5, 0.3), (0.5, 7.0, 0.9))})
    print("Clopper-Pearson:", {(k, n): tuple(map(float, stats.binomtest(k, n).proportion_ci(method="exact")))
                               for k, n in ((47, 1000), (0, 20), (950, 1000))})
    one, strata, other = data()
    r = stats.ttest_1samp(one, 0)
    ci = r.confidence_interval()
    print("one stratum: mean", np.mean(one), "p", r.pvalue, "ci", ci.low, ci.high,
          "kurtosis", stats.kurtosis(one, fisher=False))
    # Stratified: weights n_s / N, variance sum n_s s_s^2 / N^2, Welch-Satterthwaite df.
    n = np.array([len(s) for s in strata])
    means = np.array([np.mean(s) for s in strata])
    var = np.array([np.var(s, ddof=1) for s in strata])
    total = n.sum()
    mean = float((n * means).sum() / total)
    parts = n * var / total ** 2
    se = float(np.sqrt(parts.sum()))
    df = float(parts.sum() ** 2 / (parts ** 2 / (n - 1)).sum())
    half = stats.t.ppf(0.975, df) * se
    print("stratified: mean", mean, "se", se, "df", df, "ci", mean - half, mean + half,
          "p", 2 * stats.t.sf(abs(mean / se), df))
    w = stats.ttest_ind(one, other, equal_var=False)
    diff = np.mean(one) - np.mean(other)
    wci = w.confidence_interval()
    print("welch: diff", diff, "p", w.pvalue, "df", w.df, "ci", wci.low, wci.high)
    # Variance ratio on the log scale with the kurtosis correction.
    ka, kb = stats.kurtosis(one, fisher=False), stats.kurtosis(other, fisher=False)
    ratio = np.var(other, ddof=1) / np.var(one, ddof=1)
    spread = np.sqrt((ka - 1) / len(one) + (kb - 1) / len(other))
    z = stats.norm.ppf(0.975)
    print("variance ratio:", ratio, ratio * np.exp(-z * spread), ratio * np.exp(z * spread))


if __name__ == "__main__":
    main()
