"""A Dask cluster against the local pool on this machine (a benchmark, never a test).

    python benchmarks/cluster_bench.py [--repeat K] [--pool-against-pool | --machines]

Needs the extra (`pip install 'naparena[dask]'`). The scheduler and the workers are
started as their own processes on loopback (`dask scheduler`, `dask worker`), so this
process is only the naparena parent and its CPU time is the parent's alone.

1. Throughput: 384 matches (16 deal sets x 24 seatings) of 500 hands of four `random` bots (classic, duplicate, logs
   on), on 2 Dask workers and on the local pool of 2, the runs interleaved (which goes first
   alternating round by round), best of K and each round's ratio.
2. Per-match overhead: the same matches of one hand each, so that play costs next to nothing:
   wall time and parent CPU time per match, pool and cluster.
3. Hands/s at 1, 2 and 4 Dask workers (4 oversubscribes two cores: it shows whether the
   parent, rather than the cores, is what limits the rate).

`--machines` simulates a second machine on this one: a scheduler with one worker group
against one with two groups started separately (`dask worker` processes of one worker
and one thread each), and the local pool of one.

`--pool-against-pool` is the control for (1): the pool against itself, the same rounds,
so the round-by-round spread of a ratio that should be 1.00 shows what one round can tell.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TOURNAMENT = """[tournament]
name = "bench"
seed = 1
seeds = {seeds}
hands = {hands}
table = 4
duplicate = true
timeout = 5.0
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

SEEDS = 16  # x 24 duplicate seatings of four bots = 384 matches
DASK = Path(sys.executable).parent / "dask"


class Cluster:
    """`dask scheduler` and `groups` x `dask worker --nworkers N` (one thread each) as processes:
    each group a process of its own with its own nanny, as it would be on a machine of its own."""

    def __init__(self, workers: int, folder: Path, groups: int = 1):
        self.file = folder / f"scheduler-{workers}x{groups}.json"
        local = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
        env = {**os.environ, "NAPARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}
        quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
        self.scheduler = subprocess.Popen([str(DASK), "scheduler", *local, "--port", "0",
                                           "--scheduler-file", str(self.file)], **quiet)
        while not self.file.exists():
            time.sleep(0.05)
        self.groups = [subprocess.Popen([str(DASK), "worker", *local, "--scheduler-file", str(self.file),
                                         "--nworkers", str(workers), "--nthreads", "1", "--no-dashboard",
                                         "--local-directory", str(folder / f"w{workers}x{groups}-{g}")], **quiet)
                       for g in range(groups)]
        from distributed import Client
        with Client(scheduler_file=str(self.file), set_as_default=False) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(workers * groups)

    def scheduler_cpu(self) -> float:
        import psutil  # type: ignore[import-untyped]
        times = psutil.Process(self.scheduler.pid).cpu_times()
        return float(times.user + times.system)

    def close(self) -> None:
        for p in (*self.groups, self.scheduler):
            p.terminate()
            p.wait()


def run(folder: Path, hands: int, workers: int = 2, scheduler: str | None = None) -> dict[str, Any]:
    """One whole run: wall seconds, this process's CPU seconds, matches, hands."""
    from naparena.arena.session import Session

    path = folder / f"t-{hands}.toml"
    path.write_text(TOURNAMENT.format(seeds=SEEDS, hands=hands))
    session = Session.open(path, log_dir=folder / "logs", workers=workers, scheduler=scheduler)
    wall, cpu = time.perf_counter(), time.process_time()
    session.play()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    shutil.rmtree(session.run_dir.path)
    return {"wall": wall, "cpu": cpu, "matches": session.matches, "hands": session.hands}


def best(results: list[dict[str, Any]]) -> dict[str, Any]:
    return min(results, key=lambda r: r["wall"])


def main(repeat: int) -> None:
    os.environ["NAPARENA_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        two = Cluster(2, folder)
        print(f"starting a scheduler and 2 workers: {time.perf_counter() - started:.1f} s (not counted below)")
        address = str(two.file)
        run(folder, 10, scheduler=address)  # warm: each worker starts its supervised child once
        pool, dask, pool_small, dask_small = [], [], [], []
        sched_cpu = []
        for i in range(repeat):
            # Which goes first alternates, so a drift in the machine's speed favours neither.
            if i % 2:
                dask.append(run(folder, 500, scheduler=address))
                pool.append(run(folder, 500))
            else:
                pool.append(run(folder, 500))
                dask.append(run(folder, 500, scheduler=address))
            pool_small.append(run(folder, 1))
            before = two.scheduler_cpu()
            dask_small.append(run(folder, 1, scheduler=address))
            sched_cpu.append(two.scheduler_cpu() - before)
        two.close()
        p, d = best(pool), best(dask)
        def rate(r: dict[str, Any]) -> float:
            return float(r["hands"] / r["wall"])
        print(f"{p['matches']} matches x 500 hands, best of {repeat} (wall clock):")
        print(f"  local pool, 2 workers:   {rate(p):9,.0f} hands/s, "
              f"parent CPU {1000 * p['cpu'] / p['matches']:.2f} ms/match")
        print(f"  Dask, 2 workers:         {rate(d):9,.0f} hands/s, "
              f"parent CPU {1000 * d['cpu'] / d['matches']:.2f} ms/match")
        print(f"  Dask / pool, best of each: {rate(d) / rate(p):7.2f}x")
        rounds = [(dr["hands"] / dr["wall"]) / (pr["hands"] / pr["wall"]) for pr, dr in zip(pool, dask)]
        print(f"  Dask / pool round by round (each round's pool the reference): "
              f"{', '.join(f'{r:.2f}' for r in rounds)}; worst {min(rounds):.2f}, best {max(rounds):.2f}")
        ps, ds = best(pool_small), best(dask_small)
        print(f"{ps['matches']} matches x 1 hand (the cost of a match besides its play), best of {repeat}:")
        print(f"  local pool: {1000 * ps['wall'] / ps['matches']:6.2f} ms wall/match, "
              f"parent CPU {1000 * ps['cpu'] / ps['matches']:.2f} ms/match")
        print(f"  Dask:       {1000 * ds['wall'] / ds['matches']:6.2f} ms wall/match, "
              f"parent CPU {1000 * ds['cpu'] / ds['matches']:.2f} ms/match, "
              f"scheduler CPU {1000 * min(sched_cpu) / ds['matches']:.2f} ms/match")
        print(f"  Dask overhead over the pool: {1000 * (ds['wall'] - ps['wall']) / ds['matches']:.2f} ms wall/match")
        small = [(dr["wall"] - pr["wall"]) * 1000 / dr["matches"] for pr, dr in zip(pool_small, dask_small)]
        print(f"  Dask overhead round by round: {', '.join(f'{v:.2f}' for v in small)} ms wall/match")
        print(f"{p['matches']} matches x 500 hands on 1, 2 and 4 Dask workers (two cores), once each:")
        for workers in (1, 2, 4):
            cluster = Cluster(workers, folder)
            try:
                run(folder, 10, scheduler=str(cluster.file))  # warm
                r = run(folder, 500, scheduler=str(cluster.file))
            finally:
                cluster.close()
            print(f"  {workers} worker(s): {rate(r):9,.0f} hands/s, "
                  f"parent CPU {1000 * r['cpu'] / r['matches']:.2f} ms/match ({r['cpu'] / r['wall']:.0%} of one core)")
    print(json.dumps({"pool": p, "dask": d}))


def machines(repeat: int, hands: int) -> None:
    """What a second machine gives, simulated on this one: one scheduler with one worker
    group (`dask worker --nworkers 1 --nthreads 1`: a machine of one core), and one with
    two such groups started separately (two machines), against the local pool of one
    worker; 384 matches of `hands` hands, the three runs of a round in turn, which goes
    first rotating. On two cores each "machine" has one core."""
    os.environ["NAPARENA_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        one, two = Cluster(1, folder), Cluster(1, folder, groups=2)
        try:
            kinds = {"pool of 1": None, "Dask, one machine": str(one.file), "Dask, two machines": str(two.file)}
            for address in kinds.values():
                if address:
                    run(folder, 10, scheduler=address)  # warm: each worker starts its supervised child once
            rates: dict[str, list[float]] = {kind: [] for kind in kinds}
            for i in range(repeat):
                order = list(kinds)[i % 3:] + list(kinds)[:i % 3]
                for kind in order:
                    r = run(folder, hands, workers=1, scheduler=kinds[kind])
                    rates[kind].append(r["hands"] / r["wall"])
        finally:
            one.close()
            two.close()
        load = os.getloadavg()[0]
        print(f"384 matches x {hands} hands, {repeat} rounds, load {load:.1f} at the end (hands/s, each round):")
        for kind, values in rates.items():
            print(f"  {kind:<20} {', '.join(f'{v:,.0f}' for v in values)}")
        gain = [b / a for a, b in zip(rates["Dask, one machine"], rates["Dask, two machines"])]
        against = [b / a for a, b in zip(rates["pool of 1"], rates["Dask, two machines"])]
        print(f"  two machines / one, round by round: {', '.join(f'{g:.2f}' for g in gain)}")
        print(f"  two machines / this machine's pool of 1: {', '.join(f'{g:.2f}' for g in against)}")


def pool_against_pool(repeat: int) -> None:
    """The control: two identical pool runs a round, their ratio round by round."""
    os.environ["NAPARENA_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run(folder, 10)
        rounds = []
        for _ in range(repeat):
            first, second = run(folder, 500), run(folder, 500)
            rounds.append(first["wall"] / second["wall"])  # the second's rate over the first's
        print(f"pool / pool round by round (384 matches x 500 hands, the first run the reference): "
              f"{', '.join(f'{r:.2f}' for r in rounds)}; worst {min(rounds):.2f}, best {max(rounds):.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--pool-against-pool", action="store_true", help="the control: no Dask, the pool twice a round")
    parser.add_argument("--machines", action="store_true",
                        help="what a second machine gives, simulated here with two worker groups")
    parser.add_argument("--hands", type=int, default=500, help="hands a match, with --machines")
    args = parser.parse_args()
    if args.machines:
        machines(args.repeat, args.hands)
    elif args.pool_against_pool:
        pool_against_pool(args.repeat)
    else:
        main(args.repeat)
