"""Nap as a PettingZoo AEC environment: agents `seat_0…`, the view as a vector plus
`action_mask` (as PettingZoo's classic card games give it), chips as rewards."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from naparena.envs.encoding import LEAN_SIZE, NUM_ACTIONS, OBS_SIZE
from naparena.envs.table import Table, fresh_seed, rules_of
from naparena.game.cards import NAMES
from naparena.game.rules import Rules


def agent_name(seat: int) -> str:
    return f"seat_{seat}"


OBSERVATIONS = ("rich", "lean")


def observation_is_lean(observation: str) -> bool:
    if observation not in OBSERVATIONS:
        raise ValueError(f"observation {observation!r}; known: {', '.join(OBSERVATIONS)}")
    return observation == "lean"


def observation_space(lean: bool) -> spaces.Space[Any]:
    """The rich observation's Dict space, or the lean one's flat Box (vector, then mask)."""
    if lean:
        return spaces.Box(0.0, 1.0, (LEAN_SIZE,), np.float32)
    return spaces.Dict({
        "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
        "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
    })


class NapEnv(AECEnv):
    """A match of `hands` hands (one by default) at a table of `players` seats.

    `reset(seed=s)` deals what `naparena run` deals for match seed `s`. Each step answers
    the acting seat's decision; a masked-out action is the engine's fault (its default
    answer, a revoke in card play). When a hand settles every seat is rewarded its chips;
    the episode ends with the match. `infos[agent]` holds the acting seat's full view
    (`"view"`: naparena's `View`, a NamedTuple) and, when a hand settles, its log record.

    `observation="rich"` (the default) observes {"observation": the vector,
    "action_mask": the mask}; `"lean"` observes one flat float32 vector, the same vector
    then the mask as 0/1 floats (`encoding.LEAN_SIZE`), and leaves the view out of
    `infos` (`env.table.acting_view()` has it): fewer objects a step, for speed.
    """

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"], "name": "nap_v0", "is_parallelizable": False}

    def __init__(self, variant: str | Rules = "classic", players: int = 4, hands: int = 1,
                 overrides: Mapping[str, Any] | None = None, stack: int = 0, render_mode: str | None = None,
                 observation: str = "rich"):
        super().__init__()
        self.rules = rules_of(variant, overrides)
        self.rules.check_players(players)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r}; known: {self.metadata['render_modes']}")
        self.players, self.hands, self.stack, self.render_mode = players, hands, stack, render_mode
        self.possible_agents = [agent_name(s) for s in range(players)]
        self._seats = {a: s for s, a in enumerate(self.possible_agents)}
        self.lean = observation_is_lean(observation)
        obs = observation_space(self.lean)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs)
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.table: Table | None = None
        self._settled = False

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.table = Table(self.rules, self.players, self.hands, fresh_seed() if seed is None else seed,
                           self.stack, (options or {}).get("boards"))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._settled = False
        self._turn()

    def _turn(self) -> None:
        table = self.table
        assert table is not None
        if table.over:
            return
        agent = self.agent_selection = self.possible_agents[table.to_act]
        if self.lean:
            return
        info = self.infos[agent]
        self.infos[agent] = {**info, "view": table.acting_view()} if info else {"view": table.acting_view()}

    def observe(self, agent: str) -> dict[str, np.ndarray] | np.ndarray:
        table = self.table
        assert table is not None, "reset() first"
        seat = self._seats[agent]
        if self.lean:
            return table.lean_observation(seat)
        return {"observation": table.observation(seat), "action_mask": table.mask(seat)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        table = self.table
        assert table is not None and action is not None
        self._cumulative_rewards[agent] = 0
        if self._settled:  # the last step settled a hand: its rewards and records are spent
            self.rewards = dict.fromkeys(self.agents, 0)
            self.infos = {a: {} for a in self.agents}
            self._settled = False
        self.infos[agent] = {}
        chips = table.act(int(action))
        if chips is not None:
            record = table.records[-1]
            for s, a in enumerate(self.agents):
                self.rewards[a] = chips[s]
                self.infos[a] = {"record": record}
            self._settled = True
            self._accumulate_rewards()  # between settlements every reward is 0: nothing to add
        if table.over:
            self.terminations = dict.fromkeys(self.agents, True)
        self._turn()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None or self.table is None:
            return None
        text = describe(self.table)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.table = None


def describe(table: Table) -> str:
    """The table as one line: hand number, its state, the seat to act, every hand, the trick."""
    h = table.hand
    hands = "  ".join(f"{s}:{' '.join(NAMES[c] for c in cards)}" for s, cards in enumerate(h.hands))
    trick = " ".join(f"{s}:{NAMES[c]}" for s, c in h.trick)
    return f"hand {h.hand_no} {h.kind or h.result} seat {h.to_act} | {hands} | trick {trick or '-'}"


def env(**kwargs: Any) -> NapEnv:
    """PettingZoo's usual constructor name."""
    return NapEnv(**kwargs)
