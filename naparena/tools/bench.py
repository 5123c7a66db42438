"""Benchmarks (never tests): engine hands per second with uniformly random legal answers,
and whole-match throughput through the bot interface with logging."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from naparena.game.engine import Hand, Match
from naparena.game.rules import VARIANTS, default_table, make_rules
from naparena.table.play import play_hands, record_into


def engine_rate(variant: str = "classic", players: int = 4, hands: int = 20000, seed: int = 1,
                overrides: dict[str, Any] | None = None, clock: Callable[[], float] = time.process_time,
                log: bool = False) -> float:
    """Hands per second of the bare engine: deal, decide at random, settle. One core.

    With `log`, each hand's record is also encoded as JSON into a buffer, as a match log
    holds it (the reference loop's "with json log" figure).
    """
    rules = make_rules(variant, overrides)
    match = Match(rules, players, seed)
    return _engine_loop([(match, random.Random(seed).choice, hands)], clock, log)


def _engine_loop(matches: list[tuple[Match, Callable[[Any], Any], int]], clock: Callable[[], float],
                 log: bool) -> float:
    """Hands per second over `matches`, (Match, answer picker, hands) each: the table's own
    match loop (`play_hands`) with the picker in every seat and no bot interface."""
    body = bytearray()
    book = record_into(body, _ignore) if log else None
    total = sum(n for _, _, n in matches)
    start = clock()
    for match, choice, hands in matches:
        def play(hand: Hand, choice: Callable[[Any], Any] = choice) -> None:
            while not hand.over:
                hand.apply(choice(hand.legal()))
        play_hands(match, hands, play, book)
    return total / (clock() - start)


def _ignore(record: dict[str, Any]) -> None:
    pass


def match_rate(variant: str = "classic", players: int = 4, hands: int = 20000, seed: int = 1,
               isolated: bool = False, clock: Callable[[], float] = time.process_time) -> tuple[float, float]:
    """(hands per second, bytes per hand) of one match of `random` bots through the bot
    interface, supervision and JSON logging, in this process; `isolated`, each bot in its
    own seat process, start-up included (then only a wall `clock` counts the bots' work)."""
    from naparena.arena.match.job import Job, seat_record
    from naparena.arena.match.play import play_job
    from naparena.bots.plugins import load_registry

    registry = load_registry(None)
    where = "process" if isolated else "inline"
    seats = tuple(seat_record(f"random{i}", "random", {}, i, isolation=where) for i in range(players))
    job = Job(index=0, seed=seed, variant=variant, rules=make_rules(variant), seats=seats, hands=hands)
    start = clock()
    data = bytes(play_job(job, registry))
    return hands / (clock() - start), len(data) / hands


#: The two wall-clock rows `naparena bench` sets side by side.
INLINE_WALL = "match of random bots, inline, wall clock"
ISOLATED_WALL = "match of random bots, each in a seat process, wall clock"


def all_variants(hands: int) -> list[tuple[str, int, float]]:
    return [(v, p, engine_rate(v, p, hands)) for v in VARIANTS for p in [default_table(make_rules(v))]]


def measures(hands: int, every_variant: bool) -> list[tuple[str, Callable[[], float]]]:
    """(name, function returning hands/s) of every measure `naparena bench` takes, each
    once: the classic engine at four players is the first row, not repeated per variant."""
    out: list[tuple[str, Callable[[], float]]] = [
        ("engine, classic, 4 players", lambda: engine_rate(hands=hands)),
        ("engine, classic, 4 players, JSON hand log", lambda: engine_rate(hands=hands, log=True)),
        ("engine, classic, 4 players, every trick played",
         lambda: engine_rate(hands=hands, overrides={"stop_when_decided": False})),
        ("match of random bots, bot interface and JSON log", lambda: match_rate(hands=hands)[0]),
        (INLINE_WALL, lambda: match_rate(hands=hands, clock=time.perf_counter)[0]),
        (ISOLATED_WALL, lambda: match_rate(hands=hands, isolated=True, clock=time.perf_counter)[0]),
    ]
    if every_variant:
        for v in VARIANTS:
            players = default_table(make_rules(v))
            if (v, players) != ("classic", 4):
                out.append((f"engine, {v}, {players} players", partial(engine_rate, v, players, max(hands // 2, 1))))
    return out


def spread(rates: list[float]) -> tuple[float, float, float]:
    """(best, median, (highest − lowest) / median) of repeated rates."""
    ordered = sorted(rates)
    n = len(ordered)
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return ordered[-1], median, (ordered[-1] - ordered[0]) / median
