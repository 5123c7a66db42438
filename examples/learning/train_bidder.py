"""Train a Nap bidder against naparena's `heuristic` bot, and save it as bidder.npz.

What is learned: the bid, at every table size of classic Nap (two to seven seats). At
each of its bids the agent values every bid name with a small network (one hidden layer
and a linear path) on features of its hand, of the bidding so far, of the table, and
the chance naparena's hand evaluation gives each contract; it bids the legal bid of the
highest value. What is not learned: card play, which the agent leaves to the
`heuristic` bot's player, so a win over `heuristic` is the bidding's.

How: every training deal is played out once for each legal bid against `heuristic`
bots, on the batched environment (`naparena.envs.vector.NapVectorEnv`, 64 tables a
step): the agent answers only its bid (`kinds=["bid"]`) and `heuristic` plays its cards
(`base="heuristic"`), so each episode is one step. `reset(seed=…)` deals the same cards
and seeds the same bots for every bid of a deal, and the network is fitted to how much
each bid won or lost compared with the others on that deal. Comparing bids on the same
cards removes most of the luck of the deal from the targets; a plain bandit (one bid a
deal) learned an order of magnitude slower. Passing is valued like any bid: a pass earns
what defending earns.

Why not a policy gradient on every decision (train.py): that learner could not beat
`heuristic` and learned never to bid, because a bid's worth shows only after five
tricks of card play it had not learned yet (train_player.py learns both, from a warm
start). Why numpy: the network is a few small matrices; numpy does a batch step as fast
as a framework would on one core, and it is already in the `envs` extra.

    nice -n 10 python examples/learning/train_bidder.py --curve examples/learning/bidder-curve.json
    python examples/learning/train_bidder.py --deals 300 --eval-hands 120 --out smoke.npz  # a smoke run
    naparena run examples/learning/bidder.toml     # learned-bidder against heuristic
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "bots"))

from _bidding import FEATURES, Network, features  # noqa: E402

from naparena.bots.reference import HeuristicBot  # noqa: E402
from naparena.envs.encoding import BID, BID_NAMES  # noqa: E402
from naparena.envs.vector import NapVectorEnv  # noqa: E402
from naparena.game.rules import Rules  # noqa: E402

SCALE = 10.0  # chips are divided by this for the regression (a classic hand moves ±5 to ±60)
BIDS = slice(BID, BID + len(BID_NAMES))
Deal = tuple[int, int, int]  # (seed, table size, the agent's seat)
Choose = Callable[[dict[str, np.ndarray], NapVectorEnv], np.ndarray]  # (observations, env) -> bid actions


class Adam:
    def __init__(self, params: list[np.ndarray], rate: float):
        self.rate, self.t = rate, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> None:
        self.t += 1
        for p, g, m, v in zip(params, grads, self.m, self.v):  # each array updated in place
            m[...] = 0.9 * m + 0.1 * g
            v[...] = 0.999 * v + 0.001 * g * g
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


class Tables:
    """A batched environment per table size: the agent bids, `heuristic` plays its cards
    and sits in every other seat; one deal a table, one step an episode."""

    def __init__(self, variant: str, sizes: list[int], tables: int):
        self.tables = tables
        self.envs = {p: NapVectorEnv(tables, variant, p, opponents=["heuristic"], kinds=["bid"], base="heuristic",
                                     autoreset_mode="Disabled") for p in sizes}
        self.rules: Rules = next(iter(self.envs.values())).rules
        self.hands = 0

    def play(self, players: int, deals: list[Deal], choose: Choose) -> tuple[np.ndarray, np.ndarray]:
        """Deal each (seed, seat) at a table of its own (at most `tables` of them); the agent
        bids as `choose` says. Returns the observations at the bids and each agent's chips."""
        env, n = self.envs[players], len(deals)
        padded = deals + [deals[-1]] * (self.tables - n)  # a full batch: the extra tables' hands are dropped
        obs, info = env.reset(seed=[seed for seed, _, _ in padded], options={"seat": [s for _, _, s in padded]})
        _, rewards, terminated, _, _ = env.step(choose(obs, env))
        assert terminated.all(), "one bid an episode"
        self.hands += n
        return obs["observation"][:n], (rewards + info["reward"])[:n]


def every_bid(tables: Tables, players: int, deals: list[Deal]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each deal played once for each legal bid: (features, legal flags, chips / SCALE of
    each bid centred over the legal ones) for the deals where the agent had a choice."""
    asked: dict[int, np.ndarray] = {}

    def first_legal(obs: dict[str, np.ndarray], env: NapVectorEnv) -> np.ndarray:
        out = []
        for i, view in enumerate(env.views()):
            legal = np.array([BID_NAMES.index(b) for b in view.legal])
            asked.setdefault(i, legal)
            out.append(BID + int(legal[0]))
        return np.array(out)

    obs, chips = tables.play(players, deals, first_legal)  # the first legal bid, and each deal's features
    legal_of = [asked[i] for i in range(len(deals))]
    results = {(j, int(legal_of[j][0])): chips[j] for j in range(len(deals))}
    jobs = [(j, int(b)) for j in range(len(deals)) if len(legal_of[j]) > 1 for b in legal_of[j][1:]]
    for start in range(0, len(jobs), tables.tables):
        chunk = jobs[start:start + tables.tables]
        bids = np.array([BID + b for _, b in chunk] + [BID] * (tables.tables - len(chunk)))
        _, played = tables.play(players, [deals[j] for j, _ in chunk], lambda obs, env, bids=bids: bids)
        for (j, b), c in zip(chunk, played):
            results[(j, b)] = c
    out = []
    for j, legal in enumerate(legal_of):
        if len(legal) < 2:
            continue  # no choice to learn from
        flags, target = np.zeros(len(BID_NAMES)), np.zeros(len(BID_NAMES))
        flags[legal] = 1.0
        target[legal] = [results[(j, int(b))] / SCALE for b in legal]
        out.append((features(obs[j], tables.rules), flags, (target - target[legal].mean()) * flags))
    return out


def greedy(net: Network, rules: Rules) -> Choose:
    """The network's legal bid of the highest value at every table."""
    def choose(obs: dict[str, np.ndarray], env: NapVectorEnv) -> np.ndarray:
        values = net.forward(np.stack([features(row, rules) for row in obs["observation"]]))[1]
        legal = obs["action_mask"][:, BIDS].astype(bool)
        return BID + np.where(legal, values, -np.inf).argmax(axis=1)
    return choose


def heuristic_bids(obs: dict[str, np.ndarray], env: NapVectorEnv) -> np.ndarray:
    """`heuristic`'s own bid at every table (its bidding needs no random draw): the paired reference."""
    bidder = HeuristicBot(random.Random(0), 0)
    return np.array([BID + BID_NAMES.index(bidder.bid(view)) for view in env.views()])


def evaluate(tables: Tables, held_out: list[Deal], choose: Choose) -> np.ndarray:
    """The agent's chips on each held-out deal (every size, every seat in turn) bidding as `choose` says."""
    chips = np.zeros(len(held_out))
    for players in tables.envs:
        where = [i for i, d in enumerate(held_out) if d[1] == players]
        for start in range(0, len(where), tables.tables):
            chunk = where[start:start + tables.tables]
            chips[chunk] = tables.play(players, [held_out[i] for i in chunk], choose)[1]
    return chips


def deals(rng: random.Random, sizes: list[int], count: int, start: int = 0) -> list[Deal]:
    """`count` deals, the table sizes in turn and the agent's seat going round each table."""
    out = []
    for k in range(start, start + count):
        players = sizes[k % len(sizes)]
        out.append((rng.randrange(2 ** 62), players, k // len(sizes) % players))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=240_000, help="training deals (each played once a legal bid)")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--rate", type=float, default=0.002)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5, 6, 7], help="table sizes")
    parser.add_argument("--tables", type=int, default=64, help="tables stepped together")
    parser.add_argument("--eval-hands", type=int, default=6000)
    parser.add_argument("--eval-every", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=HERE / "bidder.npz")
    parser.add_argument("--curve", type=Path, default=None, help="write the learning curve here (JSON)")
    args = parser.parse_args()
    rng, np_rng = random.Random(args.seed), np.random.default_rng(args.seed)
    tables = Tables(args.variant, args.players, args.tables)
    net = Network.fresh(FEATURES, args.hidden, len(BID_NAMES), np_rng)
    adam = Adam(net.params(), args.rate)
    held_out = deals(rng, args.players, args.eval_hands)  # the same deals at every point
    start, cpu = time.time(), time.process_time()
    reference = evaluate(tables, held_out, heuristic_bids)
    print(f"heuristic's own bidding on the held-out deals: {100 * reference.mean():+.1f} chips per 100 hands",
          flush=True)
    curve: list[dict[str, float]] = []
    batch: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    loss, done, step = 0.0, 0, args.tables * len(args.players)  # deals a round: a batch at every size
    while done < args.deals:
        chunk = min(step, args.deals - done, args.eval_every - done % args.eval_every)  # up to the next point
        for players, group in _by_size(deals(rng, args.players, chunk, done)).items():
            for found in every_bid(tables, players, group):
                batch.append(found)
                if len(batch) == args.batch:
                    loss = fit(net, adam, *(np.array(column) for column in zip(*batch)))
                    batch = []
        done += chunk
        if done % args.eval_every == 0 or done == args.deals:
            curve.append(_point(tables, held_out, net, reference, done, cpu, start, loss))
    net.save(args.out)
    if args.curve is not None:
        args.curve.write_text(json.dumps(curve, indent=1) + "\n")
    print(f"saved {args.out.name} after {args.deals} deals ({tables.hands} hands) in {time.time() - start:.0f} s "
          f"({time.process_time() - cpu:.0f} s CPU)")


def _by_size(group: list[Deal]) -> dict[int, list[Deal]]:
    out: dict[int, list[Deal]] = {}
    for deal in group:
        out.setdefault(deal[1], []).append(deal)
    return out


def _point(tables: Tables, held_out: list[Deal], net: Network, reference: np.ndarray, done: int, cpu: float,
           start: float, loss: float) -> dict[str, float]:
    """A point of the learning curve: greedy bids minus heuristic's on the held-out deals, paired."""
    diff = evaluate(tables, held_out, greedy(net, tables.rules)) - reference
    half = 1.96 * diff.std(ddof=1) / len(diff) ** 0.5
    point = {"deals": done, "hands": tables.hands, "cpu_s": round(time.process_time() - cpu, 1),
             "wall_s": round(time.time() - start, 1), "minus_heuristic_per_100": round(100 * diff.mean(), 1),
             "ci95_half": round(100 * half, 1)}
    print(f"{done:7d} deals ({tables.hands} hands)  loss {loss:.3f}  greedy − heuristic "
          f"{100 * diff.mean():+6.1f} ± {100 * half:.1f} per 100  {point['cpu_s']:5.0f} s CPU", flush=True)
    return point


if __name__ == "__main__":
    main()
