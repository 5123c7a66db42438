"""What a worker is sent to play one match: the `Job`, and a `SeatRecord` for each seat.

Both are frozen records, typed from the session to the seat; they become JSON only where
they are written (the match log's header, a checkpoint's fingerprint). On the wire to a
worker process or a Dask worker they are pickled as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from naparena.arena.setup.schedule import MatchSpec, board_seeds
from naparena.arena.setup.settings import Confinement, Isolation, Timing, parse_isolation
from naparena.game.rules import Rules
from naparena.table.luck import KNOWN

#: A bot call a match replays or takes as given: (hand, seat, decision, reason).
Fault = tuple[int, int, int, str]


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """One seat of a match as its worker starts it: the bot (`name`, `params`, its own
    `seed`) under its `alias`; where it runs; for a seat process, its `command` (an
    external bot's argv; None serves a Python bot), the `files` a sandboxed seat is shown
    and the paths `hidden` from it."""

    alias: str
    name: str
    params: Mapping[str, Any]
    seed: int
    isolation: Isolation = Isolation.INLINE
    command: tuple[str, ...] | None = None
    files: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    # A served Python bot's class as `module:qualname` and its version, found by the run's
    # registry: its seat imports that module alone (None: the seat loads the registry).
    serves: str | None = None
    version: str = ""
    preload: tuple[str, ...] = ()  # modules its seat server imports first (a served Python bot)

    @property
    def in_process(self) -> bool:
        return self.isolation is Isolation.PROCESS

    def as_dict(self) -> dict[str, Any]:
        """As the seat was written before it was typed (a checkpoint's fingerprint hashes it)."""
        out: dict[str, Any] = {"alias": self.alias, "name": self.name, "params": dict(self.params),
                               "seed": self.seed}
        if self.in_process:
            out["isolation"] = self.isolation
            if self.command is not None:
                out["command"] = list(self.command)
            if self.files or self.hidden:
                out.update(files=list(self.files), hidden=list(self.hidden))
            if self.preload:
                out["preload"] = list(self.preload)
        return out


def seat_record(alias: str, name: str, params: Mapping[str, Any], seed: int, *,  # noqa: PLR0913 (every field)
                isolation: Isolation | str = Isolation.INLINE, command: Sequence[str] | None = None,
                files: Sequence[str] = (), hidden: Sequence[str] = (),
                serves: tuple[str, str] | None = None, preload: Sequence[str] = ()) -> SeatRecord:
    """The one builder of a seat: the session's, `naparena check`'s and the environments'.
    An external bot (a `command`) always plays in a process of its own; `isolation` given
    as a word is read by the [tournament] setting's own rule (ValueError names it).
    `serves`: a served Python bot's (`module:qualname`, version), as the registry found it;
    `preload`: the modules its seat server imports first."""
    mode = isolation if isinstance(isolation, Isolation) else parse_isolation(isolation)
    if command is not None:
        mode = Isolation.PROCESS
    served = serves if serves and command is None else None
    return SeatRecord(alias, name, dict(params), seed, mode, None if command is None else tuple(command),
                      tuple(files), tuple(hidden), served[0] if served else None, served[1] if served else "",
                      tuple(preload) if command is None else ())


@dataclass(frozen=True, slots=True)
class Job:
    """Everything a worker needs to play one match."""

    index: int
    seed: int
    variant: str
    rules: Rules
    seats: tuple[SeatRecord, ...]
    hands: int
    stack: int = 0
    timing: Timing = Timing()  # the decision time-out and the limits that follow from it
    bots_dir: str | None = None
    path: str | None = None    # where the worker writes the match log
    spec: MatchSpec | None = None  # the schedule's entry (a job outside a run has none)
    stand_ins: tuple[int, ...] = ()  # seats the stand-in plays (a disqualified bot's), as the log says
    crashes: tuple[Fault, ...] = ()  # crashes to replay
    confinement: Confinement = field(default_factory=Confinement)  # how seat processes are started
    boards: tuple[int, ...] | None = None  # duplicate boards' seeds, where not the spec's (`deal_boards`)
    checkpoint: str | None = None  # where a long match keeps its checkpoint (records/checkpoint.py)
    # `verify --rerun`: a logged time-out, taken as given because time depends on the
    # machine. That decision faults whatever the bot answers (`play._time_out`).
    given: tuple[Fault, ...] = ()
    # Whether the worker starts the seat processes of its next match while this one plays
    # (`spares.prestart`): not for the run's last matches, after which no match comes.
    prestart: bool = False
    # Whether the match log carries each hand's luck (`naparena.table.luck`): the run's
    # estimator is "adjusted".
    luck: bool = False

    def deal_boards(self) -> tuple[int, ...] | None:
        """Each hand's deal seed under duplicate boards: as given, or derived from the
        schedule's entry by the worker that plays it (in the parent, hashing every hand
        of every match was a twentieth of its CPU)."""
        if self.boards is not None:
            return self.boards
        return board_seeds(self.seed, self.hands) if self.spec is not None and self.spec.boards else None

    @property
    def by_boards(self) -> bool:
        """Whether the match is dealt board by board (`deal_boards`), without the seeds."""
        return self.boards is not None or (self.spec is not None and self.spec.boards)

    @property
    def isolated(self) -> bool:
        """Whether any seat plays in a process of its own."""
        return any(s.in_process for s in self.seats)

    def luck_bots(self) -> list[tuple[str, Mapping[str, Any]] | None]:
        """Each seat's (bot name, params) where a rollout can play it as its bot would (one
        of naparena's own, played by name, not a program), else None: `table.luck`'s input."""
        return [(s.name, s.params) if s.command is None and s.name in KNOWN else None for s in self.seats]

    def match_entry(self) -> dict[str, Any]:
        """The log header's "match": the schedule's entry, and the stand-in's seats if any."""
        if self.spec is None:
            return {"index": self.index}
        entry = self.spec.as_dict()
        if self.stand_ins:
            entry["stand_ins"] = list(self.stand_ins)
        return entry
