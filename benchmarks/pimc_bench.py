"""Benchmark of the `pimc` bot (not a test): decision times at default settings, solver
speed, and optionally its strength against `heuristic` and `random` on duplicate deals.

    .venv/bin/python benchmarks/pimc_bench.py                  # times and solver speed
    .venv/bin/python benchmarks/pimc_bench.py --strength 2000  # plus chips on duplicate deals
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from naparena.bots.pimc import PimcBot
from naparena.bots.reference import HeuristicBot, RandomBot
from naparena.bots.solver import MAKE, TRICKS, Position, solve
from naparena.game import cards
from naparena.game.engine import Match
from naparena.game.rules import make_rules

BOTS = {"pimc": PimcBot, "heuristic": HeuristicBot, "random": RandomBot}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def decision_times(variant: str, players: int, hands: int, seed: int) -> tuple[dict, list[int]]:
    """Seconds per pimc decision, by kind, and [card decisions that sampled, those a budget
    cut short]: pimc in every other seat, heuristic between. (A bid may stop sampling early
    on purpose, once no contract can pay.)"""
    rules = make_rules(variant)
    match = Match(rules, players, seed)
    bots = [(PimcBot if seat % 2 == 0 else HeuristicBot)(random.Random(seed + seat), seat)
            for seat in range(players)]
    times: dict[str, list[float]] = {}
    cut = [0, 0]
    for _ in range(hands):
        hand = match.next_hand()
        while not hand.over:
            bot = bots[hand.to_act]
            view = hand.view()
            bot.last_samples = None
            start = time.perf_counter()
            answer = getattr(bot, hand.kind)(view)
            spent = time.perf_counter() - start
            if isinstance(bot, PimcBot) and len(view.legal) > 1:
                times.setdefault(hand.kind, []).append(spent)
                if hand.kind == "play" and bot.last_samples is not None:
                    cut[0] += 1
                    cut[1] += bot.last_samples < bot.samples
            hand.apply(answer)
        match.finish(hand)
    return times, cut


def solver_speed(players: int, size: int, pack: int, goal: str, deals: int, seed: int) -> tuple[float, int]:
    """(nodes per second, nodes) solving random deals from the opening lead, trumps by lead."""
    rng = random.Random(seed)
    deck = list(cards.pack(pack))
    nodes, spent = 0, 0.0
    for _ in range(deals):
        rng.shuffle(deck)
        hands = tuple(tuple(sorted(deck[i * size:(i + 1) * size])) for i in range(players))
        pos = Position(hands, tuple(range(players)), 0, bidder=0, need=3, trumps_by_lead=True)
        start = time.perf_counter()
        nodes += solve(pos, goal=goal).nodes
        spent += time.perf_counter() - start
    return nodes / spent, nodes


def _match_chips(job) -> dict[str, int]:
    variant, players, names, seed, hands = job
    rules = make_rules(variant)
    totals = dict.fromkeys(names, 0)
    for turn in range(len(names)):  # every seating of the deals: duplicate
        lineup = [names[(i + turn) % len(names)] for i in range(players)]
        match = Match(rules, players, seed)
        bots = [BOTS[name](random.Random(seed * 31 + seat), seat) for seat, name in enumerate(lineup)]
        for _ in range(hands):
            hand = match.next_hand()
            while not hand.over:
                hand.apply(getattr(bots[hand.to_act], hand.kind)(hand.view()))
            match.finish(hand)
        for seat, name in enumerate(lineup):
            totals[name] += match.chips[seat]
    return totals


def strength(opponent: str, deals: int, workers: int, per_set: int = 50) -> None:
    """Chips per 100 hands of pimc and `opponent`, two seats each at a classic table of four,
    every deal played in both seatings; a 95 % interval from the deal sets' paired results."""
    names = ["pimc", opponent]
    sets = max(2, deals // per_set)
    jobs = [("classic", 4, names, 1000 + s, per_set) for s in range(sets)]
    start = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(_match_chips, jobs))
    # Per deal set: pimc's chips per 100 hands per seat (each bot holds two seats of four
    # in each of two seatings). The bots' chips sum to zero, so this is also the margin.
    per_set_hands = per_set * 2 * 2
    rates = [100 * r["pimc"] / per_set_hands for r in results]
    mean = statistics.mean(rates)
    half = 1.96 * statistics.stdev(rates) / len(rates) ** 0.5
    print(f"  pimc vs {opponent}: {mean:+.1f} chips per 100 hands per seat (95% CI {mean - half:+.1f}"
          f" to {mean + half:+.1f}), {sets * per_set} deals x 2 seatings = {sets * per_set * 2} hands,"
          f" {time.perf_counter() - start:.0f} s")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=300, help="hands for the decision times")
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--strength", type=int, default=0, metavar="DEALS",
                        help="also play DEALS duplicate deals against heuristic (a quarter as"
                             " many against random, which needs far fewer)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)

    times, cut = decision_times(args.variant, args.players, args.hands, seed=7)
    print(f"pimc decision times, {args.variant} at {args.players}, {args.hands} hands, default params"
          f" {PimcBot.params}:")
    for kind, spent in sorted(times.items()):
        print(f"  {kind:16} n={len(spent):5}  median {1e3 * statistics.median(spent):7.1f} ms"
              f"  p95 {1e3 * percentile(spent, 0.95):7.1f} ms  max {1e3 * max(spent):7.1f} ms")
    sampled, short = cut
    print(f"  card decisions that sampled: {sampled}; cut short by max_nodes or time_budget: {short}")
    print("solver, random deals solved from the opening lead (trumps named by the lead):")
    for players, size, pack in ((4, 5, 28), (5, 5, 32), (4, 7, 52)):
        for goal in (MAKE, TRICKS):
            deals = 200 if size == 5 else 20
            rate, nodes = solver_speed(players, size, pack, goal, deals, seed=3)
            print(f"  {players} x {size} cards, {pack}-card pack, goal {goal:6}: {rate:9,.0f} nodes/s"
                  f"  ({nodes / deals:,.0f} nodes a deal)")
    if args.strength:
        print("strength, classic at four, duplicate deals, default params:")
        strength("heuristic", args.strength, args.workers)
        strength("random", max(100, args.strength // 4), args.workers)


if __name__ == "__main__":
    sys.exit(main())
