"""The luck-adjusted estimator (`naparena.table.luck`): unbiased on a game whose truth is
computed exactly, a baseline no result can move, logs that say what they corrected, and
intervals that still cover the truth in a small mixed field."""

from __future__ import annotations

import json
import random
import statistics
from fractions import Fraction
from typing import Any

import pytest
import tomli_w

from naparena.arena.match.job import Job, seat_record
from naparena.arena.match.play import play_job
from naparena.arena.records.ledger import Ledger
from naparena.arena.records.logs import read_match
from naparena.arena.records.rundir import MATCHES
from naparena.arena.records.verify import luck_bots, verify_match, verify_run
from naparena.arena.setup.reader import check_bots, load_tournament, parse_tournament
from naparena.arena.setup.schedule import bot_seed, schedule
from naparena.bots.plugins import load_registry
from naparena.bots.reference import BoldBot, CautiousBot, HeuristicBot
from naparena.game import cards
from naparena.game.engine import Hand, Match
from naparena.game.rules import make_rules
from naparena.table import luck
from naparena.table.luck import SCALE, match_luck
from naparena.table.play import feed
from tests.helpers import errors

RULES = make_rules("classic")
# A table of three: random between two deterministic bots (heuristic and bold).
BOTS: list[tuple[str, dict[str, Any]] | None] = [("heuristic", {}), ("random", {}), ("bold", {})]


def paths(hand: Hand, chance: Fraction = Fraction(1)) -> list[tuple[Fraction, dict[str, Any]]]:
    """Every way the hand can end, with its probability: random (seat 1) answers each legal
    answer with equal odds, the other seats as their deterministic bots do."""
    if hand.over:
        return [(chance, json.loads(json.dumps(hand.record())))]
    seat = hand.to_act
    if seat == 1:
        legal = hand.legal()
        out = []
        for answer in legal:
            h = hand.clone()
            h.apply(answer)
            out += paths(h, chance / len(legal))
        return out
    bot = (HeuristicBot if seat == 0 else BoldBot)(random.Random(0), seat)
    h = hand.clone()
    h.apply(getattr(bot, h.kind)(h.acting_view()))
    return paths(h, chance)


def first_hand(seed: int) -> Hand:
    return Match(RULES, 3, seed).next_hand()


@pytest.fixture(scope="module")
def every_path() -> tuple[int, list[tuple[Fraction, dict[str, Any]]]]:
    # A deal on which random's answers matter: it has several bids to choose from.
    seed = next(s for s in range(1, 50) if 20 <= len(paths(first_hand(s))) <= 200)
    return seed, paths(first_hand(seed))


def adjusted_mean(seed: int, ways: list[tuple[Fraction, dict[str, Any]]]) -> list[Fraction]:
    """The expectation of the adjusted result per seat over every path, in chips."""
    total = [Fraction(0)] * 3
    for chance, record in ways:
        (fix,) = match_luck(RULES, seed, 0, None, [record], BOTS, rollouts=1)
        total = [t + chance * (c - Fraction(x, SCALE)) for t, c, x in zip(total, record["chips"], fix)]
    return total


def test_the_adjusted_estimator_is_unbiased_where_the_truth_is_computed_exactly(every_path):
    seed, ways = every_path
    assert sum(p for p, _ in ways) == 1
    truth = [sum(p * r["chips"][s] for p, r in ways) for s in range(3)]
    adjusted = adjusted_mean(seed, ways)
    # Equal but for each hand's correction rounded to a millionth of a chip.
    assert all(abs(a - t) <= Fraction(1, SCALE) for a, t in zip(adjusted, truth)), (adjusted, truth)
    # And it takes luck out: the spread over the paths shrinks (random's answers are most of it).
    def spread(values: list[tuple[Fraction, float]]) -> float:
        mean = sum(p * v for p, v in values)
        return float(sum(p * (v - mean) ** 2 for p, v in values))
    fixes = [match_luck(RULES, seed, 0, None, [r], BOTS, rollouts=1)[0] for _, r in ways]
    plain = spread([(p, r["chips"][0]) for p, r in ways])
    less = spread([(p, r["chips"][0] - x[0] / SCALE) for (p, r), x in zip(ways, fixes)])
    assert less < 0.8 * plain, (less, plain)


def test_the_check_catches_a_biased_correction(every_path, monkeypatch):
    """The control: a correction whose mean leaves out an answer is biased, and the exact
    expectation shows it."""
    seed, ways = every_path
    truth = [sum(p * r["chips"][s] for p, r in ways) for s in range(3)]
    real = luck._correct

    def biased(hand, answer, baseline, key, out):
        legal = hand.legal()
        if len(legal) > 2:
            hand = hand.clone()
            hand._legal = legal[:-1]  # the mean over all but the last answer
        real(hand, answer if answer in hand.legal() else hand.legal()[0], baseline, key, out)
    monkeypatch.setattr(luck, "_correct", biased)
    adjusted = adjusted_mean(seed, ways)
    assert any(abs(a - t) > Fraction(1, 100) for a, t in zip(adjusted, truth))


def answers(hand: Hand, logged: dict[str, Any]) -> list[tuple[int | None, Any]]:
    """(seat, answer) of every decision of a logged hand, in order."""
    out: list[tuple[int | None, Any]] = []
    feed(hand.clone(), logged, None, lambda h, a, f: out.append((h.to_act, a)))
    return out


def finished_otherwise(seed: int, records: list[dict[str, Any]], hand_no: int) -> list[dict[str, Any]]:
    """The records with hand `hand_no` played as logged up to random's last answer, and then
    a revoke by the next seat (a fault ends the hand): the same luck, another result."""
    match = Match(RULES, 3, seed)
    out = []
    for n, logged in enumerate(records):
        hand = match.next_hand()
        if n == hand_no:
            given = answers(hand, logged)
            last = max(i for i, (seat, _) in enumerate(given) if seat == 1)
            for _, answer in given[:last + 1]:
                hand.apply(tuple(answer) if isinstance(answer, list) else answer)
            if not hand.over:  # the next seat revokes: the hand ends there, settled otherwise
                hand.fault("a revoke, for the test")
            while not hand.over:
                hand.apply(hand.legal()[0])
            out.append(json.loads(json.dumps(hand.record())))
        else:
            feed(hand, logged)
            out.append(logged)
        match.finish(hand)
    return out


def played(seed: int, hands: int, rules: Any = RULES, middle: type = luck.RandomBot,
           shuffled: list[bool] | None = None) -> list[dict[str, Any]]:
    """Records of `hands` hands at a table of three: heuristic, `middle` (random) and bold;
    `shuffled` gets whether each hand's pack was shuffled (not gathered and cut)."""
    match = Match(rules, 3, seed)
    bots = [HeuristicBot(random.Random(1), 0), middle(random.Random(2), 1), BoldBot(random.Random(3), 2)]
    out = []
    for _ in range(hands):
        hand = match.next_hand()
        if shuffled is not None:
            shuffled.append(hand.gathered is None)
        while not hand.over:
            hand.apply(getattr(bots[hand.to_act], hand.kind)(hand.acting_view()))
        out.append(json.loads(json.dumps(hand.record())))
        match.finish(hand)
    return out


def test_no_result_moves_the_baseline():
    """The corrections are fixed before the results: a hand finished another way after
    random's last answer (other cards, other chips) keeps its correction, and so does every
    other hand. The control: another answer of random's moves it."""
    seed = 11
    records = played(seed, 12)
    before = match_luck(RULES, seed, 0, None, records, BOTS, rollouts=1)
    moved = 0
    for n in range(len(records)):
        other = finished_otherwise(seed, records, n)
        moved += other[n]["chips"] != records[n]["chips"]
        assert match_luck(RULES, seed, 0, None, other, BOTS, rollouts=1) == before
    assert moved >= 3, "the other finishes must change some results, or the check proves nothing"
    # The control: random's first answer of hand 0 changed, its luck changes.
    hand = Match(RULES, 3, seed).next_hand()
    while hand.to_act != 1:
        hand.apply(getattr((HeuristicBot if hand.to_act == 0 else BoldBot)(random.Random(0), hand.to_act),
                           hand.kind)(hand.acting_view()))
    given = records[0]["bids"][[s for s, _ in records[0]["bids"]].index(1)][1]
    hand.apply(next(b for b in hand.legal() if b != given))
    bots = [HeuristicBot(random.Random(1), 0), luck.RandomBot(random.Random(2), 1), BoldBot(random.Random(3), 2)]
    while not hand.over:
        hand.apply(getattr(bots[hand.to_act], hand.kind)(hand.acting_view()))
    changed = [json.loads(json.dumps(hand.record())), *records[1:]]
    assert match_luck(RULES, seed, 0, None, changed, BOTS, rollouts=1)[0] != before[0]


def test_no_seat_drawing_with_known_odds_means_nothing_to_correct():
    records = played(3, 2)
    assert match_luck(RULES, 3, 0, None, records, [("heuristic", {}), None, ("bold", {})]) is None


# --- a run with the adjusted estimator -----------------------------------------------------------

def tournament(tmp_path, estimator: str = "adjusted", hands: int = 8, table: int = 3, duplicate: bool = True):
    data = {"tournament": {"name": "luck", "seed": 5, "hands": hands, "table": table, "duplicate": duplicate,
                           "estimator": estimator},
            "bots": [{"name": "random", "alias": "r1"}, {"name": "random", "alias": "r2"},
                     {"name": "heuristic"}, {"name": "bold"}][:max(table, 3) + (table < 4)],
            "variants": [{"name": "classic"}]}
    path = tmp_path / "t.toml"
    path.write_text(tomli_w.dumps(data))
    return path


def test_an_adjusted_run_logs_its_luck_says_which_estimator_and_verifies(tmp_path, run_session):
    run_dir, standings = run_session(tournament(tmp_path), log_dir=tmp_path / "logs", workers=1)
    assert errors("standings", standings) == []
    data = standings["variants"]["classic"]
    assert data["estimator"] == "adjusted" and data["corrected_hands"] > 0
    for row in data["bots"] + data["pairs"]:
        assert row["plain"] is not None and row["plain"]["se"] is not None
    # Narrower than plain on the same hands, for the random pair above all.
    r = next(p for p in data["pairs"] if {p["a"], p["b"]} == {"r1", "r2"})
    assert r["se"] < r["plain"]["se"]
    logs = [json.loads(f.read_bytes()) for f in sorted((run_dir / MATCHES).glob("*.json"))]
    assert all(len(log["summary"]["hand_luck"]) == len(log["hands"]) for log in logs)
    assert verify_run(run_dir)[2] == []
    # A forged correction is found by replaying the hands.
    log = logs[0]
    log["summary"]["hand_luck"][0][0] += SCALE
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(log))
    t = load_tournament(tmp_path / "t.toml")
    assert verify_match(read_match(forged), luck_bots(t, log)) == [
        "summary: hand_luck is not the luck of the replayed hands"]
    assert verify_match(read_match(sorted((run_dir / MATCHES).glob("*.json"))[0]), luck_bots(t, log)) == []


def test_a_plain_run_logs_no_luck_and_shows_plain_figures(tmp_path, run_session):
    _, standings = run_session(tournament(tmp_path, "plain"), log_dir=tmp_path / "logs", workers=1)
    data = standings["variants"]["classic"]
    assert data["estimator"] == "plain" and data["corrected_hands"] == 0
    assert all(row["plain"] is None for row in data["bots"] + data["pairs"])


def test_auto_adjusts_where_random_sits_beside_a_bot_that_is_not_a_quick_built_in(tmp_path):
    def t(*names: str, variant: str = "classic"):
        data = {"tournament": {"name": "a", "table": 3},
                "bots": [{"name": n, "alias": f"{n}{i}"} for i, n in enumerate(names)],
                "variants": [{"name": variant}]}
        (tmp_path / "a.toml").write_text(tomli_w.dumps(data))
        return load_tournament(tmp_path / "a.toml")
    assert t("random", "heuristic", "pimc").luck_adjusted
    assert not t("random", "heuristic", "bold").luck_adjusted   # rollouts would cost more than they save
    assert not t("pimc", "heuristic", "bold").luck_adjusted     # no answer drawn with known odds
    assert t("pimc", "heuristic", "bold", variant="ecarte").luck_adjusted  # but a stock bought from
    assert not t("cautious", "heuristic", "bold", variant="ecarte").luck_adjusted
    assert t("pimc", "heuristic", "bold", variant="peep").luck_adjusted


@pytest.mark.parametrize("luck_of", ["random's answers", "the stock and the peep card"])
def test_the_luck_is_the_same_for_any_worker_count(tmp_path, run_session, luck_of):
    path = tournament(tmp_path, hands=4)
    if luck_of.startswith("the stock"):  # deterministic bots: only the cards beyond the hands are corrected
        data = {"tournament": {"name": "stock", "seed": 3, "hands": 4, "table": 3, "estimator": "adjusted"},
                "bots": [{"name": "heuristic"}, {"name": "cautious"}, {"name": "bold"}],
                "variants": [{"name": "ecarte"}, {"name": "peep"}]}
        path.write_text(tomli_w.dumps(data))
    one, _ = run_session(path, log_dir=tmp_path / "one", workers=1)
    two, _ = run_session(path, log_dir=tmp_path / "two", workers=2)
    logs = sorted((one / MATCHES).glob("*.json"))
    assert all("hand_luck" in json.loads(f.read_bytes())["summary"] for f in logs)
    for a, b in zip(logs, sorted((two / MATCHES).glob("*.json")), strict=True):
        assert a.read_bytes() == b.read_bytes()


def booked(t) -> dict[str, Any]:
    """A tournament played in this process through the worker's own match loop and the
    run's booking (the calibration benchmark's way), without run files."""
    registry = load_registry(None)
    t = check_bots(t, registry)
    ledger = Ledger.of(t)
    entries = schedule(t)
    bots = {b.alias: b for b in t.bots}
    for i, entry in enumerate(entries):
        seats = tuple(seat_record(a, bots[a].name, bots[a].params, bot_seed(t.seed, entry.index, s))
                      for s, a in enumerate(entry.seats))
        job = Job(index=entry.index, seed=entry.seed, variant=entry.variant, rules=t.variant(entry.variant).rules,
                  seats=seats, hands=entry.hands, spec=entry, luck=t.luck_adjusted)
        ledger.book(entry, play_job(job, registry).summary, ())
        ledger.end_of_unit(entry, entries[i + 1] if i + 1 < len(entries) else None)
    return ledger.result()


def test_a_small_mixed_field_covers_the_alias_pair_with_a_narrower_interval(monkeypatch):
    """A small calibration: two aliases of random beside heuristic and bold at tables of
    three, duplicate, 20 seeds: the alias pair's adjusted interval covers their true
    difference (0) about as often as it says (17 or more of 20: below that, one time in
    sixty under a true 95%), and is narrower than the plain one on the same hands. The
    benchmark repeats such designs 400 times each (docs/explanation/statistics.md)."""
    monkeypatch.setenv("NAPARENA_DISABLE_PLUGIN_AUTOLOAD", "1")
    covered, width, plain_width = 0, 0.0, 0.0
    for seed in range(20):
        data = {"tournament": {"name": "small", "seed": seed, "hands": 6, "table": 3, "estimator": "adjusted"},
                "bots": [{"name": "random", "alias": "r1"}, {"name": "random", "alias": "r2"},
                         {"name": "heuristic"}, {"name": "bold"}],
                "variants": [{"name": "classic"}]}
        result = booked(parse_tournament(data, None))
        pair = next(p for p in result["variants"]["classic"]["pairs"] if {p["a"], p["b"]} == {"r1", "r2"})
        covered += pair["ci95"][0] <= 0 <= pair["ci95"][1]
        width += pair["ci95"][1] - pair["ci95"][0]
        plain_width += pair["plain"]["ci95"][1] - pair["plain"]["ci95"][0]
    assert covered >= 17, covered
    assert width < 0.8 * plain_width, (width, plain_width)


# --- purchases from a shuffled stock ------------------------------------------------------------

ECARTE = make_rules("ecarte", {"pack": 20})  # three hands of five and a stock of five
PEEP = make_rules("peep", {"pack": 20})      # three hands of five, a peep card and four undealt
DETERMINISTIC: list[tuple[str, dict[str, Any]] | None] = [("heuristic", {}), ("bold", {}), ("cautious", {})]


def purchase_results(deal: list[int], stock: tuple[int, ...], rules: Any = ECARTE) -> tuple[list[int], list[float]]:
    """A hand dealt `deal` then `stock` (the cards beyond the hands), played by three
    deterministic bots: its chips, and the correction of its first purchase (Écarté Nap)
    or first look at the peep card (Peep Nap) as `match_luck` takes it."""
    hand = Hand(rules, 3, 2, [*deal, *stock], (0, 0, 0), 0)
    bots = [cls(random.Random(0), s) for s, cls in enumerate((HeuristicBot, BoldBot, CautiousBot))]
    baseline = luck.Baseline(luck.policies(DETERMINISTIC), [True] * 3, 1)
    out = [0.0] * 3
    while not hand.over:
        answer = getattr(bots[hand.to_act], hand.kind)(hand.acting_view())
        if hand.kind == "exchange" and answer and not hand.bought:
            luck._correct_draw(hand, answer, baseline, "the same key for every order", out)
        if hand.kind == "peep" and answer and not hand.peeps:
            luck._correct_peep(hand, answer, baseline, "the same key for every card", out)
        hand.apply(answer)
    return list(hand.delta), out


def every_stock_order(seed: int = 0, rules: Any = ECARTE) -> tuple[list[int], list[tuple[int, ...]]]:
    """A deal with a correction (its first purchaser buys, a seat peeps), and every order
    of the cards beyond its hands (Peep Nap: every card as the peep card, the rest in one order)."""
    from itertools import permutations
    rng = random.Random(seed)
    while True:
        pack = list(cards.pack(rules.pack_size(3)))
        rng.shuffle(pack)
        deal, stock = pack[:15], tuple(pack[15:])
        _, fix = purchase_results(deal, stock, rules)
        if not any(fix):
            continue
        if rules.peep:
            return deal, [(c, *sorted(set(stock) - {c})) for c in stock]
        return deal, list(permutations(stock))


def test_a_purchase_correction_is_unbiased_over_every_order_of_the_stock(monkeypatch):
    """Given the hands, a shuffled stock lies in any of its 120 orders with equal odds: the
    adjusted result's mean over all of them is the chips' mean, exactly (but for float
    rounding). The control: a mean over the stock *sorted*, not shuffled, is biased."""
    deal, orders = every_stock_order()

    def means() -> tuple[list[float], list[float]]:
        chips, adjusted = [0.0] * 3, [0.0] * 3
        for stock in orders:
            c, fix = purchase_results(deal, stock)
            chips = [a + x / len(orders) for a, x in zip(chips, c)]
            adjusted = [a + (x - f) / len(orders) for a, x, f in zip(adjusted, c, fix)]
        return chips, adjusted
    chips, adjusted = means()
    assert adjusted == pytest.approx(chips, abs=1e-9)
    # and most of the stock's luck is gone: the first purchaser's result spreads less
    results = [purchase_results(deal, stock) for stock in orders]
    spread = statistics.pvariance([c[0] for c, _ in results])
    assert statistics.pvariance([c[0] - f[0] for c, f in results]) < 0.5 * spread

    class Sorting(random.Random):
        def shuffle(self, x: list[Any]) -> None:  # type: ignore[override]
            x.sort()
    monkeypatch.setattr(luck.random, "Random", Sorting)
    chips, adjusted = means()
    assert adjusted != pytest.approx(chips, abs=1e-3)


def test_only_a_shuffled_stock_is_corrected_and_only_where_no_seat_plays_random(monkeypatch):
    """Purchase Nap gathers and cuts the pack unless a Nap was won: a gathered stock's
    order follows from the last hand, no odds are known, and nothing is corrected there.
    Beside random, purchases are not corrected at all (its finishes' noise outweighed
    their luck); random's own answers still are."""
    rules = make_rules("purchase")
    shuffled: list[bool] = []
    records = played(11, 40, rules, CautiousBot, shuffled)
    calls: list[int] = []
    real = luck._correct_draw
    monkeypatch.setattr(luck, "_correct_draw", lambda h, *a: (calls.append(h.hand_no), real(h, *a))[1])
    fixes = match_luck(rules, 11, 0, None, records, [("heuristic", {}), ("cautious", {}), ("bold", {})])
    assert fixes is not None and len(fixes) == 40
    assert calls and all(shuffled[n] for n in calls), "a gathered stock was corrected"
    assert len(calls) == len(set(calls)), "a hand's later purchase was corrected again"
    assert not any(any(row) for row, s in zip(fixes, shuffled) if not s)
    assert any(any(row) for row in fixes)
    assert not all(shuffled) and sum(shuffled) > 1  # both kinds of hand were dealt
    calls.clear()
    with_random = played(11, 12, rules)
    assert match_luck(rules, 11, 0, None, with_random, BOTS) is not None
    assert calls == []


def test_purchases_corrected_narrow_a_deterministic_field_in_ecarte(monkeypatch):
    """Two aliases of heuristic beside cautious and bold in Écarté Nap, no duplicate: the
    only luck the estimator takes out is the stock's, and their pair's interval narrows
    (0.73 of plain's width over 400 runs: docs/explanation/statistics.md)."""
    monkeypatch.setenv("NAPARENA_DISABLE_PLUGIN_AUTOLOAD", "1")
    data = {"tournament": {"name": "stock", "seed": 4, "hands": 12, "table": 4, "duplicate": False,
                           "estimator": "adjusted"},
            "bots": [{"name": "heuristic", "alias": "h1"}, {"name": "heuristic", "alias": "h2"},
                     {"name": "cautious"}, {"name": "bold"}],
            "variants": [{"name": "ecarte"}]}
    result = booked(parse_tournament(data, None))["variants"]["ecarte"]
    assert result["estimator"] == "adjusted" and result["corrected_hands"] > 0
    pair = next(p for p in result["pairs"] if {p["a"], p["b"]} == {"h1", "h2"})
    assert pair["se"] < 0.85 * pair["plain"]["se"], (pair["se"], pair["plain"]["se"])


@pytest.mark.parametrize("seed", [0, 1])
def test_a_peep_correction_is_unbiased_over_every_peep_card(seed, monkeypatch):
    """Given the hands, the peep card is any of the five undealt cards with equal odds: the
    adjusted mean over the five is the chips' mean. The control: valuing the look against
    one card only (the first undealt) is biased."""
    deal, dealt = every_stock_order(seed, PEEP)
    results = [purchase_results(deal, rest, PEEP) for rest in dealt]
    chips = [statistics.fmean(c[s] for c, _ in results) for s in range(3)]
    adjusted = [statistics.fmean(c[s] - f[s] for c, f in results) for s in range(3)]
    assert adjusted == pytest.approx(chips, abs=1e-9)
    assert len({tuple(c) for c, _ in results}) > 1  # the peep card changes the hand's result
    monkeypatch.setattr(luck, "EXACT", 1)
    monkeypatch.setattr(luck.random.Random, "sample", lambda self, pool, k: pool[1:1 + k])
    results = [purchase_results(deal, rest, PEEP) for rest in dealt]
    biased = [statistics.fmean(c[s] - f[s] for c, f in results) for s in range(3)]
    assert biased != pytest.approx(chips, abs=1e-3)


def test_only_a_hands_first_look_at_the_peep_card_is_corrected(monkeypatch):
    """The first look takes out the peep card's luck; a later look at the same card is no
    chance event (V already saw the card): valuing it again would count it twice."""
    rules = make_rules("peep")
    records = played(5, 60, rules, CautiousBot)
    looks = [sum(1 for seat, kind, answer in r.get("pre", ()) if kind == "peep" and answer) for r in records]
    assert any(n > 1 for n in looks), "no hand with two looks to test"
    calls: list[int] = []
    real = luck._correct_peep
    monkeypatch.setattr(luck, "_correct_peep", lambda h, *a: (calls.append(h.hand_no), real(h, *a))[1])
    fixes = match_luck(rules, 5, 0, None, records, [("heuristic", {}), ("cautious", {}), ("bold", {})])
    assert fixes is not None
    assert sorted(calls) == [n for n, k in enumerate(looks) if k], (calls, looks)
