"""Checking a run directory: each file is its run's, skips and stand-ins follow from the
matches before them (booked through the one `Ledger`), and every logged hand replays
through the engine to the same record (`naparena verify`; `report` runs the cheap checks).

A match log holds every answer in the order it was given (bids, extra decisions,
cards, faults by decision number), and the deal seed; feeding those answers to a
fresh `Match` must reproduce every hand record exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from naparena.arena.records import jsontext
from naparena.arena.records.ledger import STAND_IN_BOT, Ledger, Skip
from naparena.arena.records.logs import FORMAT, LoggedMatch, MatchSummary, other_format
from naparena.arena.records.rundir import MANIFEST, MATCHES, STANDINGS, Manifest, RunDir, config_hash
from naparena.arena.setup.schedule import MatchSpec, board_seeds, schedule, seating_design
from naparena.arena.setup.seating import balance, imbalance
from naparena.arena.setup.settings import Format
from naparena.arena.setup.tournament import Tournament
from naparena.errors import RunError
from naparena.game.engine import Hand, Match
from naparena.game.rules import Rules
from naparena.table.luck import KNOWN, match_luck
from naparena.table.play import feed, play_hands


def plain(record: dict[str, Any]) -> dict[str, Any]:
    """A record as it reads back from JSON (tuples become lists)."""
    again: dict[str, Any] = orjson.loads(orjson.dumps(record))
    return again


def verify_match(logged: LoggedMatch, luck: LuckBots | None = None) -> list[str]:
    """Every difference between the log and its replay; empty when it reproduces.

    Checks each hand record, and the summary: per-seat totals, final chips and the kitty
    left at the end. The bots' decision counts are replayed too, for matches without a
    crash (after a crash, which hook calls reached the dead bot is not in the log).
    With `luck` (each seat's bot as `table.luck` takes it: the run is luck-adjusted),
    each hand's luck correction is computed again and must be the logged one.
    """
    if logged.skipped is not None:
        return []
    log, problems = logged.data, []
    players = len(log["bots"])
    boards = board_seeds(log["seed"], logged.spec.hands) if logged.spec.boards else None
    match = Match(Rules.from_dict(log["rules"]), players, log["seed"], log.get("stack", 0), boards)
    summary, decisions = MatchSummary(players), [0] * players
    hands = iter(log["hands"])
    played: list[dict[str, Any]] = []

    def answer(hand: Hand) -> None:  # the log's answers, where a table asks its seats
        played.append(next(hands))
        feed(hand, played[-1], decisions)

    def book(record: dict[str, Any]) -> None:
        logged, again = played[-1], plain(record)
        summary.add(logged)
        if again != logged:
            keys = sorted(k for k in set(again) | set(logged) if again.get(k) != logged.get(k))
            problems.append(f"hand {logged.get('n')}: differs in {', '.join(keys)}")
    try:
        play_hands(match, len(log["hands"]), answer, book)
    except (RunError, KeyError, IndexError, TypeError, ValueError, RuntimeError) as e:
        problems.append(f"cannot be replayed: {e}")
        return problems
    final = match.close()
    logged_summary = log["summary"]
    if log["crashes"]:
        decisions = [s.get("decisions", 0) for s in logged_summary["seats"]]
    again = summary.result(final, log.get("stack", 0), match.kitty, decisions, log["crashes"])
    for key in ("seats", "final", "kitty", "hands", "dealer", "hand_chips", "deal_keys"):
        if again[key] != logged_summary.get(key):
            problems.append(f"summary: {key} does not match the replayed hands")
    if luck is not None and not problems:
        expected = match_luck(Rules.from_dict(log["rules"]), log["seed"], log.get("stack", 0), boards,
                              log["hands"], luck, log["crashes"])
        if expected != logged_summary.get("hand_luck"):
            problems.append("summary: hand_luck is not the luck of the replayed hands")
    return problems


#: Each seat's bot as the luck corrections take it: (name, params) of one of naparena's
#: own bots, else None.
LuckBots = list[tuple[str, dict[str, Any]] | None]


def luck_bots(t: Tournament, data: dict[str, Any]) -> LuckBots | None:
    """The seats of a logged match as its worker gave them to `table.luck`, or None when
    the run is not luck-adjusted: the stand-in (naparena's random) where it played, a
    built-in bot by name, a program never."""
    if not t.luck_adjusted:
        return None
    stand_ins = set(data["match"].get("stand_ins", ()))
    by_alias = {b.alias: b for b in t.bots}
    out: LuckBots = []
    for i, seat in enumerate(data["bots"]):
        bot = by_alias.get(seat["alias"])
        if i in stand_ins:
            out.append((STAND_IN_BOT, {}))
        elif bot is not None and bot.command is None and seat["name"] in KNOWN:
            out.append((seat["name"], dict(seat["params"])))
        else:
            out.append(None)
    return out


def time_dependent(log: dict[str, Any]) -> tuple[list[Any], list[list[Any]]]:
    """A match log's faults that depend on time, which no replay can check: its hangs
    (crashes the pool's watchdog made) and its time-outs ([hand, seat, decision, reason],
    from the hands' faults). A re-run takes them as given; only a signature vouches."""
    hangs = [c for c in log.get("crashes", ()) if str(c[3]).startswith("hang:")]
    time_outs = [[hand["n"], f[1], f[0], f[3]] for hand in log.get("hands", ())
                 for f in hand.get("faults", ()) if str(f[3]).startswith("time-out")]
    return hangs, time_outs


#: `progress(matches done, matches, hands done)`, called as a check goes.
AuditProgress = Callable[[int, int, int], None]


def verify_run(run_dir: Path, progress: AuditProgress | None = None) -> tuple[int, int, list[tuple[str, str]], int]:
    """(matches, hands replayed, [(file, problem)], matches not played yet) of a run.
    `progress(matches done, matches, hands done)` is called after each match."""
    audit = audit_run(run_dir, progress=progress)
    return audit.matches, audit.hands, audit.problems, audit.missing


#: The seats a match file records, and its hands.
Seated = tuple[list[str], int]


@dataclass
class Audit:
    """What checking a run directory found: files read, hands replayed, problems by file."""

    matches: int = 0
    hands: int = 0
    missing: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)
    # (variant, stream) -> [(seats, hands)] of every match file read, for the seating balance
    seated: dict[tuple[Any, ...], list[Seated]] = field(default_factory=dict)


def audit_run(run_dir: str | Path | RunDir, replay: bool = True, progress: AuditProgress | None = None) -> Audit:
    """Check that a run directory is one run and nothing else (see `audit`); a manifest of
    another format, or damaged, is a problem of the run, not an error."""
    rd = RunDir(run_dir)
    raw = rd.read_manifest()
    if raw.get("format") != FORMAT:
        return Audit(problems=[(MANIFEST, other_format(raw).replace("not a match log", "not a manifest"))])
    try:
        manifest = rd.load_manifest()
        t = rd.recorded_tournament(manifest)
    except RunError as e:
        return Audit(problems=[(MANIFEST, str(e).removeprefix(f"{rd.manifest}: "))])
    return audit(rd, manifest, t, replay, progress)


def audit(rd: RunDir, manifest: Manifest, t: Tournament, replay: bool = True,
          progress: AuditProgress | None = None) -> Audit:
    """Check that the run in `rd`, of this manifest and tournament, is one run and nothing else.

    The manifest's configuration must give its own hash, seed and schedule; each match
    file must be the schedule's entry for its name (index, variant, stream, seeds, seats,
    rules, stack, bots); every skipped match must be one the matches before it skip,
    and no played one; a finished run must have every match and the standings its logs
    give, and the seats its files record must balance as the seating design says. With
    `replay`, every hand is also re-dealt from the match seed and replayed.
    `progress(matches done, matches, hands done)` is called after each match.
    """
    audit = Audit()
    specs = schedule(t)
    audit.problems += [(MANIFEST, p) for p in _manifest_problems(manifest, t, specs)]
    names = {rd.match_path(s.index).name for s in specs}
    if progress:
        progress(0, len(specs), 0)  # the total, before the first (maybe long) match
    for f in sorted(rd.matches.iterdir()) if rd.matches.is_dir() else ():
        if f.name not in names:
            audit.problems.append((f"{MATCHES}/{f.name}", "not a match of this run's schedule"))
    finished = rd.standings.exists()
    ledger = Ledger.of(t)
    in_order = True  # every match so far is on disk and sound, so skips can be judged
    for i, spec in enumerate(specs):
        path = rd.match_path(spec.index)
        name = f"{MATCHES}/{path.name}"
        found = _check_match(rd, spec, t, ledger if in_order else None, replay, audit, finished)
        if found is None:
            in_order = False
        else:
            audit.problems += [(name, p) for p in found]
        following = specs[i + 1] if i + 1 < len(specs) else None
        ledger.end_of_unit(spec, following)
        if progress:
            progress(i + 1, len(specs), audit.hands)
    if finished and in_order:
        audit.problems += [(STANDINGS, p) for p in _standings_problems(rd.standings, ledger)]
        audit.problems += [(MATCHES, p) for p in _seating_problems(audit.seated)]
    elif finished:
        audit.problems.append((STANDINGS, "the run says it finished, but its match logs are not all there and sound"))
    return audit


def _check_match(rd: RunDir, spec: MatchSpec, t: Tournament, ledger: Ledger | None, replay: bool, audit: Audit,
                 finished: bool) -> list[str] | None:
    """Problems of one match file, booked into `ledger` (None: missing or unreadable,
    so the matches after it cannot be judged for skipping)."""
    path = rd.match_path(spec.index)
    if not path.exists():
        audit.missing += 1
        if finished:
            audit.problems.append((f"{MATCHES}/{path.name}",
                                   f"missing, though the run finished ({STANDINGS} exists)"))
        return None
    try:
        logged = rd.read_match(spec.index, spec)
    except RunError as e:
        audit.problems.append((f"{MATCHES}/{path.name}", str(e).removeprefix(f"{path}: ")))
        return None
    audit.matches += 1
    # A round-robin balances each seed stream as a whole; a sampled line-up balances within its table.
    own_table = () if t.lineups.format is Format.ROUND_ROBIN else (spec.table_no,)
    audit.seated.setdefault((spec.variant, spec.stream, *own_table), []).append(
        (list(logged.spec.seats), logged.spec.hands))
    plan = ledger.plan(spec) if ledger is not None else None
    expected = plan.reason if isinstance(plan, Skip) else None
    if logged.skipped is not None:
        if ledger is None:
            return ["skipped, though a match before it was never played"]
        ledger.skip(spec, logged.skipped)
        if logged.skipped != expected:
            return [f"says it was skipped ({logged.skipped}), but the matches before it give "
                    + (f"'{expected}'" if expected else "no reason to skip it")]
        return []
    stand_ins = logged.stand_ins
    found = _header_problems(logged.data, spec, t, stand_ins)
    if expected:
        found.append(f"was played, but the matches before it skip it ({expected})")
    if ledger is not None and stand_ins != ledger.stand_in_seats(spec):
        found.append(f"the stand-in played seats {list(stand_ins)}, but the matches before it disqualify"
                     f" the bots of seats {list(ledger.stand_in_seats(spec))}")
    if replay and not found:
        found += verify_match(logged, luck_bots(t, logged.data))
        audit.hands += len(logged.hands)
    if ledger is not None:
        ledger.book(spec, logged.summary, stand_ins)
    return found


def _seating_problems(seated: dict[tuple[Any, ...], list[Seated]]) -> list[str]:
    """Every seed stream of every variant must seat the bots as the design balances them:
    counted from the seats the match files record (a skipped match as scheduled)."""
    out = []
    for (variant, stream, *table), matches in seated.items():
        problem = imbalance(balance(matches))
        if problem:
            where = f", table {table[0]}" if table else ""
            out.append(f"the seatings of {variant}, seed stream {stream}{where}, are not balanced: {problem}")
    return out


def _manifest_problems(manifest: Manifest, t: Tournament, specs: list[MatchSpec]) -> list[str]:
    out = []
    written = manifest.fields
    for key, expected in (("format", FORMAT), ("config_hash", config_hash(t)), ("seed", t.seed),
                          ("matches", len(specs)), ("hands", sum(s.hands for s in specs)),
                          ("seating", seating_design(t))):
        if written.get(key) != expected:
            out.append(f"'{key}' is {written.get(key)!r}, but its tournament configuration gives {expected!r}")
    return out


def _header_problems(data: dict[str, Any], spec: MatchSpec, t: Tournament, stand_ins: tuple[int, ...]) -> list[str]:
    """The match header against what the run's configuration says that match is."""
    bots = {b.alias: b for b in t.bots}
    expected = {
        "variant": spec.variant, "seed": spec.seed, "stack": t.stack,
        "rules": t.variant(spec.variant).rules.as_dict(),
        "bots": [{"alias": a, "name": STAND_IN_BOT, "params": {}} if i in stand_ins else
                 {"alias": a, "name": bots[a].name, "params": bots[a].params}
                 for i, a in enumerate(spec.seats)],
    }
    out = [f"header '{key}' is not this run's (the schedule says {value!r})"
           for key, value in expected.items() if data.get(key) != value]
    if len(data["hands"]) != spec.hands:
        out.append(f"holds {len(data['hands'])} hands; the match has {spec.hands}")
    return out


def _standings_problems(path: Path, ledger: Ledger) -> list[str]:
    try:
        written = jsontext.loads(path.read_bytes())
    except (OSError, ValueError) as e:
        return [f"cannot be read ({e})"]
    rebuilt = jsontext.loads(jsontext.dumps(ledger.result()))
    if written != rebuilt:
        keys = sorted(k for k in set(written) | set(rebuilt) if written.get(k) != rebuilt.get(k)) \
            if isinstance(written, dict) else ["everything"]
        return [f"differs from the standings its match logs give (in {', '.join(keys)})"]
    return []


def sound(run_dir: str | Path) -> None:
    """Refuse a run whose files are not all its own: standings built from them would
    credit the wrong bots (the cheap checks of `audit_run`; `verify` also replays every hand)."""
    refuse_unsound(run_dir, audit_run(run_dir, replay=False))


def refuse_unsound(run_dir: str | Path | RunDir, found: Audit) -> None:
    """A `RunError` naming the first problem `found` (and how many more), if any."""
    problems = found.problems
    if problems:
        name, problem = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RunError(f"{run_dir} fails its checks: {name}: {problem}{more}; "
                       f"naparena verify {run_dir} lists every problem")
