"""What a hand record holds: enough to re-deal the hand without the engine's RNG (the cut,
the gathered pack, the purchase stock and the cards bought, the Sir Garnet hand in dealt
order), and sedan played with trumps unless the variant says otherwise."""

from __future__ import annotations

import random

import pytest

from naparena.game import cards
from naparena.game.engine import BID, Match, deal_order
from naparena.game.rules import make_rules


def play_out(rules, players: int, seed: int, hands: int, prefer: str | None = None):
    """Play `hands` hands with seeded random legal answers; bid `prefer` whenever legal."""
    match = Match(rules, players, seed)
    rng = random.Random(seed)
    records = []
    for _ in range(hands):
        hand = match.next_hand()
        while not hand.over:
            legal = hand.legal()
            hand.apply(prefer if hand.kind == BID and prefer in legal else rng.choice(legal))
        match.finish(hand)
        records.append(hand.record())
    return records


def test_sedan_is_played_with_the_first_cards_suit_as_trumps():
    records = [r for r in play_out(make_rules("hoyle"), 4, 3, 40, prefer="sedan") if r["contract"] == "sedan"]
    assert len(records) >= 30
    for r in records:
        first_card = r["tricks"][0][1][0][1] if r["tricks"] else r["trick"][0][1]
        assert r["trumps"] == cards.SUIT[first_card]


def test_sedan_without_trumps_is_an_option():
    rules = make_rules("hoyle", {"sedan_trumps": False})
    records = [r for r in play_out(rules, 4, 3, 40, prefer="sedan") if r["contract"] == "sedan"]
    assert records and all(r["trumps"] is None for r in records)


def test_misere_keeps_its_own_option():
    records = [r for r in play_out(make_rules("misere"), 4, 5, 40, prefer="mis") if r["contract"] == "mis"]
    assert records and all(r["trumps"] is None for r in records)


def redeal(rules, players: int, record: dict, pack: list[int]) -> list[list[int]]:
    """The hands dealt from `pack` after the logged cut, by the deal pattern alone."""
    cut = record["cut"]
    deck = pack[cut:] + pack[:cut]
    _, positions = deal_order(rules, players, record["dealer"])
    return [sorted(deck[p] for p in seat) for seat in positions]


@pytest.mark.parametrize("variant", ["pagat", "purchase", "floater"])
def test_a_hand_dealt_from_the_gathered_pack_is_rebuilt_from_its_record(variant):
    rules = make_rules(variant)
    records = play_out(rules, 4, 11, 60)
    gathered = [r for r in records if "gathered" in r]
    assert len(gathered) >= 10, "under shuffle-after-Nap most hands are dealt from a gathered pack"
    for r in gathered:
        assert sorted(r["gathered"]) == sorted(cards.pack(rules.pack_size(4)))
        assert redeal(rules, 4, r, list(r["gathered"])) == [list(h) for h in r["deal"]]
    assert all("gathered" not in r for r in play_out(make_rules("classic"), 4, 11, 20))


def test_the_purchase_stock_and_the_cards_bought_are_logged_in_order():
    records = play_out(make_rules("ecarte"), 4, 2, 80)
    bought = [r for r in records if "bought" in r]
    assert len(bought) >= 10
    for r in bought:
        stock = list(r["stock"])
        exchanges = [(seat, len(answer)) for seat, kind, answer in r["pre"] if kind == "exchange" and answer]
        assert [(seat, len(cs)) for seat, cs in r["bought"]] == exchanges
        for _, taken in r["bought"]:
            assert list(taken) == stock[:len(taken)], "bought from the top of the stock, in order"
            del stock[:len(taken)]


def test_the_sir_garnet_hand_is_logged_in_dealt_order():
    match = Match(make_rules("sir-garnet"), 4, 9)
    hand = match.next_hand()
    while list(hand.garnet) == sorted(hand.garnet):  # find a deal where the order shows
        match.dealer = (match.dealer + 1) % 4
        hand = match.next_hand()
    assert list(hand.record()["garnet"]) == list(hand.garnet) != sorted(hand.garnet)
