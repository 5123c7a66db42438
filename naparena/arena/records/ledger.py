"""Booking results in schedule order: which seats the stand-in plays, which matches are
skipped, when a deal set closes, who is disqualified, and the standings rebuilt from a run
directory's logs. Decided in schedule order, so the same for any number of workers.
"""

from __future__ import annotations

import logging
from pathlib import Path

from naparena.arena.records.logs import read_match
from naparena.arena.records.rundir import MANIFEST, MATCHES, read_manifest
from naparena.arena.setup.settings import FAULT_MIN_DECISIONS
from naparena.arena.setup.tournament import SprtSpec
from naparena.errors import RunError
from naparena.stats.standings import STAND_IN_ALIAS, Standings

log = logging.getLogger("naparena")

#: The bot that takes a disqualified bot's seat in the line-ups still to play (always registered).
STAND_IN_BOT = "random"


def stand_in_seats(spec: dict, standings: Standings) -> tuple[int, ...]:
    """The seats of match `spec` whose bot is disqualified: the stand-in plays them."""
    return tuple(i for i, a in enumerate(spec["seats"]) if a in standings.disqualified)


def booked_spec(spec: dict, stand_ins: tuple | list) -> dict:
    """`spec` as the standings book it: the stand-in's seats under its own alias, so a
    disqualified bot's results end where it was disqualified and chips still add up; the
    scheduled seats stay in `lineup`, so its boards there are left out of its intervals."""
    if not stand_ins:
        return spec
    return {**spec, "seats": [STAND_IN_ALIAS if i in stand_ins else a for i, a in enumerate(spec["seats"])],
            "lineup": list(spec["seats"])}


def skip_reason(spec: dict, standings: Standings) -> str | None:
    """Why match `spec` is not played: fewer than two bots left at the table once the
    disqualified are replaced by the stand-in, or a decided sequential test."""
    out = [a for a in spec["seats"] if a in standings.disqualified]
    if out and len(set(spec["seats"]) - set(out)) < 2:
        return "disqualified: " + ", ".join(sorted(set(out), key=out.index))
    if standings.sprt_decided(spec):
        return "sprt decided: " + standings.sprt.verdict
    return None


def end_of_unit(standings: Standings, spec: dict, following: dict | None) -> None:
    """Close the deal set of `spec` when the next match starts another (schedule order)."""
    unit = standings.unit_of(spec)
    if following is None or standings.unit_of(following) != unit:
        standings.close_unit(unit)


def standings_from_logs(run_dir: Path) -> dict:
    """Rebuild the standings from the run directory's logs alone (`naparena report`)."""
    return load_standings(run_dir).result()


def load_standings(run_dir: Path) -> Standings:
    """The standings accumulator, fed from a run directory's match files in schedule order."""
    run_dir = Path(run_dir)
    config = read_manifest(run_dir)["tournament"]
    try:
        variants = [v["name"] for v in config["variants"]]
        aliases = [b["alias"] for b in config["bots"]]
        sprt = SprtSpec(**config["sprt"]) if config.get("sprt") else None
        standings = Standings(variants, aliases + [STAND_IN_ALIAS], config["duplicate"], sprt)
        share = float(config["max_fault_share"])
    except (KeyError, TypeError, ValueError) as e:
        raise RunError(f"{run_dir / MANIFEST}: damaged tournament configuration ({e})") from None
    files = sorted((run_dir / MATCHES).glob("*.json"))
    data = read_match(files[0]) if files else None
    for i in range(len(files)):
        following = read_match(files[i + 1]) if i + 1 < len(files) else None
        spec = data["match"]
        if "skipped" in data:
            standings.skip(spec, data["skipped"])
        else:
            if spec.get("variant") not in variants or not set(spec.get("seats", ())) <= set(aliases):
                raise RunError(f"{files[i]}: names a variant or bot this run does not have")
            booked = booked_spec(spec, spec.get("stand_ins", ()))
            standings.add(booked, data["summary"])
            judge(standings, booked, share)
        end_of_unit(standings, spec, following["match"] if following else None)
        data = following
    return standings


def judge(standings: Standings, spec: dict, share: float) -> None:
    """Disqualify a bot whose faults exceed the allowed share; decided in schedule order,
    so the same matches are skipped whatever order the workers finish in."""
    if share >= 1:
        return
    for alias in sorted(set(spec["seats"]) - {STAND_IN_ALIAS}):
        faults, decisions = standings.fault_share(alias)
        if decisions >= FAULT_MIN_DECISIONS and faults > share * decisions and alias not in standings.disqualified:
            standings.disqualified[alias] = {"after_match": spec["index"], "faults": faults, "decisions": decisions}
            log.warning("%s disqualified after match %d: %d faults in %d decisions",
                        alias, spec["index"], faults, decisions)
