"""Seats at the table's speed: what a seat process costs, warm and cold, against inline play
and the bare loop (a benchmark, never a test).

    python benchmarks/seat_speed.py [--against OLD_CHECKOUT] [--rounds 3] [--matches 24]
        [--starts 20] [--sandbox off,bwrap] [--only start,hands,bar,instructions]
        [--bare /path/to/bareloop.py] [--json PATH]

Every figure is CPU time, counted by the kernel for every process a measurement starts
(a cpuacct cgroup made for it: bubblewrap's processes, a server's forks and a killed
seat's children included, which `getrusage` misses), or instructions counted by
callgrind; both move little with the load of other work, where wall time does not. Each
round runs every configuration once, in turn, so that all see the same machine, and
`--against` runs the same measurements on another checkout (the code before a change)
in the same rounds.

- start: a seat's start-up, handshake and close, per seat, for the built-in `random`
  and a drop-in bot that imports numpy; warm (forked from its server, after the first)
  and cold;
- hands: a tournament of four `random` bots, 150 hands a match, one worker, through the
  command line: all CPU per hand, inline and with every bot in a seat process (warm and
  cold), sandbox off and bubblewrap, and each over inline;
- bar: the same isolated run's hands per CPU second and per wall second, over the bare
  reference loop's (`--bare`, a pure-Python Nap loop) on this machine;
- instructions: callgrind's count per hand of every process of one isolated match
  (the worker, the server, each seat), beside the inline match and the bare loop; the
  sandbox off (valgrind cannot follow bubblewrap's namespaces).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
CPUACCT = Path("/sys/fs/cgroup/cpuacct")

NUMPY_BOT = '''"""A random bot that imports numpy, as a learner's bot would."""
import numpy as np

import naparena
from naparena import Bot


class NumpyRandom(Bot):
    name = "numpy_random"
    description = "random legal answers, numpy imported"

    def _pick(self, view):
        return view.legal[int(np.int64(self.rng.randrange(len(view.legal))))]

    bid = play = peep = exchange = garnet = garnet_discard = trumps = _pick
    floater_peep = peep_exchange = floater_discard = _pick


@naparena.hookimpl
def register_bots(register):
    register(NumpyRandom)
'''

TOURNAMENT = """[tournament]
name = "seat-speed"
seed = 2026
seeds = {seeds}
hands = 150
table = 4
duplicate = true
workers = 1
timeout = 30.0
isolation = "{isolation}"
[seats]
sandbox = "{sandbox}"
{start}
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


# --- counting CPU -------------------------------------------------------------------------

@contextlib.contextmanager
def cpu_group() -> Iterator[Path]:
    """A fresh cpuacct cgroup; whatever joins it (and every process it starts) is counted."""
    path = CPUACCT / f"naparena-bench-{os.getpid()}-{time.monotonic_ns()}"
    path.mkdir()
    try:
        yield path
    finally:
        for _ in range(200):
            try:
                path.rmdir()
                break
            except OSError:
                time.sleep(0.05)


def cpu_seconds(group: Path) -> float:
    return int((group / "cpuacct.usage").read_text()) / 1e9


def counted(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float, str]:
    """(CPU seconds of every process, wall seconds, stdout) of one command; it finds its
    own cgroup's folder in $SEAT_SPEED_GROUP."""
    with cpu_group() as group:
        tasks = str(group / "tasks")

        def join() -> None:
            with open(tasks, "w") as f:
                f.write(str(os.getpid()))
        start = time.perf_counter()
        done = subprocess.run(argv, env={**env, "SEAT_SPEED_GROUP": str(group)}, cwd=cwd, capture_output=True,
                              text=True, preexec_fn=join, check=False)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
        time.sleep(0.2)  # a killed seat's last processes are reaped by then
        return cpu_seconds(group), wall, done.stdout


def environment(checkout: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONPATH=str(checkout), PYTHONHASHSEED="0")
    return env


# --- start: one seat's start, handshake and close -----------------------------------------------

def start_child(bot: str, bots_dir: str | None, sandbox: str, start: str, starts: int) -> None:
    """In the measured process: `starts` seats of `bot`, one after another, after one
    untimed (a warm server's start); prints the CPU of every process, per seat, in ms."""
    from naparena.arena.match.job import seat_record
    from naparena.arena.match.sandbox import module_files
    from naparena.arena.match.seats import close_seats, start_seats
    from naparena.arena.setup.settings import Confinement, Sandbox
    from naparena.bots.plugins import bot_version, importable, load_registry

    entry = load_registry(bots_dir).get(bot)
    where = importable(entry)
    serves = (where, bot_version(entry)) if where else None
    seats = (seat_record("s", bot, {}, 1, isolation="process", serves=serves, files=module_files(entry.cls)),)
    options: dict[str, Any] = {"sandbox": Sandbox(sandbox)}
    if "start" in Confinement.__dataclass_fields__:  # an older checkout starts every seat cold
        options["start"] = start
    confinement = Confinement(**options)
    usage = Path(os.environ["SEAT_SPEED_GROUP"]) / "cpuacct.usage"
    for i in range(starts + 1):
        if i == 1:
            before = int(usage.read_text())
        bots = start_seats(seats, bots_dir, 30.0, confinement, "bench")
        assert bots[0].channel is not None, bots[0].broken
        close_seats(bots)
    print(f"{(int(usage.read_text()) - before) / 1e6 / starts:.3f}")


def measure_start(checkout: Path, bot: str, bots_dir: str | None, sandbox: str, start: str, starts: int) -> float:
    """CPU milliseconds of every process, per seat (`start_child`)."""
    argv = [sys.executable, __file__, "--child-start", bot, bots_dir or "-", sandbox, start, str(starts)]
    return float(counted(argv, environment(checkout))[2].split()[-1])


# --- hands: whole runs ------------------------------------------------------------------

def run_tournament(checkout: Path, folder: Path, isolation: str, sandbox: str, start: str, matches: int,
                   new: bool = True) -> tuple[float, float]:
    """(CPU, wall) seconds of `naparena run` of `matches` matches of four random bots
    (`new`: a checkout that knows `[seats] start`)."""
    file = folder / f"t-{isolation}-{sandbox}-{start}.toml"
    file.write_text(TOURNAMENT.format(seeds=max(1, matches // 24), isolation=isolation,
                                      sandbox=sandbox if isolation == "process" else "off",
                                      start=f'start = "{start}"' if new else ""))
    logs = folder / f"logs-{time.monotonic_ns()}"
    cpu, wall, _ = counted([sys.executable, "-m", "naparena", "run", str(file), "--log-dir", str(logs)],
                           environment(checkout), cwd=folder)
    shutil.rmtree(logs, ignore_errors=True)
    return cpu, wall


def bare_rate(hands: int, bare: Path) -> tuple[float, float]:
    """(hands per CPU second, hands per wall second) of the bare loop. It plays `hands`
    without a log, then again with one: the CPU rate counts both (a start-up's CPU taken
    off, from a run of 10 hands), the wall rate is its own figure without a log."""
    idle, _, _ = counted([sys.executable, str(bare), "10"], dict(os.environ))
    cpu, _, out = counted([sys.executable, str(bare), str(hands)], dict(os.environ))
    wall_rate = float(re.search(r"(\d+) hands/s no log", out).group(1))  # type: ignore[union-attr]
    return 2 * hands / (cpu - idle), wall_rate


# --- instructions: callgrind, every process ------------------------------------------------------

def play_child(mode: str, hands: int, start: str) -> None:
    """In the measured process: one match of four random bots, inline or isolated."""
    from naparena.arena.match.job import Job, seat_record
    from naparena.arena.match.play import play_job
    from naparena.arena.setup.settings import Confinement, Sandbox, Timing
    from naparena.bots.plugins import bot_version, importable, load_registry
    from naparena.game.rules import make_rules

    registry = load_registry(None)
    entry = registry.get("random")
    serves = (importable(entry), bot_version(entry))
    options: dict[str, Any] = {"sandbox": Sandbox.OFF, "memory_mb": 0, "open_files": 0, "start_timeout": 600.0}
    if "start" in Confinement.__dataclass_fields__:
        options["start"] = start
    seats = tuple(seat_record(f"r{i}", "random", {}, 11 + i, isolation=mode, serves=serves) for i in range(4))
    for index in range(2):  # the first match starts the server (warm): the second is measured
        job = Job(index=index, seed=7 + index, variant="classic", rules=make_rules("classic"), seats=seats,
                  hands=hands if index else 1, timing=Timing(timeout=600.0), confinement=Confinement(**options))
        bytes(play_job(job, registry))


def instructions(checkout: Path, mode: str, hands: int, start: str, folder: Path) -> dict[str, int]:
    """Instructions of each kind of process for one measured match: the worker, the seat
    processes (warm: the server and the seats it forked)."""
    out = folder / f"cg-{mode}-{start}-{hands}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    argv = ["valgrind", "--tool=callgrind", "--trace-children=yes", "--vgdb=no", f"--callgrind-out-file={out}/%p.out",
            sys.executable, __file__, "--child-play", mode, str(hands), start]
    done = subprocess.run(argv, env=environment(checkout), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"callgrind {mode} failed:\n{done.stderr[-3000:]}")
    kinds: dict[str, int] = {}
    for file in out.glob("*.out"):
        text = file.read_text(errors="replace")
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        cmd = re.search(r"^cmd: (.*)$", text, re.M)
        if total is None or cmd is None:
            continue
        command = cmd.group(1)
        # A warm run's server and its forks run a seat's own command line, as cold seats do.
        kind = "seat processes" if "naparena.bots.serve" in command else "worker"
        kinds[kind] = kinds.get(kind, 0) + int(total.group(1))
    return kinds


def bare_instructions(hands: int, bare: Path) -> int:
    def count(n: int) -> int:
        done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                               str(bare), str(n)], capture_output=True, text=True, check=True)
        return int(re.search(r"Collected : ([\d,]+)", done.stderr).group(1).replace(",", ""))  # type: ignore[union-attr]
    return (count(hands) - count(0)) // (2 * hands)  # it plays its hands twice, without and with a log


# --- the report ---------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, default=None, help="another checkout, measured in the same rounds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--matches", type=int, default=24, help="matches of 150 hands a run (hands)")
    parser.add_argument("--starts", type=int, default=20, help="seats timed a configuration (start)")
    parser.add_argument("--sandbox", default="off,bwrap")
    parser.add_argument("--only", default="start,hands,bar,instructions")
    parser.add_argument("--bare", type=Path, default=None, help="the bare reference loop (bar, instructions)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child-start", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--child-play", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_start:
        bot, bots_dir, sandbox, start, starts = args.child_start
        start_child(bot, None if bots_dir == "-" else bots_dir, sandbox, start, int(starts))
        return
    if args.child_play:
        play_child(args.child_play[0], int(args.child_play[1]), args.child_play[2])
        return
    if not CPUACCT.is_dir():
        sys.exit("needs a writable cpuacct cgroup hierarchy (root, cgroup v1) to count every process's CPU")
    checkouts = {"now": HERE, **({"before": args.against.resolve()} if args.against else {})}
    for checkout in checkouts.values():  # as `pip install` leaves a package: its bytecode compiled
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "naparena")], check=False,
                       capture_output=True)
    only = set(args.only.split(","))
    results: dict[str, list[float]] = {}

    def note(key: str, value: float) -> None:
        results.setdefault(key, []).append(value)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bots = folder / "bots"
        bots.mkdir()
        (bots / "numpy_random.py").write_text(NUMPY_BOT)
        for r in range(args.rounds):
            print(f"round {r + 1} of {args.rounds}, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
            for label, checkout in checkouts.items():
                one_round(args, label, checkout, folder, bots, note)
            if "bar" in only and args.bare is not None and args.bare.is_file():
                cpu_rate, wall_rate = bare_rate(50_000, args.bare)
                note("bar bare hands/s-cpu", cpu_rate)
                note("bar bare hands/s-wall", wall_rate)
        if "instructions" in only and shutil.which("valgrind"):
            counts(args, checkouts, folder, note)
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def one_round(args: argparse.Namespace, label: str, checkout: Path, folder: Path, bots: Path,
              note: Callable[[str, float], None]) -> None:
    """One round of `start` and `hands` (and `bar`'s runs) for one checkout."""
    only = set(args.only.split(","))
    starts = ("cold", "warm") if label == "now" else ("cold",)
    sandboxes = args.sandbox.split(",")
    if "start" in only:
        for sandbox in sandboxes:
            for start in starts:
                for bot, where in (("random", None), ("numpy_random", str(bots))):
                    ms = measure_start(checkout, bot, where, sandbox, start, args.starts)
                    note(f"start ms/seat {label} {bot} {sandbox} {start}", ms)
    if "hands" in only or "bar" in only:
        hands = args.matches // 24 * 24 * 150
        cpu, _ = run_tournament(checkout, folder, "inline", "off", "cold", args.matches, new=label == "now")
        note(f"hands us/hand {label} inline", 1e6 * cpu / hands)
        for sandbox in sandboxes:
            for start in starts:
                cpu, wall = run_tournament(checkout, folder, "process", sandbox, start, args.matches,
                                           new=label == "now")
                note(f"hands us/hand {label} process {sandbox} {start}", 1e6 * cpu / hands)
                note(f"bar hands/s-cpu {label} {sandbox} {start}", hands / cpu)
                note(f"bar hands/s-wall {label} {sandbox} {start}", hands / wall)


def counts(args: argparse.Namespace, checkouts: dict[str, Path], folder: Path,
           note: Callable[[str, float], None]) -> None:
    """Callgrind's instructions per hand, every process, inline and isolated."""
    for label, checkout in checkouts.items():
        for mode, start in (("inline", "cold"), ("process", "cold"), ("process", "warm")):
            if label != "now" and start == "warm":
                continue
            one, many = (instructions(checkout, mode, n, start, folder) for n in (1, 151))
            for kind in many:
                note(f"instructions/hand {label} {mode} {start} {kind}", (many[kind] - one.get(kind, 0)) / 150)
    if args.bare is not None and args.bare.is_file():
        note("instructions/hand bare loop", bare_instructions(2000, args.bare))


def report(results: dict[str, list[float]]) -> None:
    for key, values in results.items():
        shown = ", ".join(f"{v:,.1f}" for v in values)
        print(f"{key}: median {statistics.median(values):,.1f} ({shown})")
    inline = {k.split()[2]: statistics.median(v) for k, v in results.items() if k.endswith(" inline")}
    for key, values in results.items():
        parts = key.split()
        if key.startswith("hands us/hand") and parts[3] == "process" and parts[2] in inline:
            ratios = [v / statistics.median(results[f"hands us/hand {parts[2]} inline"]) for v in values]
            print(f"  {key} over inline: {statistics.median(ratios):.1f}x")
    bare = results.get("bar bare hands/s-cpu")
    bare_wall = results.get("bar bare hands/s-wall")
    for key, values in results.items():
        if key.startswith("bar hands/s-cpu") and bare:
            print(f"  {key} over the bare loop: {statistics.median(values) / statistics.median(bare):.3f}x")
        if key.startswith("bar hands/s-wall") and bare_wall:
            print(f"  {key} over the bare loop: {statistics.median(values) / statistics.median(bare_wall):.3f}x")


if __name__ == "__main__":
    main()
