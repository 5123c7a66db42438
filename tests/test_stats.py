"""Statistics: t distribution, intervals, paired comparisons, the sequential test, compare."""

import math
import random

import pytest

from naparena.stats.standings import (
    Sprt,
    Standings,
    betainc,
    compare,
    mean_ci,
    paired,
    t95,
    t_two_sided_p,
    welch,
)


@pytest.mark.parametrize("t,df,p", [(2.0, 10, 0.07339), (12.706, 1, 0.05), (2.776, 4, 0.05),
                                    (1.96, 10**6, 0.05), (0.0, 3, 1.0), (3.0, 30, 0.005392)])
def test_t_distribution_matches_known_values(t, df, p):
    assert t_two_sided_p(t, df) == pytest.approx(p, rel=2e-3)


def test_incomplete_beta_edges_and_symmetry():
    assert betainc(2, 3, 0) == 0 and betainc(2, 3, 1) == 1
    assert betainc(2.5, 1.5, 0.3) == pytest.approx(1 - betainc(1.5, 2.5, 0.7), abs=1e-12)
    assert betainc(1, 1, 0.42) == pytest.approx(0.42)  # uniform


def test_t_quantile_gives_back_five_percent():
    assert t95(1) == pytest.approx(12.706, abs=1e-3) and t95(21) == pytest.approx(2.080, abs=1e-3)
    for df in (1, 2, 5, 9, 20, 21, 33, 60, 75, 500):
        assert t_two_sided_p(t95(df), df) == pytest.approx(0.05, abs=1e-6)


def test_mean_ci_covers_the_true_mean_about_95_percent_of_the_time():
    rng = random.Random(3)
    hits = sum(lo <= 10 <= hi for lo, hi in
               (mean_ci([rng.gauss(10, 4) for _ in range(8)])[1:] for _ in range(2000)))
    assert 0.93 < hits / 2000 < 0.97


def test_mean_ci_needs_two_values():
    assert mean_ci([]) == (0.0, None, None)
    assert mean_ci([5.0]) == (5.0, None, None)


def test_paired_comparison_finds_a_real_difference_and_not_a_fake_one():
    rng = random.Random(1)
    better = [(int(rng.gauss(30, 20)), 100, int(rng.gauss(0, 20)), 100) for _ in range(40)]
    same = [(int(rng.gauss(0, 20)), 100, int(rng.gauss(0, 20)), 100) for _ in range(40)]
    real, fake = paired("a", "b", better), paired("a", "b", same)
    assert real["ci95"][0] > 0 and real["p_value"] < 0.001 and real["p_superior"] > 0.8
    assert fake["ci95"][0] < 0 < fake["ci95"][1] and fake["p_value"] > 0.05
    assert real["sd_per_hand"] == pytest.approx(math.sqrt(2) * 20 / 10, rel=0.3)


def test_sprt_accepts_h1_for_a_real_edge_and_h0_for_none():
    rng = random.Random(5)
    edge, none = Sprt("a", "b", delta=10), Sprt("a", "b", delta=10)
    for _ in range(500):
        edge.add(rng.gauss(10, 30))
        none.add(rng.gauss(0, 30))
    assert edge.verdict.startswith("H1") and none.verdict.startswith("H0")
    assert edge.result()["deal_sets"] < 500  # it stopped early


def test_sprt_waits_for_its_warm_up():
    s = Sprt("a", "b", delta=1, warmup=5)
    assert all(s.add(100.0 + i) is None for i in range(4))


def test_welch_interval_and_p():
    rng = random.Random(2)
    a = [rng.gauss(5, 1) for _ in range(30)]
    b = [rng.gauss(0, 3) for _ in range(30)]
    w = welch(a, b)
    assert w["ci95"][0] < 5 < w["ci95"][1] and w["p_value"] < 1e-6
    assert welch([1.0], [2.0])["ci95"] is None


def _standings(edge: float, seed: int, duplicate: bool = True) -> Standings:
    rng = random.Random(seed)
    st = Standings(["classic"], ["x", "y"], duplicate)
    for stream in range(12):
        spec = {"index": stream, "variant": "classic", "stream": stream, "table_no": 0, "rotation": 0,
                "seats": ["x", "y", "x", "y"]}
        chips = int(rng.gauss(edge, 50))
        seat = {"hands": 100, "chips": chips, "bidder_hands": 0, "bidder_chips": 0, "defender_chips": chips,
                "contracts": {}, "revokes": 0, "faults": {}, "decisions": 300}
        other = dict(seat, chips=-chips, defender_chips=-chips)
        st.add(spec, {"seats": [seat, other, dict(seat, chips=0), dict(other, chips=0)], "kitty": 0, "hands": 100})
    return st


def test_standings_memory_grows_with_deal_sets_not_hands():
    st = _standings(0, 1)
    assert len(st.units) == 12
    assert all(len(per_bot) == 2 for per_bot in st.units.values())


def test_compare_tells_a_changed_bot_from_an_unchanged_one():
    result = compare(_standings(0, 1), _standings(80, 2))["variants"]["classic"]
    verdicts = {row["bot"]: row["verdict"] for row in result["bots"]}
    assert verdicts == {"x": "differs", "y": "differs"}
    same = compare(_standings(0, 1), _standings(0, 3))["variants"]["classic"]
    assert {row["verdict"] for row in same["bots"]} == {"no real difference"}
