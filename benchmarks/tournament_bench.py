"""Tournament throughput and memory (a benchmark, never a test).

    python benchmarks/tournament_bench.py            # hands/s at 1 and 2 workers
    python benchmarks/tournament_bench.py --memory   # parent peak RSS for growing runs

Throughput: four `random` bots, classic, duplicate, JSON logs on; compared with the bare
engine (`naparena bench`) measured in the same process, by the same clock: wall clock
for both, and CPU time for both (one worker plays in this process, so its CPU time is the
whole run's). Best of --repeat, the measurements interleaved; the 1-worker ratios also
round by round (median and range), since this host's speed drifts between rounds.
Memory: the parent's peak RSS (ru_maxrss) of whole runs of 50,000, 100,000 and 200,000
hands, each in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOURNAMENT = """[tournament]
name = "bench"
seed = 1
seeds = {seeds}
hands = {hands}
table = 4
duplicate = true
[[bots]]
name = "random"
alias = "r1"
[[bots]]
name = "random"
alias = "r2"
[[bots]]
name = "random"
alias = "r3"
[[bots]]
name = "random"
alias = "r4"
[[variants]]
name = "classic"
"""


# The throughput run: 8 seed streams x 4 rotations = 32 matches of 1,000 hands. Long
# enough that starting and stopping two worker processes is not what is measured.
SEEDS, HANDS = 8, 1000


def run(workers: int, seeds: int, hands: int, folder: Path, clock=time.perf_counter) -> float:
    """Hands per second of one whole run (by default wall clock, the parent's view)."""
    from naparena.arena.session import Session

    path = folder / f"t{workers}-{seeds}-{hands}.toml"
    path.write_text(TOURNAMENT.format(seeds=seeds, hands=hands))
    session = Session.open(path, log_dir=folder / "logs", workers=workers)
    start = clock()
    session.play()
    return session.hands / (clock() - start)


def engine_on_schedule(folder: Path, clock, log: bool = False) -> float:
    """The bare engine (`naparena bench`'s loop: random legal answers from one rng) over the
    very matches the 1-worker run plays: the same rules, match seeds and hand counts, so
    the comparison holds the deals fixed. With `log`, it also encodes every hand record as
    the match logs do."""
    import random

    from naparena.arena.setup.reader import load_tournament
    from naparena.arena.setup.schedule import schedule
    from naparena.game.engine import Match
    from naparena.tools.bench import _engine_loop

    path = folder / "t-engine.toml"
    path.write_text(TOURNAMENT.format(seeds=SEEDS, hands=HANDS))
    t = load_tournament(path)
    rules = {v.name: v.rules for v in t.variants}
    matches = [(Match(rules[s.variant], t.table, s.seed), random.Random(s.seed).choice, s.hands)
               for s in schedule(t)]
    return _engine_loop(matches, clock, log)


def _engine_process(_) -> float:
    from naparena.tools.bench import engine_rate

    return engine_rate(hands=HANDS * 8, clock=time.perf_counter)


def engine_pair() -> float:
    """Hands/s of two bare-engine processes at once over one alone: what this machine's two
    cores give a perfectly parallel job, the ceiling for the 2-worker figure."""
    import multiprocessing

    one = _engine_process(0)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        start = time.perf_counter()
        pool.map(_engine_process, [0, 1])
        two = 2 * HANDS * 8 / (time.perf_counter() - start)
    return two / one


def throughput(repeat: int) -> None:
    """Best of `repeat`, the runs interleaved so that both sides see the same machine; the
    engine and the tournament timed by the same clock."""
    from naparena.tools.bench import engine_rate

    best: dict[str, float] = {}
    rounds: dict[str, list[float]] = {"log": [], "bare": []}

    def keep(key: str, rate: float) -> float:
        best[key] = max(best.get(key, 0.0), rate)
        return rate

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for _ in range(repeat):
            keep("bench", engine_rate(hands=20000))
            engine = keep("engine", engine_on_schedule(folder, time.process_time))
            engine_log = keep("engine_log", engine_on_schedule(folder, time.process_time, log=True))
            one = keep("one", run(1, SEEDS, HANDS, folder, time.process_time))
            # A round's three runs follow each other within seconds: their ratio cancels
            # most of the host's drift, which best-of figures taken minutes apart do not.
            rounds["log"].append(one / engine_log)
            rounds["bare"].append(one / engine)
            keep("one_wall", run(1, SEEDS, HANDS, folder))
            keep("engine_wall", engine_on_schedule(folder, time.perf_counter))
            keep("two", run(2, SEEDS, HANDS, folder))
            keep("pair", engine_pair())
    print(f"engine (naparena bench, CPU time):         {best['bench']:9,.0f} hands/s")
    print(f"engine on the run's own matches:           {best['engine']:9,.0f} hands/s CPU, "
          f"{best['engine_wall']:,.0f} wall")
    print(f"  the same, logging every hand as JSON:    {best['engine_log']:9,.0f} hands/s CPU")
    print(f"tournament, 1 worker (logs on):            {best['one']:9,.0f} hands/s CPU, "
          f"{best['one_wall']:,.0f} wall")
    print(f"  1 worker / engine logging too:           {best['one'] / best['engine_log']:9.3f} (CPU time)")
    print(f"  1 worker / engine without a log:         {best['one'] / best['engine']:9.3f} CPU time, "
          f"{best['one_wall'] / best['engine_wall']:.3f} wall clock")
    for key, label in (("log", "engine logging too"), ("bare", "engine without a log")):
        r = sorted(rounds[key])
        print(f"  1 worker / {label}, round by round: median {statistics.median(r):.3f}, "
              f"range {r[0]:.3f}-{r[-1]:.3f} over {len(r)} rounds")
    print(f"tournament, 2 workers:                     {best['two']:9,.0f} hands/s wall "
          f"({best['two'] / best['one_wall']:.2f}x one worker)")
    print(f"  two engine processes / one (the ceiling): {best['pair']:8.2f}x")


def memory_child(hands_total: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        seeds = hands_total // (1000 * 4)
        run(2, seeds, 1000, Path(tmp))
    print(json.dumps({"hands": hands_total, "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def memory() -> None:
    for total in (50_000, 100_000, 200_000):
        out = subprocess.run([sys.executable, __file__, "--memory-child", str(total)],
                             capture_output=True, text=True, check=True).stdout
        got = json.loads(out.strip().splitlines()[-1])
        print(f"{got['hands']:>8,} hands: parent peak RSS {got['maxrss_mb']:.1f} MB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--memory-child", type=int)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
    elif args.memory:
        memory()
    else:
        throughput(args.repeat)
