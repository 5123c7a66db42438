"""Where an isolated match spends its time, on both sides of the pipe (a profile, never a test).

    python benchmarks/seat_profile.py [--hands N] [--top K] [--cores match|any]

One match of four isolated `random` bots, played by `play_job` under cProfile (the
match process), while each seat runs `naparena.bots.serve` under cProfile too (the bot's
end); the top entries of both, by own time, are printed. The seats are started as
external commands so that the profiler wraps them; they play as the usual Python seat.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import tempfile
from pathlib import Path

from naparena.arena.match.job import Job, SeatRecord, seat_record


def seats(folder: Path, profiled: bool) -> tuple[SeatRecord, ...]:
    out = []
    for i in range(4):
        command = None
        if profiled:  # serve's main, returning (as a module it ends in os._exit, before cProfile writes)
            code = ("import cProfile, sys; from naparena.bots.serve import main; "
                    "cProfile.run('main([\"random\"])', sys.argv[1])")
            command = [sys.executable, "-c", code, str(folder / f"seat{i}.prof")]
        out.append(seat_record(f"r{i}", "random", {}, i, isolation="process", command=command))
    return tuple(out)


def top(stats: pstats.Stats, k: int) -> str:
    text = io.StringIO()
    stats.stream = text
    stats.sort_stats("tottime").print_stats(k)
    lines = text.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(lines[start:start + k + 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--cores", choices=["match", "any"], default="match", help="[seats] cores")
    args = parser.parse_args()
    from naparena.arena.match.play import play_job
    from naparena.arena.setup.settings import Confinement
    from naparena.bots.plugins import load_registry
    from naparena.game.rules import make_rules

    registry = load_registry(None)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        job = Job(index=0, seed=5, variant="classic", rules=make_rules("classic"),
                  seats=seats(folder, True), hands=args.hands,
                  # Unsandboxed: each seat's profile is written outside its own folder.
                  confinement=Confinement(sandbox="off", cores=args.cores))
        profile = cProfile.Profile()
        profile.enable()
        play_job(job, registry)
        profile.disable()
        print(f"match process, {args.hands} hands, top {args.top} by own time:")
        print(top(pstats.Stats(profile), args.top))
        served = [str(p) for p in sorted(folder.glob("seat*.prof"))]
        print(f"\nnaparena serve, the {len(served)} seats together, top {args.top} by own time:")
        print(top(pstats.Stats(*served), args.top))


if __name__ == "__main__":
    main()
