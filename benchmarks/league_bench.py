"""Leagues (a benchmark, never a test): the ratings' calibration and a league at scale.

    python benchmarks/league_bench.py null --reps 300 --workers 2   # random under many aliases
    python benchmarks/league_bench.py scale --bots 200 --rounds 12 --hands 4 --workers 2

`null`: one bot under N aliases in a league, a fresh master seed per repetition, played
in-process through the runner's own booking. Every true rating is 0: the first alias's
95% interval should cover it in 95% of repetitions (independent across repetitions, so
its Clopper–Pearson interval is honest); the share over all aliases is shown too (its
aliases share each repetition's data, so no interval is put on it). Both models, from the
same boards. `--workers N` spreads the repetitions over N processes: the same seeds, the
results gathered in repetition order, so the report is the same for any N (but the time).

`scale`: a league of generated bots of known order — one family, `skill` from 0 to 1:
each decision answered by the heuristic with probability `skill`, else at random —
played through a Session like `naparena run`. Prints each phase's wall and CPU time
(line-up design; the run, whose parent books the matches and fits the standings' margins;
the booking alone, rebuilt from the logs; each model's fit), peak memory of the parent
and of the largest worker, boards per bot, and the Spearman correlation of each model's
ranking with the known order.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import tomli_w

from naparena.arena.match.job import Job, seat_record
from naparena.arena.match.play import play_job
from naparena.arena.records.ledger import Ledger, Skip, load_standings
from naparena.arena.session import Session
from naparena.arena.setup.reader import parse_tournament
from naparena.arena.setup.schedule import board_seeds, bot_seed, schedule
from naparena.arena.setup.settings import MAX_LEAGUE_BOTS
from naparena.arena.setup.tournament import Tournament
from naparena.bots.plugins import Registry, load_registry
from naparena.errors import NaparenaError
from naparena.stats.distributions import binom_ci, t_quantile
from naparena.stats.strength import MODELS, Lineup, LineupSums, rate

BLEND = '''
"""A bot family of known order: the heuristic's answer with probability `skill`, else a
random legal one."""
from naparena import Bot, hookimpl
from naparena.bots.reference import HeuristicBot


class Blend(HeuristicBot):
    name = "blend"
    description = "heuristic with probability skill, else random"
    params = {"aggression": 0.0, "skill": 0.5}

    def bid(self, view):
        return super().bid(view) if self.rng.random() < self.skill else self.rng.choice(view.legal)

    def play(self, view):
        return super().play(view) if self.rng.random() < self.skill else self.rng.choice(view.legal)


@hookimpl
def register_bots(register):
    register(Blend)
'''


def play_in_process(t: Tournament, registry: Registry) -> Ledger:
    """The session's booking (its Ledger), in-process and without files."""
    ledger = Ledger.of(t)
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
                      seats=seats, hands=spec.hands, spec=spec, boards=boards)
            ledger.book(spec, play_job(job, registry).summary, ())
        ledger.end_of_unit(spec, specs[i + 1] if i + 1 < len(specs) else None)
    return ledger


# The varied field of `null --field N`: bots that differ from the aliases and each other.
FIELD = [("heuristic", {"aggression": a}) for a in (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5)] + [
    ("bold", {}), ("cautious", {})]


def null_tournament(args: argparse.Namespace, rep: int) -> dict[str, Any]:
    bots = [{"name": args.bot, "alias": f"a{i:02d}"} for i in range(args.aliases)]
    bots += [{"name": name, "alias": f"f{i:02d}", **({"params": params} if params else {})}
             for i, (name, params) in enumerate(FIELD[i % len(FIELD)] for i in range(args.field))]
    return {"tournament": {"name": "null", "seed": 1000 + rep, "hands": args.hands, "table": args.table,
                           "format": "league", "rounds": args.rounds, "max_fault_share": 1.0,
                           "duplicate": not args.no_duplicate, "seeds": args.seeds},
            "bots": bots, "variants": [{"name": "classic"}]}


_registry: Registry | None = None


def tied_everywhere(lineups: dict[Lineup, LineupSums]) -> bool:
    """Every bot rated exactly 0 with no spread: the degenerate null, which tests nothing."""
    rows = rate(lineups)["bots"]
    return bool(rows) and all(r["rating"] == 0 and r["se"] == 0 for r in rows)


def one_null(job: tuple[argparse.Namespace, int]) -> dict[str, Any] | None:
    """One league: per model, every alias's (rating, se, ci95); None if it tests nothing."""
    global _registry
    args, rep = job
    if _registry is None:
        _registry = load_registry(None)
    ledger = play_in_process(parse_tournament(null_tournament(args, rep), None, _registry), _registry)
    lineups = ledger.standings.book.lineups["classic"]
    if not args.field and tied_everywhere(lineups):
        return None
    out = {}
    for model in MODELS:
        rated = rate(lineups, model)
        # By alias, a00 first: the first alias is the one whose repetitions are independent.
        out[model] = sorted((r["bot"], r["rating"], r["se"], r["ci95"], r.get("df", math.inf), r["boards"])
                            for r in rated["bots"] if r["bot"].startswith("a") and r["ci95"] is not None)
    out["boards"] = rate(lineups)["bots"][0]["boards"]
    return out


def null(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    if args.fixed_tables:
        # A diagnostic: the same line-ups in every repetition (only the deals and the bots'
        # seeds change), to tell the variance within one schedule from that between schedules.
        from naparena.arena.setup import league, schedule
        schedule.league_tables = lambda aliases, table, rounds, seed: league.league_tables(  # type: ignore[attr-defined]
            aliases, table, rounds, 1)
    done: list[dict[str, Any]] = []
    jobs = [(args, rep) for rep in range(args.reps)]
    pool = multiprocessing.get_context("fork").Pool(args.workers) if args.workers > 1 else None
    try:
        for out in (pool.imap(one_null, jobs) if pool else map(one_null, jobs)):
            if out is None:
                print(f"no test: every board of {args.bot} under duplicate ties (it plays each seat of each deal "
                      "alike), so every rating is exactly 0; use a bot that draws its own seeds, such as random",
                      flush=True)
                return
            done.append(out)
            if len(done) % 25 == 0 or len(done) == args.reps:
                _coverage(args, done, time.perf_counter() - started)
    finally:
        if pool:
            pool.terminate()


def _coverage(args: argparse.Namespace, done: list[dict[str, Any]], took: float) -> None:
    """The shares so far (printed as the repetitions go, so a stopped run still says
    something). Alone, every alias's truth is 0; among a field it is unknown but the same
    for every alias and repetition: estimated by the mean of all their ratings."""
    reps = len(done)
    field = f" among {args.field} other bots" if args.field else ""
    print(f"null calibration: {args.aliases} aliases of {args.bot}{field}, tables of {args.table}, "
          f"{args.rounds} rounds, {args.seeds} seed streams, {args.hands} hands a match, duplicate "
          f"{not args.no_duplicate}: {done[0]['boards']} boards per bot; {reps} reps in {took:.0f} s", flush=True)
    for model in MODELS:
        # A league the model cannot rate (places: a bot that never placed above another) says nothing.
        rated = [out[model] for out in done if out[model]]
        if not rated:
            print(f"  {model:8s} no league rated")
            continue
        n = len(rated)
        rows = [r for aliases in rated for r in aliases]
        truth = math.fsum(r[1] for r in rows) / len(rows) if args.field else 0.0
        firsts = [aliases[0] for aliases in rated]
        first = sum(r[3][0] <= truth <= r[3][1] for r in firsts)
        every = sum(r[3][0] <= truth <= r[3][1] for r in rows)
        lo, hi = binom_ci(first, n)
        wlo, whi = wilson(first, n)
        ratings = [r[1] for r in firsts]
        mean = math.fsum(ratings) / n
        # The quantile a bot's interval used before its own Satterthwaite degrees of freedom:
        # its own boards less one.
        before = sum(abs(r[1] - truth) <= t_quantile(r[5] - 1) * r[2] for r in firsts if r[5] > 1)
        normal = sum(abs(r[1] - truth) <= 1.959964 * r[2] for r in firsts)
        df = sorted(r[4] for r in firsts)[n // 2]
        spread = math.sqrt(math.fsum((x - mean) ** 2 for x in ratings) / max(1, n - 1))
        se = math.fsum(r[2] for r in firsts) / n
        print(f"  {model:8s} {n} leagues rated; first alias covers {'the truth' if args.field else '0'}: "
              f"{first / n:.3f} [{lo:.3f}, {hi:.3f}] (Clopper-Pearson 95%; Wilson [{wlo:.3f}, {whi:.3f}]); "
              f"all aliases: {every / len(rows):.3f}; "
              f"first alias's ratings spread {spread:.2f}, its mean se {se:.2f}"
              + (f"; truth (mean of the aliases) {truth:+.2f}" if args.field else "")
              + f"; median df {df:.1f}; with t(own boards − 1) {before / n:.3f}, with the normal quantile "
              f"{normal / n:.3f}", flush=True)


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's 95% score interval for k successes in n trials."""
    p, z2 = k / n, z * z
    centre, half = (p + z2 / (2 * n)) / (1 + z2 / n), z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def spearman(order: list[str], truth: dict[str, float]) -> float:
    """Spearman's rho of a ranking (best first) against known strengths (no ties)."""
    n = len(order)
    by_truth = sorted(order, key=lambda b: -truth[b])
    rank_truth = {b: i for i, b in enumerate(by_truth)}
    d2 = sum((i - rank_truth[b]) ** 2 for i, b in enumerate(order))
    return 1 - 6 * d2 / (n * (n * n - 1))


class Phase:
    """Wall and CPU time of one phase: this process's CPU, and its children's (the pool's
    workers, counted once they have been waited for)."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self) -> Phase:
        self.wall, self.cpu, self.kids = time.perf_counter(), time.process_time(), _children_cpu()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu
        self.kids = _children_cpu() - self.kids


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def scale(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="league-bench-"))
    (folder / "bots").mkdir()
    (folder / "bots" / "blend.py").write_text(BLEND)
    skills = {f"s{i:03d}": i / (args.bots - 1) for i in range(args.bots)}
    data = {"tournament": {"name": "scale", "seed": 1, "hands": args.hands, "table": args.table,
                           "format": "league", "rounds": args.rounds, "workers": args.workers,
                           "timeout": 60.0},
            "bots": [{"name": "blend", "alias": a, "params": {"skill": s}} for a, s in skills.items()],
            "variants": [{"name": "classic"}]}
    (folder / "scale.toml").write_text(tomli_w.dumps(data))
    phases = []
    # The session asks for the same design later: cached, so counted here only.
    with Phase("line-up design, opening the run") as p:
        session = Session.open(folder / "scale.toml", log_dir=folder / "logs", workers=args.workers)
        hands = sum(1 for _ in schedule(session.t)) * args.hands
    phases.append(p)
    with Phase("run: play, booking, standings") as run:
        result = session.play()
    phases.append(run)
    with Phase("booking (rebuilt from the logs)") as p:
        standings = load_standings(session.run_dir.path)
    phases.append(p)
    lineups = standings.book.lineups["classic"]
    with Phase("margins fit (in the standings)") as p:
        rate(lineups, "margins")
    phases.append(p)
    with Phase("places fit (ratings --model places)") as p:
        places = rate(lineups, "places")["bots"]
    phases.append(p)
    rated = result["strength"]["classic"]
    rows = rated["bots"]
    boards = [r["boards"] for r in rows]
    print(f"scale: {args.bots} bots, tables of {args.table}, {args.rounds} rounds, {args.hands} hands a match, "
          f"{args.workers} workers: {hands:,} hands in {run.wall:.0f} s ({hands / run.wall:,.0f} hands/s); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  {'phase':38s} {'wall s':>8s} {'CPU s':>8s} {'workers CPU s':>14s}")
    for p in phases:
        print(f"  {p.name:38s} {p.wall:8.1f} {p.cpu:8.1f} {p.kids:14.1f}")
    print(f"  peak memory: parent {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB, "
          f"largest worker {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB")
    print(f"  boards per bot: {min(boards)} to {max(boards)}")
    print(f"  margins: Spearman vs known order {spearman([r['bot'] for r in rows], skills):.3f}; "
          f"mean 95% CI width {sum(r['ci95'][1] - r['ci95'][0] for r in rows) / len(rows):.1f} chips/100 hands")
    print(f"  places: Spearman vs known order {spearman([r['bot'] for r in places], skills):.3f}")
    plain = sorted(result["variants"]["classic"]["bots"], key=lambda r: -(r["per100"] or 0))
    plain = [r for r in plain if r["bot"] in skills]
    print(f"  unadjusted chips per 100 hands: Spearman {spearman([r['bot'] for r in plain], skills):.3f}")
    print(f"  run directory: {session.run_dir.path}")


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = out.add_subparsers(dest="what", required=True)
    p = sub.add_parser("null")
    p.add_argument("--reps", type=int, default=300)
    p.add_argument("--aliases", type=int, default=12)
    p.add_argument("--table", type=int, default=4)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--hands", type=int, default=6)
    # random: its seats draw their own seeds, so aliases differ board by board; a bot that
    # plays a deal alike from every seat ties every duplicate board (no test at all).
    p.add_argument("--bot", default="random")
    p.add_argument("--no-duplicate", action="store_true")
    p.add_argument("--seeds", type=int, default=1, help="seed streams")
    p.add_argument("--field", type=int, default=0, help="other bots around the aliases (varied: heuristic "
                   "of six aggressions, bold, cautious)")
    p.add_argument("--workers", type=int, default=1, help="processes the repetitions are spread over "
                   "(same seeds, gathered in repetition order: the same report for any count)")
    p.add_argument("--fixed-tables", action="store_true", help="the same line-ups in every repetition")
    s = sub.add_parser("scale")
    s.add_argument("--bots", type=int, default=200)
    s.add_argument("--table", type=int, default=3)
    s.add_argument("--rounds", type=int, default=12)
    s.add_argument("--hands", type=int, default=4)
    s.add_argument("--workers", type=int, default=2)
    return out


def main() -> None:
    """Bad arguments and naparena's own errors are one line and exit 2, as in `naparena`."""
    usage = parser()
    args = usage.parse_args()
    if args.what == "scale" and not 2 <= args.bots <= MAX_LEAGUE_BOTS:
        usage.error(f"--bots {args.bots}: a league holds 2 to {MAX_LEAGUE_BOTS:,} bots "
                    "(naparena's limit: docs/how-to/leagues.md)")
    try:
        null(args) if args.what == "null" else scale(args)
    except NaparenaError as e:
        print(f"league_bench: error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        print("league_bench: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
