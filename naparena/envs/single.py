"""Nap as a Gymnasium environment: one seat learns, naparena bots play the others.

The other seats are any registered bots (drop-ins and installed plug-ins included), in
this process or each in a seat process of its own (`isolation="process"`), or external
programs (`command`), started and spoken to exactly as `naparena run` does.
"""

from __future__ import annotations

import dataclasses
import random
import warnings
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from naparena.arena.match import sandbox
from naparena.arena.match.job import SeatRecord, seat_record
from naparena.arena.match.play import supervisor
from naparena.arena.match.seats import RemoteBot, close_seats, start_seats
from naparena.arena.session import resolve_sandbox
from naparena.arena.setup.reader import _bot_process
from naparena.arena.setup.schedule import derive_seed
from naparena.arena.setup.settings import Confinement, Isolation
from naparena.bots.bot import DEFAULT_TIMEOUT
from naparena.bots.plugins import load_registry
from naparena.envs.aec import describe, observation_is_lean, observation_space
from naparena.envs.encoding import NUM_ACTIONS
from naparena.envs.table import Table, rules_of
from naparena.game.engine import Hand
from naparena.game.rules import Rules
from naparena.game.view import View
from naparena.table import Seat
from naparena.table import Table as Sitting

Opponent = str | Mapping[str, Any]


def _seat_plan(opponent: Opponent, seat: int) -> SeatRecord:
    """A bot name, or {"name", "params", "isolation", "command"} as a tournament file's [[bots]]
    entry, its `isolation` and `command` checked by the file's own reader (the same words):
    read once, into the seat as it is started (its seed given at each reset)."""
    entry: dict[str, Any] = {"name": opponent} if isinstance(opponent, str) else dict(opponent)
    unknown = set(entry) - {"name", "params", "isolation", "command"}
    name = entry.get("name")
    if unknown or not isinstance(name, str):
        raise ValueError(f"opponent {opponent!r}: give a bot name, or name, params, isolation, command")
    command, isolation = _bot_process(entry, "", f"opponents[seat {seat}]")
    process = command is not None or isolation is Isolation.PROCESS
    return seat_record(f"{name}@{seat}", name, dict(entry.get("params", {})), 0,
                       isolation=Isolation.PROCESS if process else Isolation.INLINE, command=command)


def _close_left(remotes: dict[int, RemoteBot]) -> None:
    """End the seat processes in `remotes` (told to shut down, then killed) and forget them."""
    if remotes:
        close_seats(remotes)
    remotes.clear()


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
    """

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"], "render_fps": 4}

    # PLR0913: a public Gymnasium constructor; `gymnasium.make` passes its options by keyword.
    def __init__(self, variant: str | Rules = "classic", players: int = 4, seat: int = 0, *,  # noqa: PLR0913
                 opponents: Sequence[Opponent] = ("random",), hands: int = 1,
                 overrides: Mapping[str, Any] | None = None, bots_dir: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, confinement: Confinement | None = None, stack: int = 0,
                 observation: str = "rich", render_mode: str | None = None):
        self.rules = rules_of(variant, overrides)
        self.rules.check_players(players)
        if not 0 <= seat < players:
            raise ValueError(f"seat {seat} is not at a table of {players}")
        others = [s for s in range(players) if s != seat]
        chosen = list(opponents)
        if len(chosen) == 1:
            chosen *= len(others)  # one name fills every other seat
        if len(chosen) != len(others):
            raise ValueError(f"{len(others)} opponents needed, {len(chosen)} given")
        self.players, self.seat, self.hands, self.stack = players, seat, hands, stack
        self.plans = {s: _seat_plan(o, s) for s, o in zip(others, chosen)}
        # Absolute, as a run gives it: seat processes start in an empty directory.
        folder = Path(bots_dir or "bots")
        self.bots_dir = str(folder.absolute()) if folder.is_dir() else None
        self.timeout, self.confinement = timeout, self._resolved(confinement or Confinement())
        self.registry = load_registry(self.bots_dir)
        for s, plan in self.plans.items():
            if plan.command is None:
                cls = self.registry.get(plan.name).cls  # an unknown name fails here, not mid-episode
                if plan.in_process:  # its own module, seen in its sandbox
                    self.plans[s] = dataclasses.replace(plan, files=tuple(sandbox.module_files(cls)))
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r}; known: {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.lean = observation_is_lean(observation)
        self.observation_space = observation_space(self.lean)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.table: Table | None = None
        self.bots: dict[int, Any] = {}
        # The seat processes playing now, filled and emptied in place: the finalizer holds
        # the same dict, so an environment dropped without close() ends its processes too.
        self.remotes: dict[int, RemoteBot] = {}
        self._finalizer = weakref.finalize(self, _close_left, self.remotes)
        self.sitting: Sitting | None = None

    def _resolved(self, confinement: Confinement) -> Confinement:
        """The sandbox mode resolved once, as a run resolves it (auto: bubblewrap where it
        works, else off with a warning), so the seats compare it and infer nothing."""
        if not any(plan.in_process for plan in self.plans.values()):
            return confinement
        resolved, warning = resolve_sandbox(confinement, None)
        if warning is not None:
            warnings.warn(warning, stacklevel=3)
        return resolved

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray] | np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        match_seed = seed if seed is not None else int(self.np_random.integers(2 ** 63))
        while True:
            self._close_bots()
            self.table = Table(self.rules, self.players, self.hands, match_seed, self.stack,
                               (options or {}).get("boards"), self._answered)
            self._seat_bots(match_seed, (options or {}).get("bot_seeds"))
            self._start_hand()
            reward = self._play_others()
            if not self.table.over:
                info: dict[str, Any] = {"reward": reward}
                if not self.lean:
                    info["view"] = self._view()
                return self._obs(), info
            # The learner sat out the whole match (a dealer out at six): an episode needs a turn.
            match_seed = derive_seed(match_seed, "again")

    def step(self, action: int) -> tuple[dict[str, np.ndarray] | np.ndarray, float, bool, bool, dict[str, Any]]:
        table = self.table
        assert table is not None and not table.over, "reset() first"
        assert table.to_act == self.seat
        reward = self._book(table.act(int(action)))
        reward += self._play_others()
        info: dict[str, Any] = {"records": table.records}
        if table.over:
            self._end_match()
        elif not self.lean:
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
        self._close_bots()

    # --- the other seats ---------------------------------------------------------------

    def _seat_bots(self, match_seed: int, given: Mapping[int, int] | None) -> None:
        """The other seats' bots, at the table every entry point plays at (`naparena.table`):
        the same hooks, match info, supervision and fault rules as a run."""
        seeds = {s: derive_seed(match_seed, "bot", s) for s in self.plans}
        seeds.update(given or {})
        process = [dataclasses.replace(self.plans[s], seed=seeds[s]) if s in self.plans
                   else seat_record("learner", "", {}, 0) for s in range(self.players)]
        self.remotes.update(start_seats(process, self.bots_dir, self.timeout, self.confinement, "environment"))
        self.bots = {s: self.remotes[s] if s in self.remotes else
                     self.registry.make(plan.name, dict(plan.params), random.Random(seeds[s]), s)
                     for s, plan in self.plans.items()}
        aliases = [p.alias for p in process]
        self.sitting = Sitting([Seat(self.bots[s], aliases[s]) if s in self.bots else None
                                for s in range(self.players)], supervisor(self.timeout))
        self.sitting.start_match(0, aliases, self.rules, self.hands, self.timeout)

    def _start_hand(self) -> None:
        assert self.table is not None and self.sitting is not None
        self.sitting.start_hand(self.table.hand)

    def _answered(self, hand: Hand) -> None:
        """After every answer, the learner's too: the bots' events, and a hand's end told."""
        assert self.sitting is not None
        self.sitting.tell(hand)
        if hand.over:
            self.sitting.end_hand(hand)

    def _play_others(self) -> float:
        """Let the bots answer until it is the learner's turn or the match is over."""
        table, sitting, reward = self.table, self.sitting, 0.0
        assert table is not None and sitting is not None
        while not table.over and table.to_act != self.seat:
            seat = sitting.seats[table.to_act]
            assert seat is not None and table.hand.kind is not None  # someone is to act until the match is over
            if seat.dead:
                reward += self._book(table.answer(table.hand.legal()[0]))
                continue
            seat.decisions += 1
            answer, fault = sitting.watch.ask(table.hand, seat.decide[table.hand.kind], table.to_act, seat.watched)
            reward += self._book(table.fault(fault) if fault is not None else table.answer(answer))
        return reward

    def _book(self, chips: list[int] | None) -> float:
        if chips is None:
            return 0.0
        assert self.table is not None and self.sitting is not None
        if self.sitting.told:
            self.sitting.tell_hand_end(self.table.records[-1])
        if not self.table.over:
            self._start_hand()
        return float(chips[self.seat])

    def _end_match(self) -> None:
        assert self.sitting is not None
        self.sitting.end_match(self.hands)
        self._close_bots()

    def _close_bots(self) -> None:
        _close_left(self.remotes)
        self.bots = {}

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


# `gymnasium.make("naparena/Nap-v0", variant=..., players=..., opponents=[...])` once this module is imported.
if "naparena/Nap-v0" not in gym.registry:
    gym.register("naparena/Nap-v0", entry_point="naparena.envs.single:NapSeatEnv")
