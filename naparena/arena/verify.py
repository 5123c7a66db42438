"""Replay logged hands through the engine: `naparena verify` and `naparena replay` use it.

A match log holds every answer in the order it was given (bids, extra decisions,
cards, faults by decision number), and the deal seed; feeding those answers to a
fresh `Match` must reproduce every hand record exactly.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import orjson

from naparena.arena.play import FORMAT, MatchSummary
from naparena.errors import RunError
from naparena.game.engine import BID, PLAY, Hand, Match
from naparena.game.rules import Rules


def load_match(path: str | Path) -> dict:
    try:
        data = json.loads(Path(path).read_bytes())
    except FileNotFoundError:
        raise RunError(f"{path}: no such match log") from None
    except json.JSONDecodeError as e:
        raise RunError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise RunError(f"{path}: log format {found}; this naparena reads format {FORMAT}")
    return data


def rules_of(log: dict) -> Rules:
    return Rules(**{**log["rules"], "bids": tuple(log["rules"]["bids"])})


def _feed(hand: Hand, logged: dict, decisions: list[int] | None = None) -> None:
    """Give the hand its logged answers; count each seat's answered decisions."""
    bids = deque(logged["bids"])
    pre = deque(logged.get("pre", ()))
    plays = deque(c for _, trick, _ in logged["tricks"] for _, c in trick)
    plays.extend(c for _, c in logged.get("trick", ()))
    faults = {f[0]: f[3] for f in logged.get("faults", ())}
    guard = 0
    while not hand.over:
        guard += 1
        if guard > 1000:
            raise RunError(f"hand {logged.get('n')}: the log does not finish the hand")
        kind, fault = hand.kind, faults.get(hand.decisions)
        if kind == BID:
            while bids and bids[0][0] != hand.to_act:
                bids.popleft()  # a bid no one was asked for: Sir Garnet's forced Nap
            answer = bids.popleft()[1] if bids else None
        elif kind == PLAY:
            answer = None if fault is not None else (plays.popleft() if plays else None)
        else:
            answer = pre.popleft()[2] if pre else None
            answer = tuple(answer) if isinstance(answer, list) else answer
        if decisions is not None and not (fault or "").startswith(("crash:", "hang:")):
            decisions[hand.to_act] += 1
        if fault is not None:
            hand.fault(fault)
        else:
            hand.apply(answer)


def plain(record: dict) -> dict:
    """A record as it reads back from JSON (tuples become lists)."""
    return orjson.loads(orjson.dumps(record))


def verify_match(log: dict) -> list[str]:
    """Every difference between the log and its replay; empty when it reproduces.

    Checks each hand record, and the summary: per-seat totals, final chips and the kitty
    left at the end. The bots' decision counts are replayed too, for matches without a
    crash (after a crash, which hook calls reached the dead bot is not in the log).
    """
    if "skipped" in log:
        return []
    problems = []
    players = len(log["bots"])
    match = Match(rules_of(log), players, log["seed"], log.get("stack", 0))
    summary, decisions = MatchSummary(players), [0] * players
    try:
        for logged in log["hands"]:
            hand = match.next_hand()
            _feed(hand, logged, decisions)
            match.finish(hand)
            again = plain(hand.record())
            summary.add(logged)
            if again != logged:
                keys = sorted(k for k in set(again) | set(logged) if again.get(k) != logged.get(k))
                problems.append(f"hand {logged.get('n')}: differs in {', '.join(keys)}")
    except (RunError, KeyError, IndexError, TypeError, ValueError, RuntimeError) as e:
        problems.append(f"cannot be replayed: {e}")
        return problems
    won = [c - log.get("stack", 0) for c in match.chips]
    final = match.close()
    logged_summary = log["summary"]
    if log["crashes"]:
        decisions = [s.get("decisions", 0) for s in logged_summary["seats"]]
    again = summary.result(won, final, match.kitty, decisions, log["crashes"])
    for key in ("seats", "final", "kitty", "hands"):
        if again[key] != logged_summary.get(key):
            problems.append(f"summary: {key} does not match the replayed hands")
    return problems


def verify_run(run_dir: Path, progress=None) -> tuple[int, int, list[tuple[str, str]], int]:
    """(matches, hands replayed, [(file name, problem)], matches not played yet) of a run.
    `progress(matches done, matches, hands done)` is called after each match."""
    from naparena.arena.runner import MATCHES, read_manifest

    manifest = read_manifest(Path(run_dir))
    files = sorted((Path(run_dir) / MATCHES).glob("*.json"))
    hands, problems = 0, []
    for done, f in enumerate(files, 1):
        try:
            data = load_match(f)
            found = verify_match(data)
        except RunError as e:
            data, found = {}, [str(e)]
        hands += len(data.get("hands", ()))
        problems += [(f.name, p) for p in found]
        if progress:
            progress(done, len(files), hands)
    return len(files), hands, problems, manifest["matches"] - len(files)
