"""The exact solver: agrees with plain minimax on small random positions, knows the
answers of hand-built ones, and takes its opening-lead rules from the engine's."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naparena import cards
from naparena.bots.solver import (
    CLOCK_EVERY,
    MAKE,
    TRICKS,
    OutOfTime,
    Position,
    SearchLimit,
    first_lead_names_trumps,
    made,
    opening_leads,
    solve,
)
from naparena.game.cards import SUIT
from naparena.game.engine import _trick_winner
from naparena.game.rules import VARIANTS, make_rules
from tests.deals import make_hand, play


def c(text: str) -> int:
    return cards.parse(text)


def hand_of(text: str) -> tuple[int, ...]:
    return tuple(sorted(cards.parse_many(text)))


# --- brute force: plain minimax, no pruning, no memo, the engine's trick winner -----------

def brute_force(pos: Position, legal=None) -> dict[int, int]:
    """The bidder's final tricks after each root card, every line of play enumerated."""
    order = pos.order
    hands = {s: list(pos.hands[s]) for s in order}

    def moves(seat, trick):
        h = hands[seat]
        if trick:
            follow = [x for x in h if SUIT[x] == SUIT[trick[0][1]]]
            return follow or list(h)
        return list(h)

    def after(seat, x, trick, trumps, won):
        hands[seat].remove(x)
        if pos.trumps_by_lead and not trick and trumps is None:
            trumps = SUIT[x]
        trick = trick + ((seat, x),)
        if len(trick) == len(order):
            w = _trick_winner(trick, trumps)
            won += w == pos.bidder
            v = value(w, (), trumps, won) if hands[w] else won
        else:
            v = value(order[(order.index(seat) + 1) % len(order)], trick, trumps, won)
        hands[seat].append(x)
        return v

    def value(seat, trick, trumps, won):
        vs = [after(seat, x, trick, trumps, won) for x in moves(seat, trick)]
        # The bidder wants tricks, or in a misère none; the defenders the opposite.
        return max(vs) if (seat == pos.bidder) != pos.misere else min(vs)

    root = legal if legal is not None else moves(pos.to_play, pos.trick)
    return {x: after(pos.to_play, x, pos.trick, pos.trumps, pos.won) for x in root}


def random_position(rng: random.Random, players: int, size: int, misere: bool = False) -> Position:
    """A random deal of `size` cards each from a small pack, part of a trick maybe played."""
    pack = list(cards.pack(rng.choice((20, 24, 52))))
    rng.shuffle(pack)
    order = tuple(rng.sample(range(7), players))
    hands = [()] * 7
    for i, s in enumerate(order):
        hands[s] = tuple(sorted(pack[i * size:(i + 1) * size]))
    bidder = rng.choice(order)
    mode = rng.randrange(3)  # trumps named by the lead, a set suit, or none
    by_lead = mode == 0
    trumps = rng.randrange(4) if mode == 1 else None
    trick = ()
    lead_i = rng.randrange(players)
    to_play = order[lead_i]
    if not by_lead and size > 1:
        for k in range(rng.randrange(players)):  # some cards already on the trick
            seat = order[(lead_i + k) % players]
            h = list(hands[seat])
            led = [x for x in h if trick and SUIT[x] == SUIT[trick[0][1]]]
            x = rng.choice(led or h)
            h.remove(x)
            hands[seat] = tuple(h)
            trick += ((seat, x),)
            to_play = order[(lead_i + k + 1) % players]
    need = 0 if misere else rng.randint(1, size + 1)
    won = 0 if misere else rng.randint(0, 2)
    return Position(tuple(hands), order, to_play, bidder, need, won, trick, trumps, by_lead)


def check_against_brute_force(pos: Position) -> None:
    truth = brute_force(pos)
    tricks = solve(pos, goal=TRICKS)
    assert tricks.cards == truth
    want_max = (pos.to_play == pos.bidder) != pos.misere
    assert tricks.value == (max if want_max else min)(truth.values())
    make = solve(pos, goal=MAKE)
    assert make.cards == {x: int(made(pos, t)) for x, t in truth.items()}
    assert make.value == (max if pos.to_play == pos.bidder else min)(make.cards.values())


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("misere", [False, True])
def test_solver_agrees_with_brute_force_on_random_positions(players, size, misere):
    rng = random.Random(players * 100 + size * 10 + misere)
    for _ in range(60):
        check_against_brute_force(random_position(rng, players, size, misere))


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 7), size=st.integers(1, 4),
       misere=st.booleans())
def test_solver_agrees_with_brute_force_property(seed, players, size, misere):
    size = min(size, 12 // players)  # keep the brute force small
    check_against_brute_force(random_position(random.Random(seed), players, size, misere))


def test_one_table_shared_between_goals_and_solves_changes_nothing():
    rng = random.Random(7)
    for _ in range(40):
        pos = random_position(rng, 3, 3, rng.random() < 0.3)
        table: dict = {}
        first = solve(pos, goal=MAKE, table=table)
        second = solve(pos, goal=TRICKS, table=table)
        again = solve(pos, goal=MAKE, table=table)
        assert first.cards == again.cards == solve(pos, goal=MAKE).cards
        assert second.cards == solve(pos, goal=TRICKS).cards


# --- hand-built positions -------------------------------------------------------------------

def four_seats(h0: str, h1: str, h2: str, h3: str) -> tuple[tuple[int, ...], ...]:
    return tuple(hand_of(t) for t in (h0, h1, h2, h3))


def test_top_five_trumps_always_make_nap():
    rng = random.Random(3)
    mine = hand_of("AS KS QS JS 10S")
    rest = [x for x in range(52) if x not in mine]
    for _ in range(30):
        rng.shuffle(rest)
        hands = (mine,) + tuple(tuple(sorted(rest[i * 5:(i + 1) * 5])) for i in range(3))
        pos = Position(hands, (0, 1, 2, 3), 0, bidder=0, need=5, trumps_by_lead=True)
        sol = solve(pos, goal=TRICKS)
        assert sol.value == 5
        # Every lead of a spade makes it; the five cards are one run, all equal.
        assert set(sol.cards.values()) == {5}


def test_a_lead_that_names_the_wrong_trumps_can_lose_the_nap():
    # A K Q J of spades and the ace of hearts; the defenders hold the spade 10.
    hands = four_seats("AS KS QS JS AH", "10S 2H 3H 4H 5H", "2C 3C 4C 5C 6C", "2D 3D 4D 5D 6D")
    pos = Position(hands, (0, 1, 2, 3), 0, bidder=0, need=5, trumps_by_lead=True)
    sol = solve(pos, goal=MAKE)
    assert sol.value == 1
    assert sol.cards[c("AS")] == 1
    # Leading the ace of hearts makes hearts trumps: seat 1's small hearts take tricks.
    assert sol.cards[c("AH")] == 0


def test_misere_of_twos_with_voids_cannot_be_beaten():
    # The bidder holds the lowest card of each suit he holds; nothing can go under them.
    hands = four_seats("2C 2D 2H", "AC KC QC", "AD KD QD", "AH KH QH")
    pos = Position(hands, (0, 1, 2, 3), 0, bidder=0, need=0)
    sol = solve(pos, goal=MAKE)
    assert sol.value == 1 and set(sol.cards.values()) == {1}
    assert solve(pos, goal=TRICKS).value == 0


def test_misere_bidder_must_not_lead_the_singleton_ace():
    # No trumps: led, the ace of spades wins (nobody can follow); kept, it is thrown
    # away on the second club trick and the bidder takes nothing.
    hands = four_seats("2C AS", "3C 4C", "5C 6C", "7C 8C")
    pos = Position(hands, (0, 1, 2, 3), 0, bidder=0, need=0)
    assert solve(pos, goal=MAKE).cards == {c("2C"): 1, c("AS"): 0}
    assert solve(pos, goal=TRICKS).cards == {c("2C"): 0, c("AS"): 1}


def test_no_trumps_only_the_suit_led_wins():
    hands = four_seats("3S", "AH", "KH", "2S")
    pos = Position(hands, (0, 1, 2, 3), 0, bidder=0, need=1)
    assert solve(pos, goal=MAKE).value == 1  # the hearts are discards: the 3S holds
    trumps_hearts = Position(hands, (0, 1, 2, 3), 0, bidder=0, need=1, trumps=2)
    assert solve(trumps_hearts, goal=MAKE).value == 0


def test_outnumbered_bidder_takes_nothing():
    hands = four_seats("QH 2S", "AH 3S", "KH 4S", "5H AS")
    pos = Position(hands, (0, 1, 2, 3), 0, bidder=0, need=1, trumps=3)
    assert solve(pos, goal=TRICKS).value == 0
    assert solve(pos, goal=TRICKS).cards == brute_force(pos)


def test_partial_trick_and_won_tricks_count():
    # Seat 1 has led the 2S (trumps). The bidder's ace takes this trick, but his 2H is
    # then ruffed: two tricks in all with the one already won, one short of three.
    hands = four_seats("AS 2H", "3S", "4S 5S", "6S 7S")
    pos = Position(hands, (0, 1, 2, 3), 2, bidder=0, need=3, won=1,
                   trick=((1, c("2S")),), trumps=3)
    assert solve(pos, goal=TRICKS).value == 2
    assert solve(pos, goal=MAKE).value == 0


def test_root_values_for_equivalent_cards_are_equal():
    # K and Q of hearts touch once the jack and ten are gone: the same card.
    hands = four_seats("KH QH 2C", "AH 3C 4C", "9H 5C 6C", "8H 7C 8C")
    pos = Position(hands, (0, 1, 2, 3), 0, bidder=0, need=2, trumps=0)
    sol = solve(pos, goal=TRICKS)
    assert sol.cards[c("KH")] == sol.cards[c("QH")]
    assert sol.cards == brute_force(pos)


def test_node_limit_raises():
    rng = random.Random(1)
    pack = list(range(52))
    rng.shuffle(pack)
    hands = tuple(tuple(sorted(pack[i * 7:(i + 1) * 7])) for i in range(4))
    pos = Position(hands, (0, 1, 2, 3), 0, bidder=0, need=4, trumps_by_lead=True)
    with pytest.raises(SearchLimit):
        solve(pos, goal=TRICKS, max_nodes=50)


def seven_card_deal() -> Position:
    rng = random.Random(1)
    pack = list(range(52))
    rng.shuffle(pack)
    hands = tuple(tuple(sorted(pack[i * 7:(i + 1) * 7])) for i in range(4))
    return Position(hands, (0, 1, 2, 3), 0, bidder=0, need=4, trumps_by_lead=True)


class CountingClock:
    """A clock that reads `times` in turn (the last for ever), counting its readings."""

    def __init__(self, *times: float):
        self.times, self.readings = list(times), 0

    def __call__(self) -> float:
        self.readings += 1
        return self.times[min(self.readings, len(self.times)) - 1]


def test_a_deadline_stops_a_search_within_a_clock_reading_of_it():
    pos = seven_card_deal()
    whole = solve(pos, goal=TRICKS)
    assert whole.nodes > 4 * CLOCK_EVERY  # a search long enough to be cut
    # The clock passes the deadline at its second reading: the search stops there, after
    # about two readings' worth of nodes, however slow the machine.
    clock = CountingClock(0.0, 2.0)
    with pytest.raises(OutOfTime):
        solve(pos, goal=TRICKS, deadline=1.0, clock=clock)
    assert clock.readings == 2
    # A deadline never reached changes nothing: the same values and nodes.
    never = CountingClock(0.0)
    assert solve(pos, goal=TRICKS, deadline=1.0, clock=never) == whole
    assert 1 <= never.readings <= whole.nodes // CLOCK_EVERY  # about once per CLOCK_EVERY nodes
    # The node budget still binds first where it is smaller, with a deadline or without.
    with pytest.raises(SearchLimit) as caught:
        solve(pos, goal=TRICKS, max_nodes=50, deadline=1.0, clock=CountingClock(0.0))
    assert not isinstance(caught.value, OutOfTime)


def test_bad_positions_are_refused():
    hands = four_seats("AS KS", "QS JS", "10S 9S", "8S")
    with pytest.raises(ValueError):
        solve(Position(hands, (0, 1, 2, 3), 0, bidder=0, need=1))
    ok = four_seats("AS KS", "QS JS", "10S 9S", "8S 7S")
    with pytest.raises(ValueError):
        solve(Position(ok, (0, 1, 2, 3), 0, bidder=0, need=1), legal=[c("QS")])
    with pytest.raises(ValueError):
        solve(Position(ok, (0, 1, 2, 3), 0, bidder=0, need=1), goal="win")


# --- the opening lead, from the engine ------------------------------------------------------

@pytest.mark.parametrize("variant, contract, named", [
    ("classic", "wellington", False), ("classic", "nap", False), ("classic", "three", False),
    ("floater", "bonaparte-with", False), ("floater", "wellington-without", True),
    ("floater", "nap-without", False), ("misere", "mis", False),
])
def test_opening_leads_match_the_engine(variant, contract, named):
    rules = make_rules(variant)
    rng = random.Random(contract)  # a str seed is stable across runs; hash() is not
    pack = cards.pack(rules.pack_size(4))
    for _ in range(50):
        deal = rng.sample(pack, 5)
        trumps = None
        if named:
            held = {SUIT[x] for x in deal}
            choices = [s for s in range(4) if held - {s}]
            trumps = rng.choice(choices)
        hand = make_hand(rules, {0: " ".join(cards.name(x) for x in deal)})
        hand.bidder, hand.contract, hand.trumps = 0, contract, trumps
        expected = hand._first_leads(hand.hands[0])
        assert opening_leads(rules, contract, deal, trumps) == expected


def test_first_lead_names_trumps_as_the_engine_does():
    for name in VARIANTS:
        rules = make_rules(name)
        pack = cards.pack(rules.pack_size(4))
        for bid in rules.bids:
            hand = make_hand(rules, {0: " ".join(cards.name(x) for x in pack[:rules.hand_size])})
            hand.bidder, hand.contract = 0, bid
            hand._end_bidding()
            while hand.kind != "play":  # a floater to discard, trumps to name
                hand.apply(hand.legal()[0])
            assert first_lead_names_trumps(rules, bid) == hand.trumps_by_lead, (name, bid)


def test_engine_position_solved_from_the_opening_lead():
    # Classic Wellington: the bidder must lead his lowest trump. All spades but the
    # 10 and 9 are his; he makes five tricks only if he may lead the ace first.
    rules = make_rules("classic")
    hand = make_hand(rules, {0: "8C 9C 10C JC QC", 1: "AS KS QS JS 8S",
                             2: "10S 8H 9H 10H JH", 3: "9S 8D 9D 10D JD"})
    play(hand, "nap", "wellington", "pass", "pass")
    assert hand.bidder == 1 and hand.to_act == 1
    legal = hand.legal()
    assert legal == (c("8S"),)
    pos = Position(tuple(hand.hands), hand.active, 1, bidder=1, need=5, trumps_by_lead=True)
    assert solve(pos, goal=MAKE).value == 1          # any lead: AS, KS draw the 10 and 9
    restricted = solve(pos, legal=legal, goal=MAKE)
    assert restricted.cards == {c("8S"): 0} and restricted.value == 0
