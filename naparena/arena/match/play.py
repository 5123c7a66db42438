"""Play one match from plain data: rebuild the bots, supervise every decision, log every hand.

This is what a worker process runs. Nothing here depends on which process runs it or
when, so a match gives the same log wherever it is played. The hands are played at the
one table (`naparena.table`): its hooks, loops and fault rules are every entry point's.
The log's format, its writer (`MatchLog`) and the `MatchSummary` it ends with are
`records/logs.py`'s.

Misbehaviour rules (also in the README):
- a bot that raises, answers illegally or runs out of time faults that decision: the
  engine applies the kind's default (pass, decline, keep), and in card play that is a
  revoke, settled as RULES.md §5 says;
- a bot whose process dies (``os._exit``, a segfault) or hangs past the hard limit is
  *crashed*: that decision is a fault, and for the rest of the match its seat is played
  with the first legal answer, without asking the bot again (the standings book that
  seat to the stand-in from the hand it died in: `stats.boards.own_hands`);
- a bot in a seat process (`seats.py`) is asked over the protocol with the same rules;
  its process failing (time-out, exit, garbage) is a crash of that seat alone.
"""

from __future__ import annotations

import hashlib
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any

import orjson

from naparena.arena.match import sandbox
from naparena.arena.match.cores import sharing_core
from naparena.arena.match.job import Job
from naparena.arena.match.seats import SeatFault, close_seats, start_seats
from naparena.arena.match.spares import prestart as start_spares
from naparena.arena.match.spares import spare_holds, spare_pids
from naparena.arena.records.checkpoint import Checkpoint
from naparena.arena.records.checkpoint import every as checkpoint_every
from naparena.arena.records.logs import FORMAT, MatchLog, MatchSummary
from naparena.game.engine import Hand, Match
from naparena.game.rules import Rules
from naparena.table.luck import match_luck
from naparena.table.play import Seat, Table, public_record, record_into
from naparena.table.watch import (
    DECISION,
    HAND,
    KILL_DECISION,
    KILL_HAND,
    KILLED,
    MATCH,
    SEAT,
    SLOT_SIZE,
    BotTimeout,
    Supervisor,
)

__all__ = ["DECISION", "HAND", "KILLED", "KILL_DECISION", "KILL_HAND", "MATCH", "SEAT", "SLOT_SIZE", "BotTimeout",
           "Job", "MatchLog", "Seat", "bind_slot", "fingerprint", "play_job", "public_record", "supervisor"]


_slot: Any = None  # this process's watchdog slot, set by `bind_slot`: a list in-process, shared memory in a worker
_in_worker = False  # in a worker SIGINT is ignored, so a KeyboardInterrupt is a bot's own


def bind_slot(slot: Any, worker: bool = False) -> None:
    """Point this process at its watchdog slot and let the watchdog interrupt a slow bot."""
    global _slot, _in_worker
    if slot is not None and not isinstance(slot, list):
        # A shared RawArray: through a memoryview of the same memory, the four slot
        # writes and reads of every decision cost a third less than ctypes indexing.
        slot = memoryview(slot).cast("B").cast("q")
    _slot, _in_worker = slot, worker
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGUSR1, _on_timeout_signal)


def _on_timeout_signal(signum: int, frame: FrameType | None) -> None:
    s = _slot
    # Only interrupt the decision the watchdog timed out, never a later one.
    if s is not None and s[SEAT] >= 0 and s[HAND] == s[KILL_HAND] and s[DECISION] == s[KILL_DECISION]:
        raise BotTimeout


def supervisor(timeout: float, crashes: Sequence[Sequence[Any]] = (),
               given: Sequence[Sequence[Any]] = ()) -> Supervisor:
    """The table's supervisor on this process's watchdog slot; a seat process that broke
    faults as the crash it is. `crashes`, `given`: [hand_no, seat, decision, reason] each."""
    return Supervisor(_slot if _slot is not None else [0] * SLOT_SIZE, timeout,
                      {(c[0], c[1], c[2]): c[3] for c in crashes}, {(g[0], g[1], g[2]): g[3] for g in given},
                      worker=_in_worker, fault_of=_seat_fault)


def _seat_fault(e: BaseException, hand: Hand) -> str | None:
    """A seat process that broke: its fault, its crash noted where it happened."""
    if not isinstance(e, SeatFault):
        return None
    if e.bot is not None:
        e.bot.crash = [hand.hand_no, e.bot.seat, hand.decisions, e.reason]
    return e.reason


#: Start the next match's seat processes while this one plays (`spares.prestart`); off
#: only to measure what that hides.
PRESTART = True


def play_job(job: Job, registry: Any, times: list[float] | None = None, prestart: bool = False,
             asked: Counter[str] | None = None) -> MatchLog:
    """Play the match; return its log. `times`, if given, collects the seat processes'
    decision round trips (for `naparena check` and the benchmarks), `asked` counts the
    decisions put to them by kind (for `check`'s coverage). With `prestart` (a
    worker, which plays match after match), fresh processes for the next match's seats
    are started once this match's have theirs."""
    rules = job.rules
    isolated = job.isolated
    confinement = job.confinement
    if isolated and confinement.sandbox == sandbox.BWRAP:
        sandbox.require()  # a worker without bubblewrap: one clear error, never an unguarded seat
    remotes = start_seats(job.seats, job.bots_dir, job.timing.timeout, confinement,
                          f"match {job.index}") if isolated else {}
    if isolated and prestart and PRESTART:
        start_spares(job.seats, job.bots_dir, confinement)
    for bot in remotes.values():
        bot.times, bot.asked = times, asked
    try:
        channels = [b.channel for b in remotes.values() if b.channel is not None]
        with sharing_core([c.proc.pid for c in channels], confinement.cores, spare_pids(),
                          [c.pin for c in channels], spare_holds()):
            return _play_match(job, registry, rules, remotes)
    finally:
        close_seats(remotes)


def _play_match(job: Job, registry: Any, rules: Rules, remotes: dict[int, Any]) -> MatchLog:
    # Each inline bot's random source, kept here so that a checkpoint can save its state.
    rngs = [random.Random(s.seed) for s in job.seats]
    seats = [Seat(remotes[i] if i in remotes else registry.make(s.name, dict(s.params), rngs[i], i),
                  s.alias) for i, s in enumerate(job.seats)]
    table = Table(seats, supervisor(job.timing.timeout, job.crashes, job.given))
    match = Match(rules, len(seats), job.seed, job.stack, job.deal_boards())
    summary = MatchSummary(len(seats))
    # The hands' JSON text, comma-joined, in one growing buffer: thousands of small bytes
    # objects kept alive cost a tenth of the match in allocator and cache work.
    body = bytearray()
    decided = [0] * len(seats)  # decisions per seat before this worker took the match up
    # An isolated Python bot's rng lives in its own process, out of the checkpoint's reach:
    # such a match restarts on resume, so that it still ends in the inline bytes.
    saver = Checkpoint(job.checkpoint, fingerprint(job)) if job.checkpoint and not _served(job) else None
    saved = saver.load() if saver is not None else None
    if saved is not None:
        state, body = saved
        match.restore(state["match"])
        summary.restore(state["summary"])
        for rng, rng_state in zip(rngs, state["rngs"]):
            rng.setstate((rng_state[0], tuple(rng_state[1]), rng_state[2]))
        decided = state["decisions"]
    first = match.hand_no
    table.start_match(job.index, [s.alias for s in job.seats], rules, job.hands, job.timing.timeout, first)
    save = None if saver is None else _saving(saver, job, _InPlay(match, seats, rngs, summary, body, decided,
                                                                  table.counts, remotes))
    table.play(match, job.hands - first, record_into(body, summary.add), save)
    final = match.close()
    table.end_match(job.hands)
    head: dict[str, Any] = {
        "format": FORMAT, "match": job.match_entry(), "variant": job.variant,
        "rules": job.rules.as_dict(), "seed": job.seed, "stack": job.stack,
        "bots": [{"alias": s.alias, "name": s.name, "params": dict(s.params)} for s in job.seats],
        # A worker's crashes (replayed), then seat processes that broke, in order of play.
        "crashes": [list(c) for c in job.crashes] + sorted(b.crash for b in remotes.values() if b.crash),
    }
    decisions = _decisions(seats, table.counts, decided)
    tail = {"summary": summary.result(final, job.stack, match.kitty, decisions, head["crashes"])}
    if job.luck:
        luck = match_luck(rules, job.seed, job.stack, job.deal_boards(), orjson.loads(b"[" + body[:-1] + b"]"),
                          job.luck_bots(), head["crashes"])
        if luck is not None:
            tail["summary"]["hand_luck"] = luck
    return MatchLog(head, body[:-1], tail)


def _served(job: Job) -> bool:
    """Whether a seat is a Python bot served in a process of its own (`naparena serve`)."""
    return any(s.in_process and s.command is None for s in job.seats)


def _decisions(seats: list[Seat], counts: list[int], decided: list[int]) -> list[int]:
    """Each seat's decisions asked of its bot: before a checkpoint, and since."""
    return [d + s.decisions + n - (s.bot.fallbacks if s.remote else 0) for s, n, d in zip(seats, counts, decided)]


def fingerprint(job: Job) -> str:
    """What a match's play depends on: a checkpoint of any other job is not this match's."""
    what = {"index": job.index, "seed": job.seed, "variant": job.variant, "rules": job.rules.as_dict(),
            "seats": [s.as_dict() for s in job.seats], "hands": job.hands, "stack": job.stack,
            "timing": repr(job.timing), "spec": job.match_entry() if job.spec else {}, "boards": job.by_boards}
    return hashlib.sha256(orjson.dumps(what, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()


@dataclass(frozen=True)
class _InPlay:
    """A match in play, as its checkpoint saves it: the engine's match, the seats (and
    their processes, whose crashes stop checkpoints), the inline bots' random sources,
    the summary and log body so far, and each seat's decisions before and since."""

    match: Match
    seats: list[Seat]
    rngs: list[random.Random]
    summary: MatchSummary
    body: bytearray
    decided: list[int]
    counts: list[int]
    remotes: dict[int, Any]


def _saving(saver: Checkpoint, job: Job, play: _InPlay) -> Callable[[], None]:
    """`save()`, called after every hand: a checkpoint once `every()` seconds have passed.
    Only while no seat has crashed: a replay after a crash starts from the last clean one,
    and the crash, found again, is booked as in any replay."""
    interval = checkpoint_every()
    due = [time.monotonic() + interval]

    def save() -> None:
        now = time.monotonic()
        if now < due[0] or job.crashes or any(s.dead for s in play.seats) or \
                any(b.crash for b in play.remotes.values()):
            return
        saver.save({"hand": play.match.hand_no, "match": play.match.state(), "summary": play.summary.state(),
                    "rngs": [[v, list(internal), g] for v, internal, g in (r.getstate() for r in play.rngs)],
                    "decisions": _decisions(play.seats, play.counts, play.decided)}, play.body)
        due[0] = time.monotonic() + interval
    return save


