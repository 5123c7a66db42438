"""Train a whole Nap player (bidding and card play) against naparena's `heuristic` bot on
the batched environment, and save it as player.npz.

What is learned: every decision of one seat, from the observation vector and the mask
alone, by a small network in numpy (two hidden layers of 256 ReLU units; a policy head
over the 363 actions, masked to the legal ones, and a value head). The other three
seats are `heuristic` bots, in classic Nap at a table of four; each of the 64 tables
the batched environment (`naparena.envs.vector.NapVectorEnv`) steps at once seats the
learner in another seat, so one network plays every seat.

How, in two phases:
1. Imitation: the learner plays `heuristic`'s own answers (its bot needs no random
   draw in classic) and the network is fitted to them (cross-entropy), its value head
   to the chips each hand ended with. A policy gradient from scratch against
   `heuristic` learns to pass and to lose less slowly (train_bidder.py's docstring).
2. Improvement: proximal policy optimisation (PPO: clipped probability ratios,
   advantages by GAE, an entropy bonus) from the imitated policy, on its own play.

The learning curve's points are the greedy policy's chips minus `heuristic`'s own on the
same held-out deals (the same seat, the same bots and seeds: paired), with a 95%
interval. It need not beat `heuristic` yet: the curve is the point.

    nice -n 10 python examples/learning/train_player.py --curve examples/learning/player-curve.json
    python examples/learning/train_player.py --imitate 4 --improve 4 --eval-hands 64 --out smoke.npz  # a smoke run
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

from _player import Network  # noqa: E402

from naparena.bots.reference import HeuristicBot  # noqa: E402
from naparena.envs.encoding import action_of  # noqa: E402
from naparena.envs.vector import NapVectorEnv  # noqa: E402

SCALE = 10.0  # chips are divided by this (a classic hand moves ±5 to ±60)


class Adam:
    def __init__(self, params: dict[str, np.ndarray], rate: float):
        self.rate, self.t = rate, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray], clip: float = 1.0) -> None:
        self.t += 1
        norm = np.sqrt(sum(float((g ** 2).sum()) for g in grads.values()))
        shrink = min(1.0, clip / (norm + 1e-8))  # the gradient's norm clipped, as PPO usually is
        for k, grad in grads.items():
            g = grad * shrink
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            m_hat, v_hat = self.m[k] / (1 - 0.9 ** self.t), self.v[k] / (1 - 0.999 ** self.t)
            params[k] -= (self.rate * m_hat / (np.sqrt(v_hat) + 1e-8)).astype(params[k].dtype)


def heuristic_actions(env: NapVectorEnv, bot: HeuristicBot) -> np.ndarray:
    """`heuristic`'s own answer at every table (0 where the learner has nothing to answer)."""
    out = []
    for view in env.views():
        out.append(action_of(view.kind, view.hand, getattr(bot, view.kind)(view)) if view.kind is not None else 0)
    return np.array(out)


class Rollout:
    """The learner's steps at every table for `steps` steps: what PPO and imitation learn from."""

    def __init__(self, env: NapVectorEnv):
        self.env = env
        self.obs, _ = env.reset(seed=random.Random(7).randrange(2 ** 31))
        self.fresh = np.zeros(env.num_envs, bool)  # the last step ended the table's hand: this one deals again

    def collect(self, steps: int, act) -> dict[str, np.ndarray]:
        keys = ("x", "mask", "action", "reward", "done", "valid", "expert")
        out: dict[str, list[np.ndarray]] = {k: [] for k in keys}
        for _ in range(steps):
            obs = self.obs
            actions, expert = act(obs)
            self.obs, rewards, terminated, _, _ = self.env.step(actions)
            out["x"].append(obs["observation"])
            out["mask"].append(obs["action_mask"].astype(bool))
            out["action"].append(actions)
            out["reward"].append(rewards / SCALE)
            out["done"].append(terminated)
            out["valid"].append(~self.fresh)  # an autoreset's step answered nothing
            out["expert"].append(expert)
            self.fresh = terminated
        batch = {k: np.array(v) for k, v in out.items()}
        # Where a hand goes on past the last step, its value there is the return's tail.
        batch["last_x"], batch["last_mask"] = self.obs["observation"], self.obs["action_mask"].astype(bool)
        return batch


def returns_and_advantages(batch: dict[str, np.ndarray], values: np.ndarray, last: np.ndarray, lam: float
                           ) -> tuple[np.ndarray, np.ndarray]:
    """GAE (no discount: a hand is short) over each table's steps; a hand ends at `done`
    (its value after is 0), one still going at the end is worth `last` there. The steps
    an autoreset spent are skipped: the next valid step follows the done one."""
    steps, n = batch["reward"].shape
    gamma = 1.0
    adv, ret = np.zeros((steps, n)), np.zeros((steps, n))
    next_value, next_adv = last.astype(np.float64), np.zeros(n)
    for t in range(steps - 1, -1, -1):
        valid, done = batch["valid"][t], batch["done"][t]
        nv = np.where(done, 0.0, next_value)
        na = np.where(done, 0.0, next_adv)
        delta = batch["reward"][t] + gamma * nv - values[t]
        a = delta + gamma * lam * na
        adv[t] = np.where(valid, a, 0.0)
        ret[t] = adv[t] + values[t]
        next_value = np.where(valid, values[t], next_value)
        next_adv = np.where(valid, a, next_adv)
    return ret, adv


def ppo_update(net: Network, adam: Adam, batch: dict[str, np.ndarray], args: argparse.Namespace,
               rng: np.random.Generator) -> float:
    flat = _flat(batch)
    _, logp_all, values = net.forward(flat["x"], flat["mask"])
    values = values.reshape(batch["reward"].shape)
    ret, adv = returns_and_advantages(batch, values, net.forward(batch["last_x"], batch["last_mask"])[2], args.lam)
    keep = flat["valid"]
    x, mask, action = flat["x"][keep], flat["mask"][keep], flat["action"][keep]
    old = logp_all[np.flatnonzero(keep), action]
    ret, adv = ret.reshape(-1)[keep], adv.reshape(-1)[keep]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    loss = 0.0
    for _ in range(args.epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x), args.minibatch):
            i = order[start:start + args.minibatch]
            cache, logp, value = net.forward(x[i], mask[i])
            rows = np.arange(len(i))
            ratio = np.exp(logp[rows, action[i]] - old[i])
            clipped = ((adv[i] > 0) & (ratio > 1 + args.clip)) | ((adv[i] < 0) & (ratio < 1 - args.clip))
            prob = np.exp(logp) * mask[i]
            d_logp_a = np.where(clipped, 0.0, -adv[i] * ratio) / len(i)
            d_logits = -prob * d_logp_a[:, None]
            d_logits[rows, action[i]] += d_logp_a
            safe = np.where(mask[i], logp, 0.0)
            entropy = -(prob * safe).sum(1)
            d_logits += args.entropy * prob * (safe + entropy[:, None]) / len(i)
            d_value = args.value * 2 * (value - ret[i]) / len(i)
            adam.step(net.p, net.backward(cache, d_logits.astype(np.float32), d_value.astype(np.float32)))
            loss = float(-np.minimum(ratio * adv[i], np.clip(ratio, 1 - args.clip, 1 + args.clip) * adv[i]).mean())
    return loss


def imitation_update(net: Network, adam: Adam, batch: dict[str, np.ndarray], args: argparse.Namespace,
                     rng: np.random.Generator) -> float:
    """Cross-entropy to heuristic's answers; the value head to the hands' outcomes."""
    flat = _flat(batch)
    values = np.zeros(batch["reward"].shape)  # with lam 1: Monte Carlo, the hand's chips from here
    ret, _ = returns_and_advantages(batch, values, net.forward(batch["last_x"], batch["last_mask"])[2], 1.0)
    keep = flat["valid"]
    x, mask, expert, ret = flat["x"][keep], flat["mask"][keep], flat["expert"][keep], ret.reshape(-1)[keep]
    loss = 0.0
    for _ in range(args.epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x), args.minibatch):
            i = order[start:start + args.minibatch]
            cache, logp, value = net.forward(x[i], mask[i])
            rows = np.arange(len(i))
            d_logits = np.exp(logp) * mask[i]
            d_logits[rows, expert[i]] -= 1.0
            d_logits /= len(i)
            d_value = args.value * 2 * (value - ret[i]) / len(i)
            adam.step(net.p, net.backward(cache, d_logits.astype(np.float32), d_value.astype(np.float32)))
            loss = float(-logp[rows, expert[i]].mean())
    return loss


def _flat(batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The (steps, tables, ...) arrays as (steps * tables, ...) rows."""
    return {k: v.reshape(-1, *v.shape[2:]) for k, v in batch.items() if k not in ("done", "last_x", "last_mask")}


def evaluate(env: NapVectorEnv, seeds: list[int], act) -> np.ndarray:
    """The learner's chips on each held-out deal (one hand a table, the learner in seat
    index % 4), playing as `act` says. A table whose hand is over is dealt again by the
    next step (autoreset) and plays on until the others are done: those hands are not counted."""
    chips = np.zeros(len(seeds))
    n = env.num_envs
    for start in range(0, len(seeds), n):
        chunk = seeds[start:start + n]
        padded = chunk + [chunk[-1]] * (n - len(chunk))
        obs, info = env.reset(seed=padded, options={"seat": [(start + i) % 4 for i in range(n)]})
        total, live = info["reward"].copy(), np.ones(n, bool)
        while live.any():
            obs, rewards, terminated, _, _ = env.step(act(obs))
            total += np.where(live, rewards, 0.0)
            live &= ~terminated
        chips[start:start + len(chunk)] = total[:len(chunk)]
    return chips


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--imitate", type=int, default=60, help="imitation updates")
    parser.add_argument("--improve", type=int, default=240, help="PPO updates")
    parser.add_argument("--steps", type=int, default=32, help="steps a table an update (64 tables)")
    parser.add_argument("--tables", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--rate", type=float, default=1e-3, help="Adam's step size while imitating")
    parser.add_argument("--ppo-rate", type=float, default=2e-4, help="Adam's step size in PPO")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--minibatch", type=int, default=512)
    parser.add_argument("--clip", type=float, default=0.2)
    parser.add_argument("--lam", type=float, default=0.95)
    parser.add_argument("--entropy", type=float, default=0.003)
    parser.add_argument("--value", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--eval-hands", type=int, default=2048)
    parser.add_argument("--eval-every", type=int, default=20, help="updates between curve points")
    parser.add_argument("--start", type=Path, default=None, help="begin from this saved network (skip --imitate)")
    parser.add_argument("--out", type=Path, default=HERE / "player.npz")
    parser.add_argument("--curve", type=Path, default=None, help="write the learning curve here (JSON)")
    args = parser.parse_args()
    rng, np_rng = random.Random(args.seed), np.random.default_rng(args.seed)
    seats = [i % 4 for i in range(args.tables)]
    env = NapVectorEnv(args.tables, "classic", 4, seat=seats, opponents=["heuristic"])
    judge = NapVectorEnv(args.tables, "classic", 4, seat=seats, opponents=["heuristic"])
    bot = HeuristicBot(random.Random(0), 0)  # its classic answers need no random draw
    net = Network.fresh(args.hidden, np_rng) if args.start is None else Network.load(args.start)
    if args.start is not None:
        args.imitate = 0
    adam = Adam(net.p, args.rate if args.imitate else args.ppo_rate)
    held_out = [rng.randrange(2 ** 62) for _ in range(args.eval_hands)]
    start, cpu = time.time(), time.process_time()
    reference = evaluate(judge, held_out, lambda obs: heuristic_actions(judge, bot))
    print(f"heuristic's own play on the held-out deals: {100 * reference.mean():+.1f} chips per 100 hands",
          flush=True)
    rollout, curve, hands = Rollout(env), [], 0

    def expert(obs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        chosen = heuristic_actions(env, bot)
        return chosen, chosen

    def sample(obs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        _, logp, _ = net.forward(obs["observation"], obs["action_mask"].astype(bool))
        gumbel = -np.log(-np.log(np_rng.random(logp.shape)))
        return (logp + gumbel).argmax(axis=1), np.zeros(len(logp), np.int64)

    for update in range(1, args.imitate + args.improve + 1):
        imitating = update <= args.imitate
        if update == args.imitate + 1:
            adam = Adam(net.p, args.ppo_rate)  # PPO's own moments: the imitation's would push on
        batch = rollout.collect(args.steps, expert if imitating else sample)
        hands += int(batch["done"].sum())
        step = imitation_update if imitating else ppo_update
        loss = step(net, adam, batch, args, np_rng)
        if update % args.eval_every == 0 or update == args.imitate + args.improve:
            diff = evaluate(judge, held_out, net.greedy) - reference
            half = 1.96 * diff.std(ddof=1) / len(diff) ** 0.5
            point = {"update": update, "phase": "imitation" if imitating else "ppo", "hands": hands,
                     "cpu_s": round(time.process_time() - cpu, 1), "wall_s": round(time.time() - start, 1),
                     "minus_heuristic_per_100": round(100 * diff.mean(), 1), "ci95_half": round(100 * half, 1)}
            curve.append(point)
            print(f"{update:5d} {point['phase']:9s} {hands:8d} hands  loss {loss:7.3f}  greedy − heuristic "
                  f"{point['minus_heuristic_per_100']:+7.1f} ± {point['ci95_half']:.1f} per 100  "
                  f"{point['cpu_s']:6.0f} s CPU", flush=True)
            if args.curve is not None:
                args.curve.write_text(json.dumps(curve, indent=1) + "\n")
    net.save(args.out)
    print(f"saved {args.out.name} after {hands} hands in {time.time() - start:.0f} s "
          f"({time.process_time() - cpu:.0f} s CPU)")


if __name__ == "__main__":
    main()
