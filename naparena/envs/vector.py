"""Many Nap tables stepped together, for learners that train on batches.

`NapVectorEnv` is a Gymnasium `VectorEnv` (the native kind, not N environments wrapped):
N tables, each a match with the learner in one seat and bots in the others, as
`NapSeatEnv` seats them, stepped by one call with one action per table. `NapSelfPlay`
is the self-play form: the learner answers for whichever seat is to act at each table.
Both write every table's observation and mask into one preallocated array per batch
(`encoding.write`, the single environments' own writer), and step the engine's own
`Match` and `Hand`: table i plays exactly the hands a single environment reset with the
same seed plays.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from naparena.arena.setup.settings import Confinement
from naparena.bots.bot import DEFAULT_TIMEOUT
from naparena.envs.aec import observation_is_lean, observation_space
from naparena.envs.encoding import NUM_ACTIONS, OBS_SIZE, cells_of, write
from naparena.envs.lineup import Lineup, Opponent, SeatedTable, close_left
from naparena.envs.table import Table, rules_of
from naparena.game.rules import Rules
from naparena.game.view import View

__all__ = ["AutoresetMode", "NapSelfPlay", "NapVectorEnv", "Rows"]

Seeds = int | Sequence[int | None] | None


class Rows:
    """A batch's observations, preallocated: one float32 row per table (the vector, and in
    the lean form the mask's flags after it), one int8 mask row per table in the rich form,
    and a memoryview of each row, so a table's cells are written straight into the batch."""

    def __init__(self, n: int, lean: bool):
        self.lean = lean
        self.obs = np.zeros((n, OBS_SIZE + NUM_ACTIONS if lean else OBS_SIZE), np.float32)
        self.mask = None if lean else np.zeros((n, NUM_ACTIONS), np.int8)
        self.cells = [cells_of(row) for row in self.obs]
        if self.mask is None:
            self.flags: list[memoryview[Any]] = [c[OBS_SIZE:] for c in self.cells]
            self.flag: float = 1.0
        else:
            self.flags = [row.data for row in self.mask]
            self.flag = 1

    def clear(self, i: int | None = None) -> None:
        """Zero every row, or row `i`."""
        if i is None:
            self.obs.fill(0)
            if self.mask is not None:
                self.mask.fill(0)
            return
        self.obs[i].fill(0)
        if self.mask is not None:
            self.mask[i].fill(0)

    def put(self, table: Table, seat: int, i: int) -> None:
        """Row i (cleared): `seat`'s view at `table`, and its legal actions if it is to act."""
        if table.over or table.hand.to_act != seat:
            write(self.cells[i], table.hand.view(seat))
            return
        write(self.cells[i], table.acting_view())
        flags, flag = self.flags[i], self.flag
        for action in table.decision().actions:
            flags[action] = flag

    def batch(self, copy: bool) -> dict[str, np.ndarray] | np.ndarray:
        """The observation as the space has it: the rich form's dict or the lean array."""
        if self.mask is None:
            return self.obs.copy() if copy else self.obs
        if copy:
            return {"observation": self.obs.copy(), "action_mask": self.mask.copy()}
        return {"observation": self.obs, "action_mask": self.mask}

    def row(self, i: int) -> dict[str, np.ndarray] | np.ndarray:
        """Row i alone, copied (a final observation)."""
        obs: np.ndarray = self.obs[i].copy()
        if self.mask is None:
            return obs
        return {"observation": obs, "action_mask": self.mask[i].copy()}


class _Seeding:
    """Each table's own generator, as each of N single environments keeps its `np_random`:
    `reset(seed=s)` seeds table i with s + i (a list: one seed a table), and a table reset
    without a seed (an autoreset) deals its next match seed from its generator."""

    def __init__(self, n: int):
        self.rngs: list[np.random.Generator | None] = [None] * n
        self.sown: list[int | None] = [None] * n  # a reset's seed, its generator not made until wanted

    def seeds(self, seed: Seeds, n: int) -> list[int | None]:
        if seed is None:
            return [None] * n
        if isinstance(seed, (int, np.integer)):
            return [int(seed) + i for i in range(n)]
        seeds = list(seed)
        if len(seeds) != n:
            raise ValueError(f"{len(seeds)} seeds for {n} tables: give one a table, or one int")
        return seeds

    def match_seed(self, i: int, seed: int | None) -> int:
        """Table i's next match seed: `seed` (its generator seeded from it), or its generator's."""
        if seed is not None:
            # Made at the table's first autoreset, if it comes: a generator costs more than
            # a one-step episode's deal, and a learner that resets with seeds may never need it.
            self.rngs[i], self.sown[i] = None, seed
            return seed
        rng = self.rngs[i]
        if rng is None:
            rng = self.rngs[i] = seeding.np_random(self.sown[i])[0]
        return int(rng.integers(2 ** 63))


def _per_table(options: Mapping[str, Any], key: str, n: int) -> list[Any]:
    """A reset option given per table (a list of n), or None for every table."""
    given = options.get(key)
    if given is None:
        return [None] * n
    if len(given) != n:
        raise ValueError(f"options[{key!r}]: one entry a table ({n}), {len(given)} given")
    return list(given)


def _reset_mask(options: Mapping[str, Any], n: int) -> np.ndarray:
    """Which tables `reset` deals again: `options["reset_mask"]` (a bool array), else all."""
    mask = options.get("reset_mask")
    if mask is None:
        return np.ones(n, np.bool_)
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (n,):
        raise ValueError(f"options['reset_mask'] must be a numpy bool array of shape ({n},)")
    if not mask.any():
        raise ValueError("options['reset_mask'] must name at least one table")
    return mask


def _autoreset(mode: str | AutoresetMode) -> AutoresetMode:
    return mode if isinstance(mode, AutoresetMode) else AutoresetMode(mode)


def _check_dealt(tables: Sequence[SeatedTable | Table | None], pending: list[bool]) -> None:
    """Refuse a step before it moves any table, if one has no match to step (never
    dealt, or over and not due an autoreset: autoreset_mode DISABLED)."""
    for i, table in enumerate(tables):
        if not pending[i] and (table is None or table.over):
            raise RuntimeError(f"table {i} has no match in progress: reset it first "
                               "(reset(options={'reset_mask': …}) with autoreset_mode DISABLED)")


def _actions(actions: Any, n: int) -> list[int]:
    chosen = np.asarray(actions)
    if chosen.shape != (n,):
        raise ValueError(f"one action a table: shape ({n},), not {chosen.shape}")
    out: list[int] = chosen.tolist()
    return out


class NapVectorEnv(VectorEnv):
    """`num_envs` tables of `NapSeatEnv`, stepped together: the same arguments, and the
    learner's `seat` one for every table or one per table.

    Observations: {"observation": (N, 755) float32, "action_mask": (N, 363) int8}, or with
    `observation="lean"` one (N, 1118) float32 array (vector, then mask). Rewards (N,)
    float64: the learner's chips when a hand settles. Terminations (N,): the match is over;
    truncations are always False. Autoreset: `autoreset_mode` NEXT_STEP (Gymnasium's
    default: the step after a termination deals the table again, its action ignored,
    reward 0), SAME_STEP (dealt at once; `info["final_obs"]` holds the last observation)
    or DISABLED (`reset(options={"reset_mask": …})` deals the tables you name).
    `reset(seed=s)` seeds table i with s + i, as `SyncVectorEnv` seeds its environments;
    options: `reset_mask`, and per table `boards` and `bot_seeds` (lists of N, None for a
    table without), as `NapSeatEnv.reset` takes them, and `seat` (the learner's seat from
    this reset on; None: unchanged). `info["reward"]` (masked by
    `info["_reward"]`) holds the chips settled before a dealt table's first turn.
    `lineups`: one list of opponents a table, instead of `opponents` for every table.
    `tables[i]` is table i (`tables[i].table.records`: its match's hand records).
    `copy=False` returns the batch's own arrays, rewritten by the next call.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    # PLR0913: a public Gymnasium constructor; `gymnasium.make_vec` passes its options by keyword.
    def __init__(self, num_envs: int = 64, variant: str | Rules = "classic", players: int = 4,  # noqa: PLR0913
                 seat: int | Sequence[int] = 0, *, opponents: Sequence[Opponent] = ("random",), hands: int = 1,
                 overrides: Mapping[str, Any] | None = None, bots_dir: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, confinement: Confinement | None = None, stack: int = 0,
                 observation: str = "rich", kinds: Sequence[str] | None = None, base: Opponent | None = None,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP, copy: bool = True,
                 lineups: Sequence[Sequence[Opponent]] | None = None):
        if num_envs < 1:
            raise ValueError(f"num_envs {num_envs}: at least one table")
        self.rules = rules_of(variant, overrides)
        self.rules.check_players(players)
        seats = [seat] * num_envs if isinstance(seat, int) else list(seat)
        if len(seats) != num_envs or not all(0 <= s < players for s in seats):
            raise ValueError(f"seat {seat!r}: one seat of a table of {players}, or one a table ({num_envs})")
        chosen = [opponents] * num_envs if lineups is None else [list(lineup) for lineup in lineups]
        if len(chosen) != num_envs:
            raise ValueError(f"lineups: one list of opponents a table ({num_envs}), {len(chosen)} given")
        made: dict[str, Lineup] = {}  # tables with the same opponents share one lineup (and registry)
        for lineup in chosen:
            if repr(lineup) not in made:
                made[repr(lineup)] = Lineup(self.rules, players, lineup, hands=hands, stack=stack, bots_dir=bots_dir,
                                            timeout=timeout, confinement=confinement, kinds=kinds, base=base,
                                            registry=next((m.registry for m in made.values()), None))
        self.tables = [SeatedTable(made[repr(lineup)], s) for lineup, s in zip(chosen, seats)]
        # Dropped without close(), the environment still ends every table's seat processes.
        self._finalizer = weakref.finalize(self, close_left, *(t.remotes for t in self.tables))
        self.num_envs, self.players, self.hands, self.copy = num_envs, players, hands, copy
        self.autoreset_mode = _autoreset(autoreset_mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.lean = observation_is_lean(observation)
        self.single_observation_space = observation_space(self.lean)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.rows = Rows(num_envs, self.lean)
        self.seeding = _Seeding(num_envs)
        self.pending = [False] * num_envs  # NEXT_STEP: the tables the next step deals again

    def reset(self, *, seed: Seeds = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray] | np.ndarray, dict[str, Any]]:
        if isinstance(seed, int):
            super().reset(seed=seed)
        n, given = self.num_envs, options or {}
        seeds, mask = self.seeding.seeds(seed, n), _reset_mask(given, n)
        boards, bot_seeds = _per_table(given, "boards", n), _per_table(given, "bot_seeds", n)
        seats = _per_table(given, "seat", n)
        for i, seat in enumerate(seats):
            if seat is not None and not 0 <= seat < self.players:
                raise ValueError(f"options['seat'][{i}]: {seat} is not a seat at a table of {self.players}")
        rewards = np.zeros(n)
        for i in np.flatnonzero(mask).tolist():
            if seats[i] is not None and seats[i] != self.tables[i].seat:
                self.tables[i].sit(seats[i])
            self.rows.clear(i)
            rewards[i] = self._deal(i, seeds[i], boards[i], bot_seeds[i])
            self.pending[i] = False
        return self.rows.batch(self.copy), {"reward": rewards, "_reward": mask.copy()}

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray] | np.ndarray, np.ndarray, np.ndarray,
                                          np.ndarray, dict[str, Any]]:
        n, rows, mode, pending = self.num_envs, self.rows, self.autoreset_mode, self.pending
        chosen = _actions(actions, n)
        rewards, over = [0.0] * n, [False] * n
        dealt: list[tuple[int, float]] = []
        finals: list[tuple[int, Any]] = []
        _check_dealt(self.tables, pending)
        rows.clear()
        cells, flags, flag = rows.cells, rows.flags, rows.flag
        # The hot loop, written out: each table's answer, the bots' answers up to its
        # learner's next turn, and that turn's view and mask written into the batch.
        for i, seated in enumerate(self.tables):
            if pending[i]:
                dealt.append((i, self._deal(i, None)))
                pending[i] = False
                continue
            table = seated.table
            assert table is not None  # _check_dealt
            rewards[i] = seated.act(chosen[i])
            if not table.over:
                write(cells[i], table.acting_view())
                row = flags[i]
                for action in table.decision().actions:
                    row[action] = flag
                continue
            rows.put(table, seated.seat, i)  # the match is over: the learner's last view
            over[i] = True
            if mode is AutoresetMode.NEXT_STEP:
                pending[i] = True
            elif mode is AutoresetMode.SAME_STEP:
                finals.append((i, rows.row(i)))
                rows.clear(i)
                dealt.append((i, self._deal(i, None)))
        return (rows.batch(self.copy), np.array(rewards), np.array(over), np.zeros(n, np.bool_),
                self._info(dealt, finals))

    def views(self) -> list[View]:
        """Each table's learner view now, as naparena's `View` (what its row encodes, with
        the legal answers as the engine states them): built when asked, never by a step."""
        out = []
        for seated in self.tables:
            table = seated.table
            assert table is not None, "reset() first"
            mine = not table.over and table.hand.to_act == seated.seat
            out.append(table.acting_view() if mine else table.hand.view(seated.seat))
        return out

    def close_extras(self, **kwargs: Any) -> None:
        for seated in self.tables:
            seated.close()

    def _deal(self, i: int, seed: int | None, boards: Sequence[int] | None = None,
              bot_seeds: Mapping[int, int] | None = None) -> float:
        """Table i dealt a new match, its row written; the chips settled before its first turn."""
        seated = self.tables[i]
        reward = seated.deal(self.seeding.match_seed(i, seed), boards, bot_seeds)
        assert seated.table is not None
        self.rows.put(seated.table, seated.seat, i)
        return reward

    def _info(self, dealt: list[tuple[int, float]], finals: list[tuple[int, Any]]) -> dict[str, Any]:
        """Gymnasium's vector info: per key an array over the tables and its `_key` mask."""
        info: dict[str, Any] = {}
        n = self.num_envs
        if dealt:
            reward, which = np.zeros(n), np.zeros(n, np.bool_)
            for i, r in dealt:
                reward[i], which[i] = r, True
            info["reward"], info["_reward"] = reward, which
        if finals:
            final, which = np.full(n, None, object), np.zeros(n, np.bool_)
            for i, obs in finals:
                final[i], which[i] = obs, True
            info["final_obs"], info["_final_obs"] = final, which
            info["final_info"], info["_final_info"] = {}, which.copy()
        return info


class NapSelfPlay:
    """`num_envs` tables of `players` seats at which the learner answers every decision:
    at each step, one action a table for the seat to act there.

    Observations: {"observation": (N, 755) float32, "action_mask": (N, 363) int8, "to_act":
    (N,) the seat whose view each row is}. Rewards (N, players): every seat's chips when a
    hand settles at that table. A terminated table's row is the view of the seat that made
    its last decision (no legal action). Seeding, autoreset and options as `NapVectorEnv`
    (no bots, so no `bot_seeds`); table i plays the match `NapEnv` (PettingZoo) plays
    when reset with the same seed and given the same actions.
    """

    def __init__(self, num_envs: int = 64, variant: str | Rules = "classic", players: int = 4, *,
                 hands: int = 1, overrides: Mapping[str, Any] | None = None, stack: int = 0,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP, copy: bool = True):
        if num_envs < 1:
            raise ValueError(f"num_envs {num_envs}: at least one table")
        if hands < 1:
            raise ValueError("a match has at least one hand")
        self.rules = rules_of(variant, overrides)
        self.rules.check_players(players)
        self.num_envs, self.players, self.hands, self.stack, self.copy = num_envs, players, hands, stack, copy
        self.autoreset_mode = _autoreset(autoreset_mode)
        self.metadata = {"autoreset_mode": self.autoreset_mode}
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8), "to_act": spaces.Discrete(players)})
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.tables: list[Table | None] = [None] * num_envs
        self.rows = Rows(num_envs, lean=False)
        self.to_act = np.zeros(num_envs, np.int64)
        self.seeding = _Seeding(num_envs)
        self.pending = [False] * num_envs

    def reset(self, *, seed: Seeds = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        n, given = self.num_envs, options or {}
        seeds, mask = self.seeding.seeds(seed, n), _reset_mask(given, n)
        boards = _per_table(given, "boards", n)
        for i in np.flatnonzero(mask).tolist():
            self.rows.clear(i)
            self._deal(i, seeds[i], boards[i])
            self.pending[i] = False
        return self._observation(), {}

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        n, rows, pending, tables = self.num_envs, self.rows, self.pending, self.tables
        chosen = _actions(actions, n)
        rewards = np.zeros((n, self.players))
        over = [False] * n
        to_act: list[int] = self.to_act.tolist()
        ended: list[int] = []
        _check_dealt(tables, pending)
        rows.clear()
        cells, flags, flag = rows.cells, rows.flags, rows.flag
        # The hot loop, written out: one decision at every table, its next view and mask
        # written into the batch's rows.
        for i, table in enumerate(tables):
            if pending[i]:
                self._deal(i, None)
                pending[i] = False
                to_act[i] = int(self.to_act[i])
                continue
            assert table is not None  # _check_dealt
            chips = table.act(chosen[i])
            if chips is not None:
                rewards[i] = chips
                if table.over:
                    over[i] = True
                    ended.append(i)
                    continue
            seat = table.hand.to_act
            assert seat is not None  # the table is not over: a decision is due
            to_act[i] = seat
            write(cells[i], table.acting_view())
            row = flags[i]
            for action in table.decision().actions:
                row[action] = flag
        info = self._end(ended, to_act) if ended else {}
        self.to_act = np.array(to_act, np.int64)
        return self._observation(), rewards, np.array(over), np.zeros(n, np.bool_), info

    def _end(self, ended: list[int], to_act: list[int]) -> dict[str, Any]:
        """The tables whose match just ended: their last view (of the seat that made the
        last decision), then as the autoreset mode says."""
        rows, mode, finals = self.rows, self.autoreset_mode, []
        for i in ended:
            table = self.tables[i]
            assert table is not None
            seat = to_act[i]  # still the seat that acted
            rows.put(table, seat, i)
            if mode is AutoresetMode.NEXT_STEP:
                self.pending[i] = True
            elif mode is AutoresetMode.SAME_STEP:
                final = rows.row(i)
                assert isinstance(final, dict)  # self-play observes the rich form
                finals.append((i, {**final, "to_act": seat}))
                rows.clear(i)
                self._deal(i, None)
                to_act[i] = int(self.to_act[i])
        if not finals:
            return {}
        final, which = np.full(self.num_envs, None, object), np.zeros(self.num_envs, np.bool_)
        for i, obs in finals:
            final[i], which[i] = obs, True
        return {"final_obs": final, "_final_obs": which}

    def close(self) -> None:
        """Nothing to release (no bots, no seat processes): for the same calls as `NapVectorEnv`."""

    def _deal(self, i: int, seed: int | None, boards: Sequence[int] | None = None) -> None:
        table = self.tables[i] = Table(self.rules, self.players, self.hands, self.seeding.match_seed(i, seed),
                                       self.stack, None if boards is None else tuple(boards))
        seat = table.to_act
        self.to_act[i] = seat
        self.rows.put(table, seat, i)

    def _observation(self) -> dict[str, np.ndarray]:
        batch = self.rows.batch(self.copy)
        assert isinstance(batch, dict)
        return {**batch, "to_act": self.to_act.copy() if self.copy else self.to_act}
