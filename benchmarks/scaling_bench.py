"""How a run scales with its workers: wall time, CPU by process kind, speed-up (a benchmark, never a test).

    python3 benchmarks/scaling_bench.py [--workers 1,2,4,8,16] [--modes inline,isolated]
        [--hands 28800] [--rounds 1] [--sandbox auto|off|on] [--dask] [--dask-running] [--json PATH]

For each worker count (default: 1, 2, 4, ... up to the cores here, and the cores), in one
run: a tournament of four `random` bots (one variant, duplicate, 150 hands a match by
default, so 28,800 hands are 192 matches), played through the command line, `python3 -m naparena run
FILE --workers N`, inline and with every bot in a seat process. Only the standard library
and the command line are used, so the script outlives moves of the project's modules,
and it runs where the project is only on PYTHONPATH (the many-core `run.sh`).

How the CPU is counted (user + system seconds):
- all: `resource.getrusage(RUSAGE_CHILDREN)` of this script around the run (exact);
- parent: the run's own process, read from `/proc/PID/stat` while it is a zombie (this
  script waits for its exit without reaping it): exact, to the clock tick; plus its
  probes of the sandbox (its children in a session of their own), sampled;
- workers: the parent's descendants in its own session (the pool's forked workers; with
  `--dask`, the nannies, Dask workers and their pools), sampled from `/proc` every
  `--sample` seconds; the last sample of each is kept, so a worker's last interval
  before its exit is missed (about one interval a worker);
- seats: all - parent - workers, i.e. every seat process (each starts a session of its
  own: bubblewrap, the bot, spares), however short-lived, plus what the workers' samples
  missed; inline, with no seat process, that rest goes to the workers. In the JSON,
  "seats~" is the sampled sum over seat processes (a lower bound: it misses the
  short-lived) and "seat_processes" how many were seen (a seat lives a whole match).
  Sandboxed, a bot is reaped inside bubblewrap's pid namespace, and with `--dask` the
  cluster's processes are killed, not reaped by the run: their CPU reaches no rusage,
  so "all" is at least the samples' sum, and seats then a lower bound (each seat's last
  interval is missed: it idles then, waiting for its match's end).

The CPU of every cell comes from one run (the median wall of `--rounds`).
The speed-up is the wall time at the first worker count over this one; "cpu/hand" is
all CPU over hands played, in microseconds; "ms/match" the wall time over matches.
`--dask` adds, per worker count, the same runs on a local Dask cluster of N
single-threaded worker processes (`--scheduler local:N`: the scheduler runs in the
parent, and the cluster's start is part of the run), round by round after the pool's,
and the ratio of their speeds; `--dask-running` the same on a cluster already running
(`dask scheduler` and `dask worker --nworkers N --nthreads 1`, started before the rounds
and given one untimed run first, so each timed run is what `--scheduler tcp://...` costs
a run on a cluster that has served one). `--match-hands 1` makes each match cost next to
nothing to play, so ms/match is then the per-match cost of the path.

Before timing, the naparena package's bytecode is compiled (as `pip install` leaves an
installed package): with PYTHONDONTWRITEBYTECODE set and an editable install, every
process would otherwise compile naparena's source as it imports it, and a path with more
processes (Dask's) would pay that more often.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

TOURNAMENT = """[tournament]
name = "scaling-{mode}"
seed = 2026
seeds = {seeds}
hands = {hands}
table = 4
duplicate = true
timeout = 5.0
isolation = "{isolation}"
[seats]
sandbox = "{sandbox}"
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

SEATINGS = 24  # duplicate seatings of four bots at a table of four
TICK = os.sysconf("SC_CLK_TCK")


def stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (field 3 on), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rindex(b")") + 2:].split()


def cpu_of(fields: list[bytes]) -> float:
    """utime + stime, in seconds (fields 14 and 15 of stat)."""
    return (int(fields[11]) + int(fields[12])) / TICK


class Sampler(threading.Thread):
    """The run's descendants from /proc: each one's latest CPU and kind. A seat process
    is started in a session of its own (so that its whole group can be killed, bubblewrap
    and the bot's children with it); every other descendant (a pool worker, a Dask
    nanny or worker, a forkserver) stays in the parent's session and counts as a worker."""

    def __init__(self, root: int, interval: float):
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.latest: dict[int, tuple[str, float]] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(self.interval)

    def sample(self) -> None:
        parents: dict[int, int] = {}
        sessions: dict[int, int] = {}
        cpu: dict[int, float] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            fields = stat_fields(int(name))
            if fields is None or fields[0] in (b"Z", b"X"):
                continue  # a zombie's stat still counts, but it was sampled alive
            pid = int(name)
            parents[pid], sessions[pid], cpu[pid] = int(fields[1]), int(fields[3]), cpu_of(fields)
        if self.root not in sessions:
            return
        for pid in parents:
            up, below, depth = pid, pid, 0  # below: the ancestor that is the root's child
            while up in parents and up != self.root and depth < 32:
                below, up, depth = up, parents[up], depth + 1
            if up != self.root or pid == self.root:
                continue
            if sessions[below] != sessions[self.root]:
                kind = "parent"  # the parent's own probe of the sandbox (bubblewrap) and its child
            else:
                kind = "workers" if sessions[pid] == sessions[self.root] else "seats"
            self.latest[pid] = (kind, cpu[pid])


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(argv: list[str], cwd: Path, env: dict[str, str], interval: float) -> dict[str, Any]:
    """One run of the CLI: wall, CPU by kind, and its output's last line."""
    before = children_cpu()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sampler = Sampler(proc.pid, interval)
    sampler.start()
    assert proc.stdout is not None
    output = proc.stdout.read()
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # a zombie: its stat holds its totals
    wall = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    fields = stat_fields(proc.pid)
    assert fields is not None
    parent = cpu_of(fields) + sum(c for kind, c in sampler.latest.values() if kind == "parent")
    proc.wait()
    total = children_cpu() - before
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{output.decode(errors='replace')[-3000:]}")
    workers = sum(c for kind, c in sampler.latest.values() if kind == "workers")
    seats_seen = [c for kind, c in sampler.latest.values() if kind == "seats"]
    # A process reaped outside the run's tree (a bot in bubblewrap's pid namespace, a
    # Dask worker its cluster killed) reaches no rusage: then only the samples see it.
    total = max(total, parent + workers + sum(seats_seen))
    rest = max(0.0, total - parent - workers)
    if not seats_seen:  # no seat processes: what the samples missed is the workers' last moments
        workers, rest = workers + rest, 0.0
    return {"wall": wall, "cpu": total, "parent": parent, "workers": workers,  # CPU s; count: how many
            "seats": rest, "seats~": sum(seats_seen), "seat_processes": len(seats_seen),
            "processes": len(sampler.latest)}


class RunningCluster:
    """`dask scheduler` and `dask worker --nworkers N --nthreads 1` on loopback, as processes
    of their own (in sessions of their own, so the sampler does not count them as the run's)."""

    def __init__(self, python: str, workers: int, folder: Path, env: dict[str, str]):
        dask = [python, "-m", "dask"]
        self.file = folder / f"scheduler-{workers}.json"
        self.file.unlink(missing_ok=True)
        local = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
        quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env,
                                 "start_new_session": True}
        self.procs = [subprocess.Popen([*dask, "scheduler", *local, "--port", "0",
                                        "--scheduler-file", str(self.file)], **quiet)]
        while not self.file.exists():
            time.sleep(0.05)
        self.procs.append(subprocess.Popen(
            [*dask, "worker", *local, "--scheduler-file", str(self.file),
             "--nworkers", str(workers), "--nthreads", "1", "--no-dashboard",
             "--local-directory", str(folder / f"w{workers}")], **quiet))
        wait = ("from distributed import Client; import sys; "
                "Client(scheduler_file=sys.argv[1]).wait_for_workers(int(sys.argv[2]), timeout=300)")
        subprocess.run([python, "-c", wait, str(self.file), str(workers)], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def close(self) -> None:
        for p in reversed(self.procs):  # the workers first, then the scheduler
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def compile_bytecode(python: str, cwd: Path, env: dict[str, str]) -> str:
    """naparena's bytecode, written as `pip install` writes it for an installed package, for
    the naparena the runs import (from `cwd`, as they are started); returns its folder."""
    where = subprocess.run([python, "-c", "import naparena, os; print(os.path.dirname(naparena.__file__))"],
                           capture_output=True, text=True, check=True, env=env, cwd=cwd).stdout.strip()
    subprocess.run([python, "-m", "compileall", "-q", where], check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    return where


def bwrap_works() -> bool:
    if shutil.which("bwrap") is None:
        return False
    probe = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--unshare-all", "true"], capture_output=True)
    return probe.returncode == 0


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median wall time (its own CPU figures with it), plus every wall."""
    ordered = sorted(runs, key=lambda r: r["wall"])
    chosen = dict(ordered[len(ordered) // 2])
    chosen["walls"] = [round(r["wall"], 3) for r in runs]
    return chosen


def play_rounds(args: argparse.Namespace, path: Path, n: int, executors: list[str], folder: Path,
                env: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """`--rounds` runs of `path` at `n` workers on each executor, round by round, in order."""
    runs: dict[str, list[dict[str, Any]]] = {e: [] for e in executors}
    running = RunningCluster(args.python, n, folder, env) if args.dask_running else None
    try:
        where = {"pool": ["--workers", str(n)], "dask": ["--scheduler", f"local:{n}"],
                 "dask@": ["--scheduler", str(running.file) if running else ""]}
        if running:  # one run first: its workers' supervised children start then
            run_once([args.python, "-m", "naparena", "run", str(path), *where["dask@"],
                      "--log-dir", str(folder / "warm")], folder, env, args.sample)
            shutil.rmtree(folder / "warm", ignore_errors=True)
        for r in range(args.rounds):
            for executor in executors:
                logs = folder / f"logs-{path.stem}-{executor}-{n}-{r}"
                argv = [args.python, "-m", "naparena", "run", str(path), *where[executor],
                        "--log-dir", str(logs)]
                runs[executor].append(run_once(argv, folder, env, args.sample))
                shutil.rmtree(logs, ignore_errors=True)
    finally:
        if running:
            running.close()
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cores = len(os.sched_getaffinity(0))
    default = sorted({*(1 << i for i in range(cores.bit_length()) if 1 << i <= cores), cores})
    parser.add_argument("--workers", default=",".join(map(str, default)), help="comma-separated counts")
    parser.add_argument("--modes", default="inline,isolated", help="inline, isolated or both")
    parser.add_argument("--hands", type=int, default=28800, help="hands a run (a multiple of 24 matches)")
    parser.add_argument("--match-hands", type=int, default=150,
                        help="hands a match (1: what each match costs beyond its play)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each cell (the median is shown)")
    parser.add_argument("--sandbox", choices=["auto", "off", "on"], default="auto",
                        help="seat sandbox: on = bubblewrap (required), auto = on where it works")
    parser.add_argument("--dask", action="store_true", help="also on a local Dask cluster of N workers")
    parser.add_argument("--dask-running", action="store_true",
                        help="also on a running Dask cluster of N workers (tcp://, started before the rounds)")
    parser.add_argument("--sample", type=float, default=0.02, help="seconds between /proc samples")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs naparena")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    modes = [m.strip() for m in args.modes.split(",")]
    sandbox = {"off": "off", "on": "required"}.get(args.sandbox) or ("required" if bwrap_works() else "off")
    seeds = max(1, args.hands // (args.match_hands * SEATINGS))
    hands, matches = seeds * args.match_hands * SEATINGS, seeds * SEATINGS
    print(f"python {sys.version.split()[0]}, {cores} cores, load {os.getloadavg()[0]:.2f}, "
          f"{hands} hands a run, seat sandbox {'bubblewrap' if sandbox == 'required' else 'off'}"
          f"{' (no working bwrap here)' if args.sandbox == 'auto' and sandbox == 'off' else ''}; "
          f"CPU: parent exact, workers sampled every {args.sample:g} s, seats = all (rusage) - the rest"
          f"{'; sandboxed, seats are sampled (a lower bound)' if sandbox == 'required' else ''}",
          flush=True)
    env = dict(os.environ, NO_COLOR="1", COLUMNS="120")
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="scaling-bench-") as tmp:
        folder = Path(tmp)
        print(f"naparena from {compile_bytecode(args.python, folder, env)}, its bytecode compiled", flush=True)
        paths = {}
        for mode in modes:
            isolation = "process" if mode == "isolated" else "inline"
            paths[mode] = folder / f"{mode}.toml"
            paths[mode].write_text(TOURNAMENT.format(mode=mode, seeds=seeds, hands=args.match_hands,
                                                     isolation=isolation, sandbox=sandbox))
        executors = ["pool"] + (["dask"] if args.dask else []) + (["dask@"] if args.dask_running else [])
        print(f"{'mode':<9}{'exec':<6}{'workers':>8}{'wall s':>8}{'speed-up':>9}{'ms/match':>9}{'cpu s':>8}"
              f"{'parent':>8}{'workers':>8}{'seats':>8}{'cpu/hand us':>12}")
        for mode in modes:
            first: dict[str, float] = {}
            for n in counts:
                # Round by round, pool then Dask, so both see the machine's same moments.
                runs = play_rounds(args, paths[mode], n, executors, folder, env)
                for executor in executors:
                    cell = median_run(runs[executor])
                    first.setdefault(executor, cell["wall"])
                    cell.update(mode=mode, executor=executor, count=n, hands=hands, matches=matches,
                                speedup=first[executor] / cell["wall"])
                    results.append(cell)
                    print(f"{mode:<9}{executor:<6}{n:>8}{cell['wall']:>8.2f}{cell['speedup']:>9.2f}"
                          f"{cell['wall'] / matches * 1e3:>9.1f}{cell['cpu']:>8.2f}{cell['parent']:>8.2f}"
                          f"{cell['workers']:>8.2f}{cell['seats']:>8.2f}{cell['cpu'] / hands * 1e6:>12.0f}", flush=True)
                for executor, what in (("dask", "local:N, cluster start-up included"),
                                       ("dask@", "a running cluster")):
                    if executor not in runs:
                        continue
                    ratios = [p["wall"] / d["wall"] for p, d in zip(runs["pool"], runs[executor])]
                    extra = [(d["wall"] - p["wall"]) / matches * 1e3 for p, d in zip(runs["pool"], runs[executor])]
                    print(f"  {executor}/pool speed at {n}: {statistics.median(ratios):.2f} (rounds "
                          f"{', '.join(f'{x:.2f}' for x in ratios)}); its extra wall a match "
                          f"{statistics.median(extra):.1f} ms ({what})", flush=True)
    if args.json:
        meta = {"python": sys.version.split()[0], "cores": cores, "load": os.getloadavg(),
                "sandbox": "bubblewrap" if sandbox == "required" else "off", "hands": hands,
                "sample_s": args.sample}
        args.json.write_text(json.dumps({"machine": meta, "runs": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
