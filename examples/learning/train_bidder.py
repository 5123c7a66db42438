"""Train a Nap bidder against naparena's `heuristic` bot, and save it as bidder.npz.

What is learned: the bid. At each of its bids the agent values every bid name with a
small network (one hidden layer and a linear path) on features of its hand, of the
bidding so far, and the chance naparena's hand evaluation gives each contract; it bids
the legal bid of the highest value. What is not learned: card play, which the agent
leaves to the `heuristic` bot's player, so a win over `heuristic` is the bidding's.

How: every training deal is played out once for each legal bid, in `NapSeatEnv`
against three `heuristic` bots (`reset(seed=…)` deals the same cards and seeds the same
bots each time), and the network is fitted to how much each bid won or lost compared
with the others on that deal. Comparing bids on the same cards removes most of the
luck of the deal from the targets; a plain bandit (one bid a deal) learned an order of
magnitude slower. Passing is valued like any bid: a pass earns what defending earns.

Why not a policy gradient on every decision (train.py): that learner could not beat
`heuristic` and learned never to bid, because a bid's worth shows only after five
tricks of card play it had not learned yet. Why numpy: the network is a few small
matrices; numpy does a batch step as fast as a framework would on one core, and it is
already in the `envs` extra.

    nice -n 10 python examples/learning/train_bidder.py --curve examples/learning/bidder-curve.json
    python examples/learning/train_bidder.py --deals 300 --eval-hands 100 --out smoke.npz  # a smoke run
    naparena run examples/learning/bidder.toml     # learned-bidder against heuristic
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "bots"))

from _bidding import FEATURES, Network, features  # noqa: E402

from naparena.bots.reference import HeuristicBot  # noqa: E402
from naparena.envs.encoding import BID, BID_NAMES, action_of  # noqa: E402
from naparena.envs.single import NapSeatEnv  # noqa: E402

SCALE = 10.0  # chips are divided by this for the regression (a classic hand moves ±5 to ±60)


class Adam:
    def __init__(self, params: list[np.ndarray], rate: float):
        self.rate, self.t = rate, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> None:
        self.t += 1
        # In place ([...]): the arrays are the network's and the optimiser's own.
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m[...] *= 0.9
            m[...] += 0.1 * g
            v[...] *= 0.999
            v[...] += 0.001 * g * g
            p[...] -= self.rate * (m / (1 - 0.9 ** self.t)) / (np.sqrt(v / (1 - 0.999 ** self.t)) + 1e-8)


def fit(net: Network, adam: Adam, x: np.ndarray, legal: np.ndarray, target: np.ndarray) -> float:
    """One gradient step: each deal's bid values, centred over its legal bids, against how
    much each bid won more or less than the average legal bid on that deal (`target`,
    centred the same way; zero where a bid was not legal)."""
    hidden, values = net.forward(x)
    n = legal.sum(1, keepdims=True)
    centred = (values - (values * legal).sum(1, keepdims=True) / n) * legal
    err = centred - target
    d_out = 2 * err / len(x)  # the centring's own term sums to zero over the legal bids
    d_hidden = (d_out @ net.w2.T) * (hidden > 0)
    grads = [x.T @ d_hidden, d_hidden.sum(0), hidden.T @ d_out, x.T @ d_out, d_out.sum(0)]
    adam.step(net.params(), grads)
    return float((err ** 2).sum() / legal.sum())


_ENVS: dict[tuple[str, int, int], NapSeatEnv] = {}


def _env(variant: str, players: int, seat: int) -> NapSeatEnv:
    key = (variant, players, seat)
    if key not in _ENVS:
        _ENVS[key] = NapSeatEnv(variant, players, seat=seat, opponents=["heuristic"])
    return _ENVS[key]


def play_hand(env: NapSeatEnv, seed: int, bid: int | None = None, net: Network | None = None
              ) -> tuple[float, np.ndarray | None, np.ndarray | None]:
    """One hand dealt from `seed`. The agent's bid: `bid` (an index into BID_NAMES) if
    given, else the greedy choice of `net`, else `heuristic`'s own. Its cards are played
    by the heuristic player. Returns its chips, and at its bid the features and the
    legal bids (None if it was never asked to choose)."""
    obs, info = env.reset(seed=seed)
    player = HeuristicBot(random.Random(seed), env.seat)
    chips, done, x, legal = float(info.get("reward", 0.0)), False, None, None
    while not done:
        view = info["view"]
        action = None
        if view.kind == "bid" and x is None and len(view.legal) > 1:
            legal = np.flatnonzero(obs["action_mask"][BID:BID + len(BID_NAMES)])
            x = features(obs["observation"], env.rules)
            if bid is not None:
                action = BID + bid
            elif net is not None:
                action = BID + int(legal[np.argmax(net.forward(x[None])[1][0][legal])])
        if action is None:
            action = action_of(view.kind, view.hand, getattr(player, view.kind)(view))
        obs, reward, done, _, info = env.step(action)
        chips += reward
    return chips, x, legal


def every_bid(env: NapSeatEnv, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The deal played once for each legal bid: (features, legal flags, chips / SCALE of
    each bid centred over the legal ones), or None when the agent had no choice."""
    _, x, legal = play_hand(env, seed)  # heuristic's bid, to find the bid's features and legal bids
    if x is None or legal is None:
        return None
    chips = np.zeros(len(BID_NAMES))
    for b in legal:
        chips[b] = play_hand(env, seed, bid=int(b))[0] / SCALE
    flags = np.zeros(len(BID_NAMES))
    flags[legal] = 1.0
    return x, flags, (chips - chips[legal].mean()) * flags


def evaluate(net: Network | None, seeds: list[int], variant: str, players: int) -> np.ndarray:
    """The chips of each hand on fixed deals, every seat in turn: the greedy bidder's
    (`net=None`: heuristic's own bidding, the paired reference)."""
    return np.array([play_hand(_env(variant, players, i % players), seed, net=net)[0]
                     for i, seed in enumerate(seeds)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=120_000, help="training deals (each played once a legal bid)")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--rate", type=float, default=0.002)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--eval-hands", type=int, default=4000)
    parser.add_argument("--eval-every", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=HERE / "bidder.npz")
    parser.add_argument("--curve", type=Path, default=None, help="write the learning curve here (JSON)")
    args = parser.parse_args()
    rng, np_rng = random.Random(args.seed), np.random.default_rng(args.seed)
    net = Network.fresh(FEATURES, args.hidden, len(BID_NAMES), np_rng)
    adam = Adam(net.params(), args.rate)
    held_out = [rng.randrange(2 ** 62) for _ in range(args.eval_hands)]  # the same deals at every point
    start, cpu = time.time(), time.process_time()
    reference = evaluate(None, held_out, args.variant, args.players)
    print(f"heuristic's own bidding on the held-out deals: {100 * reference.mean():+.1f} chips per 100 hands",
          flush=True)
    curve: list[dict[str, float]] = []
    batch: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    loss, hands = 0.0, 0
    for deal in range(1, args.deals + 1):
        found = every_bid(_env(args.variant, args.players, deal % args.players), rng.randrange(2 ** 62))
        if found is not None:
            batch.append(found)
            hands += 1 + int(found[1].sum())
        if len(batch) == args.batch:
            loss = fit(net, adam, *(np.array(column) for column in zip(*batch)))
            batch = []
        if deal % args.eval_every == 0 or deal == args.deals:
            diff = evaluate(net, held_out, args.variant, args.players) - reference
            half = 1.96 * diff.std(ddof=1) / len(diff) ** 0.5
            curve.append({"deals": deal, "hands": hands, "cpu_s": round(time.process_time() - cpu, 1),
                          "minus_heuristic_per_100": round(100 * diff.mean(), 1), "ci95_half": round(100 * half, 1)})
            print(f"{deal:7d} deals ({hands} hands)  loss {loss:.3f}  greedy − heuristic "
                  f"{100 * diff.mean():+6.1f} ± {100 * half:.1f} per 100  {time.process_time() - cpu:5.0f} s CPU",
                  flush=True)
    net.save(args.out)
    if args.curve is not None:
        args.curve.write_text(json.dumps(curve, indent=1) + "\n")
    print(f"saved {args.out.name} after {args.deals} deals in {time.time() - start:.0f} s "
          f"({time.process_time() - cpu:.0f} s CPU)")


if __name__ == "__main__":
    main()
