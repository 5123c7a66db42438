"""Statistics against reference values computed once with scipy
(`benchmarks/stats_reference.py`) and pinned here, so scipy is not needed to run them."""

import math
import random

import pytest

from naparena.arena.setup.schedule import MatchSpec
from naparena.stats.boards import Moments, estimate
from naparena.stats.distributions import (
    betainc,
    binom_ci,
    norm_ppf,
    t_quantile,
    t_two_sided_p,
    welch_df,
)
from naparena.stats.ratings import crosstable, gaps_to, oriented, pair_verdict, ranking
from naparena.stats.sequential import Sprt, simulate
from naparena.stats.standings import Standings, compare, mean_ci, variance_ratio, welch


def data():
    """The same seeded samples as benchmarks/stats_reference.py."""
    rng = random.Random(12)
    one = [rng.randint(-40, 60) for _ in range(37)]
    strata = [[rng.randint(-30, 30) + 10 * s for _ in range(n)] for s, n in enumerate((25, 9, 14))]
    other = [rng.randint(-90, 80) for _ in range(21)]
    return one, strata, other


def moments(values, scale=1) -> Moments:
    m = Moments(scale)
    for v in values:
        m.add(v)
    return m


# --- distributions (scipy 1.17) -----------------------------------------------------

@pytest.mark.parametrize("df,q", [(1, 12.706204736174694), (2.5, 3.5746548420036817), (7, 2.364624251592784),
                                  (30, 2.0422724563012378), (123.4, 1.9793749463174197)])
def test_t_quantile_is_scipys(df, q):
    assert t_quantile(df) == pytest.approx(q, rel=1e-10)


@pytest.mark.parametrize("t,df,p", [(2.0, 10, 0.07338803477074037), (0.7, 3.5, 0.5276341423456788),
                                    (4.2, 61.3, 8.791376962612151e-05)])
def test_t_two_sided_p_is_scipys(t, df, p):
    assert t_two_sided_p(t, df) == pytest.approx(p, rel=1e-9)


@pytest.mark.parametrize("p,z", [(0.975, 1.959963984540054), (0.01, -2.3263478740408408), (0.6, 0.2533471031357997)])
def test_normal_quantile_is_scipys(p, z):
    assert norm_ppf(p) == pytest.approx(z, abs=1e-12)


def test_incomplete_beta_is_scipys():
    assert betainc(2.5, 1.5, 0.3) == pytest.approx(0.08894372317066562, rel=1e-10)
    assert betainc(0.5, 7.0, 0.9) == pytest.approx(0.9999999780702157, rel=1e-12)
    assert betainc(2, 3, 0) == 0 and betainc(2, 3, 1) == 1


@pytest.mark.parametrize("k,n,lo,hi", [(47, 1000, 0.034735062266795375, 0.06201263069307137),
                                       (0, 20, 0.0, 0.16843347098308548),
                                       (950, 1000, 0.9346095120845064, 0.9626646023953394)])
def test_clopper_pearson_is_scipys(k, n, lo, hi):
    got = binom_ci(k, n)
    assert got[0] == pytest.approx(lo, abs=1e-12) and got[1] == pytest.approx(hi, abs=1e-12)


def test_welch_df_of_one_part_is_its_own():
    assert welch_df([(4.0, 9)]) == pytest.approx(9)
    assert welch_df([(0.0, 3), (0.0, 5)]) == math.inf


# --- estimates ------------------------------------------------------------------------

def test_one_stratum_is_the_one_sample_t_test():
    one, _, _ = data()
    e = estimate([moments(one)], per=1)
    assert e["mean"] == pytest.approx(9.162162162162161, rel=1e-12)
    assert e["p_value"] == pytest.approx(0.050137281786243645, rel=1e-8)
    assert e["ci95"] == pytest.approx([-0.005788478307902523, 18.330112802632225], abs=1e-9)
    assert e["kurtosis"] == pytest.approx(1.838092823353487, rel=1e-10)
    assert e["df"] == pytest.approx(36)


def test_a_scale_divides_every_value():
    one, _, _ = data()
    e = estimate([moments([4 * v for v in one], scale=4)], per=1)
    assert e["mean"] == pytest.approx(9.162162162162161, rel=1e-12)
    assert e["ci95"] == pytest.approx([-0.005788478307902523, 18.330112802632225], abs=1e-9)


def test_strata_give_the_stratified_mean_and_welch_satterthwaite_interval():
    _, strata, _ = data()
    e = estimate([moments(s) for s in strata], per=1)
    assert e["mean"] == pytest.approx(7.5625, rel=1e-12)
    assert e["se"] == pytest.approx(2.5806335190926806, rel=1e-12)
    assert e["df"] == pytest.approx(42.53700663585455, rel=1e-10)
    assert e["ci95"] == pytest.approx([2.3565178613973936, 12.768482138602607], abs=1e-9)
    assert e["p_value"] == pytest.approx(0.005424148102850881, rel=1e-8)


def test_fixed_differences_between_strata_are_not_noise():
    # Two line-ups at +50 and -50, each with little noise: the naive t interval over all
    # boards is wide, the stratified one is not.
    rng = random.Random(4)
    high = [50 + rng.randint(-3, 3) for _ in range(40)]
    low = [-50 + rng.randint(-3, 3) for _ in range(40)]
    _, lo, hi = mean_ci(high + low)
    e = estimate([moments(high), moments(low)], per=1)
    assert (e["ci95"][1] - e["ci95"][0]) * 10 < hi - lo


def test_a_stratum_of_one_board_gives_no_interval():
    e = estimate([moments([3, 4, 5]), moments([7])], per=1)
    assert e["ci95"] is None and e["mean"] == pytest.approx(19 / 4)


def test_welch_difference_is_scipys():
    one, _, other = data()
    w = welch(estimate([moments(one)], per=1), estimate([moments(other)], per=1))
    assert w["diff"] == pytest.approx(20.54311454311454, abs=1e-3)
    assert w["p_value"] == pytest.approx(0.052937587680862784, rel=1e-3)
    assert w["ci95"] == pytest.approx([-0.2775800766225487, 41.36380916285163], abs=1e-3)


def test_variance_ratio_interval_uses_the_kurtosis():
    one, _, other = data()
    ea, eb = estimate([moments(one)], per=1), estimate([moments(other)], per=1)
    r = variance_ratio(ea["pooled_var"], ea["kurtosis"], ea["boards"], eb["pooled_var"], eb["kurtosis"], eb["boards"])
    assert r["ratio"] == pytest.approx(2.319117219841673, abs=1e-3)
    assert r["ci95"] == pytest.approx([1.329533128360249, 4.045258117034954], abs=1e-3)


# --- the sequential test ----------------------------------------------------------------

def test_sprt_log_likelihood_ratio_is_the_normal_one():
    one, _, _ = data()
    s = Sprt("a", "b", delta=5, warmup=10)
    s.add([float(v) for v in one])
    assert s.llr == pytest.approx(1.6301097006863243, rel=1e-12)
    assert s.verdict is None  # inside log(0.05/0.95) .. log(0.95/0.05)


def test_sprt_waits_for_its_warm_up_then_decides():
    s = Sprt("a", "b", delta=1, warmup=50)
    assert s.add([100.0 + i for i in range(49)]) is None
    assert s.add([100.0]).startswith("H1")
    assert s.result()["boards"] == 50


def test_sprt_error_rates_by_simulation_are_at_most_nominal():
    rng = random.Random(8)
    for truth, wrong in ((0.0, "h1"), (1.0, "h0")):
        r = simulate(lambda k, t=truth: [rng.gauss(t, 10) for _ in range(k)], delta=1.0, batch=50, reps=200,
                     max_boards=50_000, warmup=200, truth=truth)
        assert r["undecided"] == 0 and r[wrong] <= 0.05 * 200 + 8, r  # 8 = two binomial sds of noise


# --- standings, ratings and compare ----------------------------------------------------

def seat(chips: int, hands: int) -> dict:
    return {"hands": hands, "chips": chips, "bidder_hands": 0, "bidder_chips": 0, "defender_chips": chips,
            "contracts": {}, "revokes": 0, "faults": {}, "decisions": 3 * hands}


def standings(edge: float, seed: int, streams: int = 6, hands: int = 50) -> Standings:
    """x and y in seats x y x y, duplicate, two rotations; x gains `edge` a hand on average."""
    rng = random.Random(seed)
    st = Standings(["classic"], ["x", "y"], True)
    for stream in range(streams):
        per_hand = [round(rng.gauss(edge, 8)) for _ in range(hands)]
        for rotation in range(2):
            seats = ["x", "y", "x", "y"] if rotation == 0 else ["y", "x", "y", "x"]
            chips = [[c, -c, 0, 0] if rotation == 0 else [-c, c, 0, 0] for c in per_hand]
            spec = MatchSpec(2 * stream + rotation, "classic", stream, 0, rotation, 0, tuple(seats), hands)
            totals = [sum(h[s] for h in chips) for s in range(4)]
            st.add(spec, {"seats": [seat(totals[s], hands) for s in range(4)], "kitty": 0, "hands": hands,
                          "dealer": 0, "hand_chips": chips, "deal_keys": list(range(hands))})
        st.close_unit(("classic", stream, 0))
    return st


def test_standings_rank_with_intervals_over_boards():
    result = standings(1.0, 1).result()
    data = result["variants"]["classic"]
    assert result["unit"] == "board" and data["identity"]["share"] == 1.0
    x = next(r for r in data["bots"] if r["bot"] == "x")
    assert x["units"] == 300 and x["ci95"][0] > 0 and x["df"] == pytest.approx(299)
    assert [r["bot"] for r in result["ranking"]] == ["x", "y"] and result["ranking"][0]["rank"] == 1
    table = crosstable(data["pairs"], ["x", "y"])
    assert table["x"]["y"]["diff"] == -table["y"]["x"]["diff"] > 0


def test_ranking_averages_variants_and_adds_their_variances():
    result = {"variants": {
        "v1": {"bots": [{"bot": "a", "per100": 10.0, "se": 3.0, "df": 20.0, "basis": "boards"}]},
        "v2": {"bots": [{"bot": "a", "per100": 20.0, "se": 4.0, "df": None, "basis": "boards"}]}}}
    row = ranking(result)[0]
    assert row["per100"] == 15.0
    se = math.sqrt(9 + 16) / 2
    df = welch_df([(9 / 4, 20.0), (16 / 4, math.inf)])
    assert row["ci95"] == pytest.approx([15 - t_quantile(df) * se, 15 + t_quantile(df) * se], abs=1e-3)


def _pair(a, b, diff, ci, se=None, df=None, p=None):
    return {"a": a, "b": b, "diff_per100": diff, "ci95": ci, "se": se, "df": df, "p_value": p,
            "units": 40, "p_superior": 0.7}


def test_gaps_to_the_leader_turn_each_pair_and_average_variants_like_the_ranking():
    one = gaps_to("x", [[_pair("x", "y", 10.0, [4.0, 16.0], p=0.01), _pair("z", "y", 1.0, [-1.0, 3.0])]])
    assert one == {"y": {"diff": -10.0, "ci95": [-16.0, -4.0], "p_value": 0.01, "variants": 1, "boards": 40}}
    two = gaps_to("x", [[_pair("x", "y", 10.0, [4.0, 16.0], se=3.0, df=20.0)],
                        [_pair("y", "x", -20.0, [-28.0, -12.0], se=4.0, df=None)]])["y"]
    se = math.sqrt(1.5 ** 2 + 2.0 ** 2)
    df = welch_df([(1.5 ** 2, 20.0), (2.0 ** 2, math.inf)])
    assert two["diff"] == -15.0 and two["variants"] == 2 and two["boards"] == 80
    assert two["ci95"] == pytest.approx([-15 - t_quantile(df) * se, -15 + t_quantile(df) * se], abs=1e-3)
    assert two["p_value"] == pytest.approx(t_two_sided_p(15 / se, df), rel=1e-3)


def test_a_pair_turned_round_and_its_verdict_in_words():
    p = _pair("x", "y", 10.0, [4.0, 16.0])
    turned = oriented(p, "y")
    assert (turned["a"], turned["diff_per100"], turned["ci95"]) == ("y", -10.0, [-16.0, -4.0])
    assert turned["p_superior"] == 0.3
    assert oriented(p, "x") is p
    assert pair_verdict(p) == pair_verdict(turned) == "x better"
    assert pair_verdict(_pair("x", "y", 1.0, [-2.0, 4.0])) == "no clear difference"
    assert pair_verdict({**_pair("x", "y", 0.0, None), "conditional": "stopped"}) == \
        "too few boards (conditional: test stopped)"


def test_compare_tells_a_changed_bot_from_an_unchanged_one_and_bounds_the_variance_ratio():
    result = compare(standings(0, 1), standings(3, 2))["variants"]["classic"]
    assert {row["bot"]: row["verdict"] for row in result["bots"]} == {"x": "differs", "y": "differs"}
    same = compare(standings(0, 1), standings(0, 4))["variants"]["classic"]
    assert {row["verdict"] for row in same["bots"]} == {"no real difference"}
    (pair,) = same["pairs"]
    lo, hi = pair["ratio_ci95"]
    assert lo < 1 < hi and lo < pair["variance_ratio_b_over_a"] < hi


def test_a_stopped_head_to_head_is_marked_conditional():
    st = standings(1.0, 1)
    st.sprt = Sprt("x", "y", 50.0)
    st.sprt.verdict = "H1: x − y ≈ +50 per 100 hands"
    st.sprt_variant = "classic"
    (pair,) = st.result()["variants"]["classic"]["pairs"]
    assert pair["conditional"]


# --- the verdicts in words --------------------------------------------------------------------------

def test_verdicts_put_each_clear_difference_in_a_sentence_and_the_rest_in_one():
    from naparena.stats.verdicts import MOST_SENTENCES, verdicts
    pairs = [{"a": "bold", "b": "heuristic", "diff_per100": -46.7, "ci95": [-78.2, -15.2], "p_value": 0.004,
              "units": 400},
             {"a": "random", "b": "bold", "diff_per100": 3.0, "ci95": [-5.0, 11.0], "p_value": 0.46, "units": 400},
             {"a": "x", "b": "y", "diff_per100": 0.0, "ci95": None, "p_value": None, "units": 1}]
    said = verdicts("classic", pairs)
    assert said[0] == ("heuristic is ahead of bold by 46.7 chips per 100 hands [15.2, 78.2] in classic "
                       "(400 boards, p = 0.004).")
    assert said[1] == ("No clear difference in classic for random − bold +3.0 [-5.0, +11.0] "
                       "(its 95% interval includes 0).")
    assert said[2] == "Too few boards for an interval in classic: x and y."
    many = [{"a": f"a{i}", "b": f"b{i}", "diff_per100": float(i + 1), "ci95": [0.5, i + 2.0], "p_value": 0.01,
             "units": 50} for i in range(MOST_SENTENCES + 3)]
    said = verdicts("pagat", many)
    assert len(said) == MOST_SENTENCES + 1 and said[0].startswith(f"a{MOST_SENTENCES + 2} is ahead of")
    assert said[-1].startswith("3 more pairs differ clearly in pagat")
    assert verdicts("pagat", []) == []


def test_a_sequential_test_short_of_its_warm_up_says_it_did_not_judge():
    # 100 boards of a clear lead: the test has not judged (its LLR is 0 until the warm-up),
    # and saying "undecided (LLR +0.00)" would read as "the bots are close".
    from naparena.report.tables import sprt_line
    short = Sprt("a", "b", 20.0, warmup=200)
    short.add([900.0 + (i % 7) for i in range(100)])
    assert "not judged: 100 boards, fewer than the 200" in sprt_line(short.result())
    # Control: past the warm-up the same lead is judged and the line gives the verdict.
    judged = Sprt("a", "b", 20.0, warmup=50)
    judged.add([900.0 + (i % 7) for i in range(100)])
    assert sprt_line(judged.result()).endswith("after 100 boards (LLR " + f"{judged.llr:+.2f})")
    assert "H1" in sprt_line(judged.result())


def seated_stream(rng: random.Random, effects: tuple[float, ...], boards: int) -> list[tuple[int, list[float]]]:
    """One seed stream of a mixed field's pair of identical bots: a deal set per seating
    (stratum), where sitting after one bot or another moves their difference by the
    seating's effect; the effects cancel over the stream (the seating design)."""
    return [(s, [rng.gauss(e, 300) for _ in range(boards)]) for s, e in enumerate(effects)]


@pytest.mark.parametrize("judged", ["at each stream's end", "after every deal set (control)"])
def test_sprt_is_not_fooled_by_a_seating_whose_effect_the_stream_balances(judged):
    """Two copies of one bot (true difference 0) whose seatings favour one or the other
    by ±200 per 100 hands, balanced over each stream of eight deal sets. Judged after every
    deal set as one stratum (the rule before), the test reads the first seatings'
    advantage as a difference and accepts H1; judged where the strata are balanced, with
    the variance within them, it accepts H0."""
    rng = random.Random(3)
    s = Sprt("a", "b", delta=30.0, warmup=200)
    for _ in range(40):
        stream = seated_stream(rng, (200.0,) * 4 + (-200.0,) * 4, 50)
        for i, (stratum, diffs) in enumerate(stream):
            if judged.startswith("after"):
                s.add(diffs)
            else:
                s.add(diffs, stratum, judge=i == len(stream) - 1)
        if s.verdict:
            break
    if judged.startswith("after"):
        assert s.verdict is not None and s.verdict.startswith("H1"), s.result()
    else:
        assert s.verdict is not None and s.verdict.startswith("H0"), s.result()
        assert s.result()["boards"] % 400 == 0  # decided at a stream's end


def test_sprt_variance_is_pooled_within_strata():
    s = Sprt("a", "b", delta=1.0, warmup=2)
    s.add([10.0, 12.0], "x", judge=False)
    s.add([-10.0, -12.0], "y")
    assert s._variance() == pytest.approx((2 + 2) / 2)  # not the spread of ±11 around 0
