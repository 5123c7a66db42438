"""Benchmark (not a test): the README's quickstart figure, measured as a new user meets it.

Runs `naparena run tournaments/quickstart.toml` K times (the install aside), reads the
play time each run prints ("done in X s"), and the load before and after, and prints the
sentence the README quotes, with its conditions:

    .venv/bin/python benchmarks/quickstart_time.py --runs 2

`tests/test_first_hour.py` checks that the README's figure has this sentence's form, so
a new measurement can be pasted in as printed (it never checks a speed).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DONE = re.compile(r"done in (\d+\.\d) s")
NUMBERS = {1: "one", 2: "two", 4: "four", 8: "eight"}


def sentence(times: list[float], cores: int, loads: list[float]) -> str:
    """The README's words for a measurement: play times, cores and the load meanwhile."""
    low, high = min(times), max(times)
    took = f"{low:.1f} s" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}–{high:.1f} s"
    load = f"{min(loads):.1f}–{max(loads):.1f}"
    return f"its play took {took} on {NUMBERS.get(cores, str(cores))} cores at a load of {load}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    times, loads = [], [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as logs:
        for n in range(args.runs):
            done = subprocess.run([sys.executable, "-m", "naparena", "run", "tournaments/quickstart.toml",
                                   "--log-dir", logs, "--json"], cwd=REPO, capture_output=True, text=True)
            found = DONE.search(done.stderr)
            if done.returncode != 0 or found is None:
                sys.exit(f"run {n + 1} failed:\n{done.stderr}")
            times.append(float(found.group(1)))
            loads.append(os.getloadavg()[0])
            print(f"run {n + 1}: {times[-1]:.1f} s, load {loads[-1]:.1f}", file=sys.stderr)
    print(sentence(times, os.cpu_count() or 1, loads))


if __name__ == "__main__":
    main()
