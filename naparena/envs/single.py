"""Nap as a Gymnasium environment: one seat learns, naparena bots play the others.

The other seats are any registered bots (drop-ins and installed plug-ins included), in
this process or each in a seat process of its own (`isolation="process"`), or external
programs (`command`), started and spoken to exactly as `naparena run` does.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from naparena.arena.match.seats import RemoteBot
from naparena.arena.setup.settings import Confinement
from naparena.bots.bot import DEFAULT_TIMEOUT
from naparena.envs.aec import describe, observation_is_lean, observation_space
from naparena.envs.encoding import NUM_ACTIONS
from naparena.envs.lineup import Lineup, Opponent, SeatedTable, close_left
from naparena.envs.table import Table, rules_of
from naparena.game.rules import Rules
from naparena.game.view import View

__all__ = ["NapSeatEnv", "Opponent"]


class NapSeatEnv(gym.Env):
    """One seat (`seat`) of a Nap table; `opponents` fill the other seats in order.

    Observation: {"observation": the seat's view as a vector, "action_mask": its legal
    actions}, as in the PettingZoo environment; `info["view"]` is the seat's full `View`.
    `observation="lean"`: one flat float32 vector, the vector then the mask as 0/1
    floats, and no view in `info` (as in the PettingZoo environment).
    Reward: the seat's chips when a hand
    settles. An episode is a match of `hands` hands dealt from the reset seed as `naparena
    run` deals match seed. The bots' seeds derive from that seed and their seats, unless
    `reset(options={"bot_seeds": {seat: seed}})` gives them (a run's, to replay its match);
    `options={"boards": …}` deals each hand from its own seed, as a duplicate run does;
    `stack` is each seat's chips at the start, as a tournament's `stack`.
    `reset` returns in `info["reward"]` the chips of any hand settled before the learner's
    first turn (a dealer sitting out at six). A match in which the learner would never act
    is dealt again from a seed derived from the first.
    `kinds=["bid"], base="heuristic"`: the learner answers only those decision kinds; the
    bot `base` sits in its seat and answers the rest (and gets the seat's hooks), as
    `policy_bot(..., kinds=…, base=…)` plays at a tournament's table.
    `naparena.envs.vector.NapVectorEnv` steps many of these tables at once.
    """

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"], "render_fps": 4}

    # PLR0913: a public Gymnasium constructor; `gymnasium.make` passes its options by keyword.
    def __init__(self, variant: str | Rules = "classic", players: int = 4, seat: int = 0, *,  # noqa: PLR0913
                 opponents: Sequence[Opponent] = ("random",), hands: int = 1,
                 overrides: Mapping[str, Any] | None = None, bots_dir: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, confinement: Confinement | None = None, stack: int = 0,
                 observation: str = "rich", render_mode: str | None = None,
                 kinds: Sequence[str] | None = None, base: Opponent | None = None):
        self.rules = rules_of(variant, overrides)
        self.rules.check_players(players)
        if not 0 <= seat < players:
            raise ValueError(f"seat {seat} is not at a table of {players}")
        self.lineup = Lineup(self.rules, players, opponents, hands=hands, stack=stack, bots_dir=bots_dir,
                             timeout=timeout, confinement=confinement, kinds=kinds, base=base)
        self.seated = SeatedTable(self.lineup, seat)
        # A dropped environment (a notebook cell run again, a script that forgets close())
        # ends its seat processes when it is collected.
        self._finalizer = weakref.finalize(self, close_left, self.seated.remotes)
        self.players, self.seat, self.hands, self.stack = players, seat, hands, stack
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r}; known: {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.lean = observation_is_lean(observation)
        self.observation_space = observation_space(self.lean)
        self.action_space = spaces.Discrete(NUM_ACTIONS)

    @property
    def table(self) -> Table | None:
        """The match in progress (the engine's, driven from outside): None before `reset`."""
        return self.seated.table

    @property
    def bots(self) -> dict[int, Any]:
        """The bots seated for the match in progress, by seat."""
        return self.seated.bots

    @property
    def remotes(self) -> dict[int, RemoteBot]:
        """The seat processes playing now, by seat."""
        return self.seated.remotes

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray] | np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        match_seed = seed if seed is not None else int(self.np_random.integers(2 ** 63))
        given = options or {}
        info: dict[str, Any] = {"reward": self.seated.deal(match_seed, given.get("boards"), given.get("bot_seeds"))}
        if not self.lean:
            info["view"] = self._view()
        return self._obs(), info

    def step(self, action: int) -> tuple[dict[str, np.ndarray] | np.ndarray, float, bool, bool, dict[str, Any]]:
        table = self.table
        assert table is not None and not table.over, "reset() first"
        reward = self.seated.act(int(action))
        info: dict[str, Any] = {"records": table.records}
        if not table.over and not self.lean:
            info["view"] = self._view()
        if self.render_mode == "human":
            self.render()
        return self._obs(), float(reward), table.over, False, info

    def render(self) -> str | None:
        """"ansi": the table as one line of text (hand, dealer or contract, every seat's
        cards, the trick); "human": the same line printed after each step."""
        if self.render_mode is None or self.table is None:
            return None
        text = describe(self.table)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.seated.close()

    # --- what the learner sees -----------------------------------------------------------

    def _obs(self) -> dict[str, np.ndarray] | np.ndarray:
        table = self.table
        assert table is not None
        if self.lean:
            return table.lean_observation(self.seat)
        return {"observation": table.observation(self.seat), "action_mask": table.mask(self.seat)}

    def _view(self) -> View:
        assert self.table is not None
        return self.table.acting_view()


# `gymnasium.make("naparena/Nap-v0", variant=..., players=..., opponents=[...])` once this module is
# imported, and `gymnasium.make_vec("naparena/Nap-v0", num_envs=64, vectorization_mode="vector_entry_point",
# ...)` for the batched environment (naparena.envs.vector), which takes the same arguments.
if "naparena/Nap-v0" not in gym.registry:
    gym.register("naparena/Nap-v0", entry_point="naparena.envs.single:NapSeatEnv",
                 vector_entry_point="naparena.envs.vector:NapVectorEnv")
