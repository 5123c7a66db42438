"""Benchmark of the batched environments (not a test): the learner's steps per second of
`NapVectorEnv` and `NapSelfPlay` at N tables, against the bare engine's decisions per
second, measured in the same process in interleaved rounds.

    .venv/bin/python benchmarks/vector_bench.py                     # classic, four seats
    .venv/bin/python benchmarks/vector_bench.py --rounds 7 --sizes 1 8 64 256
    .venv/bin/python benchmarks/vector_bench.py --profile 64         # where a step's time goes

A learner step is one table's answer: a `step()` of N tables is N learner steps. Each
picks a uniformly random legal action from the mask, for the whole batch at once in
numpy (a learner's cost, counted); the observation and mask of every table are built
each step, as a learner asks for them. `NapVectorEnv` seats the learner at seat 0
against three `random` bots (every decision of theirs is inside the step, so the
learner's share of the decisions, about a quarter at four seats, caps it at that share
of the engine's rate even were the environment free); `NapSelfPlay` answers every
decision. The baseline is Gymnasium's own `SyncVectorEnv` of N single environments.
CPU time of this process (one core), each face's set-up (the bots' discovery) outside
the clock. Each round measures the engine and then every face;
the ratio is taken within each round and the median over rounds is printed, so the
load of a shared machine moves both sides of a ratio together.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from naparena.envs.vector import NapSelfPlay, NapVectorEnv
from naparena.game.engine import Match
from naparena.game.rules import make_rules


def engine(variant: str, players: int, decisions: int) -> tuple[int, float]:
    """The bare engine's loop (benchmarks/env_bench.py's): deal, a random legal answer, settle."""
    match, rng, steps = Match(make_rules(variant), players, 1), random.Random(1), 0
    start = time.process_time()
    while steps < decisions:
        hand = match.next_hand()
        while not hand.over:
            hand.apply(rng.choice(hand.legal()))
        steps += hand.decisions
        match.finish(hand)
    return steps, time.process_time() - start


class Picker:
    """A uniformly random legal action for every row of a mask, in numpy: the legal
    actions of all rows at once (`np.flatnonzero`), and in each row the k-th, k drawn below
    the row's count. A row without one (a finished table's, whose action the next step
    ignores) gets 0."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def __call__(self, mask: np.ndarray) -> np.ndarray:
        flat = np.flatnonzero(mask.view(np.bool_))  # a bool view: numpy scans it faster than int8
        if not len(flat):  # every table just finished: each action is ignored
            return np.zeros(len(mask), np.int64)
        rows, actions = np.divmod(flat, mask.shape[1])
        counts = np.bincount(rows, minlength=len(mask))
        first = np.cumsum(counts) - counts
        drawn = first + (self.rng.random(len(mask)) * counts).astype(np.int64)
        picked: np.ndarray = np.where(counts > 0, actions[np.minimum(drawn, len(actions) - 1)], 0)
        return picked


def vector(n: int, variant: str, players: int, steps: int, **options: Any) -> tuple[int, float]:
    """Learner steps of `NapVectorEnv` (N tables, `random` bots, one-hand episodes)."""
    env = NapVectorEnv(n, variant, players, opponents=["random"], **options)
    pick = Picker(1)
    obs, _ = env.reset(seed=1)
    done, start = 0, time.process_time()
    while done < steps:
        obs, *_ = env.step(pick(obs["action_mask"]))
        done += n
    elapsed = time.process_time() - start
    env.close()
    return done, elapsed


def sync(n: int, variant: str, players: int, steps: int) -> tuple[int, float]:
    """Learner steps of Gymnasium's own `SyncVectorEnv` of N `NapSeatEnv`s (the same
    tables, batched by Gymnasium one environment at a time): the baseline."""
    import gymnasium as gym

    from naparena.envs.single import NapSeatEnv

    env = gym.vector.SyncVectorEnv([lambda: NapSeatEnv(variant, players, opponents=["random"]) for _ in range(n)])
    pick = Picker(1)
    obs, _ = env.reset(seed=1)
    done, start = 0, time.process_time()
    while done < steps:
        obs, *_ = env.step(pick(obs["action_mask"]))
        done += n
    elapsed = time.process_time() - start
    env.close()
    return done, elapsed


def self_play(n: int, variant: str, players: int, steps: int, **options: Any) -> tuple[int, float]:
    """Learner steps of `NapSelfPlay` (N tables, every decision the learner's)."""
    env = NapSelfPlay(n, variant, players, **options)
    pick = Picker(1)
    obs, _ = env.reset(seed=1)
    done, start = 0, time.process_time()
    while done < steps:
        obs, *_ = env.step(pick(obs["action_mask"]))
        done += n
    return done, time.process_time() - start


def learner_share(variant: str, players: int, steps: int = 20_000) -> float:
    """The learner's steps over every decision at `NapVectorEnv`'s tables (counted from the
    finished hands' records, outside any clock): the learner answers this share of the
    decisions, so even a free environment steps at most this share of the engine's rate."""
    env = NapVectorEnv(64, variant, players, opponents=["random"])
    pick = Picker(2)
    obs, _ = env.reset(seed=2)
    mine = everyone = 0
    while mine < steps:
        obs, _, terminated, _, _ = env.step(pick(obs["action_mask"]))
        for i in np.flatnonzero(terminated):
            seated = env.tables[i]
            assert seated.table is not None
            for record in seated.table.records:
                everyone += len(record["bids"]) + len(record.get("pre", ()))
                everyone += sum(len(plays) for _, plays, _ in record["tricks"]) + len(record.get("trick", ()))
                mine += sum(1 for s, _ in record["bids"] if s == seated.seat)
                mine += sum(1 for s, *_ in record.get("pre", ()) if s == seated.seat)
                mine += sum(1 for _, plays, _ in record["tricks"] for s, _ in plays if s == seated.seat)
                mine += sum(1 for s, _ in record.get("trick", ()) if s == seated.seat)
    return mine / everyone


Face = tuple[str, Callable[[str, int, int], tuple[int, float]]]


def faces(sizes: list[int]) -> list[Face]:
    out: list[Face] = [("SyncVectorEnv of 64 NapSeatEnv (baseline)", partial(sync, 64))]
    out += [(f"NapVectorEnv N={n}", partial(vector, n)) for n in sizes]
    out.append(("NapVectorEnv N=64, copy=False", partial(vector, 64, copy=False)))
    out.append(("NapVectorEnv N=64, 100-hand episodes", partial(vector, 64, hands=100)))
    out += [(f"NapSelfPlay N={n}", partial(self_play, n)) for n in sizes]
    out.append(("NapSelfPlay N=64, 100-hand episodes", partial(self_play, 64, hands=100)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--steps", type=int, default=40_000, help="learner steps a face a round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 64, 256])
    parser.add_argument("--profile", type=int, default=None, metavar="N",
                        help="profile NapVectorEnv and NapSelfPlay at N tables instead")
    args = parser.parse_args()
    if args.profile is not None:
        profile(args.profile, args.variant, args.players, args.steps)
        return
    print(f"load: {os.getloadavg()[0]:.2f} (1 min); {args.variant}, {args.players} seats, "
          f"{args.rounds} rounds of {args.steps:,} learner steps a face")
    chosen = faces(args.sizes)
    rates: dict[str, list[float]] = {name: [] for name, _ in chosen}
    ratios: dict[str, list[float]] = {name: [] for name, _ in chosen}
    reference: list[float] = []
    for _ in range(args.rounds):
        steps, cpu = engine(args.variant, args.players, args.steps)
        reference.append(steps / cpu)
        for name, run in chosen:
            steps, cpu = run(args.variant, args.players, args.steps)
            rates[name].append(steps / cpu)
            ratios[name].append(steps / cpu / reference[-1])
    share = learner_share(args.variant, args.players)
    print(f"{'engine decisions':42s} {statistics.median(reference):10,.0f} /s  1.00x")
    ceiling = "  ceiling with bots: the learner's share"
    print(f"{ceiling:42s} {statistics.median(reference) * share:10,.0f} /s  {share:.3f}x  "
          "(its share of the decisions)")
    for name, _ in chosen:
        r = ratios[name]
        print(f"{name:42s} {statistics.median(rates[name]):10,.0f} /s  {statistics.median(r):.3f}x"
              f"  (rounds {min(r):.3f}-{max(r):.3f})")


def profile(n: int, variant: str, players: int, steps: int) -> None:
    """Where a step's time goes: pyinstrument's call tree where it is installed (a sampling
    profiler: it does not inflate the many small calls a step makes, as cProfile does),
    else cProfile's own times."""
    for name, run in (("NapVectorEnv", vector), ("NapSelfPlay", self_play)):
        print(f"--- {name} N={n}")
        try:
            from pyinstrument import Profiler  # not a dependency: pip install pyinstrument
        except ImportError:
            profiler = cProfile.Profile()
            profiler.enable()
            run(n, variant, players, steps)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(22)
            continue
        sampler = Profiler(interval=0.0002)
        sampler.start()
        run(n, variant, players, steps)
        sampler.stop()
        print(sampler.output_text(unicode=False, color=False, show_all=False))


if __name__ == "__main__":
    main()
