"""The luck in a hand that a fixed baseline takes out: the corrections of the standings'
luck-adjusted estimator, computed from a match's logged hands.

The estimator is AIVAT's (Burch, Schmid, Moravčík, Morrill and Bowling, "AIVAT: A New
Variance Reduction Technique for Agent Evaluation in Imperfect Information Games", AAAI
2018). Where the odds of what happens next are known, a fixed value of the state, V,
changes by V(after) − Σ p·V(each outcome); that change has expectation zero whatever the
players do, so a seat's chips less the sum of these changes over a hand estimate the same
expected chips, unbiased, with the luck of those events taken out.

Known odds here are the answers of `random` (each legal answer equally likely, from the
bot's own generator) and the stock a purchase buys from, where the pack was shuffled:
until the first card is bought, given everything that has happened in the hand, the
stock's order is any order of its cards, equally likely. So the first purchase's
correction is V(after the cards it bought) less the mean of V after the same discard
from the stock shuffled again (`DRAWS` such shuffles, drawn independently of the stock's
real order). V sees the whole state, the rest of the stock included, so that one
correction takes out the luck of every later purchase too; correcting each purchase
again would count it twice. The peep card is the same kind of chance: until a seat
first looks at it, it is any undealt card with equal odds, so the first look's correction
is V(after it) less the mean of V after the same look with each undealt card as the peep
card. A pack gathered and cut instead of shuffled (`shuffle = "after_nap"`) has no such
odds, and is not corrected. Nor is either at a table where a seat plays `random`: its
finishes are drawn, and their noise outweighed the stock's luck (measured: intervals 1.1
times as wide as without the correction). The floater and Sir Garnet's hand are not
corrected (yet): the same kind of chance, not measured.

The baseline V(state) is each seat's chips at the end of the hand, averaged over
`ROLLOUTS` finishes of the hand from that state (one where nothing in a finish is drawn:
no `random`, no Sir Garnet), in which every seat is
played by its own bot where naparena knows its policy (the built-in bots, their params
as the tournament gives them) and by `heuristic` where it does not (any other bot);
`random`'s answers in a finish are drawn from a generator seeded by where the state is in
the match. So V is a function of the state and of the bots' code alone: fixed before the
run, whatever the results.

The deal is chance too, but no correction is made there. A baseline that values a deal
the same whichever bot holds a seat adds up to the same for every bot over a board (each
bot holds each seat once) and cancels in every difference; in plain play the two such
baselines measured (docs/explanation/statistics.md) widened the intervals rather than
narrowing them, and a baseline that depends on the bots needs the deal's expectation,
which has no closed form (sampled, it is more hands played).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from operator import add
from typing import Any

from naparena.bots.bot import Bot
from naparena.bots.reference import BoldBot, CautiousBot, HeuristicBot, RandomBot
from naparena.game.engine import EXCHANGE, GARNET, PEEP, PLAY, Hand, Match
from naparena.game.rules import Rules
from naparena.table.play import feed, play_hands

#: Built-in bots whose answers a rollout can play as the bot would (pure functions of the
#: view, but for `random`'s draws and `heuristic`'s sampling of a Sir Garnet hand).
KNOWN: dict[str, type[Bot]] = {c.name: c for c in (RandomBot, HeuristicBot, CautiousBot, BoldBot)}
#: Of those, the bots whose answers are drawn with known odds: corrected at each decision.
DRAWN = frozenset({RandomBot.name})
#: Finishes of the hand averaged in each value: more take out more of the later draws'
#: noise, at a cost in proportion (benchmarks/luck_bench.py measures both).
ROLLOUTS = 4
#: A decision with more legal answers than this (an exchange, a Sir Garnet discard) is
#: averaged over this many answers drawn at random rather than over all: still unbiased.
EXACT = 8
#: Stocks shuffled again to value a purchase's draw against: each costs one value.
DRAWS = 8
#: Corrections are logged as integers, in millionths of a chip.
SCALE = 10**6

Policy = Callable[[Hand, random.Random], Any]


def policies(bots: Sequence[tuple[str, Mapping[str, Any]] | None]) -> list[Policy]:
    """Each seat's policy in a rollout: its own bot's where `bots[s]` names a known built-in
    (name, params), else `heuristic`'s (None: a bot naparena cannot play for)."""
    out: list[Policy] = []
    for s, bot in enumerate(bots):
        cls = KNOWN.get(bot[0]) if bot is not None else None
        if cls is RandomBot:
            out.append(_uniform)
            continue
        if cls is None:
            cls, params = HeuristicBot, {}
        else:
            params = dict(bot[1]) if bot is not None else {}
        out.append(_bot_policy(cls(random.Random(0), s, **cls.validate_params(params))))
    return out


def _uniform(hand: Hand, rng: random.Random) -> Any:
    return rng.choice(hand.legal())


def _bot_policy(bot: Bot) -> Policy:
    def answer(hand: Hand, rng: random.Random) -> Any:
        if hand.kind == GARNET:  # the one decision a heuristic bot samples for
            bot.rng = rng
        return getattr(bot, hand.kind)(hand.acting_view())  # type: ignore[arg-type]  # kind is set while not over
    return answer


class Baseline:
    """V of the states of one hand: each seat's chips at its end, averaged over `rollouts`
    finishes. A bot that answers deterministically answers a view the same every time, so
    its answers before the play are remembered within the hand: the finishes after each
    of random's answers share the rest of the bidding (a card played differs too often
    for remembering to pay)."""

    def __init__(self, play: Sequence[Policy], deterministic: Sequence[bool], rollouts: int = ROLLOUTS):
        self.play, self.deterministic, self.rollouts = list(play), list(deterministic), rollouts
        self.memo: dict[Any, Any] = {}

    def new_hand(self) -> None:
        self.memo.clear()

    def value(self, hand: Hand, key: str) -> list[float]:
        """V(hand) per seat; `key` names the state's place in the match (the rollouts' seed)."""
        rng = random.Random(key)
        total = [0] * hand.players
        for _ in range(self.rollouts):
            total = list(map(add, total, self._finish(hand.clone(), rng)))
        return [t / self.rollouts for t in total]

    def _finish(self, hand: Hand, rng: random.Random) -> list[int]:
        play, deterministic, memo = self.play, self.deterministic, self.memo
        while not hand.over:
            s = hand.to_act
            assert s is not None  # a hand not over has a seat to act
            if deterministic[s] and hand.kind not in _NOT_REMEMBERED:
                view = hand.acting_view()
                answer = memo.get(view)
                if answer is None:
                    answer = memo[view] = play[s](hand, rng)
            else:
                answer = play[s](hand, rng)
            hand.apply(answer)
        return hand.delta


# Cards played are not remembered (see `Baseline`); Sir Garnet's take-up is sampled.
_NOT_REMEMBERED = frozenset({PLAY, GARNET})


def match_luck(rules: Rules, seed: int, stack: int, boards: Sequence[int] | None,
               records: Sequence[dict[str, Any]], bots: Sequence[tuple[str, Mapping[str, Any]] | None],
               crashes: Sequence[Sequence[Any]] = (), rollouts: int = ROLLOUTS) -> list[list[int]] | None:
    """Each hand's correction per seat, in millionths of a chip (chips less correction /
    SCALE is the adjusted result): the match replayed from its logged answers, and at
    every answer of a seat whose bot draws with known odds, V after it less the mean of V
    after each legal answer; at a hand's first purchase from a shuffled stock, V after the
    cards bought less the mean of V after the stock shuffled again; at its first look at
    the peep card, V after it less the mean of V with each undealt card in its place. None when neither can
    happen (no seat's bot draws with known odds, no purchase: every correction would be
    0). `bots[s]`: the seat's (name, params) where it is a built-in bot naparena can play
    for, else None; `crashes`: the log's (a crashed seat's later answers are the
    table's, not its bot's, and are not corrected)."""
    drawn = [bot is not None and bot[0] in DRAWN for bot in bots]
    # Purchases and the peep card only where no seat draws: there every finish is the
    # same, and V after a purchase is the hand's own result under the baseline's bots. Beside random, the
    # finishes' own draws add more noise than the purchase's luck they take out
    # (measured: docs/explanation/statistics.md).
    purchases = rules.purchase != "none" and not any(drawn)
    peeps = rules.peep and not any(drawn)
    if not any(drawn) and not purchases and not peeps:
        return None
    players = len(bots)
    died = [min((c[0] for c in crashes if c[1] == s), default=len(records)) for s in range(players)]
    # Without random's answers (or Sir Garnet's sampled take-up) every finish of a state
    # is the same: one is its value.
    finishes = rollouts if any(drawn) or rules.sir_garnet else 1
    baseline = Baseline(policies(bots), [bot is not None and bot[0] in KNOWN and bot[0] not in DRAWN
                                         for bot in bots], finishes)
    out: list[list[int]] = []
    hands = iter(records)

    def play(hand: Hand) -> None:
        record = next(hands)
        baseline.new_hand()
        luck = [0.0] * players

        def watch(h: Hand, answer: Any, fault: str | None) -> None:
            s = h.to_act
            if s is None or fault is not None:
                return
            key = f"{seed}|{h.hand_no}|{h.decisions}"
            if drawn[s] and h.hand_no < died[s]:
                _correct(h, answer, baseline, key, luck)
            if purchases and h.kind == EXCHANGE and answer and h.gathered is None and not h.bought:
                _correct_draw(h, answer, baseline, key, luck)
            if peeps and h.kind == PEEP and answer and h.gathered is None and not h.peeps:
                _correct_peep(h, answer, baseline, key, luck)
        feed(hand, record, None, watch)
        out.append([round(x * SCALE) for x in luck])

    play_hands(Match(rules, players, seed, stack, boards), len(records), play, None)
    return out


def _correct(hand: Hand, answer: Any, baseline: Baseline, key: str, luck: list[float]) -> None:
    """Add V(after `answer`) − mean V(after each legal answer) to `luck`, per seat. Each
    V's rollouts are seeded by the state and the answer alone, so V is one function of
    the state after it, whichever answer was given."""
    legal = hand.legal()
    if len(legal) < 2:
        return
    if isinstance(answer, list):
        answer = tuple(answer)
    # Past EXACT answers, a sample drawn independently of the answer given: the mean stays unbiased.
    options = list(legal) if len(legal) <= EXACT else random.Random(f"{key}|options").choices(legal, k=EXACT)
    values: dict[Any, list[float]] = {}
    mean = [0.0] * hand.players
    for option in [*options, answer]:
        if option not in values:
            h = hand.clone()
            h.apply(option)
            values[option] = baseline.value(h, f"{key}|{option!r}")
    for option in options:
        mean = [m + x / len(options) for m, x in zip(mean, values[option])]
    chosen = values[answer]
    for s in range(hand.players):
        luck[s] += chosen[s] - mean[s]


def _correct_draw(hand: Hand, discard: Any, baseline: Baseline, key: str, luck: list[float]) -> None:
    """Add V(after the purchase of `discard`'s cards) − mean V(after the same purchase
    from the stock shuffled again), per seat. The shuffles are seeded by the state's
    place alone, not by the stock's order, so their mean is an unbiased estimate of the
    purchase's expected V whatever was bought."""
    discard = tuple(discard)
    if len(hand.stock) <= len(discard):  # the whole stock is bought: which cards is no luck
        return
    shuffles = random.Random(f"{key}|stock")
    others = []
    for _ in range(DRAWS):
        h = hand.clone()
        shuffles.shuffle(h.stock)
        others.append(h)
    _against_other_deals(hand, discard, others, baseline, f"{key}|draw", luck)


def _correct_peep(hand: Hand, answer: Any, baseline: Baseline, key: str, luck: list[float]) -> None:
    """Add V(after the first look at the peep card) − mean V(after the same look with each
    undealt card as the peep card), per seat. Until that look, given the hands, the peep
    card is any undealt card with equal odds; past `EXACT` of them, a sample drawn
    independently of the real one (still unbiased)."""
    assert hand.peep_card is not None  # a peep is asked only where a peep card was dealt
    pool = [hand.peep_card, *hand.stock]
    others = []
    for card in pool if len(pool) <= EXACT else random.Random(f"{key}|peep").sample(pool, EXACT):
        h = hand.clone()
        if card != hand.peep_card:  # swap it with the card dealt in its place
            h.stock[h.stock.index(card)], h.peep_card = hand.peep_card, card
        others.append(h)
    _against_other_deals(hand, answer, others, baseline, f"{key}|peep card", luck)


def _against_other_deals(hand: Hand, answer: Any, others: list[Hand], baseline: Baseline, rollouts: str,
                         luck: list[float]) -> None:
    """Add V(after `answer`) − mean V(after the same answer in each of `others`, the hand
    with the cards beyond the hands dealt otherwise), per seat. One seed for every value:
    whatever a finish draws is common to them all, so its noise cancels in the
    difference; for each seed the others are as likely as the real deal, so the
    correction's expectation is still zero."""
    after = hand.clone()
    after.apply(answer)
    chosen = baseline.value(after, rollouts)
    mean = [0.0] * hand.players
    for h in others:
        h.apply(answer)
        mean = [m + x / len(others) for m, x in zip(mean, baseline.value(h, rollouts))]
    for s in range(hand.players):
        luck[s] += chosen[s] - mean[s]
