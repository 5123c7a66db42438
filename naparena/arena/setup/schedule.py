"""The schedule: which bots meet in which seats on which deals, and every seed, all derived
from the validated `Tournament` by hashing, so any process can rebuild it from the file."""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from naparena.arena.setup.league import gauntlet_tables, league_tables
from naparena.arena.setup.seating import SeatingDesign, deal_sets, design, seatings
from naparena.arena.setup.settings import Format
from naparena.arena.setup.tournament import Tournament, VariantSpec


@dataclass(frozen=True)
class MatchSpec:
    """One match of the schedule, as plain data a worker process can rebuild it from."""

    index: int
    variant: str
    stream: int
    table_no: int
    rotation: int
    seed: int
    seats: tuple[str, ...]
    hands: int
    boards: bool = False  # hands dealt from their own board seeds (see `board_seeds`)
    deal_set: int = 0  # with duplicate, which of its table's deal sets this seating replays

    def as_dict(self) -> dict[str, Any]:  # Any: the JSON the match log records
        # By hand, not `dataclasses.asdict`: the dispatch asks six times a match, and the
        # fields are plain values (asdict's deep copy was a tenth of a league's parent).
        d: dict[str, Any] = {"index": self.index, "variant": self.variant, "stream": self.stream,
                             "table_no": self.table_no, "rotation": self.rotation, "seed": self.seed,
                             "seats": list(self.seats), "hands": self.hands}
        if self.boards:  # the usual case has none: logs stay as they were before boards existed
            d["boards"] = True
        if self.deal_set:  # deal set 0 is written as logs before deal sets were (no key)
            d["deal_set"] = self.deal_set
        return d

    @classmethod
    def from_dict(cls, record: object) -> MatchSpec:
        """The entry a match log's header records (`as_dict`'s inverse), or a `ValueError`
        saying what is wrong with it: a field missing or of the wrong type, a field no
        schedule entry has, or a form `as_dict` would not have written."""
        if not isinstance(record, dict):
            raise ValueError("no schedule entry ('match')")
        for key, kind in _FIELDS.items():
            if type(record.get(key)) is not kind:
                raise ValueError(f"match.{key} is missing or not a {kind.__name__}")
        seats = record["seats"]
        if not all(isinstance(a, str) for a in seats):
            raise ValueError("match.seats must be bot aliases")
        if record.get("boards", True) is not True:
            raise ValueError("match.boards, where present, must be true")
        deal_set = record.get("deal_set", 1)
        if type(deal_set) is not int or deal_set < 1:
            raise ValueError("match.deal_set, where present, must be a positive integer (the first is not written)")
        extra = sorted(set(record) - set(_FIELDS) - {"boards", "deal_set"})
        if extra:
            raise ValueError(f"match.{extra[0]} is not a field of a schedule entry")
        return cls(record["index"], record["variant"], record["stream"], record["table_no"], record["rotation"],
                   record["seed"], tuple(seats), record["hands"], "boards" in record, record.get("deal_set", 0))


#: The fields every schedule entry records, and their JSON types (`boards` only when true,
#: `deal_set` only past a table's first deal set).
_FIELDS: dict[str, type] = {"index": int, "variant": str, "stream": int, "table_no": int, "rotation": int,
                            "seed": int, "seats": list, "hands": int}


def derive_seed(master: int, *parts: Any) -> int:
    """A 64-bit seed from the master seed and labels: the first 8 bytes of blake2b over
    "|".join of their str() forms, read big-endian. Stable across runs and Python versions."""
    text = "|".join(map(str, (master, *parts)))
    return int.from_bytes(hashlib.blake2b(text.encode()).digest()[:8], "big")


def bot_seed(master: int, match_index: int, seat: int) -> int:
    """The seed of the bot sitting in `seat` of match `match_index`."""
    return derive_seed(master, "bot", match_index, seat)


BOARDS_NOTE = ("each hand dealt from its own seed (deal seed, hand number): duplicate boards "
               "replace gather-and-cut, so every seating gets the same deals")


def board_seeds(deal_seed: int, hands: int) -> tuple[int, ...]:
    """The seed of every hand (board) of a duplicate match dealt board by board.

    Variants that shuffle only after a won Nap gather the cards in the order they were
    played and cut them, so a seating's later deals would depend on its play and
    seatings would share only their first deal. Duplicate replaces gather-and-cut
    there: hand n of every seating is shuffled and cut from this seed, derived from
    the deal seed and n alone.
    """
    return tuple(derive_seed(deal_seed, "board", n) for n in range(hands))


def uses_boards(t: Tournament, variant: VariantSpec) -> bool:
    """Does this variant's duplicate need board seeds? Only when it does not shuffle every
    hand: `every_hand` variants draw each deal from the match's own RNG, which play never
    touches, so their seatings are identical already (and their logs stay as they were)."""
    return t.duplicate and variant.rules.shuffle != "every_hand"


def tables(t: Tournament) -> list[tuple[str, ...]]:
    """The bots in each table's slots, one tuple per table (the seating design seats them).

    More bots than seats: every combination of `table` bots, in the order listed.
    Fewer: one table, bot i in slots i, i+k, … (k bots, cyclic). A bot holding two
    seats plays twice as many hands, so compare results per seat played. A league or a
    gauntlet samples its line-ups (`league.py`), seeded from the master seed.
    """
    aliases = [b.alias for b in t.bots]
    lineups = t.lineups
    if lineups.format is Format.LEAGUE:
        return list(_cached(league_tables, tuple(aliases), t.table, lineups.rounds,
                            derive_seed(t.seed, "league")))
    if lineups.format is Format.GAUNTLET:
        return list(_cached(gauntlet_tables, tuple(aliases), lineups.challengers, t.table, lineups.rounds,
                            derive_seed(t.seed, "gauntlet")))
    if len(aliases) > t.table:
        return list(itertools.combinations(aliases, t.table))
    return [tuple(aliases[i % len(aliases)] for i in range(t.table))]


@functools.lru_cache(maxsize=8)
def _cached(design_of: Callable[..., list[tuple[str, ...]]], *args: Any) -> tuple[tuple[str, ...], ...]:
    # The session, the manifest and verify each ask for a league's tables: design it once.
    return tuple(design_of(*args))


def schedule(t: Tournament) -> list[MatchSpec]:
    """Every match of the tournament, in order: variant, seed stream, table, seating.

    `rotation` is the seating's number in the table's design (`seating.seatings`). With
    duplicate, the rotations of each cyclic order share one deal seed (`seating.deal_sets`:
    the first keeps the seed a table's seatings all shared before deal sets); without,
    every match has its own, and the seatings are balanced across matches the same way.
    Seeds hang off names, not positions, so adding a variant never changes another
    variant's deals.
    """
    matches: list[MatchSpec] = []
    for variant in t.variants:
        boards = uses_boards(t, variant)
        for stream in range(t.seeds):
            for table_no, seats in enumerate(tables(t)):
                sets = deal_sets(seats)
                for rotation, seating in enumerate(seatings(seats)):
                    deal_set = sets[rotation] if t.duplicate else 0
                    own = (rotation,) if not t.duplicate else ("set", deal_set) if deal_set else ()
                    seed = derive_seed(t.seed, "deal", variant.name, stream, table_no, *own)
                    matches.append(MatchSpec(len(matches), variant.name, stream, table_no, rotation,
                                             seed, seating, t.hands, boards, deal_set))
    return matches


def total_hands(t: Tournament) -> int:
    """Hands in the whole tournament, every match played in full."""
    per_variant = t.seeds * sum(len(seatings(seats)) for seats in tables(t))
    return len(t.variants) * per_variant * t.hands


def seating_design(t: Tournament) -> SeatingDesign:
    """The seating design of this tournament's tables, as the manifest records it."""
    return design(tables(t)[0], t.duplicate)
