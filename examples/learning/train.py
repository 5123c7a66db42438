"""Train a small Nap player against naparena's `random` bot, and save it as policy.npz.

The method: REINFORCE (Monte Carlo policy gradient) on a linear softmax policy over the
masked actions, in numpy alone, through the Gymnasium face of naparena (`NapSeatEnv`).
Why: it needs nothing beyond the `envs` extra (no torch, no downloads), one core trains
it in a few minutes, and its policy is two arrays a drop-in bot can load. The seat
changes each episode, so one policy learns every seat (the view is encoded from the
seat's own place).

    python examples/learning/train.py                  # about a minute on one core
    naparena run examples/learning/tournament.toml     # the trained player against random
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from naparena.envs.encoding import NUM_ACTIONS, OBS_SIZE
from naparena.envs.single import NapSeatEnv

HERE = Path(__file__).resolve().parent


def softmax_masked(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)


class Adam:
    def __init__(self, shapes: list[tuple[int, ...]], rate: float):
        self.rate, self.t = rate, 0
        self.m = [np.zeros(s) for s in shapes]
        self.v = [np.zeros(s) for s in shapes]

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> None:
        self.t += 1
        # In place ([...]): the arrays are the network's and the optimiser's own.
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m[...] *= 0.9
            m[...] += 0.1 * g
            v[...] *= 0.999
            v[...] += 0.001 * g * g
            p[...] += self.rate * (m / (1 - 0.9 ** self.t)) / (np.sqrt(v / (1 - 0.999 ** self.t)) + 1e-8)


def train(episodes: int, batch: int, seed: int, variant: str, players: int, rate: float) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    envs = [NapSeatEnv(variant, players, seat=s, opponents=["random"]) for s in range(players)]
    weights, bias = np.zeros((NUM_ACTIONS, OBS_SIZE)), np.zeros(NUM_ACTIONS)
    adam = Adam([weights.shape, bias.shape], rate)
    baseline, start = 0.0, time.time()
    for first in range(0, episodes, batch):
        obs, masks, actions, returns = [], [], [], []
        for episode in range(first, min(first + batch, episodes)):
            env = envs[episode % players]
            o, info = env.reset(seed=int(rng.integers(2 ** 62)))
            steps, total, done = 0, float(info.get("reward", 0.0)), False
            while not done:
                p = softmax_masked(weights @ o["observation"] + bias, o["action_mask"].astype(bool))
                a = int(rng.choice(NUM_ACTIONS, p=p))
                obs.append(o["observation"])
                masks.append(o["action_mask"].astype(bool))
                actions.append(a)
                o, r, done, _, _ = env.step(a)
                total += r
                steps += 1
            returns += [total] * steps
        x, m, g = np.array(obs), np.array(masks), np.array(returns)
        baseline = 0.9 * baseline + 0.1 * g.mean()
        advantage = (g - baseline) / (g.std() + 1.0)
        p = softmax_masked(x @ weights.T + bias, m)
        grad = -p
        grad[np.arange(len(actions)), actions] += 1.0  # d log p(a) / d scores
        grad *= advantage[:, None]
        adam.step([weights, bias], [grad.T @ x / len(x), grad.mean(axis=0)])
        if (first // batch) % 20 == 0:
            print(f"{first + batch:6d} episodes  mean chips {g.mean():+6.2f}  {time.time() - start:5.0f} s", flush=True)
    for env in envs:
        env.close()
    return weights.astype(np.float32), bias.astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=40000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--rate", type=float, default=0.01)
    parser.add_argument("--out", type=Path, default=HERE / "policy.npz")
    args = parser.parse_args()
    start = time.time()
    weights, bias = train(args.episodes, args.batch, args.seed, args.variant, args.players, args.rate)
    np.savez_compressed(args.out, weights=weights, bias=bias)
    print(f"saved {args.out.name} after {args.episodes} episodes in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
