"""What the seat sandbox costs (a benchmark, never a test).

    python benchmarks/sandbox_bench.py [--starts N] [--hands N] [--repeat K]
    python benchmarks/sandbox_bench.py --against OLD_CHECKOUT [--starts N] [--repeat K]

Round by round, interleaved so both modes see the same machine, for an isolated Python
bot (`random`, served by `naparena.bots.serve`):
- start-up: spawn to hello, with `sandbox = "off"` and in bubblewrap;
- the decision round trip (request sent to whole answer read) in a real match of four
  isolated `random` bots, median and mean, in each mode.
Each row gives every round and the best; the ratio rows divide within one round.

With `--against`, the sandboxed start-up of an external bot (a Python script run by this
interpreter: its folder, its environment and the cgroups made for it) in this checkout
against another checkout of naparena (an earlier commit: `git worktree add DIR COMMIT`),
each measured in its own process, the two alternating round by round: the process's
first start of the bot (its footprint found, its view opened and checked) apart from the
later ones (which reuse both).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

MODES = ("off", "bwrap")


def start_up(mode: str) -> float:
    from naparena.arena.match.job import seat_record
    from naparena.arena.match.seats import close_seats, start_seats
    from naparena.arena.setup.settings import Confinement
    seat = seat_record("r", "random", {}, 1, isolation="process")
    start = time.perf_counter()
    bots = start_seats([seat], None, 1.0, Confinement(sandbox=mode), "bench")
    took = time.perf_counter() - start
    assert bots[0].broken is None, bots[0].broken
    close_seats(bots)
    return took


PLAIN = str(Path(__file__).resolve().parent.parent / "tests" / "seat_programs" / "plain.py")
JQ = ('if .type == "hello" then {type: "hello", protocol: 1, name: "jq", params: {}} '
      'elif .type == "decide" then {type: "answer", answer: .view.legal[0]} else empty end')
#: The external bots measured: a Python script in this interpreter's environment (which the
#: new rule shows it, and the old did not), and jq with its program inline (the same files
#: under both rules: what is left is the seat's set-up, cgroups and stdout).
COMMANDS = {"python": [sys.executable, PLAIN], "jq": ["jq", "--unbuffered", "-c", JQ]}


def external_start_up(bot: str = "python") -> float:
    """Spawn to hello of an external bot, sandboxed (with what this checkout mounts)."""
    from naparena.arena.match.job import seat_record
    from naparena.arena.match.seats import close_seats, start_seats
    from naparena.arena.setup.settings import Confinement
    seat = seat_record("p", "plain", {}, 1, command=COMMANDS[bot])
    start = time.perf_counter()
    bots = start_seats([seat], None, 1.0, Confinement(sandbox="bwrap"), "bench")
    took = time.perf_counter() - start
    assert bots[0].broken is None, bots[0].broken
    close_seats(bots)
    return took


def footprint_cost(bot: str, times: int) -> dict[str, float]:
    """Median ms, caches cleared each time, to find what the bot is shown (`footprint`)
    and, where this checkout has one, to open and check its view."""
    from naparena.arena.match import bot_files, sandbox
    argv = tuple(COMMANDS[bot])
    found, opened = [], []
    for _ in range(times):
        bot_files.footprint.cache_clear()
        start = time.perf_counter()
        shown = bot_files.footprint(argv)
        found.append(time.perf_counter() - start)
        if hasattr(sandbox, "View"):
            start = time.perf_counter()
            sandbox.View.of(exact=shown.exact, links=shown.links).close()
            opened.append(time.perf_counter() - start)
    out = {"footprint": statistics.median(found) * 1e3}
    if opened:
        out["view"] = statistics.median(opened) * 1e3
    return out


def against(old: str, starts: int, repeat: int, bot: str) -> None:
    """This checkout's external start-up against `old`'s, round by round, alternating."""
    here = str(Path(__file__).resolve().parent.parent)
    taken: dict[str, list[float]] = {"new": [], "old": []}
    first: dict[str, list[float]] = {"new": [], "old": []}
    for _ in range(repeat):
        for name, tree in (("old", old), ("new", here)):
            done = subprocess.run([sys.executable, __file__, "--measure-starts", str(starts), "--bot", bot],
                                  check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": tree})
            times = json.loads(done.stdout)
            first[name].append(times[0])  # a process's first seat of the bot: its footprint and view made
            taken[name].append(statistics.median(times[1:] or times))
    def ms(v: float) -> str:
        return f"{v * 1e3:.1f}"

    row(f"{bot} first start-up, old rule (ms)", first["old"], ms)
    row(f"{bot} first start-up, new rule (ms)", first["new"], ms)
    ratio("first start-up new / old", first["new"], first["old"])
    row(f"{bot} later start-ups, old rule (ms, median)", taken["old"], ms)
    row(f"{bot} later start-ups, new rule (ms, median)", taken["new"], ms)
    ratio("later start-ups new / old", taken["new"], taken["old"])
    for name, tree in (("old", old), ("new", here)):
        done = subprocess.run([sys.executable, __file__, "--measure-footprint", "30", "--bot", bot], check=True,
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": tree})
        cost = json.loads(done.stdout)
        print(f"{bot} what it is shown, {name} rule: " + ", ".join(f"{k} {v:.2f} ms" for k, v in cost.items()))


def round_trips(mode: str, hands: int) -> list[float]:
    from naparena.arena.match.job import Job, seat_record
    from naparena.arena.match.play import play_job
    from naparena.arena.setup.settings import Confinement
    from naparena.bots.plugins import load_registry
    from naparena.game.rules import make_rules
    seats = tuple(seat_record(f"r{i}", "random", {}, i, isolation="process") for i in range(4))
    job = Job(index=0, seed=5, variant="classic", rules=make_rules("classic"), seats=seats, hands=hands,
              confinement=Confinement(sandbox=mode))
    times: list[float] = []
    play_job(job, load_registry(None), times, prestart=False)
    return times


def row(name: str, values: list[float], fmt) -> None:
    print(f"{name:<46} best {fmt(min(values)):>8}   rounds " + ", ".join(fmt(v) for v in values))


def ratio(name: str, sandboxed: list[float], off: list[float]) -> None:
    """Best against best, then round by round: never the most flattering round alone."""
    rounds = ", ".join(f"{b / o:.2f}" for b, o in zip(sandboxed, off))
    print(f"{name:<46} bests {min(sandboxed) / min(off):>7.2f}   rounds {rounds}")


def main() -> None:
    from naparena.arena.match import sandbox
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10, help="start-ups per mode and round")
    parser.add_argument("--hands", type=int, default=500, help="hands of the round-trip match")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", metavar="OLD_CHECKOUT", help="compare external start-ups with this checkout's")
    parser.add_argument("--bot", choices=sorted(COMMANDS), default="python",
                        help="with --against: the external bot started")
    parser.add_argument("--measure-starts", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--measure-footprint", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    why = sandbox.unavailable()
    if why:
        sys.exit(f"sandbox_bench: {why}; {sandbox.INSTALL_HINT}")
    if args.measure_footprint:
        print(json.dumps(footprint_cost(args.bot, args.measure_footprint)))
        return
    if args.measure_starts:
        print(json.dumps([external_start_up(args.bot) for _ in range(args.measure_starts)]))
        return
    if args.against:
        against(args.against, args.starts, args.repeat, args.bot)
        return
    starts: dict[str, list[float]] = {m: [] for m in MODES}
    medians: dict[str, list[float]] = {m: [] for m in MODES}
    means: dict[str, list[float]] = {m: [] for m in MODES}
    for _ in range(args.repeat):
        for mode in MODES:
            starts[mode].append(statistics.median(start_up(mode) for _ in range(args.starts)))
            trips = round_trips(mode, args.hands)
            medians[mode].append(statistics.median(trips))
            means[mode].append(statistics.fmean(trips))
    ms, us = (lambda v: f"{v * 1e3:.1f}"), (lambda v: f"{v * 1e6:.1f}")
    for mode in MODES:
        row(f"start-up, spawn to hello, {mode} (ms, median)", starts[mode], ms)
    ratio("start-up bwrap / off", starts["bwrap"], starts["off"])
    for mode in MODES:
        row(f"decision round trip, {mode} (µs, median)", medians[mode], us)
    ratio("round trip bwrap / off, medians", medians["bwrap"], medians["off"])
    for mode in MODES:
        row(f"decision round trip, {mode} (µs, mean)", means[mode], us)
    ratio("round trip bwrap / off, means", means["bwrap"], means["off"])


if __name__ == "__main__":
    main()
