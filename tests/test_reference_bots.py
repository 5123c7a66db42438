"""The reference bots: always legal in every variant, stronger than chance, and the
tactics they claim (Peel's) seen in hand-built positions."""

from __future__ import annotations

import random

import pytest

from naparena import cards
from naparena.bots.plugins import load_registry
from naparena.bots.reference import BoldBot, CautiousBot, HeuristicBot, RandomBot
from naparena.errors import RulesError
from naparena.game.engine import Hand, Match, deal_order
from naparena.game.rules import VARIANTS, make_rules

ALL_BOTS = (RandomBot, HeuristicBot, CautiousBot, BoldBot)


def c(text: str) -> int:
    return cards.parse(text)


def play_match(rules, players, lineup, seed, hands):
    """Play `hands` hands, each seat's bot answering every decision; return (match, records)."""
    match = Match(rules, players, seed)
    bots = [cls(random.Random(seed * 31 + seat), seat) for seat, cls in enumerate(lineup)]
    records = []
    for _ in range(hands):
        hand = match.next_hand()
        kitty_before = hand.kitty_start
        while not hand.over:
            bot = bots[hand.to_act]
            answer = getattr(bot, hand.kind)(hand.view())
            assert answer in hand.legal(), (bot.name, hand.kind, answer)
            hand.apply(answer)
        record = hand.record()
        assert "faults" not in record, record["faults"]
        # Chips move between players and the kitty, never appear or vanish.
        assert sum(hand.chips) + hand.kitty - kitty_before == 0
        records.append(record)
        match.finish(hand)
    return match, records


def table_sizes(rules):
    sizes = []
    for n in (2, 3, 4, 5, 6, 7):
        try:
            rules.check_players(n)
        except RulesError:
            continue
        sizes.append(n)
    return sizes


# --- always legal -----------------------------------------------------------------------

@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_bot_answers_legally_in_every_variant(variant):
    rules = make_rules(variant)
    sizes = table_sizes(rules)
    assert sizes
    kinds = set()
    for n in sizes:
        # Each style sits at each table, next to random players who reach odd positions.
        lineup = [ALL_BOTS[(n + seat) % len(ALL_BOTS)] for seat in range(n)]
        match, records = play_match(rules, n, lineup, seed=n, hands=120)
        assert sum(match.chips) + match.kitty == 0
        for record in records:
            kinds.update(kind for _, kind, _ in record.get("pre", ()))
    # The variant's extra decisions were really asked and answered.
    expected = {"peep": {"peep"}, "purchase": {"exchange"}, "ecarte": {"exchange"},
                "sir-garnet": {"garnet"}, "floater": {"floater_peep"}}.get(variant, set())
    assert expected <= kinds


@pytest.mark.parametrize("cls", [HeuristicBot, CautiousBot, BoldBot])
def test_heuristic_styles_answer_legally_alone_at_the_table(cls):
    # Only one style at the table: it bids against itself, takes every contract kind.
    for variant in ("misere", "hoyle", "seven-card", "floater", "sir-garnet", "peep"):
        rules = make_rules(variant)
        for n in (3, 5):
            play_match(rules, n, [cls] * n, seed=11, hands=150)


# --- strength ---------------------------------------------------------------------------

def duplicate_totals(lineup, variant="classic", players=4, seeds=(1, 2), hands=600):
    """Net chips per bot name, every deal replayed with the lineup rotated round the table."""
    rules = make_rules(variant)
    totals: dict[str, int] = {}
    for seed in seeds:
        for turn in range(len(lineup)):
            seats = [lineup[(i + turn) % len(lineup)] for i in range(players)]
            match, _ = play_match(rules, players, seats, seed, hands)
            for seat, cls in enumerate(seats):
                totals[cls.name] = totals.get(cls.name, 0) + match.chips[seat]
    return totals


def test_heuristic_beats_random_on_duplicate_deals():
    # 2 seeds x 600 deals x 2 seatings = 2,400 classic hands, each deal held by both bots.
    totals = duplicate_totals([HeuristicBot, RandomBot])
    assert totals["heuristic"] + totals["random"] == 0
    assert totals["heuristic"] > 5000, totals


def test_bold_calls_nap_more_often_than_cautious_on_the_same_deals():
    rules = make_rules("classic")
    match = Match(rules, 4, seed=5)
    naps = {"cautious": 0, "heuristic": 0, "bold": 0}
    for _ in range(2000):
        hand = match.next_hand()
        view = hand.view()  # the first to speak, nothing bid yet
        for cls in (CautiousBot, HeuristicBot, BoldBot):
            naps[cls.name] += cls(random.Random(0), view.seat).bid(view) == "nap"
        while not hand.over:  # finish the hand so the match moves on
            hand.apply(hand.legal()[0])
        match.finish(hand)
    assert naps["bold"] > 2 * naps["heuristic"] > 0
    assert naps["heuristic"] >= naps["cautious"]


def test_styles_differ_only_in_aggression():
    assert CautiousBot.params["aggression"] < HeuristicBot.params["aggression"] < BoldBot.params["aggression"]
    for cls in (CautiousBot, BoldBot):
        assert cls.play is HeuristicBot.play
    bot = HeuristicBot(random.Random(0), 0, aggression=0.7)
    assert bot.aggression == 0.7


def test_same_seed_same_hands_whatever_the_global_rng():
    rules = make_rules("sir-garnet")
    random.seed(1)
    _, first = play_match(rules, 4, list(ALL_BOTS), seed=3, hands=60)
    random.seed(2)
    random.random()
    _, second = play_match(rules, 4, list(ALL_BOTS), seed=3, hands=60)
    assert first == second


def test_reference_bots_are_registered():
    registry = load_registry(bots_dir=None)
    for cls in ALL_BOTS:
        entry = registry.get(cls.name)
        assert entry.cls is cls
        assert entry.description
    bold = registry.make("bold", {}, random.Random(0), 2)
    assert bold.aggression == BoldBot.params["aggression"] and bold.seat == 2


# --- hand-built positions ----------------------------------------------------------------

def deal(rules, players, dealer, hands, after=""):
    """A Hand whose seats hold the given cards, `after` dealt next (peep card, floater,
    Sir Garnet hand, stock), and everything else in pack order."""
    active, slots = deal_order(rules, players, dealer)
    size = rules.pack_size(players)
    deck: list[int | None] = [None] * size
    for seat, text in hands.items():
        for position, card in zip(slots[seat], cards.parse_many(text)):
            deck[position] = card
    for position, card in enumerate(cards.parse_many(after), start=len(active) * rules.hand_size):
        deck[position] = card
    rest = iter(x for x in cards.pack(size) if x not in deck)
    return Hand(rules, players, dealer, [x if x is not None else next(rest) for x in deck],
                (0,) * players, 0)


def bid_round(hand, bids):
    for bid in bids:
        assert hand.kind == "bid"
        hand.apply(bid)


def play_cards(hand, texts):
    for text in texts.split():
        assert hand.kind == "play"
        hand.apply(c(text))


CLASSIC = make_rules("classic")
# Dealer 3 at a table of four: seat 0 speaks and leads first. Pack: 8 to ace.


@pytest.mark.parametrize("text, expected", [
    ("AS KS QS JS 10S", {"nap"}),
    ("AS KS QS JS AD", {"nap"}),
    ("AS KS QS JS 8D", {"four", "nap"}),
    ("AS KS 9S 8D 9C", {"three"}),
    ("8C 9D 10H 8S 9S", {"pass"}),
])
def test_heuristic_bids_what_the_cards_are_worth(text, expected):
    hand = deal(CLASSIC, 4, 3, {0: text})
    assert HeuristicBot(random.Random(0), 0).bid(hand.view()) in expected


def test_more_players_or_a_bigger_pack_changes_the_bid():
    # K Q J 10 of trumps: the ace is probably against us at six hands of a 36-card pack,
    # probably idle in the stock at three hands of a full pack.
    crowded = make_rules("classic")
    sparse = make_rules("classic", {"pack": 52})
    text = "KS QS JS 10S AD"
    tight = HeuristicBot(random.Random(0), 0).bid(deal(crowded, 7, 6, {0: text}).view())
    loose = HeuristicBot(random.Random(0), 0).bid(deal(sparse, 3, 2, {0: text}).view())
    ladder = crowded.ladder
    assert ladder.index(loose) > (ladder.index(tight) if tight != "pass" else -1)


def test_bidder_leads_the_trump_suit_from_the_top():
    hand = deal(CLASSIC, 4, 3, {0: "9H AS KS QS AD"})
    bid_round(hand, ["three", "pass", "pass", "pass"])
    lead = HeuristicBot(random.Random(0), 0).play(hand.view())
    assert lead == c("AS")
    hand.apply(lead)
    assert hand.trumps == cards.SUIT_LETTERS.index("S")


def test_bidder_draws_trumps_until_the_defenders_show_out_then_cashes_winners():
    # Seat 0 holds A K Q of spades; 9S is unseen (in the stock, as it happens).
    hand = deal(CLASSIC, 4, 3, {0: "AS KS QS AD 9H", 1: "8S 8C 9C 10C JC",
                                2: "JS QC KC AC 8D", 3: "10S 9D 10D JD QD"})
    bid_round(hand, ["four", "pass", "pass", "pass"])
    bot = HeuristicBot(random.Random(0), 0)
    assert bot.play(hand.view()) == c("AS")
    play_cards(hand, "AS 8S JS 10S")
    assert bot.play(hand.view()) == c("KS")  # 9S may still be out: draw it
    play_cards(hand, "KS 8C QC 9D")  # every defender shows out of spades
    # No trump can be against us now: lead a card that is top of its suit, not the 9H.
    assert bot.play(hand.view()) in {c("QS"), c("AD")}


def test_defender_does_not_overtake_a_partner_once_the_bidder_played_low():
    hand = deal(CLASSIC, 4, 3, {0: "9H 8C 9C 8D 9D", 1: "KH 10C JC 10D JD",
                                2: "AH 10H QC QD 8S", 3: "JH KC KD 9S 10S"})
    bid_round(hand, ["three", "pass", "pass", "pass"])
    play_cards(hand, "9H KH")
    assert HeuristicBot(random.Random(0), 2).play(hand.view()) == c("10H")


def test_defender_beats_the_bidder_as_cheaply_as_will_hold():
    hand = deal(CLASSIC, 4, 3, {0: "QH 8C 9C 8D 9D", 1: "KH AH JC 10D JD"})
    bid_round(hand, ["three", "pass", "pass", "pass"])
    play_cards(hand, "QH")
    assert HeuristicBot(random.Random(0), 1).play(hand.view()) == c("KH")


def test_defender_overtakes_when_the_bidder_still_to_play_could_beat_the_partner():
    # Seat 1 wins the first trick and leads 9D; seat 2 holds the ace, the bidder (seat 0)
    # plays last and may hold a higher diamond than the nine: take over with the ace.
    hand = deal(CLASSIC, 4, 3, {0: "9S 10S JS QS 8H", 1: "AS 9D 8C 9C 10H",
                                2: "AD JC QC KC 9H", 3: "8S 10D JD QD KD"})
    bid_round(hand, ["three", "pass", "pass", "pass"])
    play_cards(hand, "9S AS 9H 8S")
    play_cards(hand, "9D")
    assert HeuristicBot(random.Random(0), 2).play(hand.view()) == c("AD")


def test_defender_remembers_the_ace_has_gone_and_cashes_the_king():
    hand = deal(CLASSIC, 4, 3, {0: "9S 10S JS QS 8H", 1: "AS KD 8C 9C 10H",
                                2: "AD JC QC KC 9H", 3: "8S 9D 10D JD QD"})
    bid_round(hand, ["three", "pass", "pass", "pass"])
    play_cards(hand, "9S AS AD 8S")  # seat 2, out of spades, threw the ace of diamonds
    assert hand.to_act == 1
    assert HeuristicBot(random.Random(0), 1).play(hand.view()) == c("KD")


MISERE = make_rules("misere")


def test_misere_bidder_leads_low_and_ducks_under_the_winning_card():
    hand = deal(MISERE, 4, 3, {0: "8C 9H 10H 8D 8S", 1: "9C AH KH QH 9D",
                                2: "10C 8H 10D JD QD", 3: "JC JH KC KD AD"})
    bid_round(hand, ["mis", "pass", "pass", "pass"])
    bot = HeuristicBot(random.Random(0), 0)
    assert bot.play(hand.view()) in {c("8C"), c("8D"), c("8S")}  # nothing can go under it
    play_cards(hand, "8C 9C 10C JC")
    assert hand.to_act == 3
    play_cards(hand, "JH")
    assert bot.play(hand.view()) == c("10H")  # the highest heart that still loses


def test_misere_defender_leads_low_to_force_the_bidder():
    hand = deal(MISERE, 4, 3, {0: "8C 9H 10H 8D 8S", 1: "9C AH KH QH 9D",
                                2: "10C 8H 10D JD QD", 3: "JC JH KC KD AD"})
    bid_round(hand, ["mis", "pass", "pass", "pass"])
    play_cards(hand, "8C 9C 10C JC")
    assert HeuristicBot(random.Random(0), 3).play(hand.view()) == c("JH")


def test_misere_is_bid_on_low_cards_in_short_suits():
    hand = deal(MISERE, 4, 3, {0: "8C 9C 8D 8H 8S"})
    assert HeuristicBot(random.Random(0), 0).bid(hand.view()) == "mis"
    hand = deal(MISERE, 4, 3, {0: "AC KD QD AH 10S"})
    assert HeuristicBot(random.Random(0), 0).bid(hand.view()) != "mis"


# --- the variants' extra decisions ---------------------------------------------------------

def names(answer):
    return sorted(cards.name(x) for x in answer)


@pytest.mark.parametrize("text, expected", [
    ("KS QS JS 9S 8D", True),    # a sure three, a possible four: one card could decide it
    ("AS KS QS JS 10S", False),  # already a certain Nap
    ("8C 9D 10H 8S 9S", False),  # no card will make this a contract
])
def test_peeps_only_when_one_card_could_lift_the_bid(text, expected):
    hand = deal(make_rules("peep"), 4, 3, {0: text})
    assert hand.kind == "peep"
    assert HeuristicBot(random.Random(0), 0).peep(hand.view()) is expected


def test_bidder_swaps_in_a_peep_card_that_helps():
    hand = deal(make_rules("peep"), 4, 3, {0: "AS KS QS JS 8D"}, after="10S")
    hand.apply(True)  # seat 0 peeps, then bids
    bid = HeuristicBot(random.Random(0), 0).bid(hand.view())
    assert bid == "nap"  # with the 10S swapped in the Nap is perfect
    hand.apply(bid)
    while hand.kind != "peep_exchange":
        hand.apply(False if hand.kind == "peep" else "pass")
    assert HeuristicBot(random.Random(0), 0).peep_exchange(hand.view()) == c("8D")


@pytest.mark.parametrize("variant", ["purchase", "ecarte"])
@pytest.mark.parametrize("text, expected", [
    ("AS KS QS 8D 9C", ["8D", "9C"]),
    ("AS KS 9S 8D AC", ["8D"]),     # a side ace is worth keeping
    ("AS KS QS JS 10S", []),        # nothing to gain, a chip to lose
])
def test_exchange_keeps_the_trump_suit_and_aces(variant, text, expected):
    hand = deal(make_rules(variant), 4, 3, {0: text})
    assert hand.kind == "exchange"
    assert names(HeuristicBot(random.Random(0), 0).exchange(hand.view())) == expected


def test_sir_garnet_taken_only_on_near_certain_naps():
    rules = make_rules("sir-garnet")
    strong = deal(rules, 4, 3, {0: "AS KS QS JS 10S"})
    weak = deal(rules, 4, 3, {0: "AS KS 9D 8C 10H"})
    assert strong.kind == weak.kind == "garnet"
    assert HeuristicBot(random.Random(0), 0).garnet(strong.view()) is True
    assert HeuristicBot(random.Random(0), 0).garnet(weak.view()) is False
    strong.apply(True)
    discard = HeuristicBot(random.Random(0), 0).garnet_discard(strong.view())
    assert not {c(x) for x in ["AS", "KS", "QS", "JS", "10S"]} & set(discard)


def test_floater_bidder_discards_the_weakest_card_and_names_the_long_suit():
    rules = make_rules("floater")
    hand = deal(rules, 4, 3, {0: "AS KS QS JS AD"}, after="9D")
    hand.apply(False)                # seat 0 does not look at the floater
    hand.apply("wellington-with")    # five tricks, trumps named, lowest plain card led
    for _ in range(3):
        hand.apply(False)
        hand.apply("pass")
    assert hand.kind == "floater_discard"
    bot = HeuristicBot(random.Random(0), 0)
    assert bot.floater_discard(hand.view()) == c("9D")
    hand.apply(c("9D"))
    assert hand.kind == "trumps"
    assert bot.trumps(hand.view()) == cards.SUIT_LETTERS.index("S")


@pytest.mark.parametrize("text, expected", [
    ("AS KS QS JS 10S 9S 8S", "seven"),
    ("AS KS QS AD KD AC 2H", "six"),
    ("2C 3C 2D 3D 2H 4H 2S", "mis"),
])
def test_seven_card_bids(text, expected):
    hand = deal(make_rules("seven-card"), 4, 3, {0: text})
    assert HeuristicBot(random.Random(0), 0).bid(hand.view()) == expected
