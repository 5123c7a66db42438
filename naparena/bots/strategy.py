"""Hand evaluation and card memory for the reference bots: how many tricks a hand should
take with a given trump suit, how safe a misère is, and what the cards played so far say.

Everything here is a pure function of a hand, a `Table` (the pack and the number of hands
in play) and, during play, a `View`. The estimates are deliberately simple closed forms,
not simulations, so a bot can afford them at every decision.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from math import comb, exp

from naparena.game import cards
from naparena.game.engine import legal_bids
from naparena.game.rules import MISERE_BIDS, TRICKS_NEEDED, Rules, nap_or_above
from naparena.game.rules import stakes as contract_stakes
from naparena.game.view import View

SUIT = cards.SUIT
RANK = cards.RANK
ACE = 12

# Misère model constants, fitted (maximum likelihood) to some 17,000 misères played
# between the reference bots over 3–6 players, 24- to 52-card packs and seven-card hands:
# how often an unseen card under one of ours is used against it (a defender must hold it
# and get the lead), how much each lower card of ours in the suit shields the next, how
# often a void lets a dangerous card be thrown away, and how often cards above ours that
# followers are forced to play take the trick off us.
MISERE_DUCK = 0.35
MISERE_SHIELD = 0.5
MISERE_ESCAPE_PER_VOID = 0.25
MISERE_OVERTAKE = 0.3
# The trick model treats every threat as independent, which makes it pessimistic in the
# middle of the range: across pack sizes, table sizes and seven-card hands, contracts it
# gave 30 % were made about 40 % of the time between reference bots. A small log-odds
# shift brings the estimates of the hands actually bid back in line without touching
# sure or hopeless hands.
TRICK_CALIBRATION = 0.2


class Table:
    """What the deal looks like from one hand: pack, hands in play, and the chance that a
    card we cannot see lies in an opponent's hand rather than in the undealt stock."""

    def __init__(self, rules: Rules, players: int, exchanged: int = 0):
        active = players - rules.sits_out(players)
        self.size = rules.pack_size(players)
        self.per_suit = self.size // 4
        self.low = 13 - self.per_suit            # lowest rank in the pack
        self.hand = rules.hand_size
        self.opponents = active - 1
        held = self.opponents * self.hand
        # Cards a player cannot see and that may still matter. Cards thrown out in a
        # purchase are the low ones, replaced from the stock: so for the high cards that
        # decide tricks the stock has shrunk by every card bought.
        self.unseen = max(held, self.size - self.hand - exchanged)
        # Peel: with three players fifteen cards are in use and most of the pack lies idle,
        # so a missing king is probably not against you; with five it probably is.
        self.q = min(1.0, held / self.unseen) if self.unseen else 1.0
        self.pack = cards.pack(self.size)
        self._keep: dict[tuple[int, int], float] = {}
        self._short: dict[tuple[int, int], float] = {}

    def keep(self, more: int, out: int) -> float:
        """P(an opponent holding one of the `out` unseen cards of a suit holds `more` others).

        He can then follow our `more` higher leads with small cards and keep the big one.
        """
        if more <= 0:
            return 1.0
        key = (more, out)
        v = self._keep.get(key)
        if v is None:
            v = _tail(self.unseen - 1, out - 1, self.hand - 1, more)
            self._keep[key] = v
        return v

    def short(self, most: int, out: int) -> float:
        """P(one opponent holds at most `most` of the `out` unseen cards of a suit)."""
        key = (most, out)
        v = self._short.get(key)
        if v is None:
            v = 1.0 - _tail(self.unseen, out, self.hand, most + 1)
            self._short[key] = v
        return v


@lru_cache(maxsize=512)
def table(rules: Rules, players: int, exchanged: int = 0) -> Table:
    return Table(rules, players, exchanged)


def table_for(view: View) -> Table:
    """The `Table` for a decision: the deal, less the stock used up by purchases so far."""
    exchanged = sum(n for _, n in view.exchanges) if view.exchanges else 0
    return table(view.rules, view.players, exchanged)


@lru_cache(maxsize=4096)
def _tail(population: int, marked: int, draws: int, atleast: int) -> float:
    """P(X ≥ atleast) for X hypergeometric: `draws` from `population` holding `marked`."""
    if atleast <= 0:
        return 1.0
    if marked <= 0 or draws <= 0 or population <= 0:
        return 0.0
    total = comb(population, draws)
    hit = 0
    for k in range(atleast, min(marked, draws) + 1):
        hit += comb(marked, k) * comb(population - marked, draws - k)
    return hit / total


def _add(dist: list[float], p: float) -> list[float]:
    """Convolve a count distribution with one more independent event of probability p."""
    out = [0.0] * (len(dist) + 1)
    q = 1.0 - p
    for k, d in enumerate(dist):
        out[k] += d * q
        out[k + 1] += d * p
    return out


def _by_suit(hand: Iterable[int]) -> list[list[int]]:
    """Our ranks in each suit, highest first."""
    mine: list[list[int]] = [[], [], [], []]
    for c in sorted(hand, reverse=True):
        mine[SUIT[c]].append(RANK[c])
    return mine


@lru_cache(maxsize=65536)
def _side_highs(ranks: tuple[int, ...], t: Table) -> tuple[float, ...]:
    """For each of our cards of a suit, highest first: P(no opponent beats it in its suit).

    Walk down from the ace: every higher card we do not hold is a threat if an opponent
    holds it and can keep it back while our higher cards are played (Peel's A J 10: it
    fails only to a K or Q guarded by a small one, played under our ace). Cached by the
    ranks alone, which repeat from hand to hand.
    """
    out = t.per_suit - len(ranks)
    highs = []
    p = 1.0
    above = i = 0
    y = ACE
    for x in ranks:
        while y > x:
            if i < len(ranks) and ranks[i] == y:
                above += 1
                i += 1
            else:
                p *= 1.0 - t.q * t.keep(above, out)
            y -= 1
        highs.append(p)
    return tuple(highs)


@lru_cache(maxsize=65536)
def _trump_tricks(ranks: tuple[int, ...], t: Table) -> tuple[float, ...]:
    """Distribution of the tricks our trumps take (index = tricks) leading from the top.

    Top trumps in sequence from the ace are sure; each outstanding trump above our
    lowest costs a trick if an opponent holds it and can keep it back.
    """
    n = len(ranks)
    if not n:
        return (1.0,)
    out = t.per_suit - n
    top = 0
    for x in ranks:
        if x != ACE - top:
            break
        top += 1
    losses = [1.0]
    above = i = 0
    for y in range(ACE, ranks[-1], -1):
        if i < n and ranks[i] == y:
            above += 1
            i += 1
        else:
            losses = _add(losses, t.q * t.keep(above, out))
    dist = [0.0] * (n + 1)
    for lost, d in enumerate(losses):
        dist[max(top, n - lost)] += d
    return tuple(dist)


def trick_odds(hand: tuple[int, ...], trumps: int, t: Table, low_lead: bool = False,
               plain_lead: bool = False) -> list[float]:
    """P(the bidder takes at least k tricks), k = 0…len(hand), with `trumps` as trumps.

    The plan it scores is Peel's: lead trumps from the top to draw the opponents' trumps,
    then cash the side winners. Trump tricks are our trump count less the outstanding
    higher trumps that survive our leads; side cards win if no higher card is against
    them and nobody is left to ruff. `low_lead`: the first lead must be our lowest trump
    (Wellington / Bonaparte leads); `plain_lead`: it must be our lowest plain card.
    """
    mine = _by_suit(hand)
    tr = tuple(mine[trumps])
    out_t = t.per_suit - len(tr)
    extra = []  # independent extra winning chances (side cards, a forced first lead)
    if low_lead and tr:
        above = ACE - tr[-1] - (len(tr) - 1)  # outstanding trumps above our lowest
        extra.append((1.0 - t.q) ** above)
        tr = tr[:-1]
    first_plain = None
    if plain_lead:
        plain = [c for c in hand if SUIT[c] != trumps]
        if not plain:
            # A hand all of one suit must name another suit as trumps (floater Wellington).
            return [1.0] + [0.0] * len(hand)
        first_plain = min(plain, key=lambda c: RANK[c])
    # After our trumps are gone, an opponent who started with more trumps can ruff.
    drawn = t.short(len(mine[trumps]), out_t) ** t.opponents if out_t else 1.0
    for s in range(4):
        ranks = mine[s]
        if s == trumps or not ranks:
            continue
        out_s = t.per_suit - len(ranks)
        highs = _side_highs(tuple(ranks), t)
        for j, p in enumerate(highs):
            # A ruff needs an opponent who still has trumps and is out of this suit.
            void = t.short(j, out_s)
            if first_plain is not None and j == len(ranks) - 1 and s == SUIT[first_plain]:
                # Led before any trump is drawn: every opponent out of the suit with a
                # trump in hand can ruff it.
                ruff = void * (1.0 - t.short(0, out_t))
                extra.append(p * (1.0 - ruff) ** t.opponents)
            else:
                extra.append(p * (1.0 - (1.0 - drawn) * void))
    dist = list(_trump_tricks(tr, t))
    for p in extra:
        dist = _add(dist, p)
    at_least = [0.0] * (len(dist) + 1)
    acc = 0.0
    for k in range(len(dist) - 1, -1, -1):
        acc += dist[k]
        at_least[k] = acc
    return at_least[: len(hand) + 1]


def misere_odds(hand: tuple[int, ...], t: Table) -> float:
    """P(a misère bidder takes no trick with this hand).

    Peel's advice turned round: low cards and short suits. A card is dangerous when
    unseen cards of its suit lie under it (a defender can lead one and leave us on
    top); our own lower cards in the suit let us duck a round; unseen cards above it
    may be forced onto the trick; a void lets us throw a dangerous card away.
    """
    mine = _by_suit(hand)
    voids = sum(1 for ranks in mine if not ranks)
    escape = min(0.9, MISERE_ESCAPE_PER_VOID * voids)
    duck = 1.0 - t.q * MISERE_DUCK
    idle = 1.0 - t.q
    p = 1.0
    for ranks in mine:
        n = len(ranks)
        for j, x in enumerate(reversed(ranks)):  # lowest first
            below = x - t.low - j
            exposure = below - MISERE_SHIELD * j
            if exposure <= 0:
                continue
            safe = duck ** exposure
            above = ACE - x - (n - 1 - j)
            safe += (1.0 - safe) * (1.0 - idle ** (MISERE_OVERTAKE * above))
            safe += (1.0 - safe) * escape
            p *= safe
    return p


def weakest(hand: Iterable[int], trumps: int | None) -> int:
    """The card a hand misses least: the lowest plain card, else the lowest trump."""
    return min(hand, key=lambda c: (SUIT[c] == trumps, RANK[c], c))


def best_five(hand: Iterable[int], trumps: int) -> tuple[int, ...]:
    """The best five cards (or hand size) to keep with `trumps`: trumps first, then high cards."""
    return tuple(sorted(sorted(hand, key=lambda c: (SUIT[c] != trumps, -RANK[c], c))[:5]))


# --- bidding ------------------------------------------------------------------------------

def stakes(view: View, base: str) -> tuple[float, float]:
    """(what the bidder gains if the contract is made, what he loses if not), in chips."""
    rules = view.rules
    win, loss = contract_stakes(rules, base)
    payers = view.players - 1
    gain = win * payers
    if nap_or_above(rules, base):
        gain += view.kitty  # the pool goes to a made Nap or above
    cost = loss * view.players if rules.floater else loss * payers  # floater losses feed the kitty
    return float(gain), float(cost)


def possible_bids(view: View) -> tuple[str, ...]:
    """The bids this seat could make now (for decisions taken before its bid)."""
    return legal_bids(view.rules, view.bids)


def lead_rule(rules: Rules, base: str) -> str:
    """How the bidder of `base` must open: 'any', 'low' (lowest trump) or 'plain'."""
    if rules.floater:
        return {"bonaparte": "low", "wellington": "plain"}.get(base, "any")
    if base == "wellington" and rules.wellington_lead == "lowest_trump":
        return "low"
    return "any"


def make_chance(hand: tuple[int, ...], base: str, rules: Rules, t: Table, trumps: int | None = None) -> float:
    """P(the bidder makes contract `base` with `hand`, choosing the best trump suit."""
    if base in MISERE_BIDS:
        return misere_odds(hand, t)
    need = TRICKS_NEEDED[base]
    if need > len(hand):
        return 0.0
    how = lead_rule(rules, base)
    if trumps is None:
        p = best_odds(tuple(hand), t)[need]
        # A forced opening lead can only make things worse: skip the costlier estimate
        # when even a free lead leaves the contract hopeless.
        if how != "any" and p > 0.01:
            p = best_odds(tuple(hand), t, how)[need]
    else:
        p = trick_odds(hand, trumps, t, low_lead=how == "low", plain_lead=how == "plain")[need]
    return shift(p, TRICK_CALIBRATION)


@lru_cache(maxsize=8192)
def best_odds(hand: tuple[int, ...], t: Table, how: str = "any") -> tuple[float, ...]:
    """For each k, P(at least k tricks) with the trump suit best for k.

    Cached: a bot prices several contracts, and peeps before it bids, on the same hand.
    """
    best = [0.0] * (len(hand) + 1)
    for s in {SUIT[c] for c in hand}:
        odds = trick_odds(hand, s, t, low_lead=how == "low", plain_lead=how == "plain")
        for k, p in enumerate(odds):
            if p > best[k]:
                best[k] = p
    return tuple(best)


def shift(p: float, aggression: float) -> float:
    """A bidder's reading of the odds: optimists see better chances, pessimists worse.

    A shift of the log-odds, so certainties stay certain and long shots stay long.
    """
    if aggression == 0.0 or p <= 0.0 or p >= 1.0:
        return p
    f = exp(aggression)
    return p * f / (1.0 - p + p * f)


# --- what the play so far shows ----------------------------------------------------------

class Memory:
    """Cards we know are gone, cards still unseen, and suits each seat has shown out of.

    Built from the view alone (every bot here is stateless between decisions), so a bot
    that missed an event, or is asked out of order, still sees the truth.
    """

    __slots__ = ("unseen", "void")

    def __init__(self, view: View, t: Table):
        gone = set(view.hand)
        void = [0] * view.players
        for _, plays, _ in view.tricks:
            led = SUIT[plays[0][1]]
            for seat, c in plays:
                gone.add(c)
                if SUIT[c] != led:
                    void[seat] |= 1 << led
        if view.trick:
            led = SUIT[view.trick[0][1]]
            for seat, c in view.trick:
                gone.add(c)
                if SUIT[c] != led:
                    void[seat] |= 1 << led
        for c in view.seen:
            # Our own discards and a peeped card are out of play, unless the bidder may
            # have taken that card into his hand (floater taken "with", a peeped card).
            if c in gone:
                continue
            if view.bidder != view.seat and view.contract and (
                    view.contract.endswith("-with") or view.bidder in view.peeps):
                continue
            gone.add(c)
        self.unseen = [c for c in t.pack if c not in gone]
        self.void = void

    def higher(self, c: int) -> int:
        """Unseen cards of c's suit above c."""
        s, n = SUIT[c], 0
        for u in self.unseen:
            if SUIT[u] == s and u > c:
                n += 1
        return n

    def lower(self, c: int) -> int:
        s, n = SUIT[c], 0
        for u in self.unseen:
            if SUIT[u] == s and u < c:
                n += 1
        return n

    def has_suit(self, s: int | None) -> bool:
        if s is None:
            return False
        for u in self.unseen:  # noqa: SIM110 - a plain loop: any() over a generator costs more, at every card
            if SUIT[u] == s:
                return True
        return False

    def is_void(self, seat: int, s: int | None) -> bool:
        return s is not None and bool(self.void[seat] >> s & 1)


def beats(c: int, best: int, trumps: int | None) -> bool:
    """Does card c beat `best`, the card now winning the trick?"""
    if SUIT[c] == SUIT[best]:
        return c > best
    return SUIT[c] == trumps


def winner(trick: Sequence[tuple[int, int]], trumps: int | None) -> tuple[int, int]:
    """(seat, card) now winning a trick in progress."""
    seat, best = trick[0]
    for s, c in trick[1:]:
        if beats(c, best, trumps):
            seat, best = s, c
    return seat, best


def still_to_play(view: View) -> list[int]:
    """Seats that play to the current trick after us, in order."""
    active = view.active
    n = len(active)
    i = active.index(view.seat)
    return [active[(i + k) % n] for k in range(1, n - len(view.trick))]
