"""The match-log format: one writer and reader of a match file. Logs are compact JSON,
written atomically; read back, a file is a complete match log of this format, or a clear
error naming it (runner, report and verify all read through here). `MatchSummary` adds a
match's hands up into the summary its log ends with.
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import orjson

from naparena.arena.setup.schedule import MatchSpec
from naparena.errors import RunError
from naparena.table.watch import fault_kind

# Of logs and manifests. 2: tricks name the seat of every card; 3: hands hold what re-deals
# them (cut, gathered pack, purchase stock, cards bought, Sir Garnet in dealt order) and
# the rules hold `sedan_trumps`; 4: the seating design (every bot at every offset from
# every other), so a schedule of format 3 is not this one; 5: duplicate deal sets (each
# cyclic order of a table's seats replays its own deals, `match.deal_set`), and a
# luck-adjusted run's `summary.hand_luck`: a duplicate schedule of format 4 dealt one deal
# set a table, so its runs are neither resumed nor verified against this one's; 6: the
# luck of a purchase from a shuffled stock corrected too, so an adjusted run of a variant
# with purchases logs other `hand_luck` than format 5 did.
FORMAT = 6

#: A match log, its header or tail, a hand record, a schedule entry: JSON objects as
#: written and read back. Any: this is the JSON boundary; each reader checks the keys it uses.
Json = dict[str, Any]


class SeatSummary(TypedDict):
    """One seat's totals in a match's summary."""

    chips: int
    hands: int
    bidder_hands: int
    bidder_chips: int
    defender_chips: int
    contracts: dict[str, list[int]]  # contract: [tries, made]
    revokes: int
    faults: dict[str, int]           # fault kind: count
    decisions: int
    crashed_at: NotRequired[int]     # the hand a seat crashed in, only after a crash
    crashed_by: NotRequired[str]     # and its fault kind


class Summary(TypedDict):
    """The summary a match log ends with."""

    seats: list[SeatSummary]
    final: list[int]
    kitty: int
    hands: int
    dealer: int | None
    hand_chips: list[list[int]]
    # Luck-adjusted runs (`naparena.table.luck`): each hand's correction per seat, in
    # millionths of a chip, where a seat's bot drew its answers with known odds.
    hand_luck: NotRequired[list[list[int]]]
    deal_keys: list[int]


class SummaryState(TypedDict):
    """A `MatchSummary`'s totals so far, as a match's checkpoint holds them."""

    hands: int
    bidder_hands: list[int]
    bidder_chips: list[int]
    contracts: list[dict[str, list[int]]]
    revokes: list[int]
    faults: list[dict[str, int]]
    dealer: int | None
    hand_chips: list[list[int]]
    deal_keys: list[int]


def compact(data: object) -> str:
    # orjson: a quarter of the stdlib's time per hand, the same compact JSON text.
    return orjson.dumps(data).decode()


def load_match(path: str | Path) -> Json:
    """A match file read back, or a RunError naming it and what is wrong with it."""
    try:  # asked of the file only when it cannot be read: a stat per match is a tenth of a rebuild
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise RunError(f"{path}: no such match log") from None
    except OSError as e:
        if Path(path).is_dir():
            raise RunError(f"{path}: a folder, not a match log; name one of a run's matches/NNNNNN.json "
                           "files") from None
        raise RunError(f"{path}: cannot read it: {e.strerror}") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        what = "empty" if not raw.strip() else f"not valid JSON ({e})"
        raise RunError(f"{path}: damaged match log: {what}") from None
    where = "; a run's match logs are its matches/NNNNNN.json files"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        problem = other_format(data)
        raise RunError(f"{path}: {problem}{where if problem.startswith('not a match log') else ''}")
    if not isinstance(data.get("hands"), list) and "skipped" not in data:
        # The manifest carries the log format's number too: say what was given instead.
        raise RunError(f"{path}: not a match log (it has no hands){where}")
    match_log: Json = data  # a JSON object, checked to be a match log of this format
    return match_log


def other_format(data: object) -> str:
    found = data.get("format") if isinstance(data, dict) else None
    if isinstance(found, int) and 0 < found < FORMAT:
        return (f"written in log format {found} by an older naparena; this one reads format {FORMAT}"
                " only: read it with the version that wrote it")
    if isinstance(found, int) and found > FORMAT:
        return f"written in log format {found} by a newer naparena; this one reads format {FORMAT}"
    return f"not a match log (no log format); this naparena reads format {FORMAT}"


# The summary fields the standings add up, and their types.
_SEAT_FIELDS: dict[str, type] = {"chips": int, "hands": int, "bidder_hands": int, "bidder_chips": int,
                "defender_chips": int, "revokes": int, "decisions": int, "contracts": dict, "faults": dict}


@dataclass(frozen=True)
class LoggedMatch:
    """A match file as read back and checked (`read_match`): its header's schedule entry,
    typed once here; the seats the stand-in played (a disqualified bot's); and the whole
    log as the JSON it is, for the readers of its hands and summary."""

    spec: MatchSpec
    stand_ins: tuple[int, ...]
    data: Json

    @property
    def skipped(self) -> str | None:
        """Why the match was not played; None when it was."""
        reason: str | None = self.data.get("skipped")
        return reason

    @property
    def summary(self) -> Json:
        """The summary of a played match (a skipped stub has none)."""
        summary: Json = self.data["summary"]
        return summary

    @property
    def hands(self) -> list[Json]:
        """The hand records (none in a skipped stub)."""
        hands: list[Json] = self.data.get("hands", [])
        return hands


def read_match(path: str | Path, spec: MatchSpec | None = None) -> LoggedMatch:
    """`load_match`, then checked enough for the standings to add it up safely: a complete
    match log (or a skipped stub) and, given the schedule's `spec`, one of this run's."""
    data = load_match(path)
    try:
        logged, stand_ins = parse_header(data.get("match"))
    except ValueError as e:
        raise RunError(f"{path}: damaged match log: {e}") from None
    # The stand-in seats are decided as the run goes, not by the schedule: compared apart.
    if spec is not None and logged != spec:
        raise RunError(f"{path}: not this run's match {spec.index}: its schedule entry differs"
                       " (a file from another run, or an edited header)")
    if "skipped" in data:
        if not isinstance(data["skipped"], str) or set(data) != {"format", "match", "skipped"} or stand_ins:
            raise RunError(f"{path}: damaged skipped-match stub")
        return LoggedMatch(logged, (), data)
    problem = _structure_problem(data, logged)
    if problem:
        raise RunError(f"{path}: not a complete match log: {problem}")
    return LoggedMatch(logged, stand_ins, data)


def parse_header(record: object) -> tuple[MatchSpec, tuple[int, ...]]:
    """A log header's "match" (`Job.match_entry`): the schedule's entry and the seats the
    stand-in played; a `ValueError` saying what is wrong, if anything is."""
    if not isinstance(record, dict):
        raise ValueError("no schedule entry ('match')")
    spec = MatchSpec.from_dict({k: v for k, v in record.items() if k != "stand_ins"})
    if "stand_ins" not in record:
        return spec, ()
    seats = record["stand_ins"]
    if not isinstance(seats, list) or not seats or any(type(s) is not int for s in seats) \
            or seats != sorted(set(seats)) or not 0 <= seats[0] <= seats[-1] < len(spec.seats):
        raise ValueError("match.stand_ins must list seats of the table, each once, in order")
    return spec, tuple(seats)


def _structure_problem(data: Json, spec: MatchSpec) -> str | None:
    for key, kind in (("match", dict), ("bots", list), ("hands", list), ("summary", dict),
                      ("crashes", list), ("rules", dict), ("seed", int)):
        if not isinstance(data.get(key), kind):
            return f"'{key}' is missing or not a {kind.__name__}"
    seats = data["summary"].get("seats")
    if not isinstance(seats, list) or len(seats) != len(data["bots"]) or \
            len(seats) != len(spec.seats):
        return "the summary does not have one entry per seat"
    for n, seat in enumerate(seats):
        if not isinstance(seat, dict):
            return f"summary seat {n} is not an object"
        for key, wanted in _SEAT_FIELDS.items():
            if type(seat.get(key)) is not wanted:
                return f"summary seat {n}: '{key}' is missing or not a {wanted.__name__}"
        tallies = list(seat["contracts"].values())
        if not all(isinstance(t, list) and len(t) == 2 and all(type(x) is int for x in t) for t in tallies) \
                or not all(type(x) is int for x in seat["faults"].values()):
            return f"summary seat {n}: damaged contract or fault counts"
    if not isinstance(data["summary"].get("kitty"), int):
        return "summary: 'kitty' is missing"
    if len(data["hands"]) != data["summary"].get("hands"):
        return "the summary counts another number of hands than the log holds"
    return None


class MatchLog:
    """A played match: header, hands (their JSON objects, comma-joined), summary; `bytes()` is
    the log file. Written here, beside its reader, so the two keep one format."""

    def __init__(self, head: Json, hands: bytes | bytearray, tail: Json):
        self.head, self.hands, self.tail = head, hands, tail

    @property
    def summary(self) -> Json:
        summary: Json = self.tail["summary"]  # plain data, as it travels back from a worker
        return summary

    def __bytes__(self) -> bytes:
        head = compact(self.head)[:-1]
        tail = compact(self.tail)[1:]
        return b"".join((head.encode(), b',"hands":[', self.hands, b"],", tail.encode(), b"\n"))


class MatchSummary:
    """Per-seat totals of one match, added up hand by hand (report and verify reuse it)."""

    def __init__(self, players: int):
        self.hands = 0
        self.bidder_hands = [0] * players
        self.bidder_chips = [0] * players
        self.contracts: list[dict[str, list[int]]] = [{} for _ in range(players)]  # [tries, made]
        self.revokes = [0] * players
        self.faults: list[dict[str, int]] = [{} for _ in range(players)]
        # Per hand, for the board statistics: each seat's chips, and a checksum of the
        # deal (dealer, cards, extra cards) to measure whether rotations got the same deal.
        self.dealer: int | None = None
        self.hand_chips: list[list[int]] = []
        self.deal_keys: list[int] = []

    def state(self) -> SummaryState:
        """The totals so far, as JSON-ready data (a match's checkpoint)."""
        return {"hands": self.hands, "bidder_hands": self.bidder_hands, "bidder_chips": self.bidder_chips,
                "contracts": self.contracts, "revokes": self.revokes, "faults": self.faults,
                "dealer": self.dealer, "hand_chips": self.hand_chips, "deal_keys": self.deal_keys}

    def restore(self, state: SummaryState) -> None:
        self.hands, self.dealer = state["hands"], state["dealer"]
        self.bidder_hands, self.bidder_chips = state["bidder_hands"], state["bidder_chips"]
        self.contracts, self.revokes, self.faults = state["contracts"], state["revokes"], state["faults"]
        self.hand_chips, self.deal_keys = state["hand_chips"], state["deal_keys"]

    def add(self, r: Json) -> None:
        """Book one hand record; kept lean because it runs once per hand."""
        self.hands += 1
        if self.dealer is None:
            self.dealer = r["dealer"]
        self.hand_chips.append(list(r["chips"]))
        self.deal_keys.append(deal_key(r))
        bidder = r["bidder"]
        if bidder is not None:
            self.bidder_hands[bidder] += 1
            self.bidder_chips[bidder] += r["chips"][bidder]
            tally = self.contracts[bidder].get(r["contract"])
            if tally is None:
                tally = self.contracts[bidder][r["contract"]] = [0, 0]
            tally[0] += 1
            if r["result"] == "made":
                tally[1] += 1
        if "revoke" in r:
            self.revokes[r["revoke"]] += 1
        if "faults" in r:
            for _, s, _, reason in r["faults"]:
                kinds = self.faults[s]
                kinds[fault_kind(reason)] = kinds.get(fault_kind(reason), 0) + 1

    def result(self, final: list[int], stack: int, kitty: int, decisions: list[int],
               crashes: list[list[Any]]) -> Summary:
        """The match's summary, from each seat's `final` chips (`Match.close()`: every hand's
        chips and, under `kitty_at_end = "split"`, its share of the kitty, on its `stack`)
        and the `kitty` left on the table: the seats' chips and the kitty add up to zero.
        The share is part of a seat's result (docs/RULES.md), so it is in its chips and,
        being no bidder's, in the rest (`defender_chips`); `hand_chips` holds the hands alone."""
        seats: list[SeatSummary] = []
        for s, chips in enumerate(c - stack for c in final):
            seats.append({"chips": chips, "hands": self.hands, "bidder_hands": self.bidder_hands[s],
                          "bidder_chips": self.bidder_chips[s], "defender_chips": chips - self.bidder_chips[s],
                          "contracts": self.contracts[s], "revokes": self.revokes[s],
                          "faults": self.faults[s], "decisions": decisions[s]})
        for hand_no, s, decision, reason in crashes:
            seats[s]["crashed_at"] = hand_no
            seats[s]["crashed_by"] = fault_kind(reason)
            if decision < 0:  # a crash in a lifecycle call: no decision faulted, count it here
                seats[s]["faults"][fault_kind(reason)] = seats[s]["faults"].get(fault_kind(reason), 0) + 1
        return {"seats": seats, "final": list(final), "kitty": kitty, "hands": self.hands,
                "dealer": self.dealer, "hand_chips": self.hand_chips, "deal_keys": self.deal_keys}


def deal_key(r: Json) -> int:
    """A checksum of what a hand was dealt (CRC-32 of the deal, started from the dealer,
    then of any extra cards): equal keys in two rotations = the same board."""
    key = zlib.crc32(orjson.dumps(r["deal"]), r["dealer"])
    for extra in _EXTRA_CARDS:
        if extra in r:
            key = zlib.crc32(orjson.dumps([extra, r[extra]]), key)
    return key


_EXTRA_CARDS = ("peep_card", "floater", "garnet")


def dumps(data: Json) -> bytes:
    """Compact JSON bytes of a small log file (a skipped match)."""
    return (compact(data) + "\n").encode()


def write_atomic(path: str, data: bytes) -> None:
    """Write to a temporary file then rename, so a reader never sees half a log."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        # A full disk or an interrupt: leave no half-written temporary file behind.
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
