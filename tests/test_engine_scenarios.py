"""Scenario tests: hand-built deals for every rule of RULES.md and every variant's special rule.

Seats are numbered clockwise; with 4 players and dealer 3 the bidding order is 0, 1, 2, 3.
Unless a test says otherwise the pack is the variant's automatic one (classic, 4 players:
28 cards, A down to 8).
"""

import json
import random

import pytest

from naparena import cards
from naparena.errors import RulesError
from naparena.game.engine import Hand, Match, deal_order
from naparena.game.rules import VARIANTS, Rules, make_rules

from .deals import make_hand, play

S_, H_, D_, C_ = 3, 2, 1, 0  # suit numbers (clubs, diamonds, hearts, spades = 0..3)


def rules(base="classic", **options):
    return make_rules(base, options)


def c(name):
    return cards.parse(name)


def cs(text):
    return tuple(cards.parse_many(text))


def srt(text):
    """Cards as a hand holds them: sorted."""
    return tuple(sorted(cards.parse_many(text)))


def run_out(hand):
    """Answer every remaining decision with the first legal answer (deals below force the outcome)."""
    while not hand.over:
        hand.apply(hand.legal()[0])
    return hand


def record(hand):
    """The hand's log entry as it reads back from JSON."""
    return json.loads(json.dumps(hand.record()))


def winners(hand):
    return [w for _, _, w in hand.tricks]


# Seat 0 holds the top five spades and everyone else is void in spades: any trick bid is made.
STRONG = {0: "AS KS QS JS 10S", 1: "AH KH QH JH 10H", 2: "AD KD QD JD 10D", 3: "AC KC QC JC 10C"}
# Seat 0 holds the lowest cards of three suits, each opponent holds the top of one: seat 0
# leading its lowest card (8C) never wins a trick, trumps or not.
WEAK = {0: "8C 9C 8D 9D 8H", 1: "AC KC QC JC 10C", 2: "AD KD QD JD 10D", 3: "AH KH QH JH 10H"}


def rotate(deal, by, players=4):
    return {(s + by) % players: h for s, h in deal.items()}


# --- seats, dealing ---------------------------------------------------------------------


def test_bidding_starts_at_dealers_left_and_ends_with_the_dealer():
    h = make_hand(rules(), {}, players=5, dealer=1)
    order = []
    while not h.over:
        assert h.kind == "bid"
        order.append(h.to_act)
        h.apply("pass")
    assert order == [2, 3, 4, 0, 1]
    assert h.active == (2, 3, 4, 0, 1)
    assert h.view(0).active == (2, 3, 4, 0, 1)


def test_match_passes_the_deal_to_the_left():
    match = Match(rules(), 4, seed=11)
    first = match.dealer
    h1 = match.next_hand()
    assert (h1.dealer, h1.to_act, h1.hand_no) == (first, (first + 1) % 4, 0)
    run_out(h1)  # first legal answer is "pass": all pass
    assert h1.result == "passed"
    match.finish(h1)
    assert match.dealer == (first + 1) % 4
    h2 = match.next_hand()
    assert (h2.dealer, h2.to_act, h2.hand_no) == ((first + 1) % 4, (first + 2) % 4, 1)
    play(h2, "three", "pass", "pass", "pass")
    run_out(h2)
    match.finish(h2)
    assert match.chips == list(h2.chips)
    assert sum(match.chips) + match.kitty == 0
    assert match.dealer == (first + 2) % 4


# Deck positions dealt to seats 0..3, dealer 1 (order of deal: 2, 3, 0, 1).
DEAL_POSITIONS = {
    "3-2": {2: (0, 1, 2, 12, 13), 3: (3, 4, 5, 14, 15), 0: (6, 7, 8, 16, 17), 1: (9, 10, 11, 18, 19)},
    "2-3": {2: (0, 1, 8, 9, 10), 3: (2, 3, 11, 12, 13), 0: (4, 5, 14, 15, 16), 1: (6, 7, 17, 18, 19)},
    "1": {2: (0, 4, 8, 12, 16), 3: (1, 5, 9, 13, 17), 0: (2, 6, 10, 14, 18), 1: (3, 7, 11, 15, 19)},
}


@pytest.mark.parametrize("deal", DEAL_POSITIONS)
def test_deal_order_puts_the_right_deck_positions_in_each_hand(deal):
    r = rules(deal=deal)
    order, slots = deal_order(r, 4, 1)
    assert order == (2, 3, 0, 1)
    assert {s: slots[s] for s in range(4)} == DEAL_POSITIONS[deal]
    deck = list(reversed(cards.pack(28)))  # any known order
    h = Hand(r, 4, 1, deck, (0,) * 4, 0)
    for seat, positions in DEAL_POSITIONS[deal].items():
        assert h.view(seat).hand == tuple(sorted(deck[p] for p in positions))


def test_seven_card_deal_repeats_the_pattern_capped_by_what_is_left():
    _, slots = deal_order(rules("seven-card"), 4, 3)  # 3, then 2, then 2
    assert slots[0] == (0, 1, 2, 12, 13, 20, 21)
    assert slots[3] == (9, 10, 11, 18, 19, 26, 27)
    h = make_hand(rules("seven-card"), {}, players=4, dealer=3)
    assert all(len(h.view(s).hand) == 7 for s in range(4))


# --- bidding ----------------------------------------------------------------------------


def test_bids_must_be_strictly_higher_and_an_illegal_bid_is_a_pass():
    h = make_hand(rules(), STRONG)
    assert h.legal() == ("pass", "three", "four", "nap")
    play(h, "four")
    assert h.legal() == ("pass", "nap")
    play(h, "three")  # not higher: recorded as a pass, with the fault
    play(h, 42)       # not even a bid name
    assert h.bids == ((0, "four"), (1, "pass"), (2, "pass"))
    faults = record(h)["faults"]
    assert [(seat, kind) for _, seat, kind, _ in faults] == [(1, "bid"), (2, "bid")]
    assert "three" in faults[0][3]
    play(h, "pass")
    assert (h.bidder, h.contract, h.kind, h.to_act) == (0, "four", "play", 0)
    run_out(h)
    assert h.chips == (12, -4, -4, -4)


def test_wellington_only_after_nap_and_blucher_only_after_wellington():
    h = make_hand(rules(), STRONG)
    assert "wellington" not in h.legal() and "blucher" not in h.legal()
    play(h, "four")
    assert h.legal() == ("pass", "nap")
    play(h, "nap")
    assert h.legal() == ("pass", "wellington")
    play(h, "wellington")
    assert h.legal() == ("pass", "blucher")
    play(h, "blucher")
    assert (h.bidder, h.contract) == (3, "blucher")


def test_wellington_bid_before_any_nap_is_illegal():
    h = make_hand(rules(), STRONG)
    play(h, "wellington")
    assert h.bids == ((0, "pass"),)
    assert record(h)["faults"][0][1:3] == [0, "bid"]


def test_sedan_ranks_above_everything_in_hoyle():
    h = make_hand(rules("hoyle"), STRONG)
    assert h.legal() == ("pass", "two", "three", "four", "nap", "sedan")
    play(h, "nap")
    assert h.legal() == ("pass", "wellington", "sedan")
    play(h, "wellington")
    assert h.legal() == ("pass", "sedan")
    play(h, "sedan")
    assert h.legal() == ("pass",)


def test_misere_ranks_between_three_and_four():
    h = make_hand(rules("misere"), STRONG)
    assert h.legal() == ("pass", "three", "mis", "four", "nap")
    play(h, "three")
    assert h.legal() == ("pass", "mis", "four", "nap")
    play(h, "mis")
    assert h.legal() == ("pass", "four", "nap")


def test_seven_card_ladder_puts_mis_above_nap_then_six_and_seven():
    h = make_hand(rules("seven-card"), {})
    assert h.legal() == ("pass", "three", "four", "nap", "mis", "six", "seven")
    play(h, "nap")
    assert h.legal() == ("pass", "mis", "six", "seven")
    play(h, "mis")
    assert h.legal() == ("pass", "six", "seven")


def test_all_pass_classic_is_a_void_hand():
    h = play(make_hand(rules(), STRONG), "pass", "pass", "pass", "pass")
    assert h.over and h.to_act is None
    rec = record(h)
    assert (rec["result"], rec["bidder"], rec["contract"], rec["tricks"]) == ("passed", None, None, [])
    assert h.chips == (0, 0, 0, 0) and h.kitty == 0


def test_all_pass_peel_first_caller_stands_for_one():
    r = rules("peel")  # full pack, dealt singly
    h = play(make_hand(r, STRONG), "pass", "pass", "pass", "pass")
    assert (h.bidder, h.contract, h.kind, h.to_act) == (0, "one", "play", 0)
    play(h, "AS", "10H", "10D", "10C")
    assert h.over and h.result == "made" and len(h.tricks) == 1
    assert h.chips == (3, -1, -1, -1)


# --- play ----------------------------------------------------------------------------


def test_first_lead_sets_trumps_follow_suit_and_trick_winners():
    deal = {0: "KS QS AH 8D 8C", 1: "AS JS 9H AD KD", 2: "8S KH QH QD JD", 3: "AC KC QC JC 10C"}
    h = play(make_hand(rules(), deal), "three", "pass", "pass", "pass")
    assert h.trumps is None
    play(h, "KS")
    assert h.trumps == S_
    assert set(h.legal()) == set(cs("AS JS"))  # must follow; need not head the trick
    play(h, "JS")
    assert h.legal() == cs("8S")
    play(h, "8S")
    assert set(h.legal()) == set(cs("AC KC QC JC 10C"))  # void: any card
    play(h, "AC")
    play(h, "AH", "9H", "QH", "KC")
    play(h, "8D", "AD", "JD", "QC")  # an off-suit, non-trump card never wins
    play(h, "KD", "QD", "JC")
    assert set(h.legal()) == set(cs("8C QS"))  # void: not obliged to trump
    play(h, "QS")
    assert winners(h) == [0, 0, 1, 0]
    assert h.over and h.result == "made"  # three tricks: stopped after four
    assert h.chips == (9, -3, -3, -3)
    assert record(h)["trumps"] == S_


def test_highest_trump_wins_an_overtrumped_trick():
    deal = {0: "8H AD KD QD JD", 1: "AH AS KS QS JS", 2: "9H 10H 8C 9C 10C", 3: "JH QH JC QC KC"}
    h = play(make_hand(rules(), deal), "three", "pass", "pass", "pass")
    play(h, "8H", "AH", "9H", "JH")
    play(h, "AS", "10H", "QH", "JD")
    assert h.tricks[-1][2] == 3 and h.trumps == H_
    play(h, "JC", "QD", "KS", "8C")
    assert winners(h) == [1, 3, 3]
    # Two tricks left and none won: the bid of three can no longer be made.
    assert h.over and h.result == "lost"
    assert h.chips == (-9, 3, 3, 3)


def test_wellington_lowest_trump_rule_restricts_the_opening_lead():
    deal = {1: "AS KS 9S AH 8D"}
    h = play(make_hand(rules("classic"), deal), "nap", "wellington", "pass", "pass")
    assert h.to_act == 1
    assert set(h.legal()) == set(cs("9S AH 8D"))  # the lowest card of each suit
    play(h, "AS")  # an illegal card: a revoke by the bidder
    assert h.result == "revoke" and record(h)["revoke"] == 1
    assert h.chips == (10, -30, 10, 10)


def test_wellington_lead_any_in_pagat():
    deal = {1: "AS KS 9S AH 8D"}
    h = play(make_hand(rules("pagat"), deal), "nap", "wellington", "pass", "pass")
    assert set(h.legal()) == set(cs("AS KS 9S AH 8D"))


MIS_DEAL = {0: "8C 9C 8D 9D 8H", 1: "10C AH KH QH JH", 2: "AS KS QS JS 10S", 3: "AD KD QD JD 10D"}


def test_misere_has_no_trumps():
    h = play(make_hand(rules("misere"), MIS_DEAL), "mis", "pass", "pass", "pass")
    play(h, "8C", "10C", "10S", "10D")
    play(h, "AH", "JS", "JD", "8H")
    play(h, "KH", "QS", "QD", "9C")  # 9C would be a trump; without trumps it loses
    assert h.trumps is None and winners(h) == [1, 1, 1]
    assert not h.over  # misère is only made after the last trick
    play(h, "QH", "KS", "KD", "8D")
    play(h, "JH", "AS", "AD", "9D")
    assert h.result == "made" and winners(h) == [1] * 5
    assert h.chips == (9, -3, -3, -3)
    assert record(h)["trumps"] is None


def test_misere_with_trumps_option_makes_the_first_lead_trumps():
    h = play(make_hand(rules("misere", misere_trumps=True), MIS_DEAL), "mis", "pass", "pass", "pass")
    play(h, "8C", "10C", "10S", "10D")
    assert h.trumps == C_
    play(h, "AH", "JS", "JD", "8H")
    play(h, "KH", "QS", "QD", "9C")
    assert winners(h) == [1, 1, 0]
    assert h.over and h.result == "lost" and len(h.tricks) == 3
    assert h.chips == (-9, 3, 3, 3)


@pytest.mark.parametrize("deal, bid, result, tricks_when_stopping, chips", [
    (STRONG, "three", "made", 3, (9, -3, -3, -3)),
    (STRONG, "nap", "made", 5, (30, -10, -10, -10)),
    (WEAK, "nap", "lost", 1, (-15, 5, 5, 5)),
    (WEAK, "three", "lost", 3, (-9, 3, 3, 3)),
])
def test_stop_when_decided(deal, bid, result, tricks_when_stopping, chips):
    outcomes = {}
    for stop in (True, False):
        h = run_out(play(make_hand(rules(stop_when_decided=stop), deal), bid, "pass", "pass", "pass"))
        assert h.result == result and h.chips == chips
        outcomes[stop] = len(h.tricks)
    assert outcomes == {True: tricks_when_stopping, False: 5}


# --- settlement -----------------------------------------------------------------------

PRE_BIDS = {"wellington": ("nap", "pass"), "blucher": ("nap", "wellington")}

# (variant, contract, win, loss): stakes per opponent, RULES.md §5.
PAYOUT_TABLE = [
    ("pagat-full", "two", 2, 2), ("pagat-full", "three", 3, 3), ("pagat-full", "mis", 3, 3),
    ("pagat-full", "four", 4, 4), ("pagat-full", "nap", 5, 5), ("pagat-full", "wellington", 10, 10),
    ("pagat-full", "blucher", 20, 20),
    ("classic", "three", 3, 3), ("misere", "mis", 3, 3), ("classic", "four", 4, 4),
    ("classic", "nap", 10, 5), ("classic", "wellington", 10, 10), ("classic", "blucher", 20, 20),
    ("peel", "two", 2, 2), ("peel", "three", 3, 3), ("peel", "four", 4, 4), ("peel", "nap", 10, 5),
    ("hoyle", "two", 2, 2), ("hoyle", "three", 3, 3), ("hoyle", "four", 4, 4), ("hoyle", "nap", 10, 5),
    ("hoyle", "wellington", 15, 15), ("hoyle", "sedan", 5, 5),
]


def settle(variant_rules, contract, made):
    """Seat 2 (after the bids its contract needs) bids `contract` and makes it or not."""
    misere = contract in ("mis", "sedan")
    deal = rotate(WEAK if made == misere else STRONG, 2)
    h = make_hand(variant_rules, deal)
    play(h, *PRE_BIDS.get(contract, ("pass", "pass")), contract, "pass")
    assert (h.bidder, h.contract) == (2, contract)
    run_out(h)
    assert h.result == ("made" if made else "lost")
    return h


@pytest.mark.parametrize("variant, contract, win, loss", PAYOUT_TABLE)
def test_payout_tables(variant, contract, win, loss):
    made = settle(rules(variant), contract, True)
    assert made.chips == (-win, -win, 3 * win, -win)
    lost = settle(rules(variant), contract, False)
    assert lost.chips == (loss, loss, -3 * loss, loss)
    assert made.kitty == lost.kitty == 0


@pytest.mark.parametrize("doubling, contract, won, lost", [
    ("double_big_wins", "nap", 10, 5), ("double_big_both", "nap", 10, 10),
    ("double_big_wins", "wellington", 20, 10), ("double_big_both", "wellington", 20, 20),
    ("double_big_both", "four", 4, 4),  # only Nap and above are doubled
])
def test_pagat_doubling_options(doubling, contract, won, lost):
    r = rules("pagat", doubling=doubling)
    assert settle(r, contract, True).chips == (-won, -won, 3 * won, -won)
    assert settle(r, contract, False).chips == (lost, lost, -3 * lost, lost)


# --- revoke and other faults ------------------------------------------------------------


def test_revoke_by_the_bidder_pays_each_opponent_the_loss():
    h = play(make_hand(rules(), WEAK), "three", "pass", "pass", "pass")
    play(h, "8C", "10C", "10D", "10H")
    play(h, "JC", "JD", "JH")
    assert h.to_act == 0 and h.legal() == cs("9C")
    play(h, "8D")  # holds 9C: fails to follow suit
    rec = record(h)
    assert h.over and rec["result"] == "revoke" and rec["revoke"] == 0
    assert rec["faults"][0][1:3] == [0, "play"]
    assert rec["trick"] == [[1, c("JC")], [2, c("JD")], [3, c("JH")]]
    assert h.chips == (-9, 3, 3, 3)


REVOKE_DEAL = {0: "AS KS QS JS 8D", 1: "10S AH KH QH JH", 2: "AD KD QD JD 10D", 3: "AC KC QC JC 10C"}


def test_revoke_by_a_defender_pays_the_bidder_for_every_opponent():
    h = play(make_hand(rules(), REVOKE_DEAL), "four", "pass", "pass", "pass")
    play(h, "AS", "AH")  # seat 1 holds 10S
    assert h.over and h.result == "revoke" and record(h)["revoke"] == 1
    assert h.chips == (12, -12, 0, 0)


def test_timeout_in_play_is_a_revoke():
    h = play(make_hand(rules(), REVOKE_DEAL), "nap", "pass", "pass", "pass", "AS")
    h.fault("timeout")
    rec = record(h)
    assert rec["result"] == "revoke" and rec["revoke"] == 1
    assert rec["faults"] == [[5, 1, "play", "timeout"]]
    assert h.chips == (30, -30, 0, 0)  # Nap wins 10 from each of three opponents


def test_timeout_in_bidding_is_a_pass():
    h = make_hand(rules(), STRONG)
    h.fault("timeout")
    assert h.bids == ((0, "pass"),) and record(h)["faults"] == [[0, 0, "bid", "timeout"]]
    assert h.chips == (0, 0, 0, 0)


# --- dealer sits out ----------------------------------------------------------------------

SIX = {0: "AS KS QS JS 10S", 1: "AH KH QH JH 10H", 2: "AD KD QD JD 10D",
       3: "AC KC QC JC 10C", 4: "9H 9D 9C 8H 8D"}


def test_dealer_sits_out_at_six_and_pays_as_an_opponent():
    r = rules()
    assert r.pack_size(6) == 32
    h = make_hand(r, SIX, players=6, dealer=5)
    assert h.active == (0, 1, 2, 3, 4) and h.view(5).hand == ()
    order = []
    for bid in ("three", "pass", "pass", "pass", "pass"):
        order.append(h.to_act)
        play(h, bid)
    assert order == [0, 1, 2, 3, 4]
    run_out(h)
    assert all(len(plays) == 5 and 5 not in [s for s, _ in plays] for _, plays, _ in h.tricks)
    assert h.result == "made"
    assert h.chips == (15, -3, -3, -3, -3, -3)


def test_dealer_sits_out_options():
    five = rules(dealer_sits_out="five_and_six")
    assert deal_order(five, 5, 2)[0] == (3, 4, 0, 1)
    assert five.pack_size(5) == 28
    assert deal_order(rules(), 5, 2)[0] == (3, 4, 0, 1, 2)
    never = rules(dealer_sits_out="never")
    assert deal_order(never, 6, 5)[0] == (0, 1, 2, 3, 4, 5) and never.pack_size(6) == 36


# --- peep ---------------------------------------------------------------------------------


def test_peep_card_is_seen_by_the_peeper_only_and_exchanged_by_the_bidder():
    deal = {0: "AS KS QS JS 8H", 1: "AH KH QH JH 10H", 2: "AD KD QD JD 10D", 3: "AC KC QC JC 10C"}
    h = make_hand(rules("peep"), deal, extras="10S")
    assert (h.to_act, h.kind) == (0, "peep")
    play(h, True)
    assert h.view().seen == cs("10S") and h.kitty == 1
    play(h, "nap", False, "pass", True)
    assert h.view(2).seen == cs("10S")
    assert h.view(1).seen == () and h.view(3).seen == ()
    play(h, "pass", False, "pass")
    assert h.view(0).peeps == (0, 2)
    assert (h.to_act, h.kind) == (0, "peep_exchange")
    assert h.legal() == (None,) + srt("8H JS QS KS AS")
    play(h, "8H")
    assert h.view(0).hand == srt("10S JS QS KS AS")
    run_out(h)
    assert h.result == "made"
    # Nap wins 10 from each, plus the pool of two peeps (the bidder's own included).
    assert h.chips == (-1 + 30 + 2, -10, -1 - 10, -10) and h.kitty == 0


def test_peep_pool_stays_unless_nap_is_made_and_no_exchange_without_peeping():
    h = make_hand(rules("peep"), STRONG, extras="9S")
    play(h, False, "three", True, "pass", False, "pass", False, "pass")
    assert (h.to_act, h.kind) == (0, "play")  # seat 0 did not peep: no exchange
    run_out(h)
    assert h.chips == (9, -4, -3, -3) and h.kitty == 1


# --- purchase, écarté ------------------------------------------------------------------


def test_purchase_one_chip_per_exchange_and_nap_takes_the_pool():
    deal = {0: "AS KS QS 8H 8D", 1: "AH KH QH JH 10H", 2: "AD KD QD JD 10D", 3: "AC KC QC JC 10C"}
    h = make_hand(rules("purchase"), deal, extras="JS 10S 9S 8S 9H 9D 9C 8C")
    assert (h.to_act, h.kind) == (0, "exchange")
    play(h, cs("8H 8D"))
    assert h.view(0).hand == srt("10S JS QS KS AS") and h.kitty == 1
    play(h, cs("10H"), (), ())
    assert h.view(1).hand == srt("9S JH QH KH AH")
    assert h.view(1).exchanges == ((0, 2), (1, 1)) and h.kitty == 2
    assert set(cs("8H 8D")) <= set(h.view(0).seen) and h.view(2).seen == ()
    assert (h.to_act, h.kind) == (0, "bid")
    play(h, "nap", "pass", "pass", "pass")
    run_out(h)
    assert h.result == "made"
    assert h.chips == (-1 + 15 + 2, -1 - 5, -5, -5) and h.kitty == 0


def test_ecarte_one_chip_per_card_at_most_five_from_the_stock():
    deal = {0: "AS KS 8H 8D 8C", 1: "AH KH QH JH 10H", 2: "AD KD QD JD 10D", 3: "AC KC QC JC 10C"}
    h = make_hand(rules("ecarte"), deal, extras="QS JS 10S 9S 8S 9H 9D 9C")
    assert len(h.legal()) == 32 and max(map(len, h.legal())) == 5
    play(h, cs("8H 8D 8C"))
    assert h.view(0).hand == srt("10S JS QS KS AS") and h.kitty == 3
    play(h, cs("AH KH QH JH 10H"))
    assert h.view(1).hand == srt("9C 9D 9H 8S 9S") and h.kitty == 8
    assert h.legal() == ((),)  # the stock is empty
    play(h, (), ())
    play(h, "three", "pass", "pass", "pass")
    run_out(h)
    assert h.result == "made"
    assert h.chips == (-3 + 9, -5 - 3, -3, -3) and h.kitty == 8  # three does not take the pool


# --- Sir Garnet ---------------------------------------------------------------------------


def test_sir_garnet_take_up_discard_five_and_bid_nap():
    h = make_hand(rules("sir-garnet"), WEAK, extras="AS KS QS JS 10S")
    assert (h.to_act, h.kind) == (0, "garnet")
    play(h, False, "three", True)
    assert (h.to_act, h.kind) == (1, "garnet_discard")
    assert len(h.view().hand) == 10 and len(h.legal()) == 252
    play(h, cs("AC KC QC JC 10C"))
    assert h.bids == ((0, "three"), (1, "nap"))
    assert (h.to_act, h.kind) == (2, "bid")  # no more Sir Garnet
    assert h.legal() == ("pass", "wellington")
    play(h, "pass", "pass")
    assert (h.bidder, h.contract, h.to_act) == (1, "nap", 1)
    run_out(h)
    assert h.result == "made" and h.chips == (-10, 30, -10, -10)


def test_sir_garnet_not_offered_once_nap_is_bid():
    h = make_hand(rules("sir-garnet"), STRONG, extras="9S 9H 9D 9C 8S")
    play(h, False, "nap")
    assert (h.to_act, h.kind) == (1, "bid")
    play(h, "pass")
    assert (h.to_act, h.kind) == (2, "bid")


def test_sir_garnet_discard_fault_puts_the_extra_hand_back():
    h = make_hand(rules("sir-garnet"), STRONG, extras="9S 9H 9D 9C 8S")
    play(h, True)
    h.fault("timeout")
    assert h.view(0).hand == srt("10S JS QS KS AS")
    assert h.bids == ((0, "nap"),)
    assert record(h)["faults"] == [[1, 0, "garnet_discard", "timeout"]]


# --- seven-card ---------------------------------------------------------------------------

STRONG7 = {0: "AS KS QS JS 10S 9S 8S", 1: "AH KH QH JH 10H 9H 8H",
           2: "AD KD QD JD 10D 9D 8D", 3: "AC KC QC JC 10C 9C 8C"}
WEAK7 = {0: "2C 3C 2D 3D 2H 3H 4H", 1: "AC KC QC JC 10C 9C 8C",
         2: "AD KD QD JD 10D 9D 8D", 3: "AH KH QH JH 10H 9H 8H"}


@pytest.mark.parametrize("contract, win, loss", [
    ("three", 3, 3), ("four", 4, 4), ("nap", 10, 5), ("mis", 10, 5), ("six", 12, 6), ("seven", 14, 7),
])
def test_seven_card_stakes_half_on_losing_nap_and_above(contract, win, loss):
    for made in (True, False):
        deal = WEAK7 if made == (contract == "mis") else STRONG7
        h = run_out(play(make_hand(rules("seven-card"), deal), contract, "pass", "pass", "pass"))
        assert h.result == ("made" if made else "lost")
        assert h.chips == ((3 * win, -win, -win, -win) if made else (-3 * loss, loss, loss, loss))


# --- floater ------------------------------------------------------------------------------

FLOATER = {0: "AS KS QS JS 9H", 1: "AH KH QH JH 10H", 2: "AD KD QD JD 10D", 3: "AC KC QC JC 10C"}


def floater_hand(deal=FLOATER, floater="10S", kitty=0):
    return make_hand(rules("floater"), deal, extras=floater, kitty=kitty)  # 24 cards at 4 players


def test_floater_antes_peep_and_ranking():
    h = floater_hand()
    assert h.kitty == 4 and h.chips == (-1, -1, -1, -1)
    assert (h.to_act, h.kind) == (0, "floater_peep")
    play(h, True)
    assert h.kitty == 5 and h.view(0).seen == cs("10S")
    assert h.legal() == ("pass", "four-with", "four-without", "nap-with", "nap-without",
                         "bonaparte-with", "bonaparte-without", "wellington-with", "wellington-without")
    play(h, "nap-with", False)
    assert h.view(1).seen == ()
    assert h.legal() == ("pass", "nap-without", "bonaparte-with", "bonaparte-without",
                         "wellington-with", "wellington-without")


def test_floater_all_pass_keeps_the_antes_in_the_kitty():
    h = play(floater_hand(), *[False, "pass"] * 4)
    assert h.result == "passed" and h.chips == (-1, -1, -1, -1) and h.kitty == 4


def test_floater_four_with_takes_the_floater_wins_two_from_each_and_leaves_the_kitty():
    h = play(floater_hand(), False, "four-with", *[False, "pass"] * 3)
    assert (h.to_act, h.kind) == (0, "floater_discard")
    assert h.legal() == srt("9H 10S JS QS KS AS") and h.view(0).seen == cs("10S")
    play(h, "9H")
    assert h.view(0).hand == srt("10S JS QS KS AS") and h.kind == "play"
    run_out(h)
    assert h.result == "made" and len(h.tricks) == 4
    assert h.chips == (-1 + 6, -3, -3, -3) and h.kitty == 4


def test_floater_discard_fault_discards_the_floater():
    h = play(floater_hand(), False, "four-with", *[False, "pass"] * 3)
    h.fault("timeout")
    assert h.view(0).hand == srt("9H JS QS KS AS")


def test_floater_nap_won_takes_the_kitty_plus_five_from_each():
    deal = {**FLOATER, 0: "AS KS QS JS 10S"}
    h = run_out(play(floater_hand(deal, "9H", kitty=7), False, "nap-without", *[False, "pass"] * 3))
    assert h.result == "made"
    assert h.chips == (-1 + 15 + 11, -6, -6, -6) and h.kitty == 0


def test_floater_loss_pays_stake_times_players_into_the_kitty():
    deal = {0: "9C 10C 9D 10D 9H", 1: "AC KC QC JC AS", 2: "AD KD QD JD KS", 3: "AH KH QH JH QS"}
    h = run_out(play(floater_hand(deal, "10H"), False, "nap-without", *[False, "pass"] * 3))
    assert h.result == "lost"
    assert h.chips == (-1 - 20, -1, -1, -1) and h.kitty == 4 + 20


def test_floater_bonaparte_leads_the_lowest_of_a_suit_which_becomes_trumps():
    h = play(floater_hand(), False, "bonaparte-without", *[False, "pass"] * 3)
    assert h.legal() == srt("9H JS")  # the lowest card of each suit held
    play(h, "JS")
    assert h.trumps == S_


def test_floater_bonaparte_won():
    deal = {**FLOATER, 0: "AS KS QS JS 10S"}
    h = run_out(play(floater_hand(deal, "9H"), False, "bonaparte-without", *[False, "pass"] * 3))
    assert h.result == "made" and h.chips == (-1 + 30 + 4, -11, -11, -11) and h.kitty == 0


def test_floater_wellington_names_trumps_and_leads_lowest_non_trump():
    deal = {0: "AS KS QS JS AH", 1: "KH QH JH 10H 9H", 2: "AD KD QD JD 10D", 3: "AC KC QC JC 10C"}
    h = play(floater_hand(deal, "10S"), False, "wellington-without", *[False, "pass"] * 3)
    assert (h.to_act, h.kind) == (0, "trumps") and h.legal() == (0, 1, 2, 3)
    play(h, S_)
    assert h.trumps == S_ and h.legal() == cs("AH")
    play(h, "AH")
    assert h.trumps == S_  # named, not set by the lead
    run_out(h)
    assert h.result == "made" and h.chips == (-1 + 60 + 4, -21, -21, -21) and h.kitty == 0


def test_floater_wellington_with_a_one_suit_hand_cannot_name_that_suit():
    deal = {**FLOATER, 0: "AS KS QS JS 10S"}
    h = play(floater_hand(deal, "9H"), False, "wellington-with", *[False, "pass"] * 3)
    assert h.kind == "floater_discard"
    play(h, "9H")  # keeps five spades
    assert h.kind == "trumps" and h.legal() == (C_, D_, H_)
    play(h, H_)
    assert h.legal() == cs("10S")  # every card is a non-trump: the lowest


# --- views --------------------------------------------------------------------------------


def test_views_hide_other_hands_the_stock_and_unseen_extras():
    h = make_hand(rules("sir-garnet"), STRONG, extras="9S 9H 9D 9C 8S")
    for s in range(4):
        v = h.view(s)
        assert v.hand == srt(STRONG[s]) and v.seen == () and v.legal == (() if s else (False, True))
    play(h, False, "pass", True)  # seat 1 takes up Sir Garnet
    assert h.view(0).hand == srt(STRONG[0]) and len(h.view(1).hand) == 10
    assert not set(cs("9S 9H 9D 9C 8S")) & set(h.view(0).hand + h.view(2).hand + h.view(3).hand)


FEATURES = ["classic", "peep", "purchase", "ecarte", "sir-garnet", "floater", "seven-card", "hoyle"]


@pytest.mark.parametrize("variant", FEATURES)
def test_no_view_holds_anything_private_to_someone_else(variant):
    r = rules(variant)
    for seed in range(6):
        match = Match(r, 4, seed)
        rng = random.Random(seed)
        h = match.next_hand()
        while not h.over:
            for s in range(h.players):
                v = h.view(s)
                assert v.hand == tuple(h.hands[s])
                others = {x for t in range(h.players) if t != s for x in h.hands[t]}
                hidden = set(h.stock) | set(h.garnet or ())
                if h.peep_card is not None and s not in h.peeps:
                    hidden.add(h.peep_card)
                took = (h.bidder == s and h.contract.endswith("-with")
                        and h.kind in ("floater_discard", "trumps", "play"))
                if h.floater is not None and s not in h.peeps and not took:
                    hidden.add(h.floater)
                shown_extras = {h.peep_card, h.floater}  # a peeper may see it in another hand later
                assert not (set(v.seen) - shown_extras) & others
                assert not set(v.seen) & hidden
            h.apply(rng.choice(h.legal()))
        match.finish(h)


# --- pool by the dealer, pool at the end of a match --------------------------------------


def test_dealer_ante_feeds_the_pool_which_a_made_nap_takes():
    r = rules("hoyle", dealer_ante=1)
    three = run_out(play(make_hand(r, STRONG), "three", "pass", "pass", "pass"))
    assert three.chips == (9, -3, -3, -4) and three.kitty == 1  # dealer is seat 3
    nap = run_out(play(make_hand(r, STRONG, kitty=2), "nap", "pass", "pass", "pass"))
    assert nap.chips == (30 + 3, -10, -10, -11) and nap.kitty == 0


@pytest.mark.parametrize("kitty_at_end, chips, kitty", [("carried", [-1] * 4, 4), ("split", [0] * 4, 0)])
def test_kitty_at_the_end_of_a_match(kitty_at_end, chips, kitty):
    match = Match(rules("floater", kitty_at_end=kitty_at_end), 4, seed=5)
    h = run_out(match.next_hand())  # nobody peeps, all pass: only the antes move
    assert h.result == "passed"
    match.finish(h)
    assert match.close() == chips and match.kitty == kitty


# --- Match: shuffle only after a won Nap --------------------------------------------------


def test_after_nap_shuffle_gathers_the_cards_and_only_cuts():
    match = Match(rules("pagat"), 4, seed=3)
    h = run_out(match.next_hand())  # all pass: no shuffle next time
    gathered = h.cards_in_play()
    match.finish(h)
    match.next_hand()
    deck = match.deck
    cut = next(i for i in range(len(deck)) if deck[i:] + deck[:i] == gathered)
    assert len(deck) - cut >= 4 and cut >= 4


# --- Rules validation -----------------------------------------------------------------------


@pytest.mark.parametrize("base, options, option, words", [
    ("classic", {"peeep": True}, "peeep", "did you mean 'peep'"),
    ("classic", {"peep": "yes"}, "peep", "expected bool"),
    ("classic", {"stop_when_decided": 1}, "stop_when_decided", "expected bool"),
    ("classic", {"pack": 30}, "pack", "30"),
    ("classic", {"deal": "4-1"}, "deal", "'4-1'"),
    ("classic", {"bids": ["three", "four", "wellington"]}, "bids", "after 'nap'"),
    ("classic", {"bids": ["three", "nap", "blucher"]}, "bids", "after 'wellington'"),
    ("classic", {"bids": ["three", "one"]}, "bids", "eldest_one"),
    ("classic", {"bids": ["two", "three"]}, "payouts", "'two'"),
    ("peep", {"sir_garnet": True}, "sir_garnet", "cannot be combined with 'peep'"),
    ("purchase", {"peep": True}, "purchase", "cannot be combined with 'peep'"),
    ("seven-card", {"peep": True}, "peep", "Seven-card"),
    ("classic", {"floater": True}, "payouts", "floater"),
    ("clasic", {}, "base", "did you mean 'classic'"),
])
def test_rules_validation_errors(base, options, option, words):
    with pytest.raises(RulesError) as err:
        make_rules(base, options)
    assert err.value.option == option and words in err.value.message


@pytest.mark.parametrize("base, options, players, option", [
    ("classic", {"pack": 20}, 5, "pack"),         # 25 cards needed
    ("sir-garnet", {"pack": 20}, 4, "pack"),      # 20 + a Sir Garnet hand of 5
    ("peep", {"pack": 20}, 4, "pack"),            # 20 + the peep card
    ("purchase", {"pack": 24}, 4, "pack"),        # 20 + a stock of 5
    ("floater", {}, 2, "players"),
    ("classic", {}, 8, "players"),
])
def test_check_players_refuses_tables_the_pack_cannot_deal(base, options, players, option):
    r = make_rules(base, options)
    with pytest.raises(RulesError) as err:
        r.check_players(players)
    assert err.value.option == option


def test_check_players_accepts_an_exact_fit():
    make_rules("sir-garnet", {"pack": 20}).check_players(3)  # 15 + 5
    make_rules("floater").check_players(7)                   # 35 + the floater, 36 cards


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_rules_come_back_from_their_dict_as_they_were(name):
    """What a job, a match log and a match message carry (JSON: bids a list) rebuilds the same rules."""
    rules = make_rules(name, {"bids": ["nap", "three"]} if name == "classic" else None)
    again = Rules.from_dict(json.loads(json.dumps(rules.as_dict())))
    assert again == rules and isinstance(again.bids, tuple)
    # As written: not reordered or checked again (the log says what was played).
    assert Rules.from_dict({**rules.as_dict(), "bids": ["nap", "three"]}).bids == ("nap", "three")


def test_every_named_variant_seats_four():
    for name in VARIANTS:
        make_rules(name).check_players(4)
    with pytest.raises(RulesError):
        Match(make_rules("classic", {"pack": 20}), 5, seed=1)


# --- documented API -------------------------------------------------------------------------


def test_hand_reports_its_kitty_delta():
    h = run_out(play(make_hand(rules("peep"), STRONG, extras="9S"), True, "three", *[False, "pass"] * 3))
    assert h.kitty_delta == 1
