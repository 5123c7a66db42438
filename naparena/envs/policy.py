"""Trained policies as naparena bots: a callable on the observation vector and the action
mask, or an OpenSpiel bot, becomes a `Bot` subclass to register from a drop-in file or an
entry point, and then plays tournaments, `check` and `compare` like any other bot."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from naparena.bots.bot import DECISIONS, Bot
from naparena.envs.encoding import Decision, encode
from naparena.envs.table import hidden_decisions
from naparena.game.rules import VARIANTS, Rules, make_rules
from naparena.game.view import View

#: obs (float32, OBS_SIZE), mask (int8, NUM_ACTIONS) -> the chosen action
Policy = Callable[[np.ndarray, np.ndarray], int]


class PolicyBot(Bot):
    """A bot that answers every decision kind with its `policy`'s action. An action outside
    the mask goes to the engine as it is, so the engine faults it as any illegal answer."""

    policy: Policy

    def _decide(self, view: View) -> Any:
        decision = Decision.of(view)
        action = int(self.policy(encode(view), decision.mask()))
        return decision.get(action, f"illegal action {action}")

    bid = play = peep = floater_peep = exchange = garnet = garnet_discard = _decide
    peep_exchange = floater_discard = trumps = _decide


def policy_bot(name: str, policy: Policy, description: str = "", kinds: Sequence[str] | None = None,
               base: type[Bot] = Bot) -> type[Bot]:
    """A registrable bot class named `name` that plays `policy`: at every decision kind,
    or only at `kinds` (say, `("bid",)`), the others answered as the bot class `base`
    answers them (its parameters too: a learned bidder can leave the card play to a
    hand-written player)."""
    chosen = DECISIONS if kinds is None else tuple(kinds)
    unknown = set(chosen) - set(DECISIONS)
    if unknown:
        raise ValueError(f"unknown decision kinds {sorted(unknown)}; known: {', '.join(DECISIONS)}")
    others: dict[str, Any] = {k: getattr(base, k) for k in DECISIONS if k not in chosen}
    namespace: dict[str, Any] = {
        "name": name, "description": description or f"the trained policy {name}",
        "policy": staticmethod(policy), "__module__": _caller_module(), **others}
    return type(_class_name(name), (PolicyBot, base) if base is not Bot else (PolicyBot,), namespace)


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace(".", "-").replace("_", "-").split("-")) + "Bot"


def _caller_module() -> str:
    """The module that asked for the class, so it pickles where that module's classes do."""
    module: str = sys._getframe(2).f_globals.get("__name__", __name__)
    return module


def linear_policy(weights: np.ndarray, bias: np.ndarray) -> Policy:
    """The greedy policy of a linear scorer: the legal action with the highest score."""
    def choose(obs: np.ndarray, mask: np.ndarray) -> int:
        scores = weights @ obs + bias
        return int(np.flatnonzero(mask)[np.argmax(scores[mask.astype(bool)])])
    return choose


def load_linear_policy(path: str) -> Policy:
    """A linear policy saved by `np.savez(path, weights=…, bias=…)`."""
    with np.load(path) as saved:
        return linear_policy(saved["weights"], saved["bias"])


# --- OpenSpiel bots ----------------------------------------------------------------------

SpielBotMaker = Callable[[Any, int], Any]  # (pyspiel game, seed) -> pyspiel.Bot


class SpielBot(Bot):
    """A bot that asks an OpenSpiel bot: at each decision it builds a `python_nap` state
    that this seat cannot tell from the real one (the others' cards dealt to fit the view,
    the hand's bids and cards replayed) and plays the OpenSpiel bot's action there. The
    OpenSpiel game is one hand, so the bot values a hand alone (a carried kitty unseen)."""

    make_bot: SpielBotMaker

    def _decide(self, view: View) -> Any:
        from naparena.envs import spiel

        game = _game_for(view.rules, view.players)
        state = spiel.determinize(game, view, spiel.history_of(view), random.Random(self.rng.random()))
        bot = self.make_bot(game, self.rng.randrange(2 ** 31))
        action = int(bot.step(state))
        return Decision.of(view).get(action, f"illegal action {action}")

    bid = play = _decide

    @classmethod
    def not_played(cls, rules: Rules) -> str | None:
        """The variants it cannot determinize: custom ones (no `python_nap` game) and those
        with hidden exchanges, peeps or discards."""
        return _unplayable(rules)


def _unplayable(rules: Rules) -> str | None:
    """Why an OpenSpiel bot cannot play `rules`, or None."""
    if not any(make_rules(n) == rules for n in VARIANTS):
        return "an OpenSpiel bot plays only the named variants (a custom variant has no python_nap game)"
    hidden = hidden_decisions(rules)
    if hidden:
        return (f"an OpenSpiel bot plays the named variants without hidden exchanges: this one has "
                f"{', '.join(hidden)}")
    return None


_GAMES: dict[tuple[Rules, int], Any] = {}


def _game_for(rules: Rules, players: int) -> Any:
    """The `python_nap` game of the named variant these rules are (a custom one has none)."""
    key = (rules, players)
    if key not in _GAMES:
        import pyspiel

        from naparena.envs import spiel  # registers python_nap
        if (why := _unplayable(rules)) is not None:
            raise ValueError(why)
        named = next(n for n in VARIANTS if make_rules(n) == rules)
        _GAMES[key] = pyspiel.load_game(spiel.SHORT_NAME, {"variant": named, "players": players})
    return _GAMES[key]


def spiel_bot(name: str, make_bot: SpielBotMaker, description: str = "") -> type[Bot]:
    """A registrable bot class named `name` that asks `make_bot(game, seed)` at each bid and
    card (other decisions keep the `Bot` defaults: the variants it plays have none)."""
    return type(_class_name(name), (SpielBot,), {
        "name": name, "description": description or f"the OpenSpiel bot {name}",
        "make_bot": staticmethod(make_bot), "__module__": _caller_module()})

