"""Seat processes: what the process boundary costs (a benchmark, never a test).

    python benchmarks/seat_bench.py [--round-trips N] [--hands N] [--repeat K]

In one run, interleaved round by round so all see the same machine:
- raw pipe: the round trip of a minimal JSON echo between two Python processes (the
  child reads a line, parses it, writes it back), placed by the kernel (the reference
  the throughput issue set) and with both on one core (as a match places its seats);
- protocol: the decision round trip of isolated `random` bots in a real match (request
  sent to whole answer read: the time charged to a bot), with `[seats] cores` "match"
  (the default: the match's core) and "any";
- hands/s of a tournament of four `random` bots at 1 worker, inline and isolated (the
  isolated figure includes starting four seat processes for the first match);
- seat-process start-up: spawn to hello, for a Python bot (`naparena.bots.serve`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ECHO = ("import sys, json\nfor line in sys.stdin.buffer:\n"
        "    sys.stdout.buffer.write(json.dumps(json.loads(line)).encode() + b'\\n'); sys.stdout.buffer.flush()\n")

TOURNAMENT = """[tournament]
name = "seat-bench"
seed = 1
seeds = 2
hands = {hands}
table = 4
duplicate = false
workers = 1
isolation = "{isolation}"
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


def raw_round_trips(n: int, one_core: bool = False) -> list[float]:
    allowed = os.sched_getaffinity(0)
    if one_core:  # the child inherits the mask: both on the core this process is on
        from naparena.arena.match.cores import _sched_getcpu
        os.sched_setaffinity(0, {_sched_getcpu() if _sched_getcpu is not None else min(allowed)})
    try:
        child = subprocess.Popen([sys.executable, "-c", ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 bufsize=0)
    finally:
        os.sched_setaffinity(0, allowed)
    if one_core:
        os.sched_setaffinity(0, os.sched_getaffinity(child.pid))
    wfd, rfd, times = child.stdin.fileno(), child.stdout.fileno(), []
    for i in range(n):
        start = time.perf_counter()
        os.write(wfd, b'{"x": %d}\n' % i)
        data = b""
        while not data.endswith(b"\n"):
            data += os.read(rfd, 4096)
        times.append(time.perf_counter() - start)
    child.stdin.close()
    child.wait()
    os.sched_setaffinity(0, allowed)
    return times


def protocol_round_trips(hands: int, cores: str = "match") -> list[float]:
    from naparena.arena.match.job import Job, seat_record
    from naparena.arena.match.play import play_job
    from naparena.arena.setup.settings import Confinement
    from naparena.bots.plugins import load_registry
    from naparena.game.rules import make_rules
    seats = tuple(seat_record(f"r{i}", "random", {}, i, isolation="process") for i in range(4))
    job = Job(index=0, seed=5, variant="classic", rules=make_rules("classic"), seats=seats, hands=hands,
              confinement=Confinement(cores=cores))
    times: list[float] = []
    play_job(job, load_registry(None), times)
    return times


def tournament_rate(isolation: str, hands: int, cores: str = "match") -> float:
    from naparena.arena.session import Session
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.toml"
        path.write_text(TOURNAMENT.format(hands=hands, isolation=isolation) + f'[seats]\ncores = "{cores}"\n')
        session = Session.open(path, Path(tmp) / "run", workers=1)
        start = time.perf_counter()
        session.play()
        return session.hands / (time.perf_counter() - start)


JS_TOURNAMENT = """[tournament]
name = "js-bench"
seed = 3
seeds = 1
hands = {hands}
table = 4
duplicate = true
workers = 1
timeout = 5.0
[[bots]]
name = "napbot"
command = ["node", {script}]
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


def js_match_wall(hands: int, prestart: bool) -> tuple[float, float, float, int]:
    """(wall seconds a match, of them waiting for the seat's hello: mean and median, matches) of a
    duplicate tournament with the examples/js seat beside three inline bots, played in
    this process (so the wait can be timed); with or without the next match's seat
    process started while one plays."""
    from naparena.arena.match import play
    from naparena.arena.session import Session
    script = Path(__file__).resolve().parent.parent / "examples" / "js" / "napbot.js"
    waits: list[float] = []
    start_seats = play.start_seats

    def timed(*args, **kwargs):
        begin = time.perf_counter()
        try:
            return start_seats(*args, **kwargs)
        finally:
            waits.append(time.perf_counter() - begin)

    play.PRESTART, play.start_seats = prestart, timed
    os.environ["NAPARENA_IN_PROCESS"] = "1"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "t.toml"
            path.write_text(JS_TOURNAMENT.format(hands=hands, script=json.dumps(str(script))))
            session = Session.open(path, Path(tmp) / "run", workers=1)
            start = time.perf_counter()
            session.play()
            wall = time.perf_counter() - start
            return wall / session.matches, sum(waits) / session.matches, statistics.median(waits), session.matches
    finally:
        play.PRESTART, play.start_seats = True, start_seats
        del os.environ["NAPARENA_IN_PROCESS"]


def node_start_up() -> float:
    """Spawn to hello of the examples/js seat, alone."""
    from naparena.arena.match.preflight import probe
    from naparena.arena.setup.settings import Confinement
    script = Path(__file__).resolve().parent.parent / "examples" / "js" / "napbot.js"
    start = time.perf_counter()
    probe(["node", str(script)], {}, Confinement())
    return time.perf_counter() - start


def start_up() -> float:
    from naparena.arena.match.job import seat_record
    from naparena.arena.match.seats import close_seats, start_seats
    from naparena.arena.setup.settings import Confinement
    seat = seat_record("r", "random", {}, 1, isolation="process")
    start = time.perf_counter()
    bots = start_seats([seat], None, 1.0, Confinement(), "bench")
    took = time.perf_counter() - start
    assert bots[0].broken is None, bots[0].broken
    close_seats(bots)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round-trips", type=int, default=20000)
    parser.add_argument("--hands", type=int, default=2000, help="hands per match")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--js-hands", type=int, default=100, help="hands of each duplicate match of the JS seat")
    args = parser.parse_args()
    m: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for name, trips in (("echo", raw_round_trips(args.round_trips)),
                            ("echo1", raw_round_trips(args.round_trips, one_core=True)),
                            ("proto", protocol_round_trips(args.hands)),
                            ("any", protocol_round_trips(args.hands, "any"))):
            m.setdefault(name, []).append(statistics.median(trips))
            m.setdefault(name + " mean", []).append(statistics.fmean(trips))
        m.setdefault("inline", []).append(tournament_rate("inline", args.hands))
        m.setdefault("isolated", []).append(tournament_rate("process", args.hands))
        m.setdefault("isolated any", []).append(tournament_rate("process", args.hands, "any"))
        m.setdefault("start", []).extend(start_up() for _ in range(5))
    print(f"{'measure':<56} {'best':>9}   round by round")
    lower, higher, us, rate = min, max, (lambda v: f"{v * 1e6:.1f}"), (lambda v: f"{v:,.0f}")
    ratio = lambda a, b: [x / y for x, y in zip(m[a], m[b])]  # noqa: E731
    for stat in ("", " mean"):
        word = "mean" if stat else "median"
        row(f"raw echo, kernel-placed, {word} round trip (µs)", m["echo" + stat], lower, us)
        row(f"raw echo, one core, {word} round trip (µs)", m["echo1" + stat], lower, us)
        row(f"protocol, cores=match (default), {word} (µs)", m["proto" + stat], lower, us)
        row(f"protocol, cores=any, {word} (µs)", m["any" + stat], lower, us)
        row(f"protocol (default) / raw echo kernel-placed, {word}s", ratio("proto" + stat, "echo" + stat), lower,
            lambda v: f"{v:.2f}")
        row(f"protocol (default) / raw echo one core, {word}s", ratio("proto" + stat, "echo1" + stat), lower,
            lambda v: f"{v:.2f}")
        row(f"protocol cores=any / raw echo kernel-placed, {word}s", ratio("any" + stat, "echo" + stat), lower,
            lambda v: f"{v:.2f}")
    row("4 random bots, 1 worker, inline (hands/s)", m["inline"], higher, rate)
    row("4 random bots, 1 worker, isolated (hands/s)", m["isolated"], higher, rate)
    row("4 random bots, 1 worker, isolated, cores=any (hands/s)", m["isolated any"], higher, rate)
    row("isolated / inline", ratio("isolated", "inline"), higher, lambda v: f"{v:.3f}")
    row("isolated cores=any / inline", ratio("isolated any", "inline"), higher, lambda v: f"{v:.3f}")
    starts = m["start"]
    print(f"{'seat-process start-up, spawn to hello (ms)':<52} median {statistics.median(starts) * 1e3:.0f}, "
          f"min {min(starts) * 1e3:.0f}, max {max(starts) * 1e3:.0f} (n={len(starts)})")
    print("best: the least disturbed round of each row (ratios: their own best round, same-run reference)")
    if shutil.which("node"):
        js_rounds(args.repeat, args.js_hands)


def js_rounds(repeat: int, hands: int) -> None:
    """The JS seat's start-up against a duplicate match's wall time, with and without prestart."""
    cold, warm, cold_wait, warm_wait, node, warm_median = [], [], [], [], [], []
    for _ in range(repeat):
        node.append(node_start_up())
        seconds, wait, _, matches = js_match_wall(hands, prestart=False)
        cold.append(seconds)
        cold_wait.append(wait)
        seconds, wait, median, matches = js_match_wall(hands, prestart=True)
        warm.append(seconds)
        warm_wait.append(wait)
        warm_median.append(median)
    print(f"\nexamples/js beside 3 inline random bots, duplicate, {hands} hands a match, {matches} matches, "
          "1 worker (in this process):")
    ms = lambda v: f"{v * 1e3:.1f}"  # noqa: E731
    row("node seat start-up alone, spawn to hello (ms)", node, min, ms)
    row("each match starting its seat: wall a match (ms)", cold, min, ms)
    row("  of it waiting for the hello (ms)", cold_wait, min, ms)
    row("seat started during the previous match: wall (ms)", warm, min, ms)
    row("  of it waiting for the hello (ms)", warm_wait, min, ms)
    row("  of it waiting for the hello, median match (ms)", warm_median, min, lambda v: f"{v * 1e3:.2f}")
    row("started ahead / each starting, wall", [w / c for w, c in zip(warm, cold)], min, lambda v: f"{v:.2f}")


def row(name: str, values: list[float], best, fmt) -> None:
    print(f"{name:<52} {fmt(best(values)):>9}   " + ", ".join(fmt(v) for v in values))


if __name__ == "__main__":
    main()
