"""`naparena compare`: the same bots across two runs, and every way the two runs' designs
differ (table size, duplicate, hands, line-ups, the field, the rules), since a difference
between designs is not a difference between the bots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from naparena.arena.records.run import Run, open_run
from naparena.stats.standings import compare
from naparena.tools.ratings import identities, plays

# Settings that change what a bot's result measures; seeds are what a second run changes.
DESIGN_KEYS = ("table", "duplicate", "hands", "stack", "format", "rounds", "challengers")


def compare_runs(run_a: str | Path | Run, run_b: str | Path | Run) -> dict[str, Any]:
    """`stats.standings.compare` of two sound runs, with their `design_differences`."""
    a, b = open_run(run_a), open_run(run_b)
    result = compare(a.booked(), b.booked())
    result["design_differences"] = design_differences(a, b)
    result["shared_matches"] = shared_matches(a, b)
    return result


def shared_matches(a: Run, b: Run) -> int:
    """How many of B's played matches A played too (the same seeds and bots, whatever the
    runs, folders or bots are called): the intervals treat A and B as independent, so a
    copy of a run, or a run sharing seeds with it, is no second sample."""
    def played(run: Run) -> set[str]:
        on_disk = run.dir.done_matches()
        return {key for i, key in plays(run.tournament, identities(run)).items() if i in on_disk}
    return len(played(a) & played(b))


def design_differences(a: Run, b: Run) -> list[str]:
    """Every way run B's design is not run A's, from their manifests; empty when the two
    differ only in seeds (and names)."""
    ta, tb = a.manifest.tournament, b.manifest.tournament
    out = [f"'{key}' is {ta.get(key)!r} in A, {tb.get(key)!r} in B"
           for key in DESIGN_KEYS if ta.get(key) != tb.get(key)]
    if a.manifest.seating != b.manifest.seating and ta.get("table") == tb.get("table"):
        out.append("the seatings follow another design")
    bots_a, bots_b = identities(a), identities(b)
    out += [f"bot '{alias}' plays only in {'A' if alias in bots_a else 'B'}"
            for alias in sorted(bots_a.keys() ^ bots_b.keys())]
    out += [f"bot '{alias}' is another bot in B (name, version, command or params)"
            for alias in sorted(bots_a.keys() & bots_b.keys()) if bots_a[alias] != bots_b[alias]]
    rules_b = {v.name: v.rules for v in b.tournament.variants}
    out += [f"variant '{v.name}' has other rules in B" for v in a.tournament.variants
            if v.name in rules_b and rules_b[v.name] != v.rules]
    return out
