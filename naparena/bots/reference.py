"""naparena's own bots: `random`, and the hand-evaluating `heuristic` with its two
temperaments `cautious` and `bold`. Registered through the same hook as any plug-in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from naparena.bots import strategy
from naparena.bots.bot import Bot
from naparena.bots.strategy import ACE, Memory, Table, beats, still_to_play, table_for, winner
from naparena.game.cards import RANK, SUIT
from naparena.game.rules import MISERE_BIDS, TRICKS_NEEDED
from naparena.game.view import View

ENOUGH = 1e-9  # an expected value must beat passing by more than rounding noise


def _base(bid: str) -> str:
    return bid.split("-", 1)[0]


class RandomBot(Bot):
    """Every decision uniformly at random among the legal answers, from the bot's own rng."""

    name = "random"
    description = "Answers every decision uniformly at random among the legal answers."

    def _any(self, view: View) -> Any:
        return self.rng.choice(view.legal)

    bid = play = peep = floater_peep = exchange = garnet = garnet_discard = _any
    peep_exchange = floater_discard = trumps = _any


class HeuristicBot(Bot):
    """Bids what its cards are worth and plays like a careful club player (after Peel).

    Bidding: for each possible trump suit the hand's tricks are estimated (strategy.py):
    top trumps in sequence from the ace are sure, lower trumps lose only to outstanding
    higher trumps an opponent can keep back, side aces win unless ruffed. The chance that
    an unseen card is against us rather than in the stock comes from the pack size and
    the number of hands dealt, so the same cards bid higher at three players than at six.
    Each legal contract is then priced with the variant's payout table (win × payers
    against loss × payers, plus the pool for Nap and above) and the best positive one is
    bid. This is Peel's reason Four is seldom called: where Nap pays double, a hand
    nearly sure of four with a fair chance of five is worth more as a Nap; the table
    decides hand by hand. Misère is priced from the unseen cards under each of ours.
    `aggression` tilts how the odds are read: below 0 bids only near-sure contracts,
    above 0 is Peel's "bold, enterprising person" who calls Nap on a three-trick hand.

    Play as bidder: lead the chosen trump suit first (it sets trumps), draw trumps with
    the top trumps, then cash the cards that are now top of their suit. Play as
    defender: the defenders play together against the bidder. Never overtake a fellow
    defender who is winning once the bidder has played; otherwise beat the bidder's card
    as cheaply as possible; discard low. Cards played so far are remembered (from the
    view) to know which cards are now top and who is out of a suit. Misère: the bidder
    ducks under the winning card with his highest safe card; defenders lead low to force
    him to win.
    """

    name = "heuristic"
    description = "Bids from estimated tricks and the payout table; plays trumps first, defends as a team."
    params = {"aggression": 0.0}
    limits = {"aggression": (-10, 10)}
    aggression: float  # set from params by Bot.__init__

    # --- bidding --------------------------------------------------------------------

    def _chance(self, view: View, bid: str) -> float:
        """P(making `bid`) as this bot reads it, including what a floater or peep card adds."""
        t = table_for(view)
        base = _base(bid)
        hand = view.hand
        extra = _extra_card(view)
        if extra is not None and (bid.endswith("-with") or view.rules.peep):
            # A bidder who peeped may swap the peep card in, and one bidding "with" takes
            # the floater: score the best hand he can then hold.
            p = max(strategy.make_chance(h, base, view.rules, t) for h in _with_extra(hand, extra, base))
        else:
            p = strategy.make_chance(hand, base, view.rules, t)
            if bid.endswith("-with"):
                p = min(1.0, p + 0.03)  # an unseen floater can only help: it may be discarded
        return strategy.shift(p, self.aggression)

    def _value(self, view: View, bid: str) -> float:
        """Expected chips from bidding `bid` (passing is worth 0)."""
        if bid == "pass":
            return 0.0
        p = self._chance(view, bid)
        gain, cost = strategy.stakes(view, _base(bid))
        return p * gain - (1.0 - p) * cost

    def _best_bid(self, view: View, bids: Iterable[str]) -> tuple[str, float]:
        best, value = "pass", 0.0
        for b in bids:
            if b == "pass":
                continue
            v = self._value(view, b)
            # Strictly better only: on a tie the lower bid (earlier in the ladder) stays.
            if v > value + ENOUGH:
                best, value = b, v
        return best, value

    def bid(self, view: View[str]) -> str:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        choice, _ = self._best_bid(view, legal)
        return choice if choice in legal else "pass"

    def _worth_a_look(self, view: View) -> bool:
        """Peep (1 chip) only when one card could turn a pass or a low bid into a higher one."""
        bids = strategy.possible_bids(view)
        choice, _ = self._best_bid(view, bids)
        higher = bids[bids.index(choice) + 1:] if choice in bids else ()
        for b in higher:
            if _base(b) in MISERE_BIDS:
                continue
            gain, _ = strategy.stakes(view, _base(b))
            if gain < 6:  # the fee must be small beside what the look could win
                continue
            p = self._chance(view, b)
            if 0.2 <= p < 0.5:
                return True
        return False

    def peep(self, view: View[bool]) -> bool:
        return self._worth_a_look(view) and True in view.legal

    def floater_peep(self, view: View[bool]) -> bool:
        return self._worth_a_look(view) and True in view.legal

    # --- cards in, cards out ----------------------------------------------------------

    def exchange(self, view: View[tuple[int, ...]]) -> tuple[int, ...]:
        """Purchase / écarté: keep the trump suit and top cards, buy for the rest."""
        legal = view.legal
        limit = len(legal[-1]) if legal else 0  # legal lists the discards smallest first
        if limit == 0:
            return ()
        t = table_for(view)
        hand = view.hand
        # Already a likely Nap: buying can only spoil it.
        if strategy.make_chance(hand, "nap", view.rules, t) >= 0.6:
            return ()
        suit = _best_suit(hand, t)
        # Keep the trump suit and side aces; buy for everything else. Even at écarté's
        # chip a card this paid better, in duplicate play, than keeping kings or buying
        # fewer cards: the pool goes to a made Nap, and Naps come from long trump suits.
        spare = sorted((c for c in hand if SUIT[c] != suit and RANK[c] < ACE),
                       key=lambda c: (RANK[c], c))
        out = tuple(sorted(spare[:limit]))
        return out if out in legal else ()

    def garnet(self, view: View[bool]) -> bool:
        """Take up Sir Garnet only when five more cards would very likely make a Nap.

        The hand is unseen until taken, so draw a few possible Sir Garnet hands from the
        cards we cannot see and score the best five of ten for each.
        """
        t = table_for(view)
        hand = view.hand
        unseen = [c for c in t.pack if c not in hand]
        if len(unseen) < 5:
            return False
        samples = 8
        # The chance of Nap that makes taking it up worth the obligation, as this bot
        # reads chances (a bold bot takes it on less).
        bar = strategy.shift(0.8, -self.aggression)
        total = 0.0
        for k in range(samples):
            ten = hand + tuple(self.rng.sample(unseen, 5))
            suit = _longest_strongest(ten)
            total += strategy.make_chance(strategy.best_five(ten, suit), "nap", view.rules, t, suit)
            # Stop once even perfect remaining draws could not reach the bar.
            if total + (samples - k - 1) < bar * samples:
                return False
        p = strategy.shift(total / samples, self.aggression)
        gain, cost = strategy.stakes(view, "nap")
        return p * gain - (1 - p) * cost > 0 and True in view.legal

    def garnet_discard(self, view: View[tuple[int, ...]]) -> tuple[int, ...]:
        t = table_for(view)
        hand = view.hand
        keeps = [strategy.best_five(hand, s) for s in {SUIT[c] for c in hand}]
        keep = max(keeps, key=lambda k: (strategy.make_chance(k, "nap", view.rules, t), k))
        out = tuple(sorted(c for c in hand if c not in keep))
        return out if out in view.legal else view.legal[0]

    def peep_exchange(self, view: View[int | None]) -> int | None:
        extra = _extra_card(view)
        if extra is None or view.contract is None:
            return None
        t = table_for(view)
        base = _base(view.contract)
        # Swap only when the peep card makes the contract likelier (a misère wants it low).
        best, best_p = None, strategy.make_chance(view.hand, base, view.rules, t)
        for give in view.hand:
            hand = tuple(sorted([c for c in view.hand if c != give] + [extra]))
            p = strategy.make_chance(hand, base, view.rules, t)
            if p > best_p + ENOUGH:
                best, best_p = give, p
        return best if best in view.legal else None

    def floater_discard(self, view: View[int]) -> int:
        t = table_for(view)
        base = _base(view.contract or "nap")
        hand = view.hand
        best, best_p = None, -1.0
        for s in {SUIT[c] for c in hand}:
            give = strategy.weakest(hand, s)
            rest = tuple(c for c in hand if c != give)
            p = strategy.make_chance(rest, base, view.rules, t)
            if p > best_p:
                best, best_p = give, p
        return best if best in view.legal else min(view.legal, key=lambda c: (RANK[c], c))

    def trumps(self, view: View[int]) -> int:
        """Floater Wellington names trumps: the suit that scores best with a low plain lead."""
        t = table_for(view)
        need = TRICKS_NEEDED.get(_base(view.contract or "wellington"), 5)

        def score(s: int) -> tuple[float, int, int]:
            odds = strategy.trick_odds(view.hand, s, t, plain_lead=True)
            return (odds[need], sum(1 for c in view.hand if SUIT[c] == s), s)

        return max(view.legal, key=score)

    # --- play -----------------------------------------------------------------------

    def play(self, view: View[int]) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        if view.contract and _base(view.contract) in MISERE_BIDS:
            if view.seat == view.bidder:
                return self._misere_bidder(view)
            return self._misere_defender(view)
        if view.seat == view.bidder:
            return self._bidder(view)
        return self._defender(view)

    def _bidder(self, view: View[int]) -> int:
        legal = view.legal
        t = table_for(view)
        trumps = view.trumps
        if not view.trick:
            if not view.tricks:
                return self._opening_lead(view, t)
            mem = Memory(view, t)
            mine = [c for c in legal if SUIT[c] == trumps]
            if mine and mem.has_suit(trumps) and not _all_void(view, mem, trumps):
                # Draw trumps from the top so the side winners cannot be ruffed later.
                return max(mine)
            top = [c for c in legal if mem.higher(c) == 0]
            if top:
                return max(top, key=lambda c: (SUIT[c] == trumps, RANK[c], c))
            # Nothing sure: lead the card fewest unseen cards can beat.
            return max(legal, key=lambda c: (-mem.higher(c), RANK[c], c))
        mem = Memory(view, t)
        _, best = winner(view.trick, trumps)
        wins = [c for c in legal if beats(c, best, trumps)]
        if not wins:
            return strategy.weakest(legal, trumps)
        later = still_to_play(view)
        if not later:
            return min(wins, key=lambda c: (SUIT[c] == trumps, c))
        safe = [c for c in wins if _safe(c, mem, later, view, trumps)]
        if safe:
            return min(safe, key=lambda c: (SUIT[c] == trumps, c))
        return max(wins, key=lambda c: (SUIT[c] == trumps, c))

    def _opening_lead(self, view: View[int], t: Table) -> int:
        """The first lead names trumps: lead the suit the bid was made on, from the top."""
        legal = view.legal
        if view.trumps is not None:  # trumps already named (floater Wellington)
            return max(legal, key=lambda c: (RANK[c], c))
        assert view.contract is not None, "the opening lead comes after a bid"
        base = _base(view.contract)
        need = TRICKS_NEEDED.get(base, 1)
        how = strategy.lead_rule(view.rules, base)
        best, best_key = legal[0], None
        for c in legal:
            s = SUIT[c]
            odds = strategy.trick_odds(view.hand, s, t, low_lead=how == "low")
            key = (odds[need], odds[min(need + 1, len(odds) - 1)], RANK[c], c)
            if best_key is None or key > best_key:
                best, best_key = c, key
        # Among cards of the chosen suit lead the highest the rules allow.
        s = SUIT[best]
        return max((c for c in legal if SUIT[c] == s), key=lambda c: c)

    def _defender(self, view: View[int]) -> int:
        legal = view.legal
        t = table_for(view)
        trumps = view.trumps
        mem = Memory(view, t)
        bidder = view.bidder
        if not view.trick:
            return self._defender_lead(view, mem, trumps)
        seat, best = winner(view.trick, trumps)
        wins = [c for c in legal if beats(c, best, trumps)]
        # Only the bidder's card can hurt the defence; a partner going over us is fine.
        later = [bidder] if bidder in still_to_play(view) else []
        if seat != bidder:
            # A fellow defender is winning. Once the bidder has played, overtaking only
            # wastes a card the side may need later (Peel: co-operate, do not overtake).
            if not later or _safe(best, mem, later, view, trumps):
                return _discard(legal, trumps)
            # The bidder is still to come and may beat our partner: take over with a card
            # he cannot beat, or at least one fewer unseen cards can beat.
            sure = [c for c in wins if _safe(c, mem, later, view, trumps)]
            if sure:
                return min(sure, key=lambda c: (SUIT[c] == trumps, c))
            if wins:
                top = max(wins, key=lambda c: (SUIT[c] == trumps, c))
                if SUIT[top] == SUIT[best] and mem.higher(top) < mem.higher(best):
                    return top
            return _discard(legal, trumps)
        # The bidder is winning: beat him as cheaply as will hold.
        if not wins:
            return _discard(legal, trumps)
        safe = [c for c in wins if _safe(c, mem, later, view, trumps)]
        if safe:
            return min(safe, key=lambda c: (SUIT[c] == trumps, c))
        return max(wins, key=lambda c: (SUIT[c] == trumps, c))

    def _defender_lead(self, view: View[int], mem: Memory, trumps: int | None) -> int:
        legal = view.legal
        bidder = view.bidder
        assert bidder is not None, "play comes after a bid"
        bidder_ruffs = not mem.is_void(bidder, trumps) and mem.has_suit(trumps)

        def ruffed(c: int) -> bool:
            return SUIT[c] != trumps and mem.is_void(bidder, SUIT[c]) and bidder_ruffs

        # Cash a card that is now top of its suit, unless the bidder is known to ruff it.
        top = [c for c in legal if mem.higher(c) == 0 and SUIT[c] != trumps and not ruffed(c)]
        if top:
            return max(top, key=lambda c: (RANK[c], c))
        # Otherwise lead low in a plain suit the bidder still follows, so a partner's high
        # card can win; trumps only when nothing else is left.
        plain = [c for c in legal if SUIT[c] != trumps]
        if plain:
            return min(plain, key=lambda c: (ruffed(c), RANK[c], c))
        return min(legal)

    # --- misère ----------------------------------------------------------------------

    def _misere_bidder(self, view: View[int]) -> int:
        legal = view.legal
        t = table_for(view)
        mem = Memory(view, t)
        trumps = view.trumps
        if not view.trick:
            # Lead the card the fewest unseen cards can duck under; one nobody can follow
            # above would win the trick outright.
            return min(legal, key=lambda c: (mem.higher(c) == 0, mem.lower(c), RANK[c], c))
        _, best = winner(view.trick, trumps)
        under = [c for c in legal if not beats(c, best, trumps)]
        if under:
            # Safe now: shed the most dangerous card that still loses.
            return max(under, key=lambda c: (SUIT[c] != trumps, RANK[c], c))
        if not still_to_play(view):
            return max(legal, key=lambda c: (RANK[c], c))
        # Every card wins for now: play the lowest, hoping someone after us goes over.
        return min(legal, key=lambda c: (RANK[c], c))

    def _misere_defender(self, view: View[int]) -> int:
        legal = view.legal
        t = table_for(view)
        mem = Memory(view, t)
        trumps = view.trumps
        bidder = view.bidder
        assert bidder is not None, "play comes after a bid"
        if not view.trick:
            # Lead low in a suit the bidder still holds: he must follow and may have to win.
            return min(legal, key=lambda c: (mem.is_void(bidder, SUIT[c]), RANK[c], c))
        seat, best = winner(view.trick, trumps)
        played = any(s == bidder for s, _ in view.trick)
        if played:
            if seat == bidder:
                # Keep the bidder winning: go under him, shedding our highest such card.
                under = [c for c in legal if not beats(c, best, trumps)]
                if under:
                    return max(under, key=lambda c: (RANK[c], c))
            # The trick is lost for him anyway: shed a high card, keep low ones to lead.
            return max(legal, key=lambda c: (RANK[c], c))
        # The bidder plays after us: keep the card to beat as low as possible.
        led = view.led
        follow = [c for c in legal if SUIT[c] == led]
        if follow:
            under = [c for c in follow if not beats(c, best, trumps)]
            return max(under) if under else min(follow)
        return max(legal, key=lambda c: (RANK[c], c))


class CautiousBot(HeuristicBot):
    """The heuristic bot reading every chance pessimistically: only near-sure contracts."""

    name = "cautious"
    description = "Heuristic play; bids only contracts it is nearly sure to make."
    params = {"aggression": -1.5}


class BoldBot(HeuristicBot):
    """The heuristic bot as Peel's bold player: calls Nap where another would call three."""

    name = "bold"
    description = "Heuristic play; overbids, calling Nap on cards another would call three."
    params = {"aggression": 1.8}


# --- helpers ---------------------------------------------------------------------------

def _extra_card(view: View) -> int | None:
    """The peep card or floater this seat has seen and may still take into its hand."""
    if not (view.rules.peep or view.rules.floater):
        return None  # what else is in `seen` (own discards) is out of play for good
    for c in view.seen:
        if c not in view.hand:
            return c
    return None


def _with_extra(hand: tuple[int, ...], extra: int, base: str) -> Iterator[tuple[int, ...]]:
    """The hands a bidder could hold after taking `extra` and dropping one card."""
    yield hand
    six = tuple(sorted(hand + (extra,)))
    if base in MISERE_BIDS:
        give = max(six, key=lambda c: (RANK[c], c))
        yield tuple(c for c in six if c != give)
        return
    for s in {SUIT[c] for c in six}:
        give = strategy.weakest(six, s)
        yield tuple(c for c in six if c != give)


def _longest_strongest(hand: Iterable[int]) -> int:
    """The suit with most cards (five at most count), then the highest ranks."""
    count = [0, 0, 0, 0]
    weight = [0, 0, 0, 0]
    for c in hand:
        count[SUIT[c]] += 1
        weight[SUIT[c]] += RANK[c]
    return max(range(4), key=lambda s: (min(count[s], 5), weight[s]))


def _best_suit(hand: tuple[int, ...], t: Table) -> int:
    return max({SUIT[c] for c in hand},
               key=lambda s: (strategy.trick_odds(hand, s, t)[min(3, len(hand))], s))


def _discard(legal: Iterable[int], trumps: int | None) -> int:
    """Play low: the lowest plain card, keeping trumps and high cards for later tricks."""
    return strategy.weakest(legal, trumps)


def _all_void(view: View, mem: Memory, s: int | None) -> bool:
    """Have all the bidder's opponents shown out of suit s?"""
    return all(mem.is_void(p, s) for p in view.active if p != view.seat)


def _safe(c: int, mem: Memory, later: Sequence[int], view: View, trumps: int | None) -> bool:
    """Can nobody still to play beat card c? (Unseen higher cards of its suit, or a trump
    from a player known to be out of the suit, could.)"""
    if not later:
        return True
    if mem.higher(c) and not all(mem.is_void(p, SUIT[c]) for p in later):
        return False
    return not (trumps is not None and SUIT[c] != trumps and mem.has_suit(trumps)
                and any(mem.is_void(p, SUIT[c]) and not mem.is_void(p, trumps) for p in later))
