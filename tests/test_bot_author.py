"""What a bot author relies on without reading the source: the testing helpers, clear
errors for a parameter the base class owns and for an illegal answer, the pack."""

import pytest

from naparena import Bot, cards, hookimpl
from naparena.bots.plugins import load_registry
from naparena.game.engine import Match
from naparena.game.rules import make_rules
from naparena.testing import IllegalAnswer, deal, play_hand, view


def names(cs) -> list[str]:
    return [cards.name(c) for c in cs]


class NapWithSpades(Bot):
    name = "nap-with-spades"
    description = "bids nap with four spades, plays its highest legal card"

    def bid(self, view):
        spades = sum(1 for c in view.hand if cards.SUIT[c] == 3)
        return "nap" if spades >= 4 and "nap" in view.legal else "pass"

    def play(self, view):
        return max(view.legal, key=lambda c: (cards.RANK[c], c))


def test_a_bid_view_from_a_written_hand():
    v = view("AS KS QS JS 9C", kind="bid")
    assert v.kind == "bid" and v.seat == 0
    assert names(v.hand) == ["9C", "JS", "QS", "KS", "AS"]
    assert v.legal == ("pass", "three", "four", "nap")
    assert NapWithSpades(None, 0).bid(v) == "nap"


def test_a_bid_view_after_other_bids():
    v = view("AS KS QS JS 9C", kind="bid", seat=2, bids=("pass", "four"))
    assert v.bids == ((0, "pass"), (1, "four"))
    assert v.legal == ("pass", "nap")


def test_a_play_view_following_a_trick():
    v = view("AS KS QS 8H 9C", trick="JH 9S")
    assert v.kind == "play" and v.seat == 0
    assert v.trick == ((2, cards.parse("JH")), (3, cards.parse("9S")))
    assert v.bidder == 2 and v.contract == "three"
    assert v.trumps == 2 and v.led == 2  # the bidder's lead sets trumps
    assert names(v.legal) == ["8H"]  # must follow suit
    assert NapWithSpades(None, 0).play(v) == cards.parse("8H")


def test_a_play_view_on_lead_and_out_of_the_suit_led():
    lead = view("AS KS QS 8H 9C", contract="nap")
    assert lead.bidder == 0 and lead.contract == "nap" and lead.trick == () and lead.led is None
    assert len(lead.legal) == 5
    void = view("AS KS QS 8H 9C", trick="JD")
    assert names(void.legal) == names(void.hand)  # no diamond: any card


def test_view_refuses_cards_outside_the_pack_and_names_the_pack():
    with pytest.raises(ValueError, match=r"2H not in the 28-card pack of classic at 4 players"):
        view("AS KS QS 2H 9C")
    with pytest.raises(ValueError, match="needs 5 cards"):
        view("AS KS")


def test_the_view_exposes_the_pack():
    assert names(view("AS KS QS 8H 9C").pack)[:2] == ["8C", "9C"]
    assert len(view("AS KS QS 8H 9C").pack) == 28
    assert len(view("AS KS QS JS 10S", players=2, kind="bid").pack) == 20
    m = Match(make_rules("seven-card"), 4, 1)
    assert m.next_hand().view(0).pack == cards.pack(52)


def test_play_hand_against_named_and_class_bots():
    record = play_hand([NapWithSpades, NapWithSpades(None, 1), "random", "heuristic"],
                       hands={0: "AS KS QS JS 10S"}, dealer=3)
    assert tuple(record["bids"][0]) == (0, "nap")
    assert list(record["deal"][0]) == sorted(cards.parse_many("AS KS QS JS 10S"))
    assert record["result"] in ("made", "lost")
    assert sum(record["chips"]) == 0


def test_play_hand_is_reproducible_from_its_seed():
    bots = ["heuristic", "random", "random", "random"]
    assert play_hand(bots, seed=5) == play_hand(bots, seed=5)


def test_play_hand_strict_names_an_illegal_answer():
    class Wrong(NapWithSpades):
        def bid(self, view):
            return "seven"

    with pytest.raises(IllegalAnswer, match=r"illegal answer 'seven': bid wants a bid name \(str\), one of \('pass'"):
        play_hand([Wrong, "random", "random", "random"], seed=1, dealer=3, hands={0: "AS KS QS JS 10S"})
    lenient = play_hand([Wrong, "random", "random", "random"], strict=False, dealer=3, hands={0: "AS KS QS JS 10S"})
    assert lenient["faults"][0][2] == "bid"


def test_an_illegal_card_is_reported_with_the_legal_ones_and_the_type():
    h = deal({0: "AS KS QS 8H 9C"})
    while h.kind != "play":
        h.apply("three" if h.to_act == 0 else "pass")
    h.apply("AS")  # a card name, not an int
    [(_, seat, kind, reason)] = h.faults
    expected = ", ".join(f"{cards.name(c)}={c}" for c in sorted(cards.parse_many("AS KS QS 8H 9C")))
    assert reason == f"illegal answer 'AS': play wants a card (int), one of ({expected})"


@pytest.mark.parametrize("param", ["rng", "seat", "play", "name"])
def test_a_parameter_named_like_the_base_class_is_a_clear_plug_in_failure(param):
    cls = type("Clash", (NapWithSpades,), {"name": "clash", "params": {param: 1}})

    class Plugin:
        @hookimpl
        def register_bots(self, register):
            register(cls)

    registry = load_registry(None, extra_plugins=[Plugin()])
    assert "clash" not in registry.bots
    [failure] = registry.failures
    assert f"parameter(s) '{param}' would replace what the base class Bot uses" in failure.error
    assert "TypeError" not in failure.error
