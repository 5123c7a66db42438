"""The rules engine: one hand of Nap as a pure state machine, and a match of hands.

No I/O, no clock, no global RNG: chance enters only through the seed a `Match` is
given (and its board seeds, for duplicate deals), each turned into its own
`random.Random`. A caller loops: `hand.to_act`, `hand.kind`, `hand.legal()`,
`hand.apply(answer)` (or `hand.fault(reason)`) until `hand.over`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import combinations
from operator import add, attrgetter, itemgetter
from typing import Any, Final

from naparena.game import cards
from naparena.game.rules import (
    MISERE_BIDS,
    TRICKS_NEEDED,
    Rules,
    canonical,
    lead_names_trumps,
    nap_or_above,
    stakes,
)
from naparena.game.view import Kind, View

SUIT = cards.SUIT
RANK = cards.RANK

# Decision kinds; each is also the name of the Bot method that answers it.
BID: Final = "bid"
PLAY: Final = "play"
PEEP: Final = "peep"
FLOATER_PEEP: Final = "floater_peep"
EXCHANGE: Final = "exchange"
GARNET: Final = "garnet"
GARNET_DISCARD: Final = "garnet_discard"
PEEP_EXCHANGE: Final = "peep_exchange"
FLOATER_DISCARD: Final = "floater_discard"
TRUMPS: Final = "trumps"
#: Every decision kind the engine asks for, in the order the protocol's schemas list them.
DECISION_KINDS: tuple[Kind, ...] = (BID, PLAY, PEEP, FLOATER_PEEP, EXCHANGE, GARNET, GARNET_DISCARD, PEEP_EXCHANGE,
                  FLOATER_DISCARD, TRUMPS)

PASS = "pass"
YES_NO = (False, True)

_BATCHES = {"3-2": (3, 2), "2-3": (2, 3), "1": (1,)}


def _is_card(a: object) -> bool:
    return type(a) is int


def _is_cards(a: object) -> bool:
    return type(a) is tuple and len(a) <= cards.DECK_SIZE and all(type(c) is int for c in a)


def _plain_cards(a: Any) -> bool:
    """A list or tuple of ints, built-in types only: sorting it runs none of a bot's code
    (a subclass's __iter__ or an item's __lt__ would, outside the bot's watched call)."""
    return type(a) in (list, tuple) and len(a) <= cards.DECK_SIZE and all(type(c) is int for c in a)


# The type each kind's answer must have, checked before membership so that True is
# never taken for card 1, nor junk compared with cards.
_ANSWER_TYPES: dict[str, Callable[[Any], bool]] = {
    BID: lambda a: type(a) is str, PLAY: _is_card, FLOATER_DISCARD: _is_card,
    PEEP: lambda a: type(a) is bool, FLOATER_PEEP: lambda a: type(a) is bool,
    GARNET: lambda a: type(a) is bool, TRUMPS: _is_card,
    EXCHANGE: _is_cards, GARNET_DISCARD: _is_cards,
    PEEP_EXCHANGE: lambda a: a is None or type(a) is int,
}


class _Tables:
    """Per-rules lookups computed once, so the hot loop only indexes."""

    def __init__(self, rules: Rules):
        self.rank = {b: i for i, b in enumerate(rules.ladder)}
        self.enabled = tuple(b for b in rules.ladder if b in rules.bids)
        self.nap_rank = self.rank["nap"] if "nap" in self.rank else self.rank["nap-with"]
        self.tricks = rules.hand_size
        # Contracts that, made, take the pool and (after_nap) bring a shuffle.
        self.nap_or_above = frozenset(base_bid(b) for b in rules.ladder if nap_or_above(rules, base_bid(b)))


@lru_cache(maxsize=64)
def tables(rules: Rules) -> _Tables:
    return _Tables(rules)


def base_bid(bid: str) -> str:
    """'nap-with' → 'nap': the contract without the floater qualifier."""
    return bid.split("-", 1)[0]


@lru_cache(maxsize=256)
def deal_order(rules: Rules, players: int, dealer: int) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """(active seats from dealer's left, deck positions dealt to each seat).

    Deals clockwise from the dealer's left in batches (3-2, 2-3 or singly); for a
    seven-card hand the pattern repeats, capped by what is left (3-2 → 3, 2, 2).
    """
    order = [(dealer + i) % players for i in range(1, players + 1)]
    if rules.sits_out(players):
        order.remove(dealer)
    positions: dict[int, list[int]] = {s: [] for s in order}
    pos, dealt, batches, b = 0, 0, _BATCHES[rules.deal], 0
    while dealt < rules.hand_size:
        size = min(batches[b % len(batches)], rules.hand_size - dealt)
        for s in order:
            positions[s].extend(range(pos, pos + size))
            pos += size
        dealt += size
        b += 1
    per_seat = tuple(tuple(positions.get(s, ())) for s in range(players))
    return tuple(order), per_seat


@lru_cache(maxsize=256)
def _layout(rules: Rules, players: int, dealer: int
            ) -> tuple[tuple[int, ...], tuple[Callable[[list[int]], tuple[int, ...]] | None, ...]]:
    """(active seats, per seat a C-speed getter of its deck positions, None for a seat out)."""
    active, slots = deal_order(rules, players, dealer)
    return active, tuple(itemgetter(*p) if p else None for p in slots)


def legal_bids(rules: Rules, bids: tuple[tuple[int, str], ...]) -> tuple[str, ...]:
    """The bids a seat may make after `bids` (also for bots deciding before their bid)."""
    t = tables(rules)
    return _bids_over(t, max((t.rank[b] for _, b in bids if b != PASS), default=-1), bids)


def _bids_over(t: _Tables, high: int, bids: tuple[tuple[int, str], ...]) -> tuple[str, ...]:
    out = [PASS]
    for b in t.enabled:
        if t.rank[b] <= high:
            continue
        if b == "wellington" and not any(x == "nap" for _, x in bids):
            continue  # Wellington only after a Nap (000, 001, 002)
        if b == "blucher" and not any(x == "wellington" for _, x in bids):
            continue  # Blücher only after a Wellington
        out.append(b)
    return tuple(out)


class Hand:
    """One deal, from the cards dealt to the settlement."""

    # Slots, not an instance dict: with more than 30 attributes CPython gives up the shared,
    # hinted dict layout, and every attribute access became a dict probe (-11% instructions).
    __slots__ = (
        '_chips', '_legal', '_post', '_queue', '_turn', 'active', 'bidder', 'bids', 'bought', 'chips_start',
        'contract', 'cut', 'dealer', 'dealt', 'decisions', 'delta', 'discards', 'exchanges', 'faults',
        'floater', 'garnet', 'garnet_dealt', 'garnet_taker', 'gathered', 'hand_no', 'hands', 'high', 'kind',
        'kitty', 'kitty_start', 'misere', 'need', 'over', 'peep_card', 'peeps', 'players', 'pre', 'result',
        'revoke', 'rules', 'seen', 'stock', 'stock_dealt', 't', 'to_act', 'trick', 'tricks', 'trumps',
        'trumps_by_lead', 'won',
    )

    def __init__(self, rules: Rules, players: int, dealer: int, deck: list[int],
                 chips: tuple[int, ...], kitty: int, hand_no: int = 0):
        self.rules, self.t = rules, tables(rules)
        self.players, self.dealer, self.hand_no = players, dealer, hand_no
        self.chips_start, self.kitty_start = chips, kitty
        self.active, pickers = _layout(rules, players, dealer)
        # Public state lives in tuples, replaced rather than mutated, so a View is
        # a snapshot that costs only references.
        self.hands: list[tuple[int, ...]] = [tuple(sorted(pick(deck))) if pick else () for pick in pickers]
        self.dealt = list(self.hands)
        rest = deck[len(self.active) * rules.hand_size:]
        self.peep_card = rest.pop(0) if rules.peep else None
        self.floater = rest.pop(0) if rules.floater else None
        self.garnet = [rest.pop(0) for _ in range(5)] if rules.sir_garnet else None
        self.garnet_dealt = tuple(self.garnet) if self.garnet else None  # in dealt order, for the log
        self.stock = rest                     # undealt cards, top first
        # What the log needs to re-deal the hand: set by `Match.next_hand` (the cut, and
        # the gathered pack when it was not shuffled), the stock a purchase buys from, and
        # the cards each purchase bought.
        self.cut: int | None = None
        self.gathered: tuple[int, ...] | None = None
        self.stock_dealt = tuple(rest) if rules.purchase != "none" else None
        self.bought: tuple[tuple[int, tuple[int, ...]], ...] = ()
        self.discards: list[int] = []         # cards put out of play face down
        self.delta = [0] * players
        self.kitty = kitty
        self.bids: tuple[tuple[int, str], ...] = ()
        self.high = -1                         # ladder rank of the highest bid
        self.bidder: int | None = None
        self.contract: str | None = None
        self.need = 0
        self.misere = False
        self.trumps: int | None = None
        self.trumps_by_lead = True
        self.peeps: tuple[int, ...] = ()
        self.exchanges: tuple[tuple[int, int], ...] = ()
        self.garnet_taker: int | None = None
        self.seen: list[tuple[int, ...]] = [()] * players
        self.pre: list[list[Any]] = []            # non-bid, non-play decisions, for the log
        self.faults: list[list[Any]] = []         # [decision, seat, kind, reason]
        self.trick: tuple[tuple[int, int], ...] = ()
        self.tricks: tuple[tuple[int, tuple[tuple[int, int], ...], int], ...] = ()
        self.won = (0,) * players
        self._chips: tuple[int, ...] | None = chips  # chip totals now, until money moves (antes too)
        self.revoke: int | None = None
        self.result: str | None = None
        self.decisions = 0
        self.over = False
        self.to_act: int | None = None
        self.kind: Kind | None = None
        self._legal: tuple[Any, ...] | None = None
        self._turn = 0                         # index into self.active for exchange/bidding
        self._queue: list[Kind] = []            # decisions still due from the seat whose turn it is
        self._post = 0                         # next step between bidding and play
        self._ante()
        self._start()

    def clone(self) -> Hand:
        """An independent copy of this hand in its present state, to play on from it (a
        rollout) without touching this one. Tuples are shared: the engine replaces them;
        the lists it changes in place are copied."""
        other = Hand.__new__(Hand)
        for name, value in zip(_SLOTS, _read_slots(self)):
            setattr(other, name, value)
        other.hands, other.delta, other.seen = list(self.hands), list(self.delta), list(self.seen)
        other.stock, other.discards = list(self.stock), list(self.discards)
        other.garnet = None if self.garnet is None else list(self.garnet)
        other.pre, other.faults, other._queue = list(self.pre), list(self.faults), list(self._queue)
        return other

    # --- set-up -----------------------------------------------------------------------

    def _ante(self) -> None:
        if self.rules.floater:  # every player antes 1 before each deal (001)
            for s in range(self.players):
                self._pay_kitty(s, 1)
        if self.rules.dealer_ante:
            self._pay_kitty(self.dealer, self.rules.dealer_ante)

    def _pay_kitty(self, seat: int, amount: int) -> None:
        self.delta[seat] -= amount
        self.kitty += amount
        self._chips = None

    def _take(self, seat: int, *cards_in: int) -> None:
        self.hands[seat] = tuple(sorted(self.hands[seat] + cards_in))

    def _give_up(self, seat: int, *cards_out: int) -> None:
        self.hands[seat] = tuple(c for c in self.hands[seat] if c not in cards_out)
        self.discards.extend(cards_out)

    def _see(self, seat: int, *cards_seen: int) -> None:
        self.seen[seat] += tuple(c for c in cards_seen if c not in self.seen[seat])

    def _start(self) -> None:
        if self.rules.purchase != "none":
            self._ask(self.active[0], EXCHANGE)
        else:
            self._begin_turn()

    def _ask(self, seat: int, kind: Kind) -> None:
        self.to_act, self.kind, self._legal = seat, kind, None

    # --- bidding ----------------------------------------------------------------------

    def _begin_turn(self) -> None:
        """Queue what the seat whose turn it is to bid must decide."""
        if self._turn == len(self.active):
            return self._end_bidding()
        seat = self.active[self._turn]
        q: list[Kind] = []
        if self.rules.peep:
            q.append(PEEP)
        if self.rules.floater:
            q.append(FLOATER_PEEP)
        if self.garnet is not None and self.garnet_taker is None and self.high < self.t.nap_rank:
            q.append(GARNET)
        q.append(BID)
        self._queue = q
        self._ask(seat, q.pop(0))

    def _next_in_turn(self, seat: int) -> None:
        """`seat` has decided: ask its next question, or move the turn on."""
        if self._queue:
            self._ask(seat, self._queue.pop(0))
        else:
            self._turn += 1
            self._begin_turn()

    def legal_bids(self) -> tuple[str, ...]:
        return _bids_over(self.t, self.high, self.bids)

    def _bid(self, seat: int, bid: str) -> None:
        self.bids += ((seat, bid),)
        if bid != PASS:
            self.high, self.bidder, self.contract = self.t.rank[bid], seat, bid

    def _end_bidding(self) -> None:
        if self.contract is None:  # no one bid
            if self.rules.all_pass == "redeal":
                return self._finish("passed")
            self.bidder, self.contract = self.active[0], "one"  # the first caller stands for one (003)
        base = base_bid(self.contract)
        self.need = TRICKS_NEEDED[base]
        self.misere = base in MISERE_BIDS
        self.trumps_by_lead = lead_names_trumps(self.rules, base)
        self._post_bid()

    def _post_bid(self) -> None:
        """Steps between bidding and the opening lead, each at most once, in this order."""
        b, contract, rules = self.bidder, self.contract, self.rules
        assert b is not None and contract is not None  # bidding is over
        step, self._post = self._post, self._post + 1
        if step == 0 and rules.peep and b in self.peeps:
            return self._ask(b, PEEP_EXCHANGE)
        if step <= 1 and rules.floater and contract.endswith("-with"):
            floater = self.floater
            assert floater is not None  # dealt whenever rules.floater
            self._post = 2
            self._see(b, floater)
            self._take(b, floater)
            return self._ask(b, FLOATER_DISCARD)
        if step <= 2 and rules.floater and base_bid(contract) == "wellington":
            self._post = 3
            return self._ask(b, TRUMPS)  # floater Wellington names trumps (001)
        self._post = 4
        self._ask(b, PLAY)

    # --- legal answers ----------------------------------------------------------------

    def legal(self) -> tuple[Any, ...]:
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _compute_legal(self) -> tuple[Any, ...]:
        kind, seat = self.kind, self.to_act
        if seat is None:
            raise AssertionError(kind)  # the hand is over: nothing is legal
        if kind == PLAY:
            return self._legal_cards(self.hands[seat])
        if kind == BID:
            return self.legal_bids()
        if kind in (PEEP, FLOATER_PEEP, GARNET):
            return YES_NO
        if kind == EXCHANGE:
            limit = min(len(self.stock), 5, len(self.hands[seat]))
            hand = self.hands[seat]
            return tuple(c for k in range(limit + 1) for c in combinations(hand, k))
        if kind == GARNET_DISCARD:
            return tuple(combinations(self.hands[seat], 5))
        if kind == PEEP_EXCHANGE:
            return (None,) + tuple(self.hands[seat])
        if kind == FLOATER_DISCARD:
            return tuple(self.hands[seat])
        if kind == TRUMPS:
            held = {SUIT[c] for c in self.hands[seat]}
            return tuple(s for s in range(4) if held - {s})
        raise AssertionError(kind)

    def _legal_cards(self, hand: tuple[int, ...]) -> tuple[int, ...]:
        trick = self.trick
        if trick:
            led = SUIT[trick[0][1]]
            follow = tuple(c for c in hand if SUIT[c] == led)
            return follow or tuple(hand)
        if not self.tricks:
            return self._first_leads(hand)
        return tuple(hand)

    def _first_leads(self, hand: tuple[int, ...]) -> tuple[int, ...]:
        """Lead restrictions on the bidder's opening lead (RULES.md §4, §7.6)."""
        assert self.contract is not None  # play starts after the bidding
        base = base_bid(self.contract)
        if self.rules.floater:
            if base == "bonaparte":
                return _lowest_of_each_suit(hand)
            if base == "wellington":
                # Interpretation: "lowest non-trump" is the lowest rank outside trumps;
                # equal ranks in different suits are all allowed.
                plain = [c for c in hand if SUIT[c] != self.trumps]
                low = min(RANK[c] for c in plain)
                return tuple(c for c in plain if RANK[c] == low)
        elif base == "wellington" and self.rules.wellington_lead == "lowest_trump":
            return _lowest_of_each_suit(hand)
        return tuple(hand)

    # --- answers ----------------------------------------------------------------------

    def apply(self, answer: Any) -> None:
        """Apply the acting seat's answer; an illegal one is a fault (a revoke in play)."""
        kind, seat = self.kind, self.to_act
        if kind is None or seat is None:
            raise RuntimeError("no decision is due: the hand is over")
        if kind in (EXCHANGE, GARNET_DISCARD) and _plain_cards(answer):
            answer = tuple(sorted(answer))
        ok = _ANSWER_TYPES[kind](answer) and answer in self.legal()
        if ok and kind == PLAY:
            return self._play(seat, answer)
        if not ok:
            return self.fault(f"illegal answer {_short_repr(answer, kind)}: {kind} wants {_WANTED[kind]}, "
                              f"one of {_short_legal(self.legal(), kind)}")
        self.decisions += 1
        self._decide(kind, seat, answer)

    def apply_legal(self, answer: Any) -> None:
        """Apply an answer the caller took from `legal()` itself, as an environment's action
        map does (it holds the legal answers and nothing else): `apply` without checking
        the answer again, for the batched environments' hot loop. A caller that cannot
        vouch for its answer (a bot's) calls `apply`, which faults an illegal one."""
        kind, seat = self.kind, self.to_act
        if seat is None:
            raise RuntimeError("no decision is due: the hand is over")
        if kind == PLAY:
            return self._play(seat, answer)
        assert kind is not None  # set with to_act
        self.decisions += 1
        self._decide(kind, seat, answer)

    def fault(self, reason: str) -> None:
        """The acting seat failed to give a legal answer: apply the kind's documented default."""
        seat, kind = self.to_act, self.kind
        if kind is None or seat is None:
            raise RuntimeError("no decision is due: the hand is over")
        self.faults.append([self.decisions, seat, kind, reason])
        self.decisions += 1
        if kind == PLAY:
            self.revoke = seat
            return self._finish("revoke")
        self._decide(kind, seat, self._default(kind, seat))

    def _default(self, kind: Kind, seat: int) -> Any:
        if kind == BID:
            return PASS
        if kind in (PEEP, FLOATER_PEEP, GARNET):
            return False
        if kind == EXCHANGE:
            return ()
        if kind == GARNET_DISCARD:
            assert self.garnet_dealt is not None  # only asked when Sir Garnet was dealt
            return tuple(sorted(self.garnet_dealt))  # put back the hand just taken up
        if kind == PEEP_EXCHANGE:
            return None
        if kind == FLOATER_DISCARD:
            return self.floater
        if kind == TRUMPS:
            return self.legal()[0]
        raise AssertionError(kind)

    def _decide(self, kind: Kind, seat: int, answer: Any) -> None:
        if kind == BID:
            self._bid(seat, answer)
            return self._next_in_turn(seat)
        self.pre.append([seat, kind, answer])
        getattr(self, "_on_" + kind)(seat, answer)

    def _on_exchange(self, seat: int, discard: tuple[int, ...]) -> None:
        if discard:
            fee = len(discard) if self.rules.purchase == "ecarte" else 1
            self._pay_kitty(seat, fee)
            self._give_up(seat, *discard)
            bought = tuple(self.stock[:len(discard)])
            self._take(seat, *bought)
            del self.stock[:len(discard)]
            self.bought += ((seat, bought),)
            self._see(seat, *discard)
            self.exchanges += ((seat, len(discard)),)
        self._turn += 1
        if self._turn < len(self.active):
            self._ask(self.active[self._turn], EXCHANGE)
        else:
            self._turn = 0
            self._begin_turn()

    def _on_peep(self, seat: int, peep: bool) -> None:
        self._peep(seat, peep, self.peep_card)

    def _on_floater_peep(self, seat: int, peep: bool) -> None:
        self._peep(seat, peep, self.floater)

    def _peep(self, seat: int, peep: bool, card: int | None) -> None:
        """Pay 1 to the kitty to see `card` privately; that a seat peeped is public."""
        if peep:
            assert card is not None  # asked only when the rules deal it
            self._pay_kitty(seat, 1)
            self.peeps += (seat,)
            self._see(seat, card)
        self._next_in_turn(seat)

    def _on_garnet(self, seat: int, take: bool) -> None:
        if not take:
            return self._next_in_turn(seat)
        assert self.garnet is not None  # asked only while Sir Garnet's hand is down
        self.garnet_taker = seat
        self._take(seat, *self.garnet)
        self.garnet = []
        self._queue = []
        self._ask(seat, GARNET_DISCARD)

    def _on_garnet_discard(self, seat: int, discard: tuple[int, ...]) -> None:
        self._give_up(seat, *discard)
        self._see(seat, *discard)
        self._bid(seat, "nap")  # taking up Sir Garnet obliges a Nap (000)
        self._next_in_turn(seat)

    def _on_peep_exchange(self, seat: int, give: int | None) -> None:
        if give is not None:
            assert self.peep_card is not None  # asked only of a bidder who peeped
            self._give_up(seat, give)
            self._take(seat, self.peep_card)
            self._see(seat, give)
        self._post_bid()

    def _on_floater_discard(self, seat: int, card: int) -> None:
        self._give_up(seat, card)
        self._see(seat, card)
        self._post_bid()

    def _on_trumps(self, seat: int, suit: int) -> None:
        self.trumps, self.trumps_by_lead = suit, False
        self._post_bid()

    # --- play -------------------------------------------------------------------------

    def _play(self, seat: int, c: int) -> None:
        """The hot loop: one legal card onto the current trick."""
        self.decisions += 1
        hand = self.hands[seat]
        i = hand.index(c)
        self.hands[seat] = hand[:i] + hand[i + 1:]
        if not self.trick and not self.tricks and self.trumps_by_lead:
            self.trumps = SUIT[c]  # the suit of the first card led is trumps
        self.trick = trick = self.trick + ((seat, c),)
        active = self.active
        if len(trick) < len(active):
            i = active.index(seat) + 1
            return self._ask(active[i if i < len(active) else 0], PLAY)
        winner = _trick_winner(trick, self.trumps)
        self.tricks += ((trick[0][0], trick, winner),)
        self.trick = ()
        won = list(self.won)
        won[winner] += 1
        self.won = tuple(won)
        if self._decided():
            return self._finish(self._verdict())
        self._ask(winner, PLAY)

    def _decided(self) -> bool:
        played = len(self.tricks)
        if played == self.t.tricks:
            return True
        if not self.rules.stop_when_decided:
            return False
        assert self.bidder is not None  # play starts after the bidding
        won = self.won[self.bidder]
        if self.misere:
            return won > 0
        return won >= self.need or won + self.t.tricks - played < self.need

    def _verdict(self) -> str:
        assert self.bidder is not None  # play starts after the bidding
        won = self.won[self.bidder]
        made = won == 0 if self.misere else won >= self.need
        return "made" if made else "lost"

    # --- settlement -------------------------------------------------------------------

    def _finish(self, result: str) -> None:
        self.result, self.over = result, True
        self.to_act = self.kind = self._legal = None
        if result != "passed":
            self._settle(result)
        self._chips = None

    def _stakes(self) -> tuple[int, int]:
        assert self.contract is not None  # settled only after the bidding
        return stakes(self.rules, base_bid(self.contract))

    def _settle(self, result: str) -> None:
        b, revoke, delta = self.bidder, self.revoke, self.delta
        assert b is not None and self.contract is not None  # settled only after the bidding
        opponents = [s for s in range(self.players) if s != b]
        if result == "revoke" and revoke is not None and revoke != b:
            # A revoking defender pays the bidder what all opponents would have paid (000).
            # Interpretation: the kitty stays where it is; only a bid actually made takes it.
            win, _ = self._stakes()
            delta[revoke] -= win * len(opponents)
            delta[b] += win * len(opponents)
            return
        made = result == "made"
        win, loss = self._stakes()
        if made:
            for s in opponents:
                delta[s] -= win
            delta[b] += win * len(opponents)
            if base_bid(self.contract) in self.t.nap_or_above and self.kitty:
                delta[b] += self.kitty
                self.kitty = 0
        elif self.rules.floater:
            # A failed floater bid (or the bidder's revoke) feeds the kitty, not the players (001).
            self._pay_kitty(b, loss * self.players)
        else:
            for s in opponents:
                delta[s] += loss
            delta[b] -= loss * len(opponents)

    # --- what the engine shows --------------------------------------------------------

    def view(self, seat: int | None = None) -> View:
        """The acting seat's view (or `seat`'s, outside its turn: then `legal` is empty)."""
        if seat is None or seat == self.to_act:
            if self.over:
                if seat is None:
                    raise RuntimeError("the hand is over: no seat is to act; name a seat")
                return self._snapshot(None, seat, ())
            return self.acting_view()
        return self._snapshot(None, seat, ())

    def acting_view(self) -> View:
        """The acting seat's view: `view()` without its checks, for the runner's hot loop
        (hence `_snapshot` written out here rather than called)."""
        s, chips = self.to_act, self._chips
        assert s is not None, "the hand is over: no seat is to act"
        if chips is None:
            chips = self._chips = tuple(map(add, self.chips_start, self.delta))
        return View((self.kind, s, self._legal or self.legal(), self.hands[s], self.trumps,
                     self.trick, self.tricks, self.won, self.seen[s], self.bids, self.bidder,
                     self.contract, self.rules, self.players, self.dealer, self.active,
                     self.hand_no, chips, self.kitty, self.peeps, self.exchanges, self.garnet_taker))

    def _snapshot(self, kind: Kind | None, s: int, legal: tuple[Any, ...]) -> View:
        # One tuple display, straight into the View: with slots, reading the public fields
        # costs less than caching them in a tail tuple and concatenating it.
        chips = self._chips
        if chips is None:
            chips = self._chips = tuple(map(add, self.chips_start, self.delta))
        return View((kind, s, legal, self.hands[s], self.trumps, self.trick, self.tricks,
                     self.won, self.seen[s], self.bids, self.bidder, self.contract,
                     self.rules, self.players, self.dealer, self.active, self.hand_no,
                     chips, self.kitty, self.peeps, self.exchanges, self.garnet_taker))

    @property
    def chips(self) -> tuple[int, ...]:
        """This hand's chip change per seat."""
        return tuple(self.delta)

    @property
    def kitty_delta(self) -> int:
        """Chips this hand put into (positive) or took out of (negative) the kitty."""
        return self.kitty - self.kitty_start

    def cards_in_play(self) -> list[int]:
        """Every card of the pack, each exactly once, in gather order (RULES.md §2).

        Gather order for `after_nap`: tricks in play order, the unfinished trick, the
        cards still in hands (seat order), the discards, then the undealt stock.
        """
        out = [c for _, plays, _ in self.tricks for _, c in plays]
        out += [c for _, c in self.trick]
        for h in self.hands:
            out += h
        out += self.discards
        for extra in (self.peep_card, self.floater):
            if extra is not None and extra not in out:
                out.append(extra)
        out += self.garnet or []
        out += self.stock
        return out

    def record(self) -> dict[str, Any]:
        """The hand's log entry: JSON-able data (tuples serialise as arrays), small.

        Keys are inserted in one fixed order, so the JSON text is canonical without sorting.
        Tricks go in as the engine keeps them, `(leader, ((seat, card), …), winner)`: who
        played what, and nothing to rebuild, because this runs once per hand of every match.
        """
        if self.peep_card is None and self.floater is None and not self.garnet_dealt and not self.pre:
            r: dict[str, Any] = {
                "n": self.hand_no, "dealer": self.dealer, "cut": self.cut, "deal": self.dealt, "bids": self.bids,
                "bidder": self.bidder, "contract": self.contract, "trumps": self.trumps, "tricks": self.tricks}
        else:
            r = {"n": self.hand_no, "dealer": self.dealer, "cut": self.cut, "deal": self.dealt}
            if self.peep_card is not None:
                r["peep_card"] = self.peep_card
            if self.floater is not None:
                r["floater"] = self.floater
            if self.garnet_dealt:
                r["garnet"] = self.garnet_dealt
            if self.stock_dealt is not None:
                r["stock"] = self.stock_dealt
            if self.bought:
                r["bought"] = self.bought
            if self.pre:
                r["pre"] = tuple(map(tuple, self.pre))
            r.update(bids=self.bids, bidder=self.bidder, contract=self.contract, trumps=self.trumps,
                     tricks=self.tricks)
        if self.gathered is not None:
            r["gathered"] = self.gathered
        if self.trick:
            r["trick"] = self.trick
        if self.revoke is not None:
            r["revoke"] = self.revoke
        if self.faults:
            r["faults"] = tuple(map(tuple, self.faults))
        r["result"] = self.result
        r["chips"] = tuple(self.delta)  # copies: a record must not reach back into the hand
        r["kitty"] = self.kitty
        return r


_SLOTS = Hand.__slots__
_read_slots = attrgetter(*_SLOTS)


def _trick_winner(trick: tuple[tuple[int, int], ...], trumps: int | None) -> int:
    seat, best = trick[0]
    best_suit = SUIT[best]
    for s, c in trick[1:]:
        cs = SUIT[c]
        if cs == best_suit:
            if c > best:
                seat, best = s, c
        elif cs == trumps:
            seat, best, best_suit = s, c, cs
    return seat


def _lowest_of_each_suit(hand: tuple[int, ...]) -> tuple[int, ...]:
    low: dict[int, int] = {}
    for c in hand:  # hands are sorted, so the first card of a suit is its lowest
        low.setdefault(SUIT[c], c)
    return tuple(sorted(low.values()))


# Answers shown as written in a fault; anything else is named by its type only, because
# its repr is the bot's code (it may raise, hang, or build a million-item string).
_SHOWN = (str, int, bool, type(None))


def _short_repr(answer: Any, decision: str | None = None) -> str:
    kind = type(answer)
    if kind is int and answer.bit_length() > 64:
        return "of type int (too large to show)"  # repr of a huge int is slow, or refused
    if decision in _CARD_ANSWERS and (kind is int or _plain_cards(answer)):
        text = _named(answer)
    elif kind in _SHOWN:
        text = repr(answer[:61] if kind is str else answer)
    elif _plain_cards(answer):
        text = repr(answer)
    else:
        # type.__name__ read from type itself: a metaclass may not redefine it for us.
        return f"of type {type.__dict__['__name__'].__get__(kind)}"
    return text if len(text) <= 60 else text[:57] + "..."


# What each decision's answer must be, for the message of an illegal answer.
_WANTED = {
    BID: "a bid name (str)", PLAY: "a card (int)", FLOATER_DISCARD: "a card (int)",
    PEEP: "True or False (bool)", FLOATER_PEEP: "True or False (bool)", GARNET: "True or False (bool)",
    TRUMPS: "a suit (int, 0-3)", EXCHANGE: "a sorted tuple of cards (ints)",
    GARNET_DISCARD: "a sorted tuple of five cards (ints)", PEEP_EXCHANGE: "a card (int) or None",
}


# The decisions whose answers are cards or arrays of cards: their faults name each card
# as well as its int (QH=36), for a person reading the message and a program its int.
_CARD_ANSWERS = frozenset((PLAY, FLOATER_DISCARD, PEEP_EXCHANGE, EXCHANGE, GARNET_DISCARD))


def _named(value: Any) -> str:
    """A card as `QH=36`, an array of cards as `(5D=3, 6D=17)`; other values as written."""
    if type(value) is int:
        return f"{cards.NAMES[value]}={value}" if 0 <= value < cards.DECK_SIZE else repr(value)
    if type(value) in (list, tuple):
        return "(" + ", ".join(map(_named, value)) + ")"
    return repr(value)


def _short_legal(legal: tuple[Any, ...], decision: str | None = None) -> str:
    show = _named if decision in _CARD_ANSWERS else repr
    shown = ", ".join(map(show, legal[:8]))
    return f"({shown})" if len(legal) <= 8 else f"({shown}, … {len(legal)} in all)"


class Match:
    """The hands of one match: dealer rotation, shuffles and cuts, chips and kitty."""

    def __init__(self, rules: Rules, players: int, seed: int, stack: int = 0,
                 boards: Sequence[int] | None = None):
        rules.check_players(players)
        # Duplicate boards: hand n is shuffled and cut from its own seed, boards[n], so
        # every rotation of a table gets the same deals whatever the play before it.
        self.boards = boards
        self.rules, self.players = canonical(rules), players
        self.rng = random.Random(seed)
        self.chips = [stack] * players
        self.kitty = 0
        self._pack = cards.pack(rules.pack_size(players))
        self.deck = list(self._pack)
        self.dealer = self.rng.randrange(players)  # seeded draw for the first dealer
        self.hand_no = 0
        self._shuffle = True  # the first deal is always shuffled

    def next_hand(self) -> Hand:
        deck, rng = self.deck, self.rng
        gathered = None
        if self.boards is not None:
            deck = self.deck = list(self._pack)  # every board starts from the same order
            rng = random.Random(self.boards[self.hand_no])
            rng.shuffle(deck)
        elif self._shuffle or self.rules.shuffle == "every_hand":
            rng.shuffle(deck)
        else:
            gathered = tuple(deck)  # the gather order, logged so the deal can be rebuilt (001)
        # The player on the dealer's right cuts, leaving at least four cards a packet.
        cut = rng.randint(4, len(deck) - 4)
        deck[:] = deck[cut:] + deck[:cut]
        hand = Hand(self.rules, self.players, self.dealer, deck, tuple(self.chips), self.kitty, self.hand_no)
        hand.cut, hand.gathered = cut, gathered
        return hand

    def finish(self, hand: Hand) -> None:
        """Book a finished hand and pass the deal to the left."""
        assert hand.over
        for s, d in enumerate(hand.delta):
            self.chips[s] += d
        self.kitty = hand.kitty
        if self.rules.shuffle == "after_nap":
            # Shuffle again only after a won Nap or above; otherwise gather the cards (001).
            self._shuffle = (hand.result == "made" and hand.contract is not None
                             and base_bid(hand.contract) in hand.t.nap_or_above)
            self.deck = hand.cards_in_play()
        self.dealer = (self.dealer + 1) % self.players
        self.hand_no += 1

    def state(self) -> dict[str, Any]:
        """Everything the next hands depend on, as JSON-ready data: with `restore` a match
        continues from a checkpoint exactly as if it had never stopped."""
        version, internal, gauss = self.rng.getstate()
        return {"rng": [version, list(internal), gauss], "chips": list(self.chips), "kitty": self.kitty,
                "deck": list(self.deck), "dealer": self.dealer, "hand_no": self.hand_no, "shuffle": self._shuffle}

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from `state()` taken in a match of the same rules, table and boards."""
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        self.chips, self.kitty = list(state["chips"]), state["kitty"]
        self.deck, self.dealer = list(state["deck"]), state["dealer"]
        self.hand_no, self._shuffle = state["hand_no"], state["shuffle"]

    def close(self) -> list[int]:
        """End the match; with `kitty_at_end = "split"` share the kitty, the remainder stays."""
        if self.rules.kitty_at_end == "split" and self.kitty:
            share = self.kitty // self.players
            for s in range(self.players):
                self.chips[s] += share
            self.kitty -= share * self.players
        return self.chips
