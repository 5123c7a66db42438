"""A match a run logged, played again through the Gymnasium face from the run directory:
the same deals, the other seats' bots with the seeds the run gave them, and the seat's
logged answers as actions, so a learner can study (or imitate) a tournament's play."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from naparena.arena.records.ledger import STAND_IN_BOT
from naparena.arena.records.rundir import RunDir
from naparena.arena.rerun import recorded_tournament
from naparena.arena.setup.schedule import board_seeds, bot_seed
from naparena.envs.encoding import action_of
from naparena.envs.single import NapSeatEnv
from naparena.game.engine import Hand, Match
from naparena.game.rules import Rules
from naparena.table.play import feed


@dataclass
class Replay:
    """A logged match in `env`, reset to its start (`obs`, `info` as `reset` gave them);
    `actions` are the logged answers of `seat`, in order, as the environment's actions."""

    env: NapSeatEnv
    log: dict[str, Any]
    seat: int
    actions: list[int]
    obs: dict[str, np.ndarray] | np.ndarray
    info: dict[str, Any]
    rewards: list[float] = field(default_factory=list)

    def play(self) -> list[dict[str, Any]]:
        """Step every logged action; the hand records the environment settled (the log's
        `hands`, for a match replayed exactly). Each step's reward is kept in `rewards`."""
        info: dict[str, Any] = {"records": []}
        for action in self.actions:
            self.obs, reward, done, _, info = self.env.step(action)
            self.rewards.append(reward)
            if done:
                break
        return list(info["records"])


def replay(run_dir: str | Path, match: int, seat: int = 0) -> Replay:
    """Match `match` of the run in `run_dir` in a `NapSeatEnv` whose learner sits in
    `seat`: the other seats hold the run's bots (names, params, isolation, external
    programs, drop-ins from the run's bots folder), seeded as the run seeded them
    (`naparena.arena.setup.schedule.bot_seed`), a stand-in where the run had one. The
    logged answers of `seat` are `actions`. Exact for matches whose decisions were all
    answered (a fault, such as a time-out, is the machine's and is not replayed)."""
    rd = RunDir(run_dir)
    t = recorded_tournament(rd)
    found = rd.read_match(match)
    if found.skipped is not None:
        raise ValueError(f"{rd}: match {match} was skipped: {found.skipped}")
    log = found.data
    players = len(log["bots"])
    if not 0 <= seat < players:
        raise ValueError(f"seat {seat} is not at this match's table of {players}")
    by_alias = {b.alias: b for b in t.bots}
    stand_ins = set(found.stand_ins)
    opponents: list[dict[str, Any]] = []
    for s, logged in enumerate(log["bots"]):
        if s == seat:
            continue
        if s in stand_ins:
            opponents.append({"name": STAND_IN_BOT})
            continue
        bot = by_alias[logged["alias"]]
        entry: dict[str, Any] = {"name": bot.name, "params": dict(logged["params"]),
                                 "isolation": t.isolation_of(bot)}
        if bot.command is not None:
            entry["command"] = t.command_of(bot)
        opponents.append(entry)
    rules = Rules.from_dict(log["rules"])
    boards = board_seeds(log["seed"], found.spec.hands) if found.spec.boards else None
    env = NapSeatEnv(rules, players, seat=seat, opponents=opponents, hands=len(log["hands"]),
                     stack=log.get("stack", 0), bots_dir=rd.read_where().get("bots_dir"), timeout=t.timeout,
                     confinement=t.seats)
    seeds = {s: bot_seed(t.seed, match, s) for s in range(players) if s != seat}
    obs, info = env.reset(seed=log["seed"], options={"boards": boards, "bot_seeds": seeds})
    return Replay(env, log, seat, logged_actions(log, seat, boards), obs, info)


def logged_actions(log: dict[str, Any], seat: int, boards: tuple[int, ...] | None = None) -> list[int]:
    """The answers `seat` gave in a match log, as actions, found by feeding the logged
    answers to a fresh match (the verifier's replay)."""
    match = Match(Rules.from_dict(log["rules"]), len(log["bots"]), log["seed"], log.get("stack", 0), boards)
    actions: list[int] = []

    def watch(hand: Hand, answer: Any, fault: str | None) -> None:
        if hand.to_act != seat:
            return
        if fault is not None:
            raise ValueError(f"seat {seat} faulted in hand {hand.hand_no} ({fault}): a fault is not replayed")
        assert hand.kind is not None  # a decision is due
        actions.append(action_of(hand.kind, hand.hands[seat], answer))

    for logged in log["hands"]:
        hand = match.next_hand()
        feed(hand, logged, watch=watch)
        match.finish(hand)
    return actions
