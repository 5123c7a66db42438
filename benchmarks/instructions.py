"""Instructions per hand, counted by callgrind: the bare engine, without and with a JSON
hand log, against a whole match of random bots with its JSON log (a benchmark, never a
test).

    python benchmarks/instructions.py [--hands 3000]

Wall-clock rates on a shared machine move by several per cent from one minute to the
next; instruction counts repeat exactly, so this is how a change to the hot loop is
judged. Each side runs in its own valgrind process after the same imports and registry
load; a third run that stops there is subtracted from both. Needs valgrind on PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys


def play(what: str, hands: int) -> None:
    """The measured part: nothing, the bare engine, or one match through the bots."""
    from naparena.arena.match.job import Job, seat_record
    from naparena.arena.match.play import play_job
    from naparena.bots.plugins import load_registry
    from naparena.game.rules import make_rules
    from naparena.tools.bench import engine_rate

    registry = load_registry(None)
    rules = make_rules("classic")
    seats = tuple(seat_record(f"random{i}", "random", {}, i) for i in range(4))
    job = Job(index=0, seed=1, variant="classic", rules=rules, seats=seats, hands=hands)
    if what == "engine":
        engine_rate(hands=hands)
    elif what == "engine_log":
        engine_rate(hands=hands, log=True)
    elif what == "match":
        bytes(play_job(job, registry))


def count(what: str, hands: int) -> int:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          sys.executable, __file__, "--play", what, "--hands", str(hands)],
                         capture_output=True, text=True, env=env, check=True).stderr
    return int(re.search(r"Collected : ([\d,]+)", out).group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hands", type=int, default=3000)
    parser.add_argument("--play", choices=("none", "engine", "engine_log", "match"))
    args = parser.parse_args()
    if args.play:
        play(args.play, args.hands)
        return
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not on PATH")
    base = count("none", args.hands)
    engine, logged, match = ((count(w, args.hands) - base) / args.hands
                             for w in ("engine", "engine_log", "match"))
    print(f"engine: {engine:,.0f} instructions a hand")
    print(f"engine with a JSON hand log: {logged:,.0f} instructions a hand")
    print(f"match of random bots with its JSON log: {match:,.0f} instructions a hand")
    print(f"engine / match: {engine / match:.3f}; engine with log / match: {logged / match:.3f}")


if __name__ == "__main__":
    main()
