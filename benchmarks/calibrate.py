"""Calibration of the standings' statistics (a benchmark, never a test).

    python benchmarks/calibrate.py                 # every design, 1,000 repetitions each
    python benchmarks/calibrate.py --reps 200      # quicker, wider binomial intervals
    python benchmarks/calibrate.py --designs mixed --no-sprt --reps 400   # mixed fields only

Mixed fields (MIXED) put two aliases of one bot among *different* bots, tables of 3 to 7,
with and without duplicate: a design that left each bot the same neighbours shows there
as a "difference" between two copies of one bot. Only the alias pair's truth is known.

One bot plays itself under several aliases, so every true difference is zero. Each
design is a whole tournament played in-process through the runner's own booking
(schedule order, deal sets, boards) with a fresh master seed per repetition; the first
alias's 95% interval should cover 0 in 95% of repetitions, and the first pair's
head-to-head should reject "no difference" at p < 0.05 in 5% of them. Clopper–Pearson
intervals show how far each share could be from the truth by chance.

Designs: tables of 3, 4 and 5 with duplicate; 4 without duplicate; `pagat` (duplicate
boards) with and without duplicate (gather-and-cut); more bots than seats (4 aliases at
tables of 3); each alias holding two seats (2 aliases at a table of 4); and a run with
3 seed streams. All but the last use `seeds = 1`.

Then the sequential test on its own units (boards with duplicate, rounds of as many
hands as seats without), by simulation: unit differences resampled from one long run of
each (centred, so heavy tails are real), shifted by 0 (H0) or `delta` (H1); judged every
50 units like deal sets of 50 hands; and, with `--sprt-real N`, N real tournaments with
an [sprt] table on two aliases (true difference 0: alpha). Prints the share
accepting H1 under H0 (alpha), H0 under H1 (beta), the average boards used (ASN), and
how often the plain t interval taken at the stop covers the truth (why the standings
mark it conditional).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from naparena.arena.match.job import Job, seat_record
from naparena.arena.match.play import play_job
from naparena.arena.records.ledger import Ledger, Skip
from naparena.arena.setup.reader import parse_tournament
from naparena.arena.setup.schedule import board_seeds, bot_seed, schedule
from naparena.bots.plugins import load_registry
from naparena.stats.distributions import binom_ci, t_quantile
from naparena.stats.sequential import WARMUP, simulate
from naparena.stats.standings import Standings

# name: (table, aliases, duplicate, variant, seeds): one bot under every alias.
DESIGNS = {
    "table 3, duplicate": (3, 3, True, "classic", 1),
    "table 4, duplicate": (4, 4, True, "classic", 1),
    "table 5, duplicate": (5, 5, True, "classic", 1),
    "table 4, no duplicate": (4, 4, False, "classic", 1),
    "pagat, duplicate boards": (4, 4, True, "pagat", 1),
    "pagat, no duplicate": (4, 4, False, "pagat", 1),
    "4 bots at tables of 3": (3, 4, True, "classic", 1),
    "2 bots, two seats each": (4, 2, True, "classic", 1),
    "table 4, 3 seed streams": (4, 4, True, "classic", 3),
}

# Mixed fields: two aliases of one bot (always the first two entries) sit with *different*
# bots, so a design that leaves each bot the same neighbours shows up as a "difference"
# between two copies of one bot. Only the alias pair's truth is known (zero).
PIMC_SMALL = {"samples": 8, "bid_samples": 4, "max_nodes": 300}
FIELDS = {
    "R": [("random", {}), ("random", {}), ("heuristic", {}), ("bold", {})],
    "H": [("heuristic", {}), ("heuristic", {}), ("random", {}), ("pimc", PIMC_SMALL)],
    "R5": [("random", {}), ("random", {}), ("heuristic", {}), ("bold", {}), ("cautious", {})],
    # Six and seven different bots at tables of 6 and 7: every seat a bot of its own.
    "R6": [("random", {}), ("random", {}), ("heuristic", {}), ("bold", {}), ("cautious", {}),
           ("heuristic", {"aggression": 1.0})],
    "R7": [("random", {}), ("random", {}), ("heuristic", {}), ("bold", {}), ("cautious", {}),
           ("heuristic", {"aggression": 1.0}), ("heuristic", {"aggression": -1.0})],
    "H5": [("heuristic", {})] * 5,  # five aliases of one deterministic bot (no duplicate: it is no test with)
    # Two aliases of a deterministic bot beside random, whose luck the adjusted estimator takes out.
    "Hb": [("heuristic", {}), ("heuristic", {}), ("random", {}), ("bold", {})],
    # Two aliases of heuristic among deterministic bots: in `ecarte` the estimator corrects
    # only the purchases' draws from the stock.
    "Hd": [("heuristic", {}), ("heuristic", {}), ("cautious", {}), ("bold", {})],
}
# name: (field, table, duplicate, seeds, hands per match[, variant: classic unless named])
MIXED = {
    "R: table 3, dup, seeds 1": ("R", 3, True, 1, 40),
    "R: table 4, dup, seeds 1": ("R", 4, True, 1, 40),
    "R: table 5, dup, seeds 1": ("R", 5, True, 1, 40),
    "R: table 7, dup, seeds 1": ("R", 7, True, 1, 20),
    "R: table 4, dup, seeds 8": ("R", 4, True, 8, 8),
    "R: table 3, no dup, seeds 1": ("R", 3, False, 1, 40),
    "R: table 4, no dup, seeds 1": ("R", 4, False, 1, 40),
    "R: table 5, no dup, seeds 8": ("R", 5, False, 8, 8),
    "R: table 7, no dup, seeds 1": ("R", 7, False, 1, 20),
    "R5 (more bots): table 4, dup, seeds 1": ("R5", 4, True, 1, 20),
    "R5 (more bots): table 3, no dup, seeds 8": ("R5", 3, False, 8, 4),
    "H: table 3, dup, seeds 1": ("H", 3, True, 1, 16),
    "H: table 4, dup, seeds 1": ("H", 4, True, 1, 16),
    # 5 to 7 seats, every seat its own bot: the designs balance offsets, not (left, right) neighbours.
    "R5 (5 bots): table 5, dup, seeds 1": ("R5", 5, True, 1, 20),
    "R5 (5 bots): table 5, no dup, seeds 1": ("R5", 5, False, 1, 20),
    "R6 (6 bots): table 6, dup, seeds 1": ("R6", 6, True, 1, 18),
    "R6 (6 bots): table 6, no dup, seeds 1": ("R6", 6, False, 1, 18),
    "R7 (7 bots): table 7, dup, seeds 1": ("R7", 7, True, 1, 14),
    "R7 (7 bots): table 7, no dup, seeds 1": ("R7", 7, False, 1, 14),
    "H5 (5 heuristic aliases): table 5, no dup, seeds 1": ("H5", 5, False, 1, 20),
}
# The luck-adjusted estimator's designs (`--designs luck`, with `--estimator adjusted`): the
# mixed fields at 3 to 7 seats, duplicate and not, kept short (its rollouts cost CPU).
LUCK = {
    "R: table 3, dup, seeds 1, 10 hands": ("R", 3, True, 1, 10),
    "R: table 4, dup, seeds 1, 10 hands": ("R", 4, True, 1, 10),
    "R5 (5 bots): table 5, dup, seeds 1, 8 hands": ("R5", 5, True, 1, 8),
    "R6 (6 bots): table 6, dup, seeds 1, 8 hands": ("R6", 6, True, 1, 8),
    "R7 (7 bots): table 7, dup, seeds 1, 4 hands": ("R7", 7, True, 1, 4),
    "R: table 3, no dup, seeds 1, 12 hands": ("R", 3, False, 1, 12),
    "R: table 4, no dup, seeds 1, 12 hands": ("R", 4, False, 1, 12),
    "R5 (5 bots): table 5, no dup, seeds 1, 10 hands": ("R5", 5, False, 1, 10),
    "Hb: table 4, dup, seeds 1, 10 hands": ("Hb", 4, True, 1, 10),
    # Without duplicate, six and seven different bots fill one line-up a round: four seed
    # streams give each pair four units (a round: a hand dealt by each seat).
    "R6 (6 bots): table 6, no dup, seeds 4, 6 hands": ("R6", 6, False, 4, 6),
    "R7 (7 bots): table 7, no dup, seeds 4, 7 hands": ("R7", 7, False, 4, 7),
    # Écarté Nap without random: the corrections are the purchases' (each hand's first,
    # from a shuffled stock).
    "Hd: table 4, dup, ecarte, 10 hands": ("Hd", 4, True, 1, 10, "ecarte"),
    "Hd: table 4, no dup, ecarte, 12 hands": ("Hd", 4, False, 1, 12, "ecarte"),
    # Peep Nap without random: the first look at the peep card is corrected.
    "Hd: table 4, no dup, peep, 12 hands": ("Hd", 4, False, 1, 12, "peep"),
}
MIXED.update(LUCK)
_estimator = "auto"  # the estimator every tournament is played with (`--estimator`)

_registry = None


def tournament(design: str, seed: int, hands: int, bot: str, seeds: int | None = None, extra: dict | None = None):
    """A design's tournament; `seeds` (else the design's) and `extra` tables for the
    sequential test's runs."""
    if design in MIXED:
        return mixed_tournament(design, seed)
    if design in SPRT_MIXED:  # a long mixed-field run: the sequential test's units
        return mixed_tournament(SPRT_MIXED[design], seed, hands, seeds, extra)
    table, n, duplicate, variant, design_seeds = DESIGNS[design]
    data = {"tournament": {"name": "calibrate", "seed": seed, "seeds": seeds or design_seeds, "hands": hands,
                           "table": table, "duplicate": duplicate, "max_fault_share": 1.0},
            "bots": [{"name": bot, "alias": f"{bot[0]}{i + 1}"} for i in range(n)],
            "variants": [{"name": variant}], **(extra or {})}
    return parse_tournament(data, None, _registry)


def mixed_tournament(design: str, seed: int, hands: int | None = None, seeds: int | None = None,
                     extra: dict | None = None):
    field, table, duplicate, design_seeds, design_hands, *named = MIXED[design]
    variant = named[0] if named else "classic"
    hands, seeds = hands or design_hands, seeds or design_seeds
    bots = [{"name": name, "alias": f"{name}-{i + 1}", **({"params": params} if params else {})}
            for i, (name, params) in enumerate(FIELDS[field])]
    data = {"tournament": {"name": "calibrate", "seed": seed, "seeds": seeds, "hands": hands,
                           "table": table, "duplicate": duplicate, "max_fault_share": 1.0,
                           "timeout": 60.0, "estimator": _estimator},
            "bots": bots, "variants": [{"name": variant}], **(extra or {})}
    return parse_tournament(data, None, _registry)


def play(t, watch=None) -> tuple[dict, Standings]:
    """The session's booking (its Ledger), in-process and without files: same order, same
    statistics. `watch(ledger)` is called before the first match (to listen in)."""
    ledger = Ledger.of(t)
    if watch is not None:
        watch(ledger)
    specs = schedule(t)
    rules = {v.name: v.rules for v in t.variants}
    bots = {b.alias: b for b in t.bots}
    for i, spec in enumerate(specs):
        plan = ledger.plan(spec)
        if isinstance(plan, Skip):
            ledger.skip(spec, plan.reason)
        else:
            seats = tuple(seat_record(a, bots[a].name, bots[a].params, bot_seed(t.seed, spec.index, s))
                          for s, a in enumerate(spec.seats))
            boards = board_seeds(spec.seed, spec.hands) if spec.boards else None
            job = Job(index=spec.index, seed=spec.seed, variant=spec.variant, rules=rules[spec.variant],
                      seats=seats, hands=spec.hands, spec=spec, boards=boards, luck=t.luck_adjusted)
            ledger.book(spec, play_job(job, _registry).summary, ())
        ledger.end_of_unit(spec, specs[i + 1] if i + 1 < len(specs) else None)
    return ledger.result(), ledger.standings


def one_rep(args) -> dict:
    """One repetition of one design: does the first alias's interval cover 0, does the
    first pair's test reject, and the first pair's board differences (for the SPRT pool)."""
    global _registry, _estimator
    design, rep, hands, bot, _estimator = args
    if _registry is None:
        os.environ.setdefault("NAPARENA_DISABLE_PLUGIN_AUTOLOAD", "1")
        _registry = load_registry(None)
    t = tournament(design, 10_000 + rep, hands, bot)
    result, _ = play(t)
    data = next(iter(result["variants"].values()))
    first = t.bots[0].alias
    second = t.bots[1].alias
    row = next(r for r in data["bots"] if r["bot"] == first)
    pair = next(p for p in data["pairs"] if {p["a"], p["b"]} == {first, second})
    covers = None if design in MIXED else row["ci95"][0] <= 0 <= row["ci95"][1]
    plain = pair["plain"] or pair  # the plain estimator's figures, where the adjusted one is shown
    if pair["ci95"] is None or plain["ci95"] is None:  # too few units for an interval: counted apart
        return {"design": design, "no_interval": True, "identity": data["identity"]}
    return {"design": design, "bot_covers": covers,
            "pair_covers": pair["ci95"][0] <= 0 <= pair["ci95"][1], "rejects": pair["p_value"] < 0.05,
            "plain_covers": plain["ci95"][0] <= 0 <= plain["ci95"][1], "estimator": data["estimator"],
            "width": pair["ci95"][1] - pair["ci95"][0], "plain_width": plain["ci95"][1] - plain["ci95"][0],
            "identity": data["identity"]}


def share(k: int, n: int) -> str:
    lo, hi = binom_ci(k, n)
    return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=1000, help="repetitions per design")
    parser.add_argument("--first-rep", type=int, default=0,
                        help="the first repetition's number (its master seed is 10,000 + it): more runs of a design")
    parser.add_argument("--hands", type=int, default=100, help="hands per match (boards per deal set)")
    parser.add_argument("--bot", default="random")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sprt-reps", type=int, default=2000)
    parser.add_argument("--sprt-hands", type=int, default=1000,
                        help="hands a match in the long run whose units the simulation resamples")
    parser.add_argument("--sprt-real", type=int, default=0,
                        help="also this many real tournaments with an [sprt] table per unit (alpha)")
    parser.add_argument("--designs", nargs="*", default=list(DESIGNS) + [d for d in MIXED if d not in LUCK],
                        help="designs to repeat (none: only the SPRT simulation); 'mixed' = every mixed field; "
                             "'luck' = the luck-adjusted estimator's")
    parser.add_argument("--estimator", default="auto", choices=("auto", "adjusted", "plain"),
                        help="the tournaments' estimator (adjusted: each alias pair's plain interval is "
                             "measured from the same runs too)")
    parser.add_argument("--no-sprt", action="store_true", help="skip the sequential-test simulation")
    parser.add_argument("--sprt-mixed", action="store_true",
                        help="the sequential test on two random aliases in a mixed field (R), with --estimator")
    parser.add_argument("--warmups", nargs="*", type=int, default=[WARMUP],
                        help="SPRT warm-ups (boards) to simulate, e.g. 20 200")
    args = parser.parse_args()
    if args.designs == ["mixed"]:
        args.designs = [d for d in MIXED if d not in LUCK]
    if args.designs == ["luck"]:
        args.designs = list(LUCK)
    global _estimator
    _estimator = args.estimator  # the sequential test's runs (in this process and forked) too
    start = time.perf_counter()
    jobs = [(d, r, args.hands, args.bot, args.estimator) for d in args.designs
            for r in range(args.first_rep, args.first_rep + args.reps)]
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        results = pool.map(one_rep, jobs, chunksize=8)
    if not args.designs:
        sprt_report(args)
        return
    print(f"one-bot designs: {args.bot} against itself, {args.hands} hands a match; mixed fields: the alias "
          f"pair of the first bot, hands as listed; {args.reps} repetitions a design; "
          "Clopper-Pearson 95% intervals for each share")
    print(f"{'design':42} {'bot CI covers 0':>24} {'pair CI covers 0':>24} {'type-I (p < 0.05)':>24}  identity")
    for d in args.designs:
        missing = sum(1 for r in results if r["design"] == d and r.get("no_interval"))
        rs = [r for r in results if r["design"] == d and not r.get("no_interval")]
        n = len(rs)
        if missing:
            print(f"{d:42} {missing} of {missing + n} runs had too few units for an interval (left out)")
        if not n:
            continue
        ident = [r["identity"] for r in rs if r["identity"]]
        shown = (f"{sum(i['identical'] for i in ident)}/{sum(i['boards'] for i in ident)}" if ident else "—")
        bot = "—" if d in MIXED else share(sum(r["bot_covers"] for r in rs), n)
        print(f"{d:42} {bot:>24} "
              f"{share(sum(r['pair_covers'] for r in rs), n):>24} {share(sum(r['rejects'] for r in rs), n):>24}"
              f"  {shown}")
        adjusted = [r for r in rs if r.get("estimator") == "adjusted"]
        if adjusted:
            width = sum(r["width"] for r in adjusted) / sum(r["plain_width"] for r in adjusted)
            print(f"{'':42} {'plain, same runs:':>24} {share(sum(r['plain_covers'] for r in rs), n):>24} "
                  f"{share(n - sum(r['plain_covers'] for r in rs), n):>24}  adjusted in {len(adjusted)} runs; "
                  f"alias pair's interval {width:.2f} of plain's width")
    games = time.perf_counter() - start
    print(f"tournament repetitions: {games:.0f} s")
    if not args.no_sprt:
        sprt_report(args)
    print(f"total: {time.perf_counter() - start:.0f} s")


# The sequential test's units, as the runner feeds it: boards with duplicate, rounds without.
SPRT_DESIGNS = {"boards (table 4, duplicate)": "table 4, duplicate",
                "rounds (table 4, no duplicate)": "table 4, no duplicate"}
# With `--sprt-mixed`: two `random` aliases beside `heuristic` and `bold` (field R), where
# who sits after whom matters, with the run's estimator (adjusted: random's answers
# corrected).
SPRT_MIXED = {"R, table 4, duplicate": "R: table 4, dup, seeds 1",
              "R, table 4, no duplicate": "R: table 4, no dup, seeds 1"}
SPRT_MIXED_DESIGNS = {"boards (R field, table 4, duplicate)": "R, table 4, duplicate",
                      "rounds (R field, table 4, no duplicate)": "R, table 4, no duplicate"}
# The real runs' shape: deal sets of 50 hands, up to 40 seed streams.
SPRT_HANDS, SPRT_STREAMS = 50, 40


def sprt_report(args) -> None:
    """The SPRT's error rates on its own units: by resampling the units of one long run of
    each design (alpha and beta), and on real runs with an [sprt] table (alpha: the two
    aliases' true difference is 0; a true difference of exactly delta cannot be set up
    between real bots, so beta is measured by resampling alone)."""
    global _registry
    if _registry is None:
        _registry = load_registry(None)
    designs = SPRT_MIXED_DESIGNS if args.sprt_mixed else SPRT_DESIGNS
    for label, design in designs.items():
        pool = unit_differences(tournament(design, 77, args.sprt_hands, args.bot))
        mean = math.fsum(pool) / len(pool)
        centred = [d - mean for d in pool]
        sd = math.sqrt(math.fsum(d * d for d in centred) / (len(centred) - 1))
        delta = sd / 10
        rng = random.Random(2026)
        batch = stream_units(design, args.bot)
        print(f"\nSPRT (alpha = beta = 0.05) on {label}, estimator {_estimator}: {len(pool)} units of one pair "
              f"resampled, sd {sd:.0f} per 100 hands; delta = sd / 10 = {delta:.1f}; judged every {batch} units "
              f"(a seed stream of the real runs)")
        for warmup, (name, shift) in ((w, h) for w in args.warmups
                                       for h in (("H0 true (delta 0)", 0.0), ("H1 true (delta)", delta))):
            def draw(k, shift=shift, rng=rng, centred=centred):
                return [d + shift for d in rng.choices(centred, k=k)]
            start = time.perf_counter()
            r = simulate(draw, delta, batch=batch, reps=args.sprt_reps, max_boards=20_000, truth=shift, warmup=warmup)
            wrong = r["h1"] if shift == 0 else r["h0"]
            print(f"  warm-up {warmup:4}  {name:18} accept H1 {share(r['h1'], r['reps'])}  "
                  f"accept H0 {share(r['h0'], r['reps'])}  "
                  f"wrong {wrong / r['reps']:.3f}  ASN {r['asn']:.0f} units  "
                  f"t interval at the stop covers the truth {share(r['covers'], r['decided'])}  "
                  f"({time.perf_counter() - start:.0f} s)")
        if args.sprt_real:
            real_runs(design, delta, args)


def sprt_tournament(design: str, rep: int, bot: str, extra: dict | None = None):
    """A real run of the sequential test's design: deal sets of 50 hands, 40 seed streams."""
    return tournament(design, 50_000 + rep, SPRT_HANDS, bot, SPRT_STREAMS, extra)


def stream_units(design: str, bot: str) -> int:
    """Units of the first pair in one seed stream of the real runs: where the test is judged."""
    t = sprt_tournament(design, 0, bot)
    a, b = t.bots[0].alias, t.bots[1].alias
    per_deal_set = SPRT_HANDS if t.duplicate else SPRT_HANDS // t.table
    ledger = Ledger.of(t)
    sets = {ledger.standings.unit_of(s) for s in schedule(t) if s.stream == 0 and {a, b} <= set(s.seats)}
    return len(sets) * per_deal_set


def unit_differences(t) -> list[float]:
    """Every unit difference (first pair, per 100 hands) of a run, taken from the booking
    exactly as the runner hands them to the sequential test."""
    out: list[float] = []
    a, b = t.bots[0].alias, t.bots[1].alias

    def listen(ledger) -> None:
        standings = ledger.standings  # the estimator the run asked for, as the test judges it
        book = standings.adjusted if standings.adjusted is not None else standings.book
        close = book.close

        def closed(unit):
            u = close(unit)
            if u is not None:
                out.extend(u.diffs(a, b, book.span(u)))
            return u
        book.close = closed
    play(t, listen)
    return out


def real_runs(design: str, delta: float, args) -> None:
    """Whole tournaments with an [sprt] table on the first two aliases (true difference 0),
    played until the test decides: the share accepting H1 is alpha on real runs."""
    jobs = [(design, rep, delta, args.bot) for rep in range(args.sprt_real)]
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        verdicts = pool.map(one_sprt_run, jobs, chunksize=2)
    h1 = sum(v["verdict"].startswith("H1") for v in verdicts if v["verdict"])
    h0 = sum(v["verdict"].startswith("H0") for v in verdicts if v["verdict"])
    asn = sum(v["boards"] for v in verdicts) / len(verdicts)
    print(f"  real runs, H0 true: {len(verdicts)} tournaments  accept H1 (alpha) {share(h1, len(verdicts))}  "
          f"accept H0 {share(h0, len(verdicts))}  undecided {len(verdicts) - h0 - h1}  "
          f"ASN {asn:.0f} units  ({time.perf_counter() - start:.0f} s)")


def one_sprt_run(job) -> dict:
    global _registry
    design, rep, delta, bot = job
    if _registry is None:
        _registry = load_registry(None)
    # Enough deal sets of 50 hands that nearly every run decides.
    first = sprt_tournament(design, rep, bot)
    a, b = first.bots[0].alias, first.bots[1].alias
    result, _ = play(sprt_tournament(design, rep, bot, {"sprt": {"a": a, "b": b, "delta": delta}}))
    return result["sprt"]


if __name__ == "__main__":
    t_quantile(100)  # warm the cache before forking
    main()
