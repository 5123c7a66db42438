"""The engine's `Match`, driven one decision at a time from outside: what every face of
`naparena.envs` steps. It adds no rule: deals, legal answers and settlements are the engine's."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from naparena.envs.encoding import NUM_ACTIONS, Decision, encode, lean
from naparena.game.engine import Hand, Match
from naparena.game.rules import Rules
from naparena.game.view import View
from naparena.table import rules_of

__all__ = ["HIDDEN_DECISIONS", "Table", "fresh_seed", "hidden_decisions", "rules_of"]


# Rule options under which another seat's private decisions (an exchange, a discard, a
# peep card taken) change what it holds: a determinization would have to guess them, so
# resampling (ISMCTS) and the OpenSpiel bots cover only the variants without them.
HIDDEN_DECISIONS = ("peep", "purchase", "sir_garnet", "floater")


def hidden_decisions(rules: Rules) -> list[str]:
    """The options of `rules` among HIDDEN_DECISIONS that are on."""
    return [o for o in HIDDEN_DECISIONS if getattr(rules, o) not in (False, "none")]


def fresh_seed() -> int:
    """A seed for `reset()` without one: from the system's entropy, never the global RNG."""
    return random.SystemRandom().randrange(2 ** 63)


class Table:
    """A match of `hands` hands dealt from `seed` exactly as `naparena run` deals it
    (`boards`: the duplicate deal seeds of each hand, as a duplicate run gives them).
    `answered(hand)`: called after every answer, before a finished hand is settled (the
    bots' table tells their events and the hand's end there)."""

    def __init__(self, rules: Rules, players: int, hands: int, seed: int, stack: int = 0,
                 boards: tuple[int, ...] | None = None, answered: Callable[[Hand], None] | None = None):
        if hands < 1:
            raise ValueError("a match has at least one hand")
        self.match = Match(rules, players, seed, stack, boards)
        self.hands_left = hands - 1
        self.hand: Hand = self.match.next_hand()
        self.records: list[dict[str, Any]] = []
        self.over = False
        self._decision: Decision | None = None
        self._view: View | None = None
        self.answered = answered

    @property
    def to_act(self) -> int:
        seat = self.hand.to_act
        assert seat is not None, "the match is over"
        return seat

    def view(self, seat: int) -> View:
        return self.hand.view(seat)

    def acting_view(self) -> View:
        """The acting seat's view (cached until the next answer)."""
        if self._view is None:
            self._view = self.hand.acting_view()
        return self._view

    def observation(self, seat: int) -> np.ndarray:
        """`seat`'s view as the encoding's vector (a fresh array)."""
        return encode(self.acting_view() if not self.over and self.hand.to_act == seat else self.hand.view(seat))

    def lean_observation(self, seat: int) -> np.ndarray:
        """`seat`'s lean observation (encoding.lean): its vector and its mask in one fresh array."""
        if self.over or self.hand.to_act != seat:
            return lean(self.hand.view(seat), ())
        return lean(self.acting_view(), self.decision().actions)

    def mask(self, seat: int) -> np.ndarray:
        """`seat`'s legal actions as flags (a fresh array): none outside its turn."""
        if self.over or self.hand.to_act != seat:
            return np.zeros(NUM_ACTIONS, np.int8)
        return self.decision().mask()

    def decision(self) -> Decision:
        """The acting seat's legal answers as actions (cached until the next answer)."""
        if self._decision is None:
            h = self.hand
            assert h.kind is not None and h.to_act is not None, "the match is over"
            self._decision = Decision(h.kind, h.hands[h.to_act], h.legal())
        return self._decision

    def act(self, action: int) -> list[int] | None:
        """Answer the acting seat's decision with `action`; an action outside the mask is the
        engine's fault (its documented default; in card play a revoke). Returns each seat's
        chips when a hand settles (and the kitty's share at the end under `kitty_at_end =
        "split"`), else None."""
        decision = self._decision or self.decision()
        self._decision = self._view = None
        answer = decision.get(action, _ILLEGAL)
        hand = self.hand
        if answer is _ILLEGAL:
            hand.fault(f"illegal action {int(action)}")
        else:
            hand.apply_legal(answer)  # the action map holds legal answers only
        if self.answered is not None:
            self.answered(hand)
        return self._settle() if hand.over else None

    def answer(self, answer: Any) -> list[int] | None:
        """Answer with the engine's own answer (a bot's), checked by the engine as in a run."""
        self._decision = self._view = None
        self.hand.apply(answer)
        return self._after()

    def fault(self, reason: str) -> list[int] | None:
        """The acting seat gave no answer (its bot raised): the engine's default, as in a run."""
        self._decision = self._view = None
        self.hand.fault(reason)
        return self._after()

    def settle(self) -> list[int] | None:
        """After answers given to the hand directly (the bots', by their table): the chips of
        a finished hand, settled, as `act` returns them; None while it goes on."""
        self._decision = self._view = None
        return self._settle() if self.hand.over else None

    def _after(self) -> list[int] | None:
        if self.answered is not None:
            self.answered(self.hand)
        return self._settle() if self.hand.over else None

    def _settle(self) -> list[int]:
        hand, match = self.hand, self.match
        match.finish(hand)
        self.records.append(hand.record())
        chips = list(hand.chips)
        if self.hands_left:
            self.hands_left -= 1
            self.hand = match.next_hand()
        else:
            before = list(match.chips)
            after = match.close()
            chips = [c + a - b for c, a, b in zip(chips, after, before)]
            self.over = True
        return chips


_ILLEGAL = object()
