"""`naparena ratings`: one rating list from any set of runs. A bot is the same bot in two
runs when its name, version (the hash of its code, for a drop-in or a command), command
and params are the same, whatever its alias; a variant is the same when its rules and
table size are. Lists are kept apart per variant unless pooling is asked for.

A match is known by what was played (seeds, rules, hands, and the identities in its
seats), never by the run's or the bots' names: a match two runs both played is booked
once, from the first run that holds it (an unfinished run holds only the matches it
played). A run with a changed bot (another version) plays other matches wherever that bot
sits.

The lists come from each run's line-up sums (`stats.strength`), renamed to the bots'
identities and added: rating several runs is rating them merged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from naparena.arena.records.run import Run, open_run
from naparena.arena.setup.schedule import schedule
from naparena.arena.setup.tournament import BotSpec, Tournament
from naparena.errors import RunError
from naparena.stats.strength import MODELS, Lineup, LineupSums, merge, rate


@dataclass
class _List:
    """One rating list being gathered: its variant names, table size, rules and sums."""

    names: list[str]
    table: int | None
    rules: dict[str, Any] | None
    sums: dict[Lineup, LineupSums] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)
    # The luck-adjusted sums (`stats.standings`), while every run of the list has them.
    adjusted: dict[Lineup, LineupSums] | None = field(default_factory=dict)
    corrected: int = 0  # hands whose luck was corrected


def identity(bot: BotSpec, recorded: Mapping[str, Any]) -> str:
    """What makes a bot the same bot in another run, as canonical JSON: its entry, and
    the version its run's manifest `recorded`."""
    command = list(bot.command) if bot.command is not None else None
    return json.dumps({"name": bot.name, "version": recorded.get("version"), "command": command,
                       "params": dict(bot.params)}, sort_keys=True)


def identities(run: Run) -> dict[str, str]:
    """alias -> `identity` of every bot of the run."""
    return {b.alias: identity(b, run.manifest.bots.get(b.alias, {})) for b in run.tournament.bots}


def rating_lists(run_dirs: Sequence[str | Path | Run], pool: bool = False, model: str = "margins",
                 estimator: str = "auto") -> dict[str, Any]:
    """Every list the runs make: {"runs": [...], "lists": [{variant, table, rules, runs,
    model, estimator, bots: [rank, bot, rating, ci95, se, boards, aliases, identity]}]}.
    `estimator` "auto" rates a list luck-adjusted where every run of it was (and some luck
    was corrected), else plain; "plain" always plain."""
    if model not in MODELS:
        raise RunError(f"unknown rating model {model!r}; models: {', '.join(MODELS)}")
    lists: dict[str, _List] = {}
    aliases: dict[str, set[str]] = {}
    runs: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for run_dir in run_dirs:
        run = open_run(run_dir)
        if not run.kept:
            raise RunError(f"{run_dir}: no match played yet (the folder holds only its manifest): nothing to rate")
        t = run.tournament
        who = identities(run)
        # The matches on disk, not the schedule's: a match an unfinished run never played is
        # booked from the next run that has it, not counted as booked here and lost.
        on_disk = run.dir.done_matches()
        played = {i: key for i, key in plays(t, who).items() if i in on_disk}
        shared = {i: seen[key] for i, key in played.items() if key in seen}
        seen.update({key: str(run_dir) for key in played.values() if key not in seen})
        runs.append({"name": t.name, "config_hash": run.manifest.config_hash, "dir": str(run_dir),
                     "matches": len(played), "played_before": len(shared),
                     "before_in": sorted(set(shared.values()))})
        for alias, ident in who.items():
            aliases.setdefault(ident, set()).add(alias)
        booked = run.booked(leave_out=shared)
        lineups = booked.book.lineups
        for v in t.variants:
            rules = v.rules.as_dict()
            key = "pooled" if pool else json.dumps([rules, t.table], sort_keys=True)
            entry = lists.setdefault(key, _List([], None if pool else t.table, None if pool else rules))
            if v.name not in entry.names:
                entry.names.append(v.name)
            if t.name not in entry.runs:
                entry.runs.append(t.name)
            merge(entry.sums, (((tuple(who[a] for a in names), hands), sums)
                               for (names, hands), sums in lineups[v.name].items()))
            if booked.adjusted is None or entry.adjusted is None:
                entry.adjusted = None
            else:
                entry.corrected += booked.corrected[v.name]
                merge(entry.adjusted, (((tuple(who[a] for a in names), hands), sums)
                                       for (names, hands), sums in booked.adjusted.lineups[v.name].items()))
    labels = _labels(aliases)
    out = []
    for entry in sorted(lists.values(), key=lambda e: (e.names, e.table or 0)):
        adjusted = estimator == "auto" and entry.adjusted is not None and entry.corrected > 0
        rated = {**rate(entry.adjusted if adjusted and entry.adjusted is not None else entry.sums, model),
                 "estimator": "adjusted" if adjusted else "plain"}
        for row in rated["bots"]:
            ident = row["bot"]
            row.update(bot=labels[ident], aliases=sorted(aliases[ident]), identity=json.loads(ident))
        out.append({"variant": "/".join(entry.names) if not pool else "pooled: " + ", ".join(entry.names),
                    "table": entry.table, "rules": entry.rules, "runs": entry.runs, **rated})
    return {"runs": runs, "lists": out}


def plays(t: Tournament, who: dict[str, str]) -> dict[int, str]:
    """A key per scheduled match (by index) for what is played in it: the master seed and
    match index (the bots' seeds), its deal seed, hands, rules and stack, and the identity
    of the bot in each seat. Names of the run, its variants and its bots play no part."""
    return {s.index: _digest({"seed": t.seed, "index": s.index, "deal": s.seed, "hands": s.hands,
                              "boards": s.boards, "stack": t.stack,
                              "rules": t.variant(s.variant).rules.as_dict(),
                              "seats": [who[a] for a in s.seats]})
            for s in schedule(t)}


def _digest(data: Any) -> str:
    return hashlib.blake2b(json.dumps(data, sort_keys=True).encode(), digest_size=16).hexdigest()


def _labels(aliases: dict[str, set[str]]) -> dict[str, str]:
    """A short name per identity, the same whatever order the runs come in: its first
    alias, and where two identities share that, a hash of the identity after it."""
    first = {ident: min(names) for ident, names in aliases.items()}
    taken: dict[str, int] = {}
    for name in first.values():
        taken[name] = taken.get(name, 0) + 1
    return {ident: name if taken[name] == 1 else
            f"{name}@{hashlib.blake2b(ident.encode(), digest_size=3).hexdigest()}"
            for ident, name in first.items()}
