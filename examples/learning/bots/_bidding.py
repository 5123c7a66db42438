"""The learned bidder's model: features of the observation vector at a bid, and a small
network valuing each bid name. Shared by train_bidder.py and the `learned-bidder`
drop-in (a helper: drop-in files starting with "_" are not bots)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from naparena.bots import strategy
from naparena.envs.encoding import BID, BID_NAMES, BLOCKS
from naparena.game.rules import Rules

_HAND, _BIDS, _CONTRACT, _PLAYERS, _BIDDER = (BLOCKS[b][0] for b in ("hand", "bids", "contract", "players", "bidder"))
_SEATS = BLOCKS["players"][1]
LENGTHS = 8  # a suit's length, one-hot 0…7 (seven-card hands)

# Per suit (strongest first): its 13 ranks and its length; then aces, kings, queens;
# then the bidding so far: the high bid, how many have bid before us, the table size,
# and where the high bidder sits; then, for each bid name, the chance of making it
# that naparena's hand evaluation (naparena.bots.strategy) gives this hand.
FEATURES = 4 * (13 + LENGTHS) + 3 + len(BID_NAMES) + _SEATS + _SEATS + _SEATS + len(BID_NAMES)


def features(obs: np.ndarray, rules: Rules) -> np.ndarray:
    """The bid's features from the seat's observation vector (naparena.envs.encoding) in a
    game of `rules`. Suits are ordered by length, then by their highest cards: which suit
    is which does not matter in a bid, since the bidder's first lead names trumps."""
    hand = obs[_HAND:_HAND + 52].reshape(4, 13)
    lengths = hand.sum(1)
    order = sorted(range(4), key=lambda s: (lengths[s], tuple(hand[s, ::-1])), reverse=True)
    out = np.zeros(FEATURES, np.float32)
    at = 0
    for s in order:
        out[at:at + 13] = hand[s]
        out[at + 13 + min(int(lengths[s]), LENGTHS - 1)] = 1.0
        at += 13 + LENGTHS
    out[at:at + 3] = hand[:, 12].sum() / 4, hand[:, 11].sum() / 4, hand[:, 10].sum() / 4
    at += 3
    out[at:at + len(BID_NAMES)] = obs[_CONTRACT:_CONTRACT + len(BID_NAMES)]
    at += len(BID_NAMES)
    before = int(obs[_BIDS:_BIDS + _SEATS * len(BID_NAMES)].sum())
    out[at + min(before, _SEATS - 1)] = 1.0
    at += _SEATS
    out[at:at + _SEATS] = obs[_PLAYERS:_PLAYERS + _SEATS]
    at += _SEATS
    out[at:at + _SEATS] = obs[_BIDDER:_BIDDER + _SEATS]
    at += _SEATS
    held = tuple(int(c) for c in np.flatnonzero(obs[_HAND:_HAND + 52]))
    t = strategy.table(rules, int(np.argmax(obs[_PLAYERS:_PLAYERS + _SEATS])) + 1)
    for bid in rules.bids:
        out[at + BID_NAMES.index(bid)] = strategy.make_chance(held, bid.split("-", 1)[0], rules, t)
    return out


class Network:
    """features -> one hidden layer (ReLU), plus a linear path from the features, -> a
    value in chips / 10 for each bid name."""

    PARAMS = ("w1", "b1", "w2", "w3", "b2")

    def __init__(self, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, w3: np.ndarray, b2: np.ndarray):
        self.w1, self.b1, self.w2, self.w3, self.b2 = w1, b1, w2, w3, b2

    @classmethod
    def fresh(cls, inputs: int, hidden: int, outputs: int, rng: np.random.Generator) -> Network:
        return cls(rng.normal(0, (2 / inputs) ** 0.5, (inputs, hidden)), np.zeros(hidden),
                   rng.normal(0, (1 / hidden) ** 0.5, (hidden, outputs)) * 0.1, np.zeros((inputs, outputs)),
                   np.zeros(outputs))

    @classmethod
    def load(cls, path: str | Path) -> Network:
        with np.load(path) as saved:
            return cls(*(saved[k] for k in cls.PARAMS))

    def params(self) -> list[np.ndarray]:
        return [getattr(self, k) for k in self.PARAMS]

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, **{k: getattr(self, k).astype(np.float32) for k in self.PARAMS})

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hidden = np.maximum(x @ self.w1 + self.b1, 0.0)
        return hidden, hidden @ self.w2 + x @ self.w3 + self.b2

    def policy(self, rules: Rules):
        """The greedy bidder in games of `rules`, as naparena.envs's policy signature wants
        it: (observation, mask) -> the legal bid of the highest value, as an action."""
        def choose(obs: np.ndarray, mask: np.ndarray) -> int:
            legal = np.flatnonzero(mask[BID:BID + len(BID_NAMES)])
            values = self.forward(features(obs, rules)[None])[1][0]
            return BID + int(legal[np.argmax(values[legal])])
        return choose
