"""The `pimc` bot: legal in every variant, deals only what its seat cannot see, the same
choices from the same seed, and far stronger than chance on duplicate deals."""

from __future__ import annotations

import random

import pytest

import naparena.bots.builtin
from naparena import cards
from naparena.bots.pimc import (
    PimcBot,
    Unseen,
    unseen_for_bidding,
    unseen_for_play,
    voids_of,
)
from naparena.bots.plugins import DISABLE_AUTOLOAD_ENV, load_registry
from naparena.bots.reference import HeuristicBot, RandomBot
from naparena.bots.solver import TRICKS, OutOfTime, Position
from naparena.errors import RulesError
from naparena.game.cards import SUIT
from naparena.game.engine import Match
from naparena.game.rules import VARIANTS, make_rules
from tests.deals import make_hand, play

# Few samples, and a time budget that never binds: a decision cut short by the clock on a
# loaded machine would make the same seed give other choices.
FAST = {"samples": 10, "bid_samples": 8, "time_budget": 60.0}


def c(text: str) -> int:
    return cards.parse(text)


def cs(text: str) -> set[int]:
    return set(cards.parse_many(text))


def pimc(seat: int = 0, seed: int = 0, **params) -> PimcBot:
    return PimcBot(random.Random(seed), seat, **params)


def table_size(rules) -> int:
    """Four seats where the variant allows it, else the nearest table it can deal."""
    for players in (4, 5, 3, 6, 7):
        try:
            rules.check_players(players)
        except RulesError:
            continue
        return players
    raise AssertionError("no table size")


def play_match(rules, players, lineup, seed, hands, params=None):
    """Every seat's bot answers every decision; (match, records)."""
    match = Match(rules, players, seed)
    bots = [cls(random.Random(seed * 31 + seat), seat, **(params or {}) if cls is PimcBot else {})
            for seat, cls in enumerate(lineup)]
    records = []
    for _ in range(hands):
        hand = match.next_hand()
        while not hand.over:
            bot = bots[hand.to_act]
            answer = getattr(bot, hand.kind)(hand.view())
            assert answer in hand.legal(), (bot.name, hand.kind, answer)
            hand.apply(answer)
        record = hand.record()
        assert "faults" not in record, record["faults"]
        records.append(record)
        match.finish(hand)
    return match, records


# --- registration -----------------------------------------------------------------------

def test_pimc_registers_with_naparenas_own_bots(monkeypatch):
    found = []
    naparena.bots.builtin.register_bots(found.append)
    assert PimcBot in found
    monkeypatch.setenv(DISABLE_AUTOLOAD_ENV, "1")
    registry = load_registry(None)
    assert not registry.failures
    entry = registry.get("pimc")
    assert entry.cls is PimcBot and entry.description
    bot = registry.make("pimc", {"samples": 5}, random.Random(0), 1)
    assert bot.samples == 5 and bot.seat == 1 and bot.time_budget == PimcBot.params["time_budget"]


# --- always legal -----------------------------------------------------------------------

@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_pimc_answers_legally_in_every_variant(variant):
    rules = make_rules(variant)
    players = table_size(rules)
    # Two pimc seats, so it bids, defends and plays against itself too.
    lineup = [PimcBot, HeuristicBot, PimcBot, RandomBot, HeuristicBot, RandomBot, HeuristicBot][:players]
    _, records = play_match(rules, players, lineup, seed=len(variant), hands=8, params=FAST)
    assert any(r["result"] != "passed" for r in records)


def test_pimc_answers_legally_when_it_bids_every_contract_kind():
    # Alone at the table it bids against itself: misère, seven-card, floater contracts.
    for variant, players in (("misere", 3), ("seven-card", 3), ("floater", 3), ("hoyle", 3)):
        play_match(make_rules(variant), players, [PimcBot] * players, seed=5, hands=6, params=FAST)


def test_pimc_plays_on_after_the_contract_is_decided():
    rules = make_rules("classic", {"stop_when_decided": False})
    _, records = play_match(rules, 4, [PimcBot, HeuristicBot] * 2, seed=2, hands=8, params=FAST)
    assert all(len(r["tricks"]) == 5 for r in records if r["result"] in ("made", "lost"))


# --- the sampler ---------------------------------------------------------------------------

def check_deal(unseen: Unseen, deal: dict[int, tuple[int, ...]]) -> None:
    assert set(deal) == set(unseen.counts)
    dealt = [x for h in deal.values() for x in h]
    assert len(dealt) == len(set(dealt)), "a card dealt twice"
    assert set(dealt) <= set(unseen.pool)
    for seat, h in deal.items():
        assert len(h) == unseen.counts[seat]
        assert list(h) == sorted(h)
        for x in h:
            assert not unseen.voids.get(seat, 0) >> SUIT[x] & 1, "a card of a suit the seat is out of"
            assert x not in unseen.bidder_only or seat == unseen.bidder


def test_sampler_respects_voids_and_bidder_only_cards():
    pool = list(range(12, 52))
    voids = {1: 0b0011, 2: 0b0100}          # seat 1 out of clubs, diamonds; seat 2 of hearts
    unseen = Unseen(pool, {1: 5, 2: 5, 3: 5}, voids, bidder_only={c("AS"), c("KS")}, bidder=3)
    rng = random.Random(1)
    held = set()
    for _ in range(300):
        deal = unseen.deal(rng)
        check_deal(unseen, deal)
        held.update(deal[3])
    assert c("AS") in held and c("KS") in held  # the bidder does sometimes hold them


def test_constrained_deal_when_uniform_deals_are_rare():
    # Seat 1 is out of three suits and must take the only five spades there are:
    # a uniform deal almost never fits, the constrained one always does.
    spades = [c(t) for t in ("AS", "KS", "QS", "JS", "10S")]
    pool = spades + [x for x in range(39) if cards.RANK[x] >= 6]  # 8 to ace
    unseen = Unseen(pool, {1: 5, 2: 5, 3: 5}, {1: 0b0111, 2: 0b1000, 3: 0b1000})
    rng = random.Random(2)
    for _ in range(100):
        deal = unseen.deal(rng)
        check_deal(unseen, deal)
        assert set(deal[1]) == set(spades)


def test_impossible_constraints_are_refused():
    with pytest.raises(ValueError):
        Unseen(range(5), {1: 3, 2: 3})
    unseen = Unseen([c("AS"), c("KS"), c("AH")], {1: 2}, {1: 0b1000})
    with pytest.raises(ValueError):
        unseen.deal(random.Random(0))


def test_unconstrained_deals_are_uniform():
    # Without constraints every card is equally likely in each hand.
    unseen = Unseen(range(12), {1: 3, 2: 3})
    rng = random.Random(3)
    hits = [0] * 12
    for _ in range(3000):
        for x in unseen.deal(rng)[1]:
            hits[x] += 1
    assert all(abs(h / 3000 - 0.25) < 0.04 for h in hits)


CLASSIC = make_rules("classic")
# Dealer 3 at a table of four: seat 0 speaks and leads first. Pack: 8 to ace.
DEAL = {0: "AS KS QS 8D 9D", 1: "8S 8C 9C 10C JC", 2: "9S QC KC AC 8H", 3: "10D JD QD KD AD"}


def test_unseen_for_play_knows_what_is_played_and_who_is_out_of_a_suit():
    hand = make_hand(CLASSIC, DEAL)
    play(hand, "three", "pass", "pass", "pass")
    play(hand, "AS", "8S", "9S", "10D")   # seat 3 shows out of spades
    play(hand, "KS", "8C")                 # seat 1 too
    view = hand.view()
    assert view.seat == 2
    unseen = unseen_for_play(view)
    gone = cs("AS 8S 9S 10D KS 8C") | set(view.hand)
    assert not gone & set(unseen.pool)
    assert unseen.counts == {0: 3, 1: 3, 3: 4}
    spades = 1 << cards.SUIT_LETTERS.index("S")
    assert unseen.voids == {1: spades, 3: spades} == voids_of(view)
    # The real hands are one of the deals it may draw.
    for seat in (0, 1, 3):
        assert all(unseen.allowed(seat, x) for x in hand.hands[seat])
    rng = random.Random(4)
    for _ in range(200):
        deal = unseen.deal(rng)
        check_deal(unseen, deal)
        assert not any(SUIT[x] == 3 for seat in (1, 3) for x in deal[seat])


def test_a_peep_card_seen_can_be_only_in_a_peeping_bidders_hand():
    rules = make_rules("peep")
    deal = {0: "AS KS QS JS 8D", 1: "8S 8C 9C 10C JC", 2: "9S QC KC AC 8H", 3: "10D JD QD KD AD"}
    hand = make_hand(rules, deal, extras="10S")
    play(hand, True, "nap", True, "pass", False, "pass", False, "pass")
    assert hand.kind == "peep_exchange"
    play(hand, "8D")                        # the bidder swaps the 10S in
    play(hand, "AS")
    view = hand.view()
    assert view.seat == 1 and view.seen == (c("10S"),)
    unseen = unseen_for_play(view)
    assert unseen.bidder_only == {c("10S")} and unseen.bidder == 0
    assert c("10S") in unseen.pool
    # Seat 2 never saw it: to him it is one more unseen card, anyone's.
    play(hand, "8S")
    other = unseen_for_play(hand.view())
    assert other.bidder_only == frozenset() and c("10S") in other.pool


def test_a_peep_card_nobody_took_is_out_of_play():
    rules = make_rules("peep")
    hand = make_hand(rules, DEAL, extras="10S")
    play(hand, False, "three", True, "pass", False, "pass", False, "pass", "AS")
    view = hand.view()
    assert view.seat == 1 and c("10S") in view.seen
    unseen = unseen_for_play(view)
    assert c("10S") not in unseen.pool and not unseen.bidder_only


def test_own_discards_are_out_of_play():
    rules = make_rules("purchase")
    hand = make_hand(rules, DEAL)
    assert hand.kind == "exchange"
    play(hand, (c("8D"), c("9D")), (), (), ())
    view = hand.view()
    assert view.seat == 0 and view.kind == "bid"
    unseen = unseen_for_bidding(view)
    assert not {c("8D"), c("9D")} & set(unseen.pool)
    assert not set(view.hand) & set(unseen.pool)
    assert unseen.counts == {1: 5, 2: 5, 3: 5}


def test_a_floater_taken_with_the_bid_can_be_only_in_the_bidders_hand():
    rules = make_rules("floater")
    deal = {0: "AS KS QS JS 9D", 1: "9S 9C 10C JC QC", 2: "10S KC AC 9H 10H", 3: "10D JD QD KD AD"}
    hand = make_hand(rules, deal, extras="AH")
    play(hand, False, "nap-with", True, "pass", False, "pass", False, "pass")
    assert hand.kind == "floater_discard"
    play(hand, "9D", "AS")
    view = hand.view()
    assert view.seat == 1 and view.seen == (c("AH"),)
    unseen = unseen_for_play(view)
    assert unseen.bidder_only == {c("AH")}
    rng = random.Random(5)
    for _ in range(100):
        check_deal(unseen, unseen.deal(rng))


# --- decisions ------------------------------------------------------------------------------

def test_sure_nap_is_bid_and_junk_is_passed():
    hand = make_hand(CLASSIC, {0: "AS KS QS JS 10S"})
    assert pimc().bid(hand.view()) == "nap"
    hand = make_hand(CLASSIC, {0: "8C 9D 10H 8S 9S"})
    assert pimc().bid(hand.view()) == "pass"


def test_misere_is_bid_on_the_lowest_cards():
    hand = make_hand(make_rules("misere"), {0: "8C 8D 8H 8S 9S"})
    assert pimc().bid(hand.view()) == "mis"


def test_bidder_leads_trumps_from_the_top():
    hand = make_hand(CLASSIC, {0: "AS KS QS 9H AD"})
    play(hand, "three", "pass", "pass", "pass")
    assert pimc().play(hand.view()) in {c("AS"), c("KS"), c("QS")}


def test_defender_takes_the_trick_the_contract_hangs_on():
    # The bidder has two tricks of three and leads the KH; seat 2's ace is the only card
    # that beats it (seat 3 is out of trumps), so it must go on now.
    hand = make_hand(CLASSIC, {0: "AS KS KH 8D 9D", 1: "8S 9S 8C 9C 10C",
                               2: "10S JS AH 9H 8H", 3: "10D JD QD KD AD"})
    play(hand, "three", "pass", "pass", "pass")
    play(hand, "AS", "8S", "10S", "10D", "KS", "9S", "JS", "JD", "KH", "8C")
    view = hand.view()
    assert view.seat == 2 and view.legal == (c("8H"), c("9H"), c("AH"))
    assert pimc(2).play(view) == c("AH")


def test_a_node_budget_too_small_falls_back_to_the_heuristic():
    hand = make_hand(CLASSIC, DEAL)
    play(hand, "three", "pass", "pass", "pass", "AS", "8S", "9S", "10D")
    view = hand.view()
    assert view.seat == 0 and len(view.legal) == 4
    assert pimc(max_nodes=1).play(view) == HeuristicBot(random.Random(0), 0).play(view)
    hand = make_hand(CLASSIC, {0: "AS KS QS JS 10S"})
    assert pimc(max_nodes=1).bid(hand.view()) == HeuristicBot(random.Random(0), 0).bid(hand.view())


# --- determinism ------------------------------------------------------------------------

def test_same_seed_same_choices_whatever_the_global_rng():
    rules = make_rules("misere")
    random.seed(1)
    _, first = play_match(rules, 4, [PimcBot, HeuristicBot, PimcBot, RandomBot], seed=9, hands=12,
                          params=FAST)
    random.seed(2)
    random.random()
    _, second = play_match(rules, 4, [PimcBot, HeuristicBot, PimcBot, RandomBot], seed=9, hands=12,
                           params=FAST)
    assert first == second


def test_another_seed_may_choose_otherwise_but_never_illegally():
    hand = make_hand(CLASSIC, {0: "AS KS 9S 8D AC"})
    play(hand, "three", "pass", "pass", "pass", "AS")
    view = hand.view()
    choices = {pimc(view.seat, seed=s, **FAST).play(view) for s in range(6)}
    assert choices <= set(view.legal)


# --- strength ---------------------------------------------------------------------------

def duplicate_totals(names, seeds, hands, params):
    """Net chips per bot, classic at four, every deal played with the seating rotated."""
    rules = make_rules("classic")
    classes = {"pimc": PimcBot, "heuristic": HeuristicBot, "random": RandomBot}
    totals = dict.fromkeys(names, 0)
    for seed in seeds:
        for turn in range(2):
            lineup = [classes[names[(i + turn) % 2]] for i in range(4)]
            match, _ = play_match(rules, 4, lineup, seed, hands, params)
            for seat, cls in enumerate(lineup):
                totals[cls.name] += match.chips[seat]
    return totals


@pytest.mark.slow
def test_pimc_beats_random_on_duplicate_deals():
    # 2 seeds x 60 deals x 2 seatings; each deal held by both bots in every seat.
    totals = duplicate_totals(("pimc", "random"), seeds=(1, 2), hands=60, params=FAST)
    assert totals["pimc"] + totals["random"] == 0
    # The heuristic bot beats random by some 2 chips a hand; pimc must do better still.
    assert totals["pimc"] > 3 * 240, totals


# --- reproducible on a loaded machine --------------------------------------------------

class SlowClock:
    """A clock that moves `step` seconds at every reading: a machine as slow as we like."""

    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_the_node_budget_binds_so_a_slow_machine_plays_the_same_cards(monkeypatch):
    rules, lineup = make_rules("classic"), [PimcBot, HeuristicBot, PimcBot, RandomBot]
    params = {"samples": 40, "bid_samples": 16, "max_nodes": 20_000}
    # Calm: a clock that never moves, so only the node budget can end a decision (the
    # machine's own clock would make this test as load-sensitive as the bot it tests).
    monkeypatch.setattr("naparena.bots.pimc._clock", SlowClock(0.0))
    _, calm = play_match(rules, 4, lineup, seed=3, hands=6, params=params)
    # Every reading of the clock is 3 ms later: 1 at the start, at most 40 samples, 40
    # tie-break solves and 20 readings within the solves (one per CLOCK_EVERY of the 20,000
    # nodes) come to 0.30 s, several times a real decision, still within the 0.4 s guard.
    slow = SlowClock(0.003)
    monkeypatch.setattr("naparena.bots.pimc._clock", slow)
    _, loaded = play_match(rules, 4, lineup, seed=3, hands=6, params=params)
    assert loaded == calm
    assert slow.now > 1.0  # the slow clock was read throughout
    # The control: a clock twice as slow again reaches the guard, and the play changes.
    monkeypatch.setattr("naparena.bots.pimc._clock", SlowClock(0.03))
    _, cut = play_match(rules, 4, lineup, seed=3, hands=6, params=params)
    assert cut != calm


def test_a_decision_past_its_guard_stops_at_the_next_reading(monkeypatch, caplog):
    # The clock moves 0.3 s a reading against a 0.4 s guard: the start reads 0.3, so the
    # deadline is 0.7; a reading before each solve (and within a long one) ends the
    # decision at the first past it. One cut, logged; a legal bid all the same.
    hand = Match(make_rules("classic"), 4, 3).next_hand()
    bot = PimcBot(random.Random(1), hand.to_act, samples=20, max_nodes=10_000_000)
    slow = SlowClock(0.3)
    monkeypatch.setattr("naparena.bots.pimc._clock", slow)
    with caplog.at_level("WARNING", logger="naparena.bots.pimc"):
        assert bot.bid(hand.view()) in hand.legal()
    assert bot.clock_cuts == 1
    assert slow.now <= 4 * 0.3 + 1e-9  # start, one solve, the cut, its log line


def test_a_long_solve_is_cut_within_it(monkeypatch):
    # One search of a seven-card deal, far more than CLOCK_EVERY nodes: the bot's deadline
    # reaches into it, so a decision never waits for a long solve to finish.
    rng = random.Random(1)
    pack = list(range(52))
    rng.shuffle(pack)
    hands = tuple(tuple(sorted(pack[i * 7:(i + 1) * 7])) for i in range(4))
    pos = Position(hands, (0, 1, 2, 3), 0, bidder=0, need=4, trumps_by_lead=True)
    bot = PimcBot(random.Random(1), 0)
    bot._deadline = 1.0
    readings = iter([0.5, 2.0])  # before the solve, then within it
    monkeypatch.setattr("naparena.bots.pimc._clock", lambda: next(readings))
    with pytest.raises(OutOfTime):
        bot._solve(pos, None, TRICKS, max_nodes=10_000_000, table={})


def test_a_decision_cut_by_the_clock_is_logged_and_counted(monkeypatch, caplog):
    rules = make_rules("classic")
    monkeypatch.setattr("naparena.bots.pimc._clock", SlowClock(1.0))  # every reading is 1 s later
    bot = PimcBot(random.Random(1), 0, samples=20, bid_samples=8)
    match = Match(rules, 4, 3)
    others = [None, HeuristicBot(random.Random(2), 1), HeuristicBot(random.Random(3), 2),
              RandomBot(random.Random(4), 3)]
    with caplog.at_level("WARNING", logger="naparena.bots.pimc"):
        for _ in range(4):
            hand = match.next_hand()
            while not hand.over:
                who = bot if hand.to_act == 0 else others[hand.to_act]
                hand.apply(getattr(who, hand.kind)(hand.view()))
            match.finish(hand)
    assert bot.clock_cuts > 0
    cuts = [r for r in caplog.records if "time guard cut" in r.getMessage()]
    assert len(cuts) == bot.clock_cuts and "seat 0" in cuts[0].getMessage()


def test_the_clock_guard_is_two_fifths_of_the_time_out_unless_set():
    told = PimcBot(random.Random(1), 0, samples=20)
    told.start_match({"timeout": 5.0})
    assert told._limit() == 2.0
    assert PimcBot(random.Random(1), 0, samples=20)._limit() == 0.4  # never told: of a 1 s time-out
    own = PimcBot(random.Random(1), 0, samples=20, time_budget=0.5)
    own.start_match({"timeout": 5.0})
    assert own._limit() == 0.5  # its own budget wins
