"""Reading match files back: a file is a complete match log of this format, or a clear
error naming it (runner, report and verify all read through here)."""

from __future__ import annotations

import json
from pathlib import Path

from naparena.arena.play import FORMAT
from naparena.errors import RunError


def load_match(path: str | Path) -> dict:
    """A match file read back, or a RunError naming it and what is wrong with it."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise RunError(f"{path}: no such match log") from None
    except OSError as e:
        raise RunError(f"{path}: cannot read it: {e.strerror}") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        what = "empty" if not raw.strip() else f"not valid JSON ({e})"
        raise RunError(f"{path}: damaged match log: {what}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RunError(f"{path}: {other_format(data)}")
    return data


def other_format(data) -> str:
    found = data.get("format") if isinstance(data, dict) else None
    if isinstance(found, int) and 0 < found < FORMAT:
        return (f"written in log format {found} by an older naparena; this one reads format {FORMAT}"
                " only: read it with the version that wrote it")
    if isinstance(found, int) and found > FORMAT:
        return f"written in log format {found} by a newer naparena; this one reads format {FORMAT}"
    return f"not a match log (no log format); this naparena reads format {FORMAT}"


# The summary fields the standings add up, and their types.
_SEAT_FIELDS = {"chips": int, "hands": int, "bidder_hands": int, "bidder_chips": int,
                "defender_chips": int, "revokes": int, "decisions": int, "contracts": dict, "faults": dict}


def read_match(path: str | Path, spec: dict | None = None) -> dict:
    """`load_match`, then checked enough for the standings to add it up safely: a complete
    match log (or a skipped stub) and, given the schedule's `spec`, one of this run's."""
    data = load_match(path)
    problem = _spec_problem(data.get("match"))
    if problem:
        raise RunError(f"{path}: damaged match log: {problem}")
    # The stand-in seats are decided as the run goes, not by the schedule: compared apart.
    if spec is not None and {k: v for k, v in data["match"].items() if k != "stand_ins"} != spec:
        raise RunError(f"{path}: not this run's match {spec['index']}: its schedule entry differs"
                       " (a file from another run, or an edited header)")
    if "skipped" in data:
        if not isinstance(data["skipped"], str) or set(data) != {"format", "match", "skipped"}:
            raise RunError(f"{path}: damaged skipped-match stub")
        return data
    problem = _structure_problem(data)
    if problem:
        raise RunError(f"{path}: not a complete match log: {problem}")
    return data


_SPEC_FIELDS = {"index": int, "variant": str, "stream": int, "table_no": int, "rotation": int,
                "seed": int, "seats": list, "hands": int}


def _spec_problem(spec) -> str | None:
    if not isinstance(spec, dict):
        return "no schedule entry ('match')"
    for key, kind in _SPEC_FIELDS.items():
        if type(spec.get(key)) is not kind:
            return f"match.{key} is missing or not a {kind.__name__}"
    if not all(isinstance(a, str) for a in spec["seats"]):
        return "match.seats must be bot aliases"
    return None


def _structure_problem(data: dict) -> str | None:
    for key, kind in (("match", dict), ("bots", list), ("hands", list), ("summary", dict),
                      ("crashes", list), ("rules", dict), ("seed", int)):
        if not isinstance(data.get(key), kind):
            return f"'{key}' is missing or not a {kind.__name__}"
    seats = data["summary"].get("seats")
    if not isinstance(seats, list) or len(seats) != len(data["bots"]) or \
            len(seats) != len(data["match"].get("seats", ())):
        return "the summary does not have one entry per seat"
    for n, seat in enumerate(seats):
        if not isinstance(seat, dict):
            return f"summary seat {n} is not an object"
        for key, kind in _SEAT_FIELDS.items():
            if type(seat.get(key)) is not kind:
                return f"summary seat {n}: '{key}' is missing or not a {kind.__name__}"
        tallies = list(seat["contracts"].values())
        if not all(isinstance(t, list) and len(t) == 2 and all(type(x) is int for x in t) for t in tallies) \
                or not all(type(x) is int for x in seat["faults"].values()):
            return f"summary seat {n}: damaged contract or fault counts"
    if not isinstance(data["summary"].get("kitty"), int):
        return "summary: 'kitty' is missing"
    if len(data["hands"]) != data["summary"].get("hands"):
        return "the summary counts another number of hands than the log holds"
    return None
