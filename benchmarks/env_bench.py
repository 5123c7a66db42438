"""Benchmark of the learning environments (not a test): steps per second of each face of
naparena.envs against the bare engine's decisions per second, measured in the same run.

    .venv/bin/python benchmarks/env_bench.py            # classic, four players
    .venv/bin/python benchmarks/env_bench.py --hands 4000 --variant purchase --players 5

Every step answers one decision with a uniformly random legal answer; the environments'
figures include building the observation vector and the mask of every step, as a
learner's loop would ask for them, and the learner's pick from the mask. The
Gymnasium learner-step rows count what a learner pays: its own `step()` calls with the
environment's defaults (one-hand episodes, so a `reset` a hand; the bots' answers
inside each step), beside the ceiling the bots' share of the decisions sets. CPU time
of this process (one core), from the end of each face's set-up (the bots' discovery,
loading the OpenSpiel game).
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from naparena.envs.aec import NapEnv
from naparena.envs.encoding import OBS_SIZE
from naparena.envs.single import NapSeatEnv
from naparena.envs.table import Table
from naparena.game.engine import Match
from naparena.game.rules import make_rules


def engine(variant: str, players: int, hands: int) -> int:
    """Decisions of the bare engine: deal, random legal answer, settle."""
    match, rng, steps = Match(make_rules(variant), players, 1), random.Random(1), 0
    for _ in range(hands):
        hand = match.next_hand()
        while not hand.over:
            hand.apply(rng.choice(hand.legal()))
        steps += hand.decisions
        match.finish(hand)
    return steps


def table(variant: str, players: int, hands: int) -> int:
    """Steps of the shared driver with the observation vector and mask of each decision."""
    t, rng, steps = Table(make_rules(variant), players, hands, 1), random.Random(1), 0
    while not t.over:
        decision = t.decision()
        t.observation(t.to_act)
        decision.mask()
        t.act(rng.choice(decision.actions))
        steps += 1
    return steps


def table_act(variant: str, players: int, hands: int) -> int:
    """Steps of the shared driver with no observation and no mask: the engine's answer
    through the action map, the floor under every environment's step."""
    t, rng, steps = Table(make_rules(variant), players, hands, 1), random.Random(1), 0
    while not t.over:
        t.act(rng.choice(t.decision().actions))
        steps += 1
    return steps


def pettingzoo_step(variant: str, players: int, hands: int) -> int:
    """PettingZoo's `step()` alone: no `last()`, so no observation, the pick from the
    driver's own list of legal actions (what the protocol adds to the driver)."""
    env, rng, steps = NapEnv(variant, players, hands=hands), random.Random(1), 0
    env.reset(seed=1)
    while env.agents:
        if env.terminations[env.agent_selection]:
            env.step(None)
            continue
        assert env.table is not None
        env.step(rng.choice(env.table.decision().actions))
        steps += 1
    return steps


def _mask(obs: Any) -> np.ndarray:
    """The mask of a rich observation (a dict) or of a lean one (the vector's tail)."""
    return obs["action_mask"] if isinstance(obs, dict) else obs[OBS_SIZE:]


def pettingzoo(variant: str, players: int, hands: int, observation: str = "rich") -> int:
    """Steps of the AEC loop PettingZoo's documentation shows: last(), then step()."""
    env, rng, steps = NapEnv(variant, players, hands=hands, observation=observation), random.Random(1), 0
    env.reset(seed=1)
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(rng.choice(np.flatnonzero(_mask(obs)).tolist()))
        steps += 1
    return steps


def pettingzoo_lean(variant: str, players: int, hands: int) -> int:
    return pettingzoo(variant, players, hands, "lean")


def gymnasium(variant: str, players: int, hands: int) -> int:
    """Decisions made in the Gymnasium loop, in one episode of all the hands: the
    learner's steps and the `random` bots' answers."""
    env, rng = NapSeatEnv(variant, players, opponents=["random"], hands=hands), random.Random(1)
    _started()  # not the bots' discovery (entry points, drop-ins): once per environment
    obs, _ = env.reset(seed=1)
    done = False
    while not done:
        obs, _, done, _, info = env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    return sum(_decisions(r) for r in info["records"])


def _decisions(record: dict[str, Any]) -> int:
    return len(record["bids"]) + sum(len(p) for _, p, _ in record["tricks"]) + len(record.get("pre", ()))


_SHARE = [0, 0]  # the learner's steps and every decision of the last learner-step run


def learner_steps(variant: str, players: int, hands: int, observation: str = "rich") -> int:
    """The learner's `step()` calls with the environment's defaults: one-hand episodes
    (a `reset` each), three `random` bots; what a learner pays per step it takes."""
    env = NapSeatEnv(variant, players, opponents=["random"], observation=observation)
    rng, steps, decisions = random.Random(1), 0, 0
    _started()
    for episode in range(hands):
        obs, _ = env.reset(seed=episode)
        done = False
        while not done:
            obs, _, done, _, info = env.step(rng.choice(np.flatnonzero(_mask(obs)).tolist()))
            steps += 1
        decisions += sum(_decisions(r) for r in info["records"])
    _SHARE[:] = [steps, decisions]
    return steps


def learner_steps_lean(variant: str, players: int, hands: int) -> int:
    return learner_steps(variant, players, hands, "lean")


def openspiel(variant: str, players: int, hands: int) -> int:
    """Player actions of python_nap with `state.information_state_tensor()` at each (one
    hand a game; chance actions not counted). pyspiel hands the tensor back as a list."""
    return _spiel_hands(variant, players, hands, lambda state, player: state.information_state_tensor())


def openspiel_observer(variant: str, players: int, hands: int) -> int:
    """As `openspiel`, the information-state tensor read as the numpy array of an
    observer (`open_spiel.python.observation.make_observation`), as Python algorithms may."""
    import pyspiel
    from open_spiel.python.observation import make_observation

    from naparena.envs import spiel

    game = pyspiel.load_game(spiel.SHORT_NAME, {"variant": variant, "players": players})
    observer = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    return _spiel_hands(variant, players, hands, observer.set_from)


def _spiel_hands(variant: str, players: int, hands: int, observe: Callable[[Any, int], object]) -> int:
    import pyspiel

    from naparena.envs import spiel

    game = pyspiel.load_game(spiel.SHORT_NAME, {"variant": variant, "players": players})
    rng, steps = random.Random(1), 0
    _started()
    for _ in range(hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
            else:
                observe(state, state.current_player())
                state.apply_action(rng.choice(state.legal_actions()))
                steps += 1
    return steps


_start = [0.0]


def _started() -> None:
    """A face's set-up is done: its clock starts here."""
    _start[0] = time.process_time()


def rate(run: Callable[[str, int, int], int], variant: str, players: int, hands: int) -> float:
    _started()
    steps = run(variant, players, hands)
    return steps / (time.process_time() - _start[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--hands", type=int, default=3000)
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} (1 min)")
    reference = rate(engine, args.variant, args.players, args.hands)
    print(f"{'engine decisions':38s} {reference:10,.0f} /s  1.00x")
    faces: list[tuple[str, Callable[[str, int, int], int]]] = [
        ("Table act only (no observation)", table_act), ("PettingZoo step() only (no observation)", pettingzoo_step),
        ("Table steps (vector + mask)", table), ("PettingZoo AEC steps (last + step)", pettingzoo),
        ("PettingZoo AEC steps, lean observation", pettingzoo_lean),
        ("Gymnasium learner steps (defaults)", learner_steps),
        ("Gymnasium learner steps, lean", learner_steps_lean),
        ("Gymnasium decisions (learner + bots)", gymnasium), ("OpenSpiel steps (+ info-state tensor)", openspiel),
        ("OpenSpiel steps (+ observer's tensor)", openspiel_observer)]
    for name, run in faces:
        r = rate(run, args.variant, args.players, args.hands // (3 if run in (openspiel, openspiel_observer) else 1))
        print(f"{name:38s} {r:10,.0f} /s  {r / reference:.2f}x")
        if run is learner_steps_lean:
            # Each learner step also waits for the bots' decisions: even were the
            # environment free, the engine's own time for them caps the rate.
            share = _SHARE[0] / _SHARE[1]
            print(f"{'  ceiling: engine x learner share':38s} {reference * share:10,.0f} /s  {share:.2f}x"
                  f"  ({_SHARE[0]} of {_SHARE[1]} decisions)")


if __name__ == "__main__":
    main()
