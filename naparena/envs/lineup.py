"""The bots around a learner: who sits in the other seats, seated, seeded and supervised
exactly as `naparena run` does it. One `Lineup` (the names, the registry, the sandbox
mode) serves every table of an environment; a `SeatedTable` is one match in progress.
`NapSeatEnv` steps one of them, `NapVectorEnv` many.

The learner may answer only some decision kinds (`kinds`, say `("bid",)`): its seat then
holds a bot too (`base`), which answers the rest and gets the seat's lifecycle hooks, as
`policy_bot(..., kinds=…, base=…)` plays at a tournament's table.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from naparena.arena.match import sandbox
from naparena.arena.match.job import SeatRecord, seat_record
from naparena.arena.match.play import supervisor
from naparena.arena.match.seats import RemoteBot, close_seats, start_seats
from naparena.arena.session import resolve_sandbox
from naparena.arena.setup.reader import _bot_process
from naparena.arena.setup.schedule import derive_seed
from naparena.arena.setup.settings import Confinement, Isolation
from naparena.bots.bot import DECISIONS
from naparena.bots.plugins import Registry, load_registry
from naparena.envs.table import Table
from naparena.game.engine import Hand
from naparena.game.rules import Rules
from naparena.table import Seat
from naparena.table import Table as Sitting

Opponent = str | Mapping[str, Any]
LEARNER = "learner"  # the learner's alias in the match info the bots get
REDEALS = 100  # matches dealt in a row without a decision for the learner before giving up


def seat_plan(opponent: Opponent, seat: int) -> SeatRecord:
    """A bot name, or {"name", "params", "isolation", "command"} as a tournament file's [[bots]]
    entry, its `isolation` and `command` checked by the file's own reader (the same words):
    read once, into the seat as it is started (its seed given at each deal)."""
    entry: dict[str, Any] = {"name": opponent} if isinstance(opponent, str) else dict(opponent)
    unknown = set(entry) - {"name", "params", "isolation", "command"}
    name = entry.get("name")
    if unknown or not isinstance(name, str):
        raise ValueError(f"opponent {opponent!r}: give a bot name, or name, params, isolation, command")
    command, isolation = _bot_process(entry, "", f"opponents[seat {seat}]")
    process = command is not None or isolation is Isolation.PROCESS
    return seat_record(f"{name}@{seat}", name, dict(entry.get("params", {})), 0,
                       isolation=Isolation.PROCESS if process else Isolation.INLINE, command=command)


class Lineup:
    """The other seats' bots for a learner at a table of `players` (`opponents`: one name or
    entry for every other seat, or one per seat in order), checked once: an unknown name
    fails here, not mid-episode. `kinds`: the decision kinds the learner answers (None:
    all), the rest answered by the bot `base` in the learner's seat. `registry`: the bots
    already loaded from `bots_dir` (another lineup's), else loaded here."""

    # PLR0913: the single and vector environments pass their constructors' options through.
    def __init__(self, rules: Rules, players: int, opponents: Sequence[Opponent], *,  # noqa: PLR0913
                 hands: int, stack: int, bots_dir: str | None, timeout: float, confinement: Confinement | None,
                 kinds: Sequence[str] | None = None, base: Opponent | None = None, registry: Registry | None = None):
        if hands < 1:
            raise ValueError("a match has at least one hand")
        self.rules, self.players, self.hands, self.stack, self.timeout = rules, players, hands, stack, timeout
        self.chosen = list(opponents)
        if len(self.chosen) == 1:
            self.chosen *= players - 1  # one name fills every other seat
        if len(self.chosen) != players - 1:
            raise ValueError(f"{players - 1} opponents needed, {len(self.chosen)} given")
        self.kinds = _kinds(kinds, base)
        self.base = None if base is None or self.kinds is None else base
        # Absolute, as a run gives it: seat processes start in an empty directory.
        folder = Path(bots_dir or "bots")
        self.bots_dir = str(folder.absolute()) if folder.is_dir() else None
        self.registry = registry if registry is not None else load_registry(self.bots_dir)
        self._specs: dict[int, dict[int, SeatRecord]] = {}
        self._makers: dict[int, dict[int, Callable[[random.Random, int], Any]]] = {}
        probe = self.specs(0)  # every entry checked, and the sandbox resolved, before any table
        self.confinement = self._resolved(confinement or Confinement(), probe)

    def specs(self, seat: int) -> dict[int, SeatRecord]:
        """seat -> the bot planned there, around a learner in `seat` (its base bot included)."""
        if seat not in self._specs:
            if not 0 <= seat < self.players:
                raise ValueError(f"seat {seat} is not at a table of {self.players}")
            others = [s for s in range(self.players) if s != seat]
            plans = {s: seat_plan(o, s) for s, o in zip(others, self.chosen)}
            if self.base is not None:
                plans[seat] = dataclasses.replace(seat_plan(self.base, seat), alias=LEARNER)
            for s, plan in plans.items():
                if plan.command is None:
                    cls = self.registry.get(plan.name).cls  # an unknown name fails here, not mid-episode
                    if plan.in_process:  # its own module, seen in its sandbox
                        plans[s] = dataclasses.replace(plan, files=tuple(sandbox.module_files(cls)))
            self._specs[seat] = plans
        return self._specs[seat]

    def makers(self, seat: int) -> dict[int, Callable[[random.Random, int], Any]]:
        """seat -> what makes its bot, around a learner in `seat` (worked out once a seat)."""
        if seat not in self._makers:
            self._makers[seat] = {s: self.maker(plan) for s, plan in self.specs(seat).items()}
        return self._makers[seat]

    def maker(self, plan: SeatRecord) -> Callable[[random.Random, int], Any]:
        """(rng, seat) -> a new bot of `plan`, as `Registry.make` builds it (its parameters
        checked once, here, and copied for each bot only when one could change them)."""
        if plan.command is not None:
            return _no_bot  # a program in a seat process: start_seats speaks to it
        cls = self.registry.get(plan.name).cls
        params = cls.validate_params(dict(plan.params))
        if all(type(v) in _IMMUTABLE for v in params.values()):
            return lambda rng, seat: cls(rng, seat, **params)
        return lambda rng, seat: cls(rng, seat, **copy.deepcopy(params))

    @staticmethod
    def _resolved(confinement: Confinement, plans: Mapping[int, SeatRecord]) -> Confinement:
        """The sandbox mode resolved once, as a run resolves it (auto: bubblewrap where it
        works, else off with a warning), so the seats compare it and infer nothing."""
        if not any(plan.in_process for plan in plans.values()):
            return confinement
        resolved, warning = resolve_sandbox(confinement, None)
        if warning is not None:
            warnings.warn(warning, stacklevel=4)
        return resolved


_IMMUTABLE = (int, float, bool, str, type(None))


def close_left(*tables_remotes: dict[int, RemoteBot]) -> None:
    """End the seat processes in each of `tables_remotes` (told to shut down, then killed)
    and forget them: `close()`'s work, and a dropped environment's finalizer's."""
    for remotes in tables_remotes:
        if remotes:
            close_seats(remotes)
        remotes.clear()


def _no_bot(rng: random.Random, seat: int) -> Any:
    raise AssertionError("a seat process's bot is started by start_seats")


def _kinds(kinds: Sequence[str] | None, base: Opponent | None) -> frozenset[str] | None:
    if kinds is None:
        if base is not None:
            raise ValueError("base: the bot for the decisions the learner leaves, so give kinds too")
        return None
    chosen = frozenset(kinds)
    unknown = chosen - set(DECISIONS)
    if unknown or not chosen:
        raise ValueError(f"kinds {sorted(kinds)}: name some of {', '.join(DECISIONS)}")
    if chosen == set(DECISIONS):
        return None
    if base is None:
        raise ValueError(f"kinds {sorted(chosen)}: name the base bot that answers the other decisions")
    return chosen


class SeatedTable:
    """One match at a table: the learner in `seat`, the lineup's bots in the others.
    `deal` starts a match and lets the bots answer up to the learner's first turn; `act`
    answers that turn with an action and lets them answer up to the next. Each returns
    the learner's chips settled meanwhile."""

    def __init__(self, lineup: Lineup, seat: int):
        self.lineup, self.learned = lineup, lineup.kinds
        self.sit(seat)
        self.table: Table | None = None
        self.bots: dict[int, Any] = {}
        # The seat processes playing now, filled and emptied in place: an environment's
        # finalizer holds the same dict (`close_left`), so an environment dropped without
        # close() ends its processes too.
        self.remotes: dict[int, RemoteBot] = {}
        self.sitting: Sitting | None = None

    def sit(self, seat: int) -> None:
        """The learner in `seat` from the next `deal` on."""
        lineup = self.lineup
        self.seat, self.specs = seat, lineup.specs(seat)
        # What every match at this table seats alike, worked out once: a one-hand episode
        # seats its bots anew each hand (a reset costs more than the hand's own play).
        self.aliases = [self.specs[s].alias if s in self.specs else LEARNER for s in range(lineup.players)]
        self.processes = any(plan.in_process for plan in self.specs.values())
        self.makers = lineup.makers(seat)

    def deal(self, match_seed: int, boards: Sequence[int] | None = None,
             bot_seeds: Mapping[int, int] | None = None) -> float:
        """A new match from `match_seed` (`boards`: each hand's own deal seed, as a duplicate
        run's); the bots seeded from it and their seats unless `bot_seeds` says. A match in
        which the learner would never act is dealt again from a seed derived from the first."""
        lineup = self.lineup
        for _ in range(REDEALS):
            self.close()
            self.table = Table(lineup.rules, lineup.players, lineup.hands, match_seed, lineup.stack,
                               None if boards is None else tuple(boards), self._answered)
            self._seat_bots(match_seed, bot_seeds)
            self._start_hand()
            reward = self._play_others()
            if not self.table.over:
                return reward
            # The learner sat out the whole match (a dealer out at six): an episode needs a turn.
            match_seed = derive_seed(match_seed, "again")
        raise ValueError(f"the learner in seat {self.seat} was never asked a decision in {REDEALS} matches: "
                         f"the rules never ask {sorted(self.learned or ())}?")

    def act(self, action: int) -> float:
        """The learner's answer (an action outside the mask is the engine's fault), then the
        bots' answers until its next turn or the match's end."""
        table = self.table
        assert table is not None and not table.over, "deal() first"
        reward = self._book(table.act(action))
        return reward + self._play_others()

    @property
    def over(self) -> bool:
        return self.table is None or self.table.over

    def close(self) -> None:
        close_left(self.remotes)
        self.bots = {}

    # --- the other seats ---------------------------------------------------------------

    def _seat_bots(self, match_seed: int, given: Mapping[int, int] | None) -> None:
        """The bots, at the table every entry point plays at (`naparena.table`): the same
        hooks, match info, supervision and fault rules as a run."""
        lineup, specs = self.lineup, self.specs
        seeds = {s: derive_seed(match_seed, "bot", s) for s in specs}
        seeds.update(given or {})
        if self.processes:
            process = [dataclasses.replace(specs[s], seed=seeds[s]) if s in specs else seat_record(LEARNER, "", {}, 0)
                       for s in range(lineup.players)]
            self.remotes.update(start_seats(process, lineup.bots_dir, lineup.timeout, lineup.confinement,
                                            "environment"))
        self.bots = {s: self.remotes[s] if s in self.remotes else make(random.Random(seeds[s]), s)
                     for s, make in self.makers.items()}
        aliases = self.aliases
        self.sitting = Sitting([Seat(self.bots[s], aliases[s]) if s in self.bots else None
                                for s in range(lineup.players)], supervisor(lineup.timeout))
        self.sitting.start_match(0, aliases, lineup.rules, lineup.hands, lineup.timeout)

    def _start_hand(self) -> None:
        assert self.table is not None and self.sitting is not None
        self.sitting.start_hand(self.table.hand)

    def _answered(self, hand: Hand) -> None:
        """After every answer, the learner's too: the bots' events, and a hand's end told."""
        sitting = self.sitting
        assert sitting is not None
        sitting.tell(hand)
        if hand.over:
            sitting.end_hand(hand)

    def _play_others(self) -> float:
        """Let the bots answer until the learner is to answer or the match is over: each
        hand's decisions through the bots' table (`Sitting.decide_until`, supervised as a
        run supervises them), each finished hand settled by the match's driver."""
        table, sitting, reward = self.table, self.sitting, 0.0
        assert table is not None and sitting is not None
        while not table.over:
            hand = table.hand
            sitting.decide_until(hand, self.seat, self.learned)
            if not hand.over:
                return reward
            sitting.end_hand(hand)
            reward += self._book(table.settle())
        return reward

    def _book(self, chips: list[int] | None) -> float:
        if chips is None:
            return 0.0
        table, sitting = self.table, self.sitting
        assert table is not None and sitting is not None
        if sitting.told:
            sitting.tell_hand_end(table.records[-1])
        if table.over:
            sitting.end_match(self.lineup.hands)
            self.close()
        else:
            self._start_hand()
        return float(chips[self.seat])
