"""`naparena ratings`: one rating list from any set of runs. A bot is the same bot in two
runs when its name, version (the hash of its code, for a drop-in or a command), command
and params are the same, whatever its alias; a variant is the same when its rules and
table size are. Lists are kept apart per variant unless pooling is asked for.

A match is known by what was played (seeds, rules, hands, and the identities in its
seats), never by the run's or the bots' names: a match two runs both played is booked
once, from the first run that has it. A run with a changed bot (another version) plays
other matches wherever that bot sits.

The lists come from each run's line-up sums (`stats.strength`), renamed to the bots'
identities and added: rating several runs is rating them merged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from naparena.arena.records.ledger import load_standings
from naparena.arena.records.rundir import RunDir
from naparena.arena.records.verify import sound, tournament_of
from naparena.arena.setup.schedule import schedule
from naparena.arena.setup.tournament import Tournament
from naparena.errors import RunError
from naparena.stats.strength import MODELS, Lineup, LineupSums, merge, rate


@dataclass
class _List:
    """One rating list being gathered: its variant names, table size, rules and sums."""

    names: list[str]
    table: int | None
    rules: dict | None
    sums: dict[Lineup, LineupSums] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)


def identity(config_bot: dict, manifest_bot: dict) -> str:
    """What makes a bot the same bot in another run, as canonical JSON."""
    return json.dumps({"name": config_bot["name"], "version": manifest_bot.get("version"),
                       "command": config_bot.get("command"), "params": config_bot.get("params", {})},
                      sort_keys=True)


def rating_lists(run_dirs: Sequence[str | Path], pool: bool = False, model: str = "margins") -> dict[str, Any]:
    """Every list the runs make: {"runs": [...], "lists": [{variant, table, rules, runs,
    model, bots: [rank, bot, rating, ci95, se, boards, aliases, identity]}]}."""
    if model not in MODELS:
        raise RunError(f"unknown rating model {model!r}; models: {', '.join(MODELS)}")
    lists: dict[str, _List] = {}
    aliases: dict[str, set[str]] = {}
    runs: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for run_dir in run_dirs:
        sound(run_dir)
        rd = RunDir(run_dir)
        if not rd.match_files():
            raise RunError(f"{run_dir}: no match played yet (the folder holds only its manifest): nothing to rate")
        manifest = rd.read_manifest()
        config = manifest["tournament"]
        who = {b["alias"]: identity(b, manifest["bots"][b["alias"]]) for b in config["bots"]}
        played = plays(tournament_of(config), who)
        shared = {i: seen[key] for i, key in played.items() if key in seen}
        seen.update({key: str(run_dir) for key in played.values() if key not in seen})
        runs.append({"name": config["name"], "config_hash": manifest["config_hash"], "dir": str(run_dir),
                     "matches": len(played), "played_before": len(shared),
                     "before_in": sorted(set(shared.values()))})
        for alias, ident in who.items():
            aliases.setdefault(ident, set()).add(alias)
        lineups = load_standings(run_dir, leave_out=shared).book.lineups
        for v in config["variants"]:
            key = "pooled" if pool else json.dumps([v["rules"], config["table"]], sort_keys=True)
            entry = lists.setdefault(key, _List([], None if pool else config["table"], None if pool else v["rules"]))
            if v["name"] not in entry.names:
                entry.names.append(v["name"])
            if config["name"] not in entry.runs:
                entry.runs.append(config["name"])
            merge(entry.sums, (((tuple(who[a] for a in names), hands), sums)
                               for (names, hands), sums in lineups[v["name"]].items()))
    labels = _labels(aliases)
    out = []
    for entry in sorted(lists.values(), key=lambda e: (e.names, e.table or 0)):
        rated = rate(entry.sums, model)
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
