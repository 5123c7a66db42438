"""Draw train_bidder.py's learning curve (its --curve JSON) as a small PNG.

    python examples/learning/plot_curve.py docs/learning-curve.json docs/learning-curve.png

Needs matplotlib (not a naparena dependency: `pip install matplotlib`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt


def main() -> None:
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    points = json.loads(source.read_text())
    x = [p["cpu_s"] / 60 for p in points]
    y = [p["minus_heuristic_per_100"] for p in points]
    half = [p["ci95_half"] for p in points]
    fig, ax = plt.subplots(figsize=(6.4, 3.4), dpi=80)
    ax.fill_between(x, [a - h for a, h in zip(y, half)], [a + h for a, h in zip(y, half)], alpha=0.25,
                    label="95% interval (paired, held-out deals)")
    ax.plot(x, y, marker="o", label="learned bids − heuristic's own bids")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("training CPU time, minutes (one core)")
    ax.set_ylabel("chips per 100 hands")
    ax.set_title("Learning to bid against heuristic (classic, four seats)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(target)
    print(f"wrote {target} ({target.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
