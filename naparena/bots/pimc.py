"""The `pimc` bot: Perfect-Information Monte Carlo. It deals the cards it cannot see in
ways consistent with what its seat knows, solves each deal exactly (`naparena.bots.solver`),
and plays the card, or bids the contract, that does best on average.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Collection, Iterable, Sequence
from itertools import combinations
from typing import TypeAlias

from naparena.bots import strategy
from naparena.bots.bot import DEFAULT_TIMEOUT, MatchInfo
from naparena.bots.reference import HeuristicBot
from naparena.bots.solver import (
    MAKE,
    TRICKS,
    OutOfTime,
    Position,
    SearchLimit,
    Solution,
    Table,
    first_lead_names_trumps,
    opening_leads,
    solve,
)
from naparena.game import cards
from naparena.game.cards import SUIT
from naparena.game.engine import base_bid
from naparena.game.rules import MISERE_BIDS, TRICKS_NEEDED
from naparena.game.view import View

ENOUGH = 1e-9  # an expected value must beat passing by more than rounding noise
# Double-dummy defenders know where every card is; real ones do not, so a contract is made
# more often than the share of solved deals that make it. Log-odds shifts (strategy.shift)
# fitted by maximum likelihood to the make rates of contracts this bot played against
# heuristic defenders at tables of four: some 1,150 threes, fours and naps (classic), and
# some 800 misères (misere), where knowing which suit forces the bidder is worth far more.
BID_CALIBRATION = 0.3
MISERE_CALIBRATION = 1.2
_REJECTION_TRIES = 12  # uniform deals tried before the constrained deal (see Unseen.deal)
log = logging.getLogger(__name__)
# Of the decision time-out, where the clock cuts a decision short. The solver reads the
# clock within a search too, so a decision ends soon after it: two fifths leave the rest
# of the time-out for a loaded machine's delays (a 1 s time-out overran at 0.75).
GUARD_SHARE = 0.4
_clock = time.perf_counter  # one name, so a test can stand in a slow machine's clock

# The transposition tables one bid decision shares across its deals: one per (misère?,
# trumps named, our hand), since a misère counts tricks the other way round.
_BidTables: TypeAlias = dict[tuple[bool, int | None, tuple[int, ...]], Table]


class Unseen:
    """The cards one seat cannot see and who may hold them.

    `counts` is how many cards each other active seat holds now; `voids` the suits a seat
    has shown out of (bit s set: no card of suit s); `bidder_only` cards that only the
    bidder can hold, if anyone does (a peep card or floater this seat saw and the bidder
    may have taken). Every pool card not dealt to a seat is out of play: the stock, a
    floater or peep card, another seat's discards.
    """

    def __init__(self, pool: Iterable[int], counts: dict[int, int], voids: dict[int, int] | None = None,
                 bidder_only: Iterable[int] = (), bidder: int | None = None) -> None:
        self.pool = sorted(pool)
        self.counts = dict(counts)
        self.voids = {s: v for s, v in (voids or {}).items() if v and s in self.counts}
        self.bidder_only = frozenset(bidder_only) & frozenset(self.pool)
        self.bidder = bidder
        if sum(self.counts.values()) > len(self.pool):
            raise ValueError("more cards in the other hands than unseen cards")
        self.free = not self.voids and not self.bidder_only

    def allowed(self, seat: int, c: int) -> bool:
        if self.voids.get(seat, 0) >> SUIT[c] & 1:
            return False
        return c not in self.bidder_only or seat == self.bidder

    def deal(self, rng: random.Random) -> dict[int, tuple[int, ...]]:
        """One deal of the other hands, consistent with every constraint.

        First up to a dozen uniform deals of the pool, the first consistent one taken: that
        is exactly uniform over the consistent deals. When the constraints make those rare
        (voids late in a hand), a constrained deal: seat by seat, most constrained first,
        each card drawn uniformly among those that still leave a consistent completion.
        That always succeeds, close to uniform but not exactly.
        """
        pool = self.pool[:]
        seats = sorted(self.counts)
        tries = 1 if self.free else _REJECTION_TRIES
        for _ in range(tries):
            rng.shuffle(pool)
            out: dict[int, tuple[int, ...]] = {}
            i, ok = 0, True
            for seat in seats:
                k = self.counts[seat]
                h = pool[i:i + k]
                i += k
                if not self.free and not all(self.allowed(seat, c) for c in h):
                    ok = False
                    break
                out[seat] = tuple(sorted(h))
            if ok:
                return out
        return self._constrained(rng)

    def _constrained(self, rng: random.Random) -> dict[int, tuple[int, ...]]:
        seats = sorted(self.counts)
        need = dict(self.counts)
        # Card classes: suit, and whether only the bidder may hold it.
        def klass(c: int) -> int:
            return SUIT[c] + 4 * (c in self.bidder_only)
        remaining = [0] * 8
        for c in self.pool:
            remaining[klass(c)] += 1
        eligible = {s: [not self.voids.get(s, 0) >> (k % 4) & 1 and (k < 4 or s == self.bidder)
                        for k in range(8)] for s in seats}
        subsets = [sub for r in range(1, len(seats) + 1) for sub in combinations(seats, r)]
        reach = {sub: [any(eligible[s][k] for s in sub) for k in range(8)] for sub in subsets}

        def feasible() -> bool:
            # Hall's condition: every group of seats can be given the cards it still needs.
            for sub in subsets:
                want = sum(need[s] for s in sub)
                if want and want > sum(n for n, r in zip(remaining, reach[sub]) if r):
                    return False
            return True

        if not feasible():
            raise ValueError("no deal of the unseen cards fits what this seat knows")
        order = sorted(seats, key=lambda s: (sum(r for r, e in zip(remaining, eligible[s]) if e), s))
        left = self.pool[:]
        out: dict[int, list[int]] = {s: [] for s in seats}
        for seat in order:
            while need[seat]:
                choices = [c for c in left if eligible[seat][klass(c)]]
                rng.shuffle(choices)
                for c in choices:
                    k = klass(c)
                    remaining[k] -= 1
                    need[seat] -= 1
                    if feasible():
                        left.remove(c)
                        out[seat].append(c)
                        break
                    remaining[k] += 1
                    need[seat] += 1
                else:  # pragma: no cover - feasible() before each draw guarantees a choice
                    raise AssertionError("constrained deal found no card")
        return {s: tuple(sorted(h)) for s, h in out.items()}


def voids_of(view: View) -> dict[int, int]:
    """Suits each seat has shown out of (bit s set), from the tricks and the current trick."""
    void: dict[int, int] = {}
    for plays in [p for _, p, _ in view.tricks] + ([view.trick] if view.trick else []):
        led = SUIT[plays[0][1]]
        for seat, c in plays:
            if SUIT[c] != led:
                void[seat] = void.get(seat, 0) | 1 << led
    return void


def unseen_for_play(view: View) -> Unseen:
    """Who may hold what, for a card decision: everything this seat's view implies."""
    rules = view.rules
    played_by: dict[int, int] = {}
    gone = set(view.hand)
    for plays in [p for _, p, _ in view.tricks] + ([view.trick] if view.trick else []):
        for seat, c in plays:
            gone.add(c)
            played_by[seat] = played_by.get(seat, 0) + 1
    bidder = view.bidder
    contract = view.contract or ""
    # A peep card or floater we saw can be in the bidder's hand only if he could take it:
    # he peeped too (and may have swapped it in), or took the floater with a "with" bid.
    could_take = bidder is not None and bidder != view.seat and (
        (rules.peep and bidder in view.peeps) or (rules.floater and contract.endswith("-with")))
    bidder_only: set[int] = set()
    for c in view.seen:
        if c in gone:
            continue
        if could_take:
            bidder_only.add(c)
        else:
            gone.add(c)  # our own discards, or an extra card nobody took up
    pool = [c for c in cards.pack(rules.pack_size(view.players)) if c not in gone]
    counts = {s: rules.hand_size - played_by.get(s, 0) for s in view.active if s != view.seat}
    return Unseen(pool, counts, voids_of(view), bidder_only, bidder)


def unseen_for_bidding(view: View) -> Unseen:
    """Who may hold what before play: the other hands are full, nobody has shown out."""
    rules = view.rules
    gone = set(view.hand) | set(view.seen)
    pool = [c for c in cards.pack(rules.pack_size(view.players)) if c not in gone]
    counts = {s: rules.hand_size for s in view.active if s != view.seat}
    return Unseen(pool, counts)


class PimcBot(HeuristicBot):
    """Perfect-Information Monte Carlo: sample the unseen cards, solve each deal, average.

    Card play: up to `samples` deals of the unseen cards to the other hands, each
    consistent with the cards played, the suits each seat has shown out of, our hand, the
    cards we saw privately, and the hand sizes; each deal is solved exactly for every
    legal card (bidder against the defenders as one side). The card that makes the
    contract in most deals (as bidder), or defeats it in most (as defender), is played;
    ties go to the best expected tricks (the tied cards solved again on the same deals),
    then to the heuristic bot's choice.

    Bidding: for each legal contract, up to `bid_samples` deals of the other hands, each
    solved with us leading. The opening lead (which names trumps, under the contract's
    lead rule) is held fixed across the deals, so a contract's chance is that of its best
    single lead; it is read with a calibration (BID_CALIBRATION, MISERE_CALIBRATION) plus
    `aggression` as a log-odds shift. The bid is the one with the best expected chips under the
    variant's payout table (doubling, pool and floater losses included), if that beats
    passing; sampling stops early once no contract can.

    Decisions only some variants ask (peep, exchange, Sir Garnet, the floater, naming
    trumps) are the heuristic bot's, with the same `aggression`. Randomness is `self.rng`
    only.

    Budgets: a decision stops sampling once it has spent `max_nodes` solver nodes, which
    is deterministic: that is the limit meant to bind (about 0.1 s of solving here; a
    4-player classic card decision takes some 20 ms at the median). `time_budget` only
    guards the decision time-out: by default (0) it is two fifths of the tournament's
    `timeout`, told in `start_match` (0.4 s if never told), and it holds within a solve
    (the solver reads the clock every `CLOCK_EVERY` nodes), so a cut decision ends soon
    after it, leaving the rest of the time-out to a loaded machine. The node budget takes up to
    about 0.1 s of CPU time in the slowest decisions (0.01 s at the median), but wall time
    on a busy machine was 10-30 times that, so give pimc a generous `timeout`
    (`tournaments/ladder.toml` uses 20 s) and the node budget binds, and the same seed
    gives the same play. A decision the clock does cut is logged (a warning
    naming the seat and hand) and counted in `clock_cuts`, because from then on the run
    is not reproducible.
    """

    name = "pimc"
    description = "Perfect-Information Monte Carlo: samples the unseen cards and solves each deal exactly."
    params = {"samples": 120, "bid_samples": 48, "time_budget": 0.0, "max_nodes": 100_000,
              "aggression": 0.0}
    limits = {"samples": (1, 10_000), "bid_samples": (1, 10_000), "time_budget": (0, 3600),
              "max_nodes": (1, 100_000_000), "aggression": (-10, 10)}
    # Set from params by Bot.__init__.
    samples: int
    bid_samples: int
    time_budget: float
    max_nodes: int

    #: Deals solved by the last card or bid decision that sampled (for benchmarks: fewer
    #: than `samples` in card play means a budget cut the decision short).
    last_samples = 0
    #: Decisions the time guard cut short (each also logged): non-zero means not reproducible.
    clock_cuts = 0
    _guard = 0.0  # seconds; set by start_match
    _deadline: float | None = None  # of the decision under way, on `_clock`

    def start_match(self, info: MatchInfo) -> None:
        timeout = info.get("timeout") if isinstance(info, dict) else None
        self._guard = self.time_budget or GUARD_SHARE * (timeout or DEFAULT_TIMEOUT)

    # --- card play -------------------------------------------------------------------

    def play(self, view: View[int]) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        if view.bidder is None or view.contract is None or _decided(view):
            return HeuristicBot.play(self, view)
        played = {c for _, p, _ in view.tricks for _, c in p} | {c for _, c in view.trick}
        if len(_classes(legal, played)) == 1:
            return legal[0]  # every legal card is the same card in every deal
        choice = self._pimc_card(view)
        return choice if choice in legal else HeuristicBot.play(self, view)

    def _limit(self) -> float:
        """Seconds a decision may take before the clock cuts it."""
        return self._guard or self.time_budget or GUARD_SHARE * DEFAULT_TIMEOUT

    def _solve(self, pos: Position, legal: Iterable[int], goal: str, max_nodes: int, table: Table) -> Solution:
        """`solve` under this decision's deadline, on the module's clock: looked at before
        each solve (a decision makes many small ones) and within a long one."""
        if self._deadline is not None and _clock() > self._deadline:
            raise OutOfTime("past the deadline before the solve")
        return solve(pos, legal, goal, max_nodes=max_nodes, table=table, deadline=self._deadline, clock=_clock)

    def _pimc_card(self, view: View[int]) -> int | None:
        start = _clock()
        self._deadline = start + self._limit()
        legal = view.legal
        unseen = unseen_for_play(view)
        rules = view.rules
        me, bidder, contract = view.seat, view.bidder, view.contract
        assert bidder is not None and contract is not None, "play (checked by play())"
        base = base_bid(contract)
        need = 0 if base in MISERE_BIDS else TRICKS_NEEDED[base]
        by_lead = not view.tricks and not view.trick and first_lead_names_trumps(rules, contract)
        budget = self.max_nodes
        made_count = dict.fromkeys(legal, 0)
        deals: list[tuple[Position, Table]] = []
        for _ in range(self.samples):
            others = unseen.deal(self.rng)
            hands: list[tuple[int, ...]] = [()] * view.players
            for s, h in others.items():
                hands[s] = h
            hands[me] = view.hand
            pos = Position(tuple(hands), view.active, me, bidder, need, view.won[bidder],
                           view.trick, view.trumps, by_lead)
            table: Table = {}
            try:
                sol = self._solve(pos, legal, MAKE, max_nodes=budget, table=table)
            except SearchLimit as e:
                self._note_cut(e, view, start)
                budget = 0  # spent: nothing left for the tie-break either
                break
            budget -= sol.nodes
            deals.append((pos, table))
            for c, v in sol.cards.items():
                made_count[c] += v
        self.last_samples = len(deals)
        if not deals:
            return None
        sign = 1 if me == bidder else -1
        top = max(sign * v for v in made_count.values())
        tied = [c for c in legal if sign * made_count[c] == top]
        if len(tied) > 1:
            tied = self._tie_break(view, deals, tied, start, budget)
        if len(tied) == 1:
            return tied[0]
        preferred = HeuristicBot.play(self, view)
        return preferred if preferred in tied else tied[0]

    def _note_cut(self, e: SearchLimit, view: View, start: float) -> None:
        """The time guard: a search the clock stopped (not its node budget) is counted and
        logged, since the play now depends on the machine."""
        if not isinstance(e, OutOfTime):
            return
        spent = _clock() - start
        self.clock_cuts += 1
        log.warning("pimc (seat %d, hand %d, %s): the time guard cut the decision after %.2f s; "
                    "the node budget did not bind, so this run is not reproducible",
                    view.seat, view.hand_no, view.kind, spent)

    def _tie_break(self, view: View[int], deals: Sequence[tuple[Position, Table]], tied: list[int],
                   start: float, budget: int) -> list[int]:
        """The tied cards with the best expected tricks over the same deals."""
        # The bidder wants tricks (fewest in a misère); the defenders the opposite.
        misere = deals[0][0].misere
        sign = 1 if (view.seat == view.bidder) != misere else -1
        total = dict.fromkeys(tied, 0)
        done = 0
        for pos, table in deals:
            if budget <= 0:
                break
            try:
                sol = self._solve(pos, tied, TRICKS, max_nodes=budget, table=table)
            except SearchLimit as e:
                self._note_cut(e, view, start)
                break
            budget -= sol.nodes
            done += 1
            for c in tied:
                total[c] += sol.cards[c]
        if not done:
            return tied
        best = max(sign * v for v in total.values())
        return [c for c in tied if sign * total[c] == best]

    # --- bidding ---------------------------------------------------------------------

    def bid(self, view: View[str]) -> str:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        choice = self._pimc_bid(view)
        return choice if choice in legal else "pass"

    def _pimc_bid(self, view: View[str]) -> str:
        start = _clock()
        self._deadline = start + self._limit()
        contracts = [b for b in view.legal if b != "pass"]
        plans = [_Plan(self, view, b) for b in contracts]
        n = self.bid_samples
        budget = self.max_nodes
        unseen = unseen_for_bidding(view)
        floaters = any(p.with_floater for p in plans)
        done = 0
        for i in range(n):
            # Stop once no contract could beat passing even if every deal still to come made it.
            if done and not any(p.could_pay(n - i) for p in plans):
                break
            others = unseen.deal(self.rng)
            floater = None
            if floaters:  # an unseen floater: one of the cards no other hand holds
                held = {c for h in others.values() for c in h}
                floater = self.rng.choice([c for c in unseen.pool if c not in held])
            tables: _BidTables = {}
            try:
                for p in plans:
                    budget -= p.sample(others, floater, tables, budget)
            except SearchLimit as e:
                self._note_cut(e, view, start)
                budget = 0
                break
            done += 1
        self.last_samples = done
        if not done:
            return HeuristicBot.bid(self, view)
        best, value = "pass", 0.0
        for p in plans:
            v = p.value()
            if p.samples and v > value + ENOUGH:
                best, value = p.bid, v
        return best


class _Plan:
    """One contract under consideration: the hand we would play it with, its opening
    leads, and the deals solved so far (made count per opening lead)."""

    def __init__(self, bot: PimcBot, view: View[str], bid: str) -> None:
        self.bot, self.view, self.bid = bot, view, bid
        self.base = base_bid(bid)
        self.misere = self.base in MISERE_BIDS
        self.need = 0 if self.misere else TRICKS_NEEDED[self.base]
        self.gain, self.cost = strategy.stakes(view, self.base)
        self.by_lead = first_lead_names_trumps(view.rules, bid)
        self.named = view.rules.floater and self.base == "wellington"
        # A "with" bid takes up the floater: unless we saw it, each deal draws its own.
        seen_floater = any(c not in view.hand for c in view.seen)
        self.with_floater = bid.endswith("-with") and not seen_floater
        self.hand = None if self.with_floater else _hand_for(view, bid, None)
        self.made: dict[tuple[int | None, int | None], int] = {}  # (trumps named, opening lead) -> deals made
        self.samples = 0

    def chance(self, made: int, samples: int) -> float:
        """P(make) from `made` of `samples` deals, as the bot reads it (see BID_CALIBRATION)."""
        calibration = MISERE_CALIBRATION if self.misere else BID_CALIBRATION
        return strategy.shift(made / samples, calibration + self.bot.aggression)

    def could_pay(self, more: int) -> bool:
        best = max(self.made.values(), default=0)
        p = self.chance(best + more, self.samples + more)
        return p * self.gain - (1 - p) * self.cost > ENOUGH

    def value(self) -> float:
        if not self.samples:
            return 0.0
        p = self.chance(max(self.made.values(), default=0), self.samples)
        return p * self.gain - (1 - p) * self.cost

    def sample(self, others: dict[int, tuple[int, ...]], floater: int | None, tables: _BidTables,
               budget: int) -> int:
        """Solve this contract on one deal of the other hands; the nodes it took."""
        view = self.view
        me = view.seat
        hand = self.hand if self.hand is not None else _hand_for(view, self.bid, floater)
        hands: list[tuple[int, ...]] = [()] * view.players
        for s, h in others.items():
            hands[s] = h
        hands[me] = hand
        # Floater Wellington names trumps: any suit that leaves a plain card to lead.
        held = {SUIT[c] for c in hand}
        suits = [s for s in range(4) if held - {s}] if self.named else [None]
        nodes = 0
        for trumps in suits:
            pos = Position(tuple(hands), view.active, me, me, self.need, 0, (), trumps, self.by_lead)
            leads = opening_leads(view.rules, self.bid, hand, trumps)
            # A table per hand and trump suit; a misère counts tricks the other way round.
            table = tables.setdefault((self.misere, trumps, hand), {})
            sol = self.bot._solve(pos, leads, MAKE, max_nodes=budget - nodes, table=table)
            nodes += sol.nodes
            if self.with_floater:
                # The hand changes with the floater drawn, so there is no one lead to
                # hold fixed across deals: the best lead of each deal counts.
                keys: dict[tuple[int | None, int | None], int] = {(trumps, None): max(sol.cards.values())}
            else:
                keys = {(trumps, c): v for c, v in sol.cards.items()}
            for key, v in keys.items():
                self.made[key] = self.made.get(key, 0) + v
        self.samples += 1
        return nodes


def _hand_for(view: View, bid: str, floater: int | None) -> tuple[int, ...]:
    """The five (or seven) cards we would play `bid` with.

    A "with" bid takes the floater and discards one card; a bidder who peeped may swap the
    peep card in. Both choices are the heuristic bot's (the best estimated make chance).
    """
    hand = tuple(view.hand)
    base = base_bid(bid)
    rules = view.rules
    t = strategy.table_for(view)
    extra = None
    if bid.endswith("-with"):
        extra = next((c for c in view.seen if c not in hand), floater)
    elif rules.peep:
        extra = next((c for c in view.seen if c not in hand), None)
    if extra is None:
        return hand
    options = [hand] if not bid.endswith("-with") else []
    six = tuple(sorted(hand + (extra,)))
    for give in six:
        options.append(tuple(c for c in six if c != give))
    return max(options, key=lambda h: (strategy.make_chance(h, base, rules, t), h))


def _decided(view: View) -> bool:
    """Is the contract already made or beaten (play goes on without stop_when_decided)?"""
    assert view.contract is not None and view.bidder is not None, "play (checked by the caller)"
    base = base_bid(view.contract)
    won = view.won[view.bidder]
    if base in MISERE_BIDS:
        return won > 0
    need = TRICKS_NEEDED[base]
    return won >= need or won + view.rules.hand_size - len(view.tricks) < need


def _classes(legal: Collection[int], gone: Collection[int]) -> list[int]:
    """One card per run of legal cards no unplayed card separates (the same in every deal)."""
    out = []
    prev = -1
    for c in sorted(legal):
        if prev >= 0 and SUIT[c] == SUIT[prev] and all(x in gone or x in legal for x in range(prev + 1, c)):
            prev = c
            continue
        out.append(c)
        prev = c
    return out
