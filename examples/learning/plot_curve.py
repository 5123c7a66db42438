"""Draw a learning curve (the --curve JSON of train_bidder.py or train_player.py) as a
small PNG: the learner minus `heuristic` per 100 hands on held-out deals, with its 95%
interval, against training CPU time.

    python examples/learning/plot_curve.py examples/learning/bidder-curve.json docs/learning-curve.png
    python examples/learning/plot_curve.py examples/learning/player-curve.json docs/player-curve.png \\
        --title "Learning to bid and play against heuristic (classic, four seats)"

Needs matplotlib (not a naparena dependency: `pip install matplotlib`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

TITLE = "Learning to bid against heuristic (classic, two to seven seats)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--title", default=TITLE)
    parser.add_argument("--label", default="learner − heuristic, greedy")
    args = parser.parse_args()
    points = json.loads(args.source.read_text())
    x = [p["cpu_s"] / 60 for p in points]
    y = [p["minus_heuristic_per_100"] for p in points]
    half = [p["ci95_half"] for p in points]
    fig, ax = plt.subplots(figsize=(6.4, 3.4), dpi=80)
    ax.fill_between(x, [a - h for a, h in zip(y, half)], [a + h for a, h in zip(y, half)], alpha=0.25,
                    label="95% interval (paired, held-out deals)")
    ax.plot(x, y, marker="o", label=args.label)
    phases = [p.get("phase") for p in points]
    if "ppo" in phases and "imitation" in phases:  # train_player.py: where imitation gave way to PPO
        switch = x[phases.index("ppo") - 1]
        ax.axvline(switch, color="grey", linestyle=":", linewidth=1)
        ax.annotate(" imitation | PPO", (switch, ax.get_ylim()[1]), va="top", ha="center", fontsize=8)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("training CPU time, minutes (one core)")
    ax.set_ylabel("chips per 100 hands")
    ax.set_title(args.title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.target)
    print(f"wrote {args.target} ({args.target.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
