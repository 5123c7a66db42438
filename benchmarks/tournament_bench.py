"""Tournament throughput and memory (a benchmark, never a test).

    python benchmarks/tournament_bench.py            # hands/s at 1 and 2 workers
    python benchmarks/tournament_bench.py --memory   # parent peak RSS for growing runs

Throughput: four `random` bots, classic, duplicate, JSON logs on; compared with the bare
engine (`naparena bench`) measured in the same process. Memory: the parent's peak RSS
(ru_maxrss) of whole runs of 50,000, 100,000 and 200,000 hands, each in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import resource
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


def run(workers: int, seeds: int, hands: int, folder: Path) -> float:
    """Hands per second of one whole run (wall clock, parent's view)."""
    from naparena.runner import Run, new_run_dir, registry_for
    from naparena.tournament import check_bots, load_tournament

    path = folder / f"t{workers}-{seeds}-{hands}.toml"
    path.write_text(TOURNAMENT.format(seeds=seeds, hands=hands))
    t = load_tournament(path)
    registry = registry_for(t)
    t = check_bots(t, registry)
    runner = Run(t, registry, new_run_dir(t, folder / "logs"), workers)
    runner.prepare(False)
    start = time.perf_counter()
    runner.execute()
    return t.total_hands() / (time.perf_counter() - start)


def throughput(repeat: int) -> None:
    from naparena.bench import engine_rate

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        engine = max(engine_rate(hands=20000) for _ in range(repeat))
        one = max(run(1, 4, 1000, folder) for _ in range(repeat))
        two = max(run(2, 4, 1000, folder) for _ in range(repeat))
    print(f"engine (one core, CPU time):  {engine:9,.0f} hands/s")
    print(f"tournament, 1 worker:          {one:9,.0f} hands/s  ({one / engine:.2f} of the engine)")
    print(f"tournament, 2 workers:         {two:9,.0f} hands/s  ({two / one:.2f}x one worker)")


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
