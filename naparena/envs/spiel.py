"""Nap as an OpenSpiel Python game, `python_nap(variant=…,players=…)`: one hand, chance nodes
for the dealer and the deck, imperfect information, returns in chips.

The deal is drawn card by card at chance nodes (the dealer first, then the pack's order,
top first), so a uniform chance player deals exactly as likely as naparena's shuffle and
cut; `chance_actions(rules, players, seed)` gives the chance actions that deal what
`naparena run` deals for a match seed. Every rule is the engine's: a state wraps a `Hand`.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import numpy as np
import pyspiel

from naparena.bots.pimc import unseen_for_play
from naparena.envs.encoding import BID, BID_NAMES, NUM_ACTIONS, OBS_SIZE, Decision, action_name, encode
from naparena.envs.table import HIDDEN_DECISIONS, hidden_decisions
from naparena.game import cards
from naparena.game.engine import Hand, Match, base_bid, deal_order
from naparena.game.rules import VARIANTS, Rules, canonical, make_rules, stakes
from naparena.game.view import View

SHORT_NAME = "python_nap"
MAX_TRICKS = 7
HISTORY_SIZE = MAX_TRICKS * (7 + 7 * 52)  # per trick: the leader's place and each place's card

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Napoleon (naparena)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    # Fees, antes and a failed floater bid feed the kitty, so the chips need not sum to zero.
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=7,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"variant": "classic", "players": 4},
)



def _bounds(rules: Rules, players: int) -> tuple[float, float]:
    """Chips one seat can win or lose in one hand, kitty and fees included (generous)."""
    bases = {base_bid(b) for b in rules.bids} | ({"one"} if rules.all_pass == "eldest_one" else set())
    win = max(stakes(rules, b)[0] for b in bases)
    loss = max(stakes(rules, b)[1] for b in bases)
    fees = 1 + 1 + 5 + rules.dealer_ante  # ante, a peep, an exchange, the dealer's ante
    return -(max(win, loss) * players + fees), win * (players - 1) + players * fees


def max_decisions(rules: Rules, players: int) -> int:
    """The most decisions a hand asks: per seat holding cards an exchange, a peep, a
    floater peep, Sir Garnet's question and a bid (or his discard), and a card a trick;
    then the bidder's peep exchange, floater discard and trump call."""
    active = players - rules.sits_out(players)
    return active * (5 + rules.hand_size) + 3


def max_chance_nodes(rules: Rules, players: int) -> int:
    """Chance nodes of a hand: the dealer, then every card of the pack."""
    return 1 + rules.pack_size(players)


class NapGame(pyspiel.Game):
    def __init__(self, params: dict[str, Any] | None = None):
        params = {**_GAME_TYPE.parameter_specification, **(params or {})}
        variant, players = str(params["variant"]), int(params["players"])
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
        self.rules = canonical(make_rules(variant))
        self.rules.check_players(players)
        self.players = players
        self.pack = cards.pack(self.rules.pack_size(players))
        low, high = _bounds(self.rules, players)
        # OpenSpiel takes a Python game's max_chance_nodes_in_history from its
        # max_game_length (and the history and move-number bounds from both), so the
        # declared length covers the deal as well as the decisions: a whole pack of 52
        # outlasts a short table's decisions.
        self.max_decisions = max_decisions(self.rules, players)
        self.max_chance_nodes = max_chance_nodes(self.rules, players)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS, max_chance_outcomes=cards.DECK_SIZE, num_players=players,
            min_utility=float(low), max_utility=float(high), utility_sum=None,
            max_game_length=max(self.max_decisions, self.max_chance_nodes))
        super().__init__(_GAME_TYPE, info, {"variant": variant, "players": players})

    def new_initial_state(self) -> NapState:
        return NapState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> NapObserver:
        return NapObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class NapState(pyspiel.State):
    """One hand: chance deals the dealer and the pack, then the engine's `Hand` decides."""

    def __init__(self, game: NapGame):
        super().__init__(game)
        self.nap_game = game
        self.dealer: int | None = None
        self.deck: list[int] = []
        self.undealt: list[int] = []  # the pack's cards not yet dealt, in order
        self.hand: Hand | None = None
        self.answers: list[int] = []  # the players' actions, in order (for resampling)
        self._decision: Decision | None = None

    def current_player(self) -> int:
        if self.hand is None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.hand.over:
            return int(pyspiel.PlayerId.TERMINAL)
        assert self.hand.to_act is not None
        return self.hand.to_act

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.dealer is None:
            n = self.nap_game.players
            return [(s, 1.0 / n) for s in range(n)]
        p = 1.0 / len(self.undealt)
        return [(c, p) for c in self.undealt]

    def decision(self) -> Decision:
        if self._decision is None:
            h = self.hand
            assert h is not None and h.kind is not None and h.to_act is not None
            self._decision = Decision(h.kind, h.hands[h.to_act], h.legal())
        return self._decision

    def _legal_actions(self, player: int) -> list[int]:
        return self.decision().actions

    def _apply_action(self, action: int) -> None:
        if self.hand is None:
            self._deal(action)
            return
        answer = self.decision().answer(action)
        self._decision = None
        self.answers.append(action)
        self.hand.apply(answer)

    def _deal(self, action: int) -> None:
        game = self.nap_game
        if self.dealer is None:
            self.dealer = action
            self.undealt = sorted(game.pack)
            return
        self.deck.append(action)
        self.undealt.remove(action)
        if len(self.deck) == len(game.pack):
            n = game.players
            self.hand = Hand(game.rules, n, self.dealer, self.deck, (0,) * n, 0)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"dealer {action}" if self.dealer is None else f"deal {cards.NAMES[action]}"
        return action_name(action)

    def is_terminal(self) -> bool:
        return self.hand is not None and self.hand.over

    def returns(self) -> list[float]:
        if self.hand is None or not self.hand.over:
            return [0.0] * self.nap_game.players
        return [float(c) for c in self.hand.chips]

    def view(self, player: int) -> View | None:
        """What `player` may know now (None while the cards are being dealt)."""
        h = self.hand
        if h is None:
            return None
        return h.acting_view() if not h.over and h.to_act == player else h.view(player)

    def __str__(self) -> str:
        if self.hand is None:
            return f"dealer {self.dealer} deck {' '.join(cards.NAMES[c] for c in self.deck)}"
        h = self.hand
        hands = " | ".join(" ".join(cards.NAMES[c] for c in held) for held in h.hands)
        return (f"dealer {h.dealer} bids {list(h.bids)} contract {h.contract} trumps {h.trumps} "
                f"hands {hands} tricks {len(h.tricks)} result {h.result}")

    def __deepcopy__(self, memo: dict[int, Any]) -> NapState:
        clone = NapState(self.nap_game)
        clone.dealer, clone.deck, clone.answers = self.dealer, list(self.deck), list(self.answers)
        clone.undealt = list(self.undealt)
        clone.hand = _copy_hand(self.hand) if self.hand is not None else None
        clone._decision = self._decision  # legal answers depend only on what was copied
        return clone

    def resample_from_infostate(self, player: int, sampler: Any) -> NapState:
        """A state `player` cannot tell from this one: the other hands dealt afresh,
        consistently with every card and void this seat has seen, and the same actions
        replayed. `sampler()` gives the randomness (a float in [0, 1))."""
        rules = self.nap_game.rules
        if hidden_decisions(rules):
            raise NotImplementedError(f"resampling needs a variant without {', '.join(HIDDEN_DECISIONS)}")
        view = self.view(player)
        if view is None:
            return copy.deepcopy(self)
        return determinize(self.nap_game, view, self.answers, random.Random(int(sampler() * 2 ** 53)))


def determinize(game: NapGame, view: View, answers: list[int], rng: random.Random) -> NapState:
    """A state of `game` that `view.seat` cannot tell from the real one: the cards it cannot
    see dealt to fit every card and void it has seen, and `answers` (the hand's actions so
    far) replayed. A deal the replay refuses (a Wellington's opening lead must be the lowest
    of its suit, which the deal does not model) is drawn again."""
    for _ in range(_DEAL_TRIES):
        state = game.new_initial_state()
        for action in [view.dealer, *_deck_for(view, rng)]:
            state.apply_action(action)
        try:
            for action in answers:
                state.apply_action(action)
        except KeyError:
            continue
        return state
    raise RuntimeError(f"no deal of the unseen cards fits seat {view.seat}'s view in {_DEAL_TRIES} draws")


_DEAL_TRIES = 200


def history_of(view: View) -> list[int]:
    """The hand's actions so far as `view` shows them, for variants whose only decisions
    are bids and cards (outside HIDDEN_DECISIONS): the bids in order, then every card."""
    plays = [c for _, trick, _ in view.tricks for _, c in trick] + [c for _, c in view.trick]
    return [BID + BID_NAMES.index(b) for _, b in view.bids] + plays


def _copy_hand(h: Hand) -> Hand:
    """A copy sharing the hand's immutable parts (tuples, rules, tables) and copying its
    lists, whatever they are called: fast enough for search, and no copy of the engine."""
    clone = copy.copy(h)
    for name in Hand.__slots__:
        value = getattr(h, name, None)
        if isinstance(value, list):
            setattr(clone, name, [list(x) if isinstance(x, list) else x for x in value])
        elif isinstance(value, (dict, set)):
            setattr(clone, name, copy.copy(value))
    return clone


def _deck_for(view: View, rng: random.Random) -> list[int]:
    """A deck that deals `view.seat` its cards and the others a hand fitting the view."""
    rules, players = view.rules, view.players
    others = unseen_for_play(view).deal(rng)
    played: dict[int, list[int]] = {}
    for _, plays, _ in view.tricks:
        for seat, c in plays:
            played.setdefault(seat, []).append(c)
    for seat, c in view.trick:
        played.setdefault(seat, []).append(c)
    held = {**others, view.seat: view.hand}
    _, positions = deal_order(rules, players, view.dealer)
    deck: list[int | None] = [None] * rules.pack_size(players)
    for seat, places in enumerate(positions):
        dealt = [*held.get(seat, ()), *played.get(seat, ())]
        rng.shuffle(dealt)
        for place, c in zip(places, dealt):
            deck[place] = c
    rest = sorted(set(cards.pack(len(deck))) - {c for c in deck if c is not None})
    rng.shuffle(rest)
    return [c if c is not None else rest.pop() for c in deck]


class NapObserver:
    """OpenSpiel's observer: the seat's view as `encoding.encode` gives it; with perfect
    recall, also every trick in order (the leader's place and each place's card)."""

    def __init__(self, iig_obs_type: Any, params: Any):
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError("Nap's observer shows one seat's view: public and private information together")
        self.perfect_recall = iig_obs_type.perfect_recall
        size = OBS_SIZE + (HISTORY_SIZE if self.perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"view": self.tensor[:OBS_SIZE]}
        if self.perfect_recall:
            self.dict["tricks"] = self.tensor[OBS_SIZE:].reshape(MAX_TRICKS, 7 + 7 * 52)

    def set_from(self, state: NapState, player: int) -> None:
        view = state.view(player)
        if view is None:
            self.tensor.fill(0)
            return
        encode(view, self.dict["view"])
        if self.perfect_recall:
            n, rows = view.players, self.dict["tricks"]
            rows.fill(0)
            for t, (leader, plays, _) in enumerate(view.tricks):
                rows[t, (leader - player) % n] = 1
                for seat, c in plays:
                    rows[t, 7 + (seat - player) % n * 52 + c] = 1

    def string_from(self, state: NapState, player: int) -> str:
        view = state.view(player)
        if view is None:
            return f"seat {player} dealing"
        names = cards.NAMES
        parts = [f"seat {player} dealer {view.dealer}", "hand " + " ".join(names[c] for c in view.hand)]
        if view.seen:
            parts.append("seen " + " ".join(names[c] for c in view.seen))
        parts.append("bids " + " ".join(f"{s}:{b}" for s, b in view.bids))
        parts += [f"peeps {list(view.peeps)}", f"exchanges {list(view.exchanges)}",
                  f"garnet {view.garnet_taker}", f"contract {view.bidder}:{view.contract} trumps {view.trumps}"]
        if self.perfect_recall:
            parts += [" ".join(f"{s}:{names[c]}" for s, c in plays) for _, plays, _ in view.tricks]
        else:
            parts.append("won " + " ".join(map(str, view.won)))
        parts.append("trick " + " ".join(f"{s}:{names[c]}" for s, c in view.trick))
        if view.kind is not None:
            parts.append(f"to {view.kind}")
        return " / ".join(parts)


def chance_actions(rules: Rules, players: int, seed: int, boards: tuple[int, ...] | None = None) -> list[int]:
    """The chance actions that deal the first hand `naparena run` deals for match `seed`
    (and `boards`, a duplicate run's): the dealer, then the pack as shuffled and cut, top first."""
    match = Match(rules, players, seed, boards=boards)
    hand = match.next_hand()
    return [hand.dealer, *match.deck]


def ismcts_bot(game: NapGame, seed: int, simulations: int = 200, uct_c: float = 2.0) -> Any:
    """OpenSpiel's ISMCTS on this game, with random rollouts, its determinizations drawn
    from its own seeded generator (OpenSpiel's default sampler repeats one seed)."""
    from open_spiel.python.algorithms import ismcts, mcts

    rng = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c, simulations, random_state=rng)
    draws = random.Random(seed)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, draws.random))
    return bot


pyspiel.register_game(_GAME_TYPE, NapGame)
