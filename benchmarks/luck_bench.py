"""How much luck each design takes out (a benchmark, never a test).

    python benchmarks/luck_bench.py shipped --reps 20                   # the shipped pair of files
    python benchmarks/luck_bench.py replays logs/duplicate-45cc476e     # why: replays of one deal
    python benchmarks/luck_bench.py duplicate --reps 10 --workers 2     # duplicate against plain play
    python benchmarks/luck_bench.py gain --reps 8 --workers 2           # the luck-adjusted estimator
    python benchmarks/luck_bench.py deal logs/no-duplicate-b07bac8f     # baselines of the deal, tried
    python benchmarks/luck_bench.py unbiased --seeds 32                 # adjusted against a long plain run
    python benchmarks/luck_bench.py unbiased --adjusted-seeds 2126 2127 2128 --plain-seeds 2028 2029 2030 2031 2032 2033

`shipped`: `tournaments/duplicate.toml` against `no-duplicate.toml`, each played `--reps`
times with its own master seed (60,000 + repetition), plain estimator: each bot's and
pair's se as a root mean square over the repetitions, and duplicate's over plain's.

`deal`: from a plain run's logs (no duplicate), the standard errors with each hand's chips
less a baseline value of its deal for the seat, the same function whoever holds the seat
(zero-summed, so it cancels in expectation over a round): `reference` finishes the deal
with `heuristic` in every seat; `field` averages the finishes of the deal by the run's own
bots in the table's rotations. Neither is the estimator's: this is why.

`unbiased`: the shipped four-bot example with `--seeds` seed streams, luck-adjusted with
each of `--adjusted-seeds` for master seed, and independent plain runs of it as long with
each of `--plain-seeds`: for each bot and pair the two estimates (pooled over their runs)
and the 95% interval of their difference, which should hold 0. `--stock ecarte` (or
`peep`) plays four deterministic bots instead, without duplicate: only the cards beyond
the hands are corrected.

`replays`: from a duplicate run's logs, the correlation between two replays of one deal
by one bot, split by whether it held the same seat in both (the same cards) or another,
and the design effect 1 + (R − 1) × correlation of a board of R replays.

`duplicate`: every named variant at tables of 3, 4 and 5 (the four reference bots; a fifth,
`heuristic` at aggression 1, at five seats), each played `--reps` times with and without
duplicate on the same matches and hands (only the deals differ), with a fresh master seed
per repetition. For each bot and each pair it prints the standard error of the plain
estimator with duplicate over the one without, as the root of the ratio of their mean
squares over the repetitions (each run's se estimates its own run's spread: the
calibration benchmark checks that), with a 95% bootstrap interval over repetitions.

`gain`: the luck-adjusted estimator against plain play at the same hands, on the shipped
four-bot example (`tournaments/duplicate.toml`, `no-duplicate.toml`: each repetition with
its own master seed), on `pimc` against `heuristic` with `random` (the ladder's bots) and
on four deterministic bots in `ecarte`, `purchase` and `peep` (`stock: ...`: the luck of the
cards beyond the hands alone):
the interval width of each estimator over plain play without duplicate, the hands each
needs for the width plain play reaches (the square of the width ratio), and the CPU a
hand costs to play and to compute its corrections, each measured in the same process.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import multiprocessing
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

import calibrate  # the session's booking, in-process (benchmarks/calibrate.py)

from naparena.arena.setup.reader import check_bots, load_tournament, parse_tournament
from naparena.arena.setup.tournament import Tournament
from naparena.bots.plugins import load_registry
from naparena.game.rules import VARIANTS, RulesError, make_rules

ROOT = Path(__file__).resolve().parent.parent
FOUR = [("heuristic", {}), ("random", {}), ("cautious", {}), ("bold", {})]
FIVE = [*FOUR, ("heuristic", {"aggression": 1.0})]
# table: (field, hands a match, seeds): 1,920 hands a run at every table size.
SHAPES = {3: (FOUR, 40, 2), 4: (FOUR, 40, 2), 5: (FIVE, 48, 2)}
PIMC = {"samples": 8, "bid_samples": 4, "max_nodes": 300}


def registry() -> Any:
    if calibrate._registry is None:
        os.environ.setdefault("NAPARENA_DISABLE_PLUGIN_AUTOLOAD", "1")
        calibrate._registry = load_registry(None)
    return calibrate._registry


def field_bots(field: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """[[bots]] entries of a field: a heuristic with params is aliased by its aggression."""
    return [{"name": n, "alias": n if not p else f"{n}+{p['aggression']:g}", **({"params": p} if p else {})}
            for n, p in field]


def field_tournament(variant: str, table: int, duplicate: bool, seed: int, estimator: str = "plain") -> Tournament:
    field, hands, seeds = SHAPES[table]
    bots = field_bots(field)
    data = {"tournament": {"name": "luck", "seed": seed, "seeds": seeds, "hands": hands, "table": table,
                           "duplicate": duplicate, "max_fault_share": 1.0, "estimator": estimator},
            "bots": bots, "variants": [{"name": variant}]}
    return check_bots(parse_tournament(data, None, registry()), registry())


def plays(variant: str, table: int) -> bool:
    try:
        make_rules(variant).check_players(table)
    except RulesError:
        return False
    return True


def figures(result: dict[str, Any], key: str = "se") -> dict[str, float]:
    """Each bot's and each pair's se (or the shown estimator's `key`) from a standings result."""
    data = next(iter(result["variants"].values()))
    out = {r["bot"]: r[key] for r in data["bots"] if r[key] is not None}
    out.update({f"{p['a']} − {p['b']}": p[key] for p in data["pairs"] if p[key] is not None})
    return out


def plain_figures(result: dict[str, Any]) -> dict[str, float]:
    """The plain estimator's se of each bot and pair, whichever estimator is shown."""
    data = next(iter(result["variants"].values()))
    out = {}
    for r in data["bots"]:
        fig = r.get("plain") or r
        out[r["bot"]] = fig["se"]
    for p in data["pairs"]:
        fig = p.get("plain") or p
        out[f"{p['a']} − {p['b']}"] = fig["se"]
    return out


def duplicate_job(job: tuple[str, int, int]) -> dict[str, Any]:
    variant, table, rep = job
    seed = 40_000 + rep
    out: dict[str, Any] = {"variant": variant, "table": table, "rep": rep}
    for duplicate in (True, False):
        result, _ = calibrate.play(field_tournament(variant, table, duplicate, seed))
        out[duplicate] = figures(result)
    return out


def ratio_with_interval(num: list[float], den: list[float], rng: random.Random) -> tuple[float, float, float]:
    """sqrt(mean num² / mean den²) and a 95% bootstrap interval over the repetitions."""
    def r(a: list[float], b: list[float]) -> float:
        return math.sqrt(sum(x * x for x in a) / sum(x * x for x in b))
    n = len(num)
    boots = sorted(r(*zip(*[(num[i], den[i]) for i in (rng.randrange(n) for _ in range(n))])) for _ in range(2000))
    return r(num, den), boots[50], boots[1949]


def duplicate_report(args: argparse.Namespace) -> None:
    jobs = [(v, t, rep) for v in VARIANTS for t in args.tables if plays(v, t) for rep in range(args.reps)]
    skipped = [(v, t) for v in VARIANTS for t in args.tables if not plays(v, t)]
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        results = pool.map(duplicate_job, jobs, chunksize=1)
    rng = random.Random(2026)
    print(f"se with duplicate / se without, same matches and hands ({args.reps} repetitions a design, "
          "1,920 hands a run; 95% bootstrap intervals)")
    worst: list[tuple[float, str]] = []
    for variant in VARIANTS:
        for table in args.tables:
            rs = [r for r in results if r["variant"] == variant and r["table"] == table]
            if not rs:
                continue
            keys = [k for k in rs[0][True] if all(k in r[True] and k in r[False] for r in rs)]
            cells = []
            for k in keys:
                ratio, lo, hi = ratio_with_interval([r[True][k] for r in rs], [r[False][k] for r in rs], rng)
                cells.append(f"{k} {ratio:.2f} [{lo:.2f}, {hi:.2f}]")
                worst.append((ratio, f"{variant} at {table}: {k} [{lo:.2f}, {hi:.2f}]"))
            print(f"{variant:11} table {table}: " + "; ".join(cells))
    worst.sort(reverse=True)
    print("widest ratios: " + "; ".join(f"{r:.2f} {w}" for r, w in worst[:5]))
    above = [w for r, w in worst if r > 1]
    print(f"ratios above 1: {len(above)} of {len(worst)}")
    if skipped:
        print("not dealt at that table: " + ", ".join(f"{v} at {t}" for v, t in skipped))
    print(f"{time.perf_counter() - start:.0f} s")


# --- the luck-adjusted estimator --------------------------------------------------------------

GAIN_DESIGNS = {
    "four bots, classic, duplicate": ("duplicate.toml", True),
    "four bots, classic, no duplicate": ("no-duplicate.toml", False),
    "pimc against heuristic, with random, duplicate": ("pimc", True),
    "pimc against heuristic, with random, no duplicate": ("pimc", False),
    # No random: the only luck the estimator takes out is the stock's (each hand's first
    # purchase from a shuffled pack). `purchase` gathers and cuts without duplicate.
    "stock: ecarte, duplicate": ("stock:ecarte", True),
    "stock: ecarte, no duplicate": ("stock:ecarte", False),
    "stock: purchase, duplicate": ("stock:purchase", True),
    "stock: purchase, no duplicate": ("stock:purchase", False),
    "stock: peep, duplicate": ("stock:peep", True),
    "stock: peep, no duplicate": ("stock:peep", False),
}
# Four deterministic bots (heuristic at two aggressions, cautious, bold), as `field_tournament`'s.
STOCK_FIELD = [("heuristic", {}), ("cautious", {}), ("bold", {}), ("heuristic", {"aggression": 1.0})]


def gain_tournament(design: str, seed: int, estimator: str) -> Tournament:
    source, duplicate = GAIN_DESIGNS[design]
    if source.startswith("stock:"):  # 24 seatings x 40 hands x 2 seeds: 1,920 hands
        data = {"tournament": {"name": "gain", "seed": seed, "seeds": 2, "hands": 40, "table": 4,
                               "duplicate": duplicate, "max_fault_share": 1.0, "estimator": estimator},
                "bots": field_bots(STOCK_FIELD), "variants": [{"name": source.split(":")[1]}]}
        return check_bots(parse_tournament(data, None, registry()), registry())
    if source == "pimc":  # the ladder's bots, a small pimc: 16 seatings x 12 hands x 2 seeds
        data = {"tournament": {"name": "gain", "seed": seed, "seeds": 2, "hands": 12, "table": 4,
                               "duplicate": duplicate, "max_fault_share": 1.0, "timeout": 60.0,
                               "estimator": estimator},
                "bots": [{"name": "pimc", "params": PIMC}, {"name": "heuristic"}, {"name": "random"},
                         {"name": "heuristic", "alias": "heuristic-2"}],
                "variants": [{"name": "classic"}]}
        return check_bots(parse_tournament(data, None, registry()), registry())
    t = check_bots(load_tournament(ROOT / "tournaments" / source), registry())
    return dataclasses.replace(t, seed=seed, estimator=estimator)


def gain_job(job: tuple[str, int]) -> dict[str, Any]:
    design, rep = job
    seed = 60_000 + rep
    out: dict[str, Any] = {"design": design, "rep": rep}
    c0 = time.process_time()
    plain, _ = calibrate.play(gain_tournament(design, seed, "plain"))
    c1 = time.process_time()
    adjusted, _ = calibrate.play(gain_tournament(design, seed, "adjusted"))
    c2 = time.process_time()
    hands = next(iter(plain["variants"].values()))["bots"][0]["hands"]
    total = sum(r["hands"] for r in next(iter(plain["variants"].values()))["bots"])
    players = total // hands if hands else 1
    out.update(plain=figures(plain), adjusted=figures(adjusted), same=plain_figures(adjusted),
               hands=total // players, play=(c1 - c0), luck=(c2 - c1) - (c1 - c0))
    return out


def gain_report(args: argparse.Namespace) -> None:
    jobs = [(d, rep) for d in args.designs for rep in range(args.reps)]
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        results = pool.map(gain_job, jobs, chunksize=1)
    rng = random.Random(2026)
    by = defaultdict(list)
    for r in results:
        by[r["design"]].append(r)
    # plain play without duplicate is the reference of every width ratio
    print(f"interval width over plain play without duplicate, same hands ({args.reps} repetitions; 95% bootstrap "
          "intervals); hands for the same width = ratio²")
    for design in args.designs:
        rs = by[design]
        reference = by[design.replace(", duplicate", ", no duplicate")] if ", duplicate" in design else rs
        for name, pick in (("plain", lambda r: r["plain"]), ("adjusted", lambda r: r["adjusted"])):
            cells = []
            for k in rs[0]["plain"]:
                ratio, lo, hi = ratio_with_interval([pick(r)[k] for r in rs], [r["plain"][k] for r in reference], rng)
                cells.append(f"{k} {ratio:.2f} [{lo:.2f}, {hi:.2f}] (hands {ratio * ratio:.2f})")
            print(f"{design} — {name}: " + "; ".join(cells))
        play = sum(r["play"] for r in rs) / sum(r["hands"] for r in rs) * 1000
        luck = sum(r["luck"] for r in rs) / sum(r["hands"] for r in rs) * 1000
        print(f"  CPU a hand: play and book {play:.3f} ms, luck corrections {luck:.3f} ms ({luck / play:.1f}x)")
        same = [max(abs(r["same"][k] - r["plain"][k]) for k in r["plain"]) for r in rs]
        print(f"  the adjusted run's plain figures equal the plain run's: largest se difference {max(same):.3g}")
    print(f"{time.perf_counter() - start:.0f} s")


def shipped_report(args: argparse.Namespace) -> None:
    sums: dict[str, dict[bool, float]] = defaultdict(lambda: {True: 0.0, False: 0.0})
    for rep in range(args.reps):
        for duplicate, name in ((True, "duplicate.toml"), (False, "no-duplicate.toml")):
            t = check_bots(load_tournament(ROOT / "tournaments" / name), registry())
            t = dataclasses.replace(t, seed=60_000 + rep, estimator="plain")
            result, _ = calibrate.play(t)
            for k, se in figures(result).items():
                sums[k][duplicate] += se * se
    print(f"se per 100 hands (root mean square over {args.reps} master seeds), plain estimator")
    for k, both in sums.items():
        dup, plain = math.sqrt(both[True] / args.reps), math.sqrt(both[False] / args.reps)
        print(f"  {k:22} duplicate {dup:6.2f}  no duplicate {plain:6.2f}  ratio {dup / plain:.2f}")


def replays_report(args: argparse.Namespace) -> None:
    import json
    seen: dict[tuple[Any, ...], dict[str, list[tuple[int, int]]]] = defaultdict(lambda: defaultdict(list))
    for f in sorted(Path(args.run, "matches").glob("*.json")):
        log = json.loads(f.read_text())
        m = log["match"]
        unit = (m["variant"], m["stream"], m["table_no"], m.get("deal_set", 0))
        for n, row in enumerate(log["summary"]["hand_chips"]):
            for s, (a, c) in enumerate(zip(m["seats"], row)):
                seen[(*unit, n)][a].append((s, c))
    bots = sorted({a for board in seen.values() for a in board})
    print(f"{len(seen)} boards; correlation of a bot's results between two replays of one deal")
    for a in bots:
        every = [c for board in seen.values() for _, c in board[a]]
        mu = math.fsum(every) / len(every)
        var = math.fsum((c - mu) ** 2 for c in every) / len(every)
        same, other = [0.0, 0], [0.0, 0]
        for board in seen.values():
            xs = board[a]
            for i in range(len(xs)):
                for j in range(i + 1, len(xs)):
                    acc = same if xs[i][0] == xs[j][0] else other
                    acc[0] += (xs[i][1] - mu) * (xs[j][1] - mu)
                    acc[1] += 1
        r = len(next(iter(seen.values()))[a])
        corr = (same[0] + other[0]) / (same[1] + other[1]) / var
        same_text = f"{same[0] / same[1] / var:+.3f} ({same[1] // len(seen)} pairs a board)" if same[1] else "none"
        print(f"  {a:10} same seat {same_text}; other seat {other[0] / other[1] / var:+.3f} "
              f"({other[1] // len(seen)} pairs); all {corr:+.3f}: design effect 1 + {r - 1} × {corr:+.3f} "
              f"= {1 + (r - 1) * corr:.2f}")


def deal_report(args: argparse.Namespace) -> None:
    import json

    from naparena.arena.records.ledger import Ledger
    from naparena.arena.records.rundir import RunDir
    from naparena.game.engine import Match
    from naparena.game.rules import Rules
    from naparena.table.luck import Baseline, policies
    from naparena.table.play import play_hands
    rd = RunDir(args.run)
    t = rd.recorded_tournament()
    logs = [json.loads(f.read_text()) for f in sorted(Path(args.run, "matches").glob("*.json"))]
    for name in ("plain", "reference", "field"):
        ledger = Ledger(["classic"], [b.alias for b in t.bots], t.duplicate, None, 1.0, estimator="adjusted")
        for i, log in enumerate(logs):
            bots = [(b["name"], b["params"]) for b in log["bots"]]
            n = len(bots)
            own = policies(bots)
            reference = Baseline(policies([("heuristic", {})] * n), [True] * n, 1)
            luck: list[list[int]] = []

            def value(hand: Any, log: dict[str, Any] = log, own: Any = own, reference: Baseline = reference,
                      luck: list[list[int]] = luck, n: int = n, name: str = name) -> None:
                if name == "reference":
                    v = reference.value(hand, "deal")
                elif name == "field":  # rotation r: seat s played by the bot of seat s + r
                    v = [0.0] * n
                    for r in range(n):
                        rotated = Baseline([own[(s + r) % n] for s in range(n)], [False] * n, 1)
                        got = rotated.value(hand, f"deal|{log['seed']}|{hand.hand_no}|{r}")
                        v = [a + b / n for a, b in zip(v, got)]
                else:
                    v = [0.0] * n
                mean = sum(v) / n
                luck.append([round((x - mean) * 10**6) for x in v])
                from naparena.table.play import feed
                feed(hand, log["hands"][hand.hand_no])
            play_hands(Match(Rules.from_dict(log["rules"]), n, log["seed"], log.get("stack", 0)),
                       len(log["hands"]), value, None)
            log["summary"]["hand_luck"] = luck
            ledger.book_log(log["match"], log)
            ledger.end_of_unit(log["match"], logs[i + 1]["match"] if i + 1 < len(logs) else None)
        rows = figures(ledger.result())
        print(f"{name:9} " + "; ".join(f"{k} {v:.2f}" for k, v in rows.items()))


def unbiased_report(args: argparse.Namespace) -> None:
    from naparena.stats.standings import welch
    if args.stock:  # four deterministic bots: only the cards beyond the hands are corrected
        t = gain_tournament(f"stock: {args.stock}, no duplicate", 0, "plain")
    else:
        t = check_bots(load_tournament(ROOT / "tournaments" / "luck.toml"), registry())
    long = dataclasses.replace(t, seeds=args.seeds)
    start = time.process_time()

    def pooled(estimator: str, seeds: list[int]) -> dict[str, dict[str, float]]:
        """Each bot's and pair's estimate over runs with these master seeds, pooled by
        inverse variance (the runs are independent)."""
        parts: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for seed in seeds:
            result, _ = calibrate.play(dataclasses.replace(long, seed=seed, estimator=estimator))
            data = next(iter(result["variants"].values()))
            for r in data["bots"]:
                parts[r["bot"]].append((r["per100"], r["se"]))
            for r in data["pairs"]:
                parts[f"{r['a']} − {r['b']}"].append((r.get("per100", r.get("diff_per100")), r["se"]))
        out = {}
        for name, xs in parts.items():
            w = [1 / se ** 2 for _, se in xs]
            out[name] = {"mean": sum(x * wi for (x, _), wi in zip(xs, w)) / sum(w), "se": 1 / math.sqrt(sum(w)),
                         "df": math.inf}
        return out

    adjusted, plain = pooled("adjusted", args.adjusted_seeds), pooled("plain", args.plain_seeds)
    hands = long.seeds * long.hands * 24
    print(f"{args.seeds} seed streams, {hands:,} hands a run; adjusted: master seeds {args.adjusted_seeds}, "
          f"plain: {args.plain_seeds}; {time.process_time() - start:.0f} s CPU")
    held = 0
    for name, ea in adjusted.items():
        ep = plain[name]
        w = welch(ea, ep)
        held += w["ci95"][0] <= 0 <= w["ci95"][1]
        print(f"  {name:22} adjusted {ea['mean']:+9.2f} ± {ea['se']:.2f}   independent plain {ep['mean']:+9.2f} "
              f"± {ep['se']:.2f}   difference {w['diff']:+7.2f} [{w['ci95'][0]:+.2f}, {w['ci95'][1]:+.2f}]")
    print(f"  the difference's interval holds 0 for {held} of {len(adjusted)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    sh = sub.add_parser("shipped")
    sh.add_argument("--reps", type=int, default=20)
    r = sub.add_parser("replays")
    r.add_argument("run", help="a duplicate run's directory")
    ub = sub.add_parser("unbiased")
    ub.add_argument("--seeds", type=int, default=32)
    ub.add_argument("--adjusted-seeds", type=int, nargs="+", default=[2026], help="master seeds of the adjusted runs")
    ub.add_argument("--plain-seeds", type=int, nargs="+", default=[2027], help="master seeds of the plain runs")
    ub.add_argument("--stock", choices=("ecarte", "peep"), help="the stock design of `gain` in this variant instead "
                    "of the four-bot example")
    dl = sub.add_parser("deal")
    dl.add_argument("run", help="a plain run's directory (no duplicate)")
    d = sub.add_parser("duplicate")
    d.add_argument("--reps", type=int, default=20)
    d.add_argument("--tables", type=int, nargs="*", default=[3, 4, 5])
    d.add_argument("--workers", type=int, default=2)
    g = sub.add_parser("gain")
    g.add_argument("--reps", type=int, default=12)
    g.add_argument("--designs", nargs="*", default=list(GAIN_DESIGNS))
    g.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    registry()
    reports = {"shipped": shipped_report, "replays": replays_report, "duplicate": duplicate_report,
               "gain": gain_report, "deal": deal_report, "unbiased": unbiased_report}
    reports[args.what](args)


if __name__ == "__main__":
    main()
