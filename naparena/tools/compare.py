"""`naparena compare`: the same bots across two runs, and every way the two runs' designs
differ (table size, duplicate, hands, line-ups, the field, the rules), since a difference
between designs is not a difference between the bots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from naparena.arena.records.ledger import load_standings
from naparena.arena.records.rundir import RunDir
from naparena.arena.records.verify import sound
from naparena.stats.standings import compare
from naparena.tools.ratings import identity

# Settings that change what a bot's result measures; seeds are what a second run changes.
DESIGN_KEYS = ("table", "duplicate", "hands", "stack", "format", "rounds", "challengers")


def compare_runs(run_a: str | Path, run_b: str | Path) -> dict[str, Any]:
    """`stats.standings.compare` of two sound runs, with their `design_differences`."""
    sound(run_a)
    sound(run_b)
    result = compare(load_standings(run_a), load_standings(run_b))
    result["design_differences"] = design_differences(RunDir(run_a).read_manifest(), RunDir(run_b).read_manifest())
    return result


def design_differences(a: dict, b: dict) -> list[str]:
    """Every way run B's design is not run A's, from their manifests; empty when the two
    differ only in seeds (and names)."""
    ta, tb = a["tournament"], b["tournament"]
    out = [f"'{key}' is {ta.get(key)!r} in A, {tb.get(key)!r} in B"
           for key in DESIGN_KEYS if ta.get(key) != tb.get(key)]
    if a.get("seating") != b.get("seating") and ta.get("table") == tb.get("table"):
        out.append("the seatings follow another design")
    bots_a = {x["alias"]: identity(x, a["bots"][x["alias"]]) for x in ta["bots"]}
    bots_b = {x["alias"]: identity(x, b["bots"][x["alias"]]) for x in tb["bots"]}
    out += [f"bot '{alias}' plays only in {'A' if alias in bots_a else 'B'}"
            for alias in sorted(bots_a.keys() ^ bots_b.keys())]
    out += [f"bot '{alias}' is another bot in B (name, version, command or params)"
            for alias in sorted(bots_a.keys() & bots_b.keys()) if bots_a[alias] != bots_b[alias]]
    rules_b = {v["name"]: v["rules"] for v in tb["variants"]}
    out += [f"variant '{v['name']}' has other rules in B" for v in ta["variants"]
            if v["name"] in rules_b and rules_b[v["name"]] != v["rules"]]
    return out
