"""Property tests: the invariants of RULES.md §9 over random deals and random answers."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naparena import cards
from naparena.errors import RulesError
from naparena.game.engine import PLAY, Match
from naparena.game.rules import VARIANTS, make_rules

TABLES = []
for _name in VARIANTS:
    for _players in range(2, 8):
        try:
            make_rules(_name).check_players(_players)
        except RulesError:
            continue
        TABLES.append((_name, _players))

JUNK = ["pass?", 99, -1, (1, 2, 3, 4, 5, 6), "nap!", 3.5, [99], {"card": 1}]  # never legal


def answer(hand, rng, misbehave):
    """A uniformly random legal answer, or now and then something illegal."""
    roll = rng.random()
    if roll < misbehave:
        return ("junk", rng.choice(JUNK))
    if roll < misbehave * 1.5:
        return ("fault", "time-out")
    return ("legal", rng.choice(hand.legal()))


def trick_winner(plays, trumps):
    led = plays[0][1] // 13
    best = max((c for _, c in plays if c // 13 == trumps), default=None)
    if best is None:
        best = max(c for _, c in plays if c // 13 == led)
    return next(s for s, c in plays if c == best)


def visible_cards(view):
    played = {c for _, c in view.trick} | {c for _, plays, _ in view.tricks for _, c in plays}
    return set(view.hand) | set(view.seen) | played


def check_view(hand, seat):
    view = hand.view()
    assert view.seat == seat
    assert list(view.hand) == sorted(hand.hands[seat])
    public = {c for _, plays, _ in hand.tricks for _, c in plays} | {c for _, c in hand.trick}
    allowed = set(hand.hands[seat]) | set(hand.seen[seat]) | public
    assert visible_cards(view) <= allowed
    others = {c for s, h in enumerate(hand.hands) if s != seat for c in h}
    assert not ((visible_cards(view) - set(hand.seen[seat])) & others)
    for a in view.legal:
        if view.kind in (PLAY, "floater_discard", "peep_exchange") and a is not None:
            assert a in hand.hands[seat]


def play_match(name, players, seed, hands, misbehave, check_views=True):
    rules = make_rules(name)
    match = Match(rules, players, seed)
    rng = random.Random(seed ^ 0x5EED)
    pack = sorted(cards.pack(rules.pack_size(players)))
    for _ in range(hands):
        hand = match.next_hand()
        assert sorted(hand.cards_in_play()) == pack
        while not hand.over:
            seat, kind = hand.to_act, hand.kind
            if check_views:
                check_view(hand, seat)
            legal, before = hand.legal(), len(hand.tricks)
            how, a = answer(hand, rng, misbehave)
            n_faults = len(hand.faults)
            hand.fault(a) if how == "fault" else hand.apply(a)
            assert sorted(hand.cards_in_play()) == pack, "a card was lost or duplicated"
            if kind == PLAY:
                if how == "legal":
                    assert a in legal and hand.revoke is None
                else:
                    assert hand.revoke == seat and hand.result == "revoke"
                    assert len(hand.tricks) == before
            elif how != "legal" or a not in legal:
                assert len(hand.faults) == n_faults + 1
        record = hand.record()
        for leader, plays, winner in hand.tricks:
            assert plays[0][0] == leader
            trumps = hand.trumps if hand.trumps_by_lead or hand.trumps is not None else None
            assert winner == trick_winner(plays, trumps)
        assert sum(hand.delta) + hand.kitty - hand.kitty_start == 0, record
        if hand.result in ("made", "lost"):
            won = hand.won[hand.bidder]
            assert (hand.result == "made") == ((won == 0) if hand.misere else won >= hand.need)
        match.finish(hand)
        assert sum(match.chips) + match.kitty == 0
    return match


@pytest.mark.parametrize("name,players", TABLES)
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**32), misbehave=st.sampled_from([0.0, 0.02, 0.2]))
def test_invariants_hold_for_every_variant_and_table(name, players, seed, misbehave):
    play_match(name, players, seed, hands=12, misbehave=misbehave)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_long_match_conserves_chips_and_cards(name):
    players = 4 if name != "seven-card" else 5
    match = play_match(name, players, seed=7, hands=300, misbehave=0.01, check_views=False)
    chips = match.close()
    assert sum(chips) + match.kitty == 0


def test_same_seed_same_hands_whatever_the_global_rng():
    def records(disturb):
        rules, out = make_rules("pagat-full"), []
        match, rng = Match(rules, 4, 42), random.Random(9)
        for i in range(50):
            if disturb:
                random.seed(i * 7919)
                random.random()
            hand = match.next_hand()
            while not hand.over:
                if disturb:
                    random.shuffle([1, 2, 3])
                hand.apply(rng.choice(hand.legal()))
            out.append(hand.record())
            match.finish(hand)
        return out

    assert records(False) == records(True)


def test_different_seeds_deal_differently():
    rules = make_rules("classic")
    deals = {tuple(map(tuple, Match(rules, 4, s).next_hand().dealt)) for s in range(20)}
    assert len(deals) == 20
