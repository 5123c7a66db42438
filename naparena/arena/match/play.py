"""Play one match from plain data: rebuild the bots, supervise every decision, log every hand.

This is what a worker process runs. Nothing here depends on which process runs it or
when, so a match gives the same log wherever it is played. The log's format, and the
`MatchSummary` it ends with, are `records/logs.py`'s.

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
from collections.abc import Callable
from typing import Any

import orjson

from naparena.arena.match import sandbox
from naparena.arena.match.cores import sharing_core
from naparena.arena.match.job import Job
from naparena.arena.match.seats import SeatFault, close_seats, spare_holds, spare_pids, start_seats
from naparena.arena.match.seats import prestart as start_spares
from naparena.arena.records.checkpoint import Checkpoint
from naparena.arena.records.checkpoint import every as checkpoint_every
from naparena.arena.records.logs import FORMAT, MatchSummary, compact, fault_kind
from naparena.bots.bot import DECISIONS, Bot, wants_events
from naparena.bots.protocol import hand_end as hand_end_message
from naparena.game.engine import Hand, Match
from naparena.game.rules import Rules

# Slot layout: a few shared ints per worker that the watchdog reads without locks.
# A bot call is known by (MATCH, HAND, DECISION): a decision's number in its hand, or for
# a lifecycle call (start_match, observe, …) -1 - its number among the hand's lifecycle
# calls. SEAT is the seat inside a bot call, else -1. The watchdog writes the call it
# timed out to KILL_HAND, KILL_DECISION and sets KILLED before it interrupts.
MATCH, HAND, SEAT, DECISION, KILL_HAND, KILL_DECISION, KILLED = range(7)
SLOT_SIZE = 7


class BotTimeout(BaseException):
    """Raised inside a bot that overran its time; BaseException so `except Exception` in a bot cannot swallow it."""


class Seat:
    """One bot at the table, with its bound decision methods and counters."""

    def __init__(self, bot, alias: str):
        self.bot, self.alias = bot, alias
        self.decide = {k: getattr(bot, k) for k in DECISIONS}
        cls = type(bot)
        # A seat process: its wishes come from its handshake, it always gets the hand's
        # end, and the watchdog leaves its decisions alone (the channel keeps the time).
        self.remote = getattr(bot, "remote", False)
        self.events = bot.events if self.remote else wants_events(bot)
        self.hand_start = bot.hand_start_wanted if self.remote else _overrides(cls, "start_hand")
        self.hand_end = False if self.remote else _overrides(cls, "end_hand")
        self.watched = not self.remote
        self.decisions = 0
        self.dead = False


def _overrides(cls, name: str) -> bool:
    return getattr(cls, name) is not getattr(Bot, name)


_slot: Any = None  # this process's watchdog slot, set by `bind_slot`: a list in-process, shared memory in a worker
_in_worker = False  # in a worker SIGINT is ignored, so a KeyboardInterrupt is a bot's own


def bind_slot(slot, worker: bool = False) -> None:
    """Point this process at its watchdog slot and let the watchdog interrupt a slow bot."""
    global _slot, _in_worker
    if slot is not None and not isinstance(slot, list):
        # A shared RawArray: through a memoryview of the same memory, the four slot
        # writes and reads of every decision cost a third less than ctypes indexing.
        slot = memoryview(slot).cast("B").cast("q")
    _slot, _in_worker = slot, worker
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGUSR1, _on_timeout_signal)


def _on_timeout_signal(signum, frame) -> None:
    s = _slot
    # Only interrupt the decision the watchdog timed out, never a later one.
    if s is not None and s[SEAT] >= 0 and s[HAND] == s[KILL_HAND] and s[DECISION] == s[KILL_DECISION]:
        raise BotTimeout()


#: Start the next match's seat processes while this one plays (`seats.prestart`); off
#: only to measure what that hides.
PRESTART = True


def play_job(job: Job, registry, times: list | None = None, prestart: bool = False,
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


def _play_match(job: Job, registry, rules: Rules, remotes: dict) -> MatchLog:
    # Each inline bot's random source, kept here so that a checkpoint can save its state.
    rngs = [random.Random(s.seed) for s in job.seats]
    seats = [Seat(remotes[i] if i in remotes else registry.make(s.name, dict(s.params), rngs[i], i),
                  s.alias) for i, s in enumerate(job.seats)]
    watch = Supervisor(_slot if _slot is not None else [0] * SLOT_SIZE, job.timing.timeout,
                       {(c[0], c[1], c[2]): c[3] for c in job.crashes},
                       {(g[0], g[1], g[2]): g[3] for g in job.given})
    match = Match(rules, len(seats), job.seed, job.stack, job.boards)
    summary = MatchSummary(len(seats))
    # The hands' JSON text, comma-joined, in one growing buffer: thousands of small bytes
    # objects kept alive cost a tenth of the match in allocator and cache work.
    body = bytearray()
    decided = [0] * len(seats)  # decisions per seat before this worker took the match up
    counts = [0] * len(seats)
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
    watch.slot[MATCH] = job.index
    watch.new_hand(-1)
    for i, seat in enumerate(seats):
        watch.hook(seat, i, lambda b=seat.bot, i=i: b.start_match(_match_info(job, rules, i, first)))
    save = None if saver is None else _saving(saver, job, match, seats, rngs, summary, body, decided, counts,
                                               remotes)
    # Most matches need no events, no hand hooks and no crash replay: keep that path lean.
    fast = not job.crashes and not job.given and not any(s.events or s.hand_start or s.hand_end for s in seats)
    decide = [s.decide for s in seats]
    told = [s.bot for s in seats if s.remote]  # seat processes: each is sent the hand's end
    if fast:
        _fast_hands(match, job.hands - first, decide, counts, watch, summary, body,
                    [i if s.watched else -1 for i, s in enumerate(seats)], told, save)
    else:
        for _ in range(job.hands - first):
            hand = match.next_hand()
            watch.new_hand(hand.hand_no)
            _play_hand(hand, seats, watch)
            match.finish(hand)
            record = hand.record()
            _book(record, summary, body)
            if told:
                _tell_hand_end(told, record)
            if save is not None:
                save()
    won = [c - job.stack for c in match.chips]  # every hand's chips, before the kitty is shared
    final = match.close()
    watch.new_hand(job.hands)
    for i, seat in enumerate(seats):
        watch.hook(seat, i, seat.bot.end_match)
    head: dict[str, Any] = {
        "format": FORMAT, "match": job.match_entry(), "variant": job.variant,
        "rules": job.rules.as_dict(), "seed": job.seed, "stack": job.stack,
        "bots": [{"alias": s.alias, "name": s.name, "params": dict(s.params)} for s in job.seats],
        # A worker's crashes (replayed), then seat processes that broke, in order of play.
        "crashes": [list(c) for c in job.crashes] + sorted(b.crash for b in remotes.values() if b.crash),
    }
    decisions = _decisions(seats, counts, decided)
    tail = {"summary": summary.result(won, final, match.kitty, decisions, head["crashes"])}
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
            "timing": repr(job.timing), "spec": job.match_entry() if job.spec else {}, "boards": job.boards is not None}
    return hashlib.sha256(orjson.dumps(what, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()


def _saving(saver: Checkpoint, job: Job, match: Match, seats: list[Seat], rngs: list[random.Random],
            summary: MatchSummary, body: bytearray, decided: list[int], counts: list[int],
            remotes: dict) -> Callable[[], None]:
    """`save()`, called after every hand: a checkpoint once `every()` seconds have passed.
    Only while no seat has crashed: a replay after a crash starts from the last clean one,
    and the crash, found again, is booked as in any replay."""
    interval = checkpoint_every()
    due = [time.monotonic() + interval]

    def save() -> None:
        now = time.monotonic()
        if now < due[0] or job.crashes or any(s.dead for s in seats) or any(b.crash for b in remotes.values()):
            return
        saver.save({"hand": match.hand_no, "match": match.state(), "summary": summary.state(),
                    "rngs": [[v, list(internal), g] for v, internal, g in (r.getstate() for r in rngs)],
                    "decisions": _decisions(seats, counts, decided)}, body)
        due[0] = time.monotonic() + interval
    return save


def _tell_hand_end(told: list, record: dict) -> None:
    """Queue the public record for every seat process (sent with its next request)."""
    message = hand_end_message(public_record(record))  # encoded once for every seat
    for bot in told:
        bot.queue(message)


class MatchLog:
    """A played match: header, hands (their JSON objects, comma-joined), summary; `bytes()` is the log file."""

    def __init__(self, head: dict, hands: bytes | bytearray, tail: dict):
        self.head, self.hands, self.tail = head, hands, tail

    @property
    def summary(self) -> dict:
        return self.tail["summary"]

    def __bytes__(self) -> bytes:
        head = compact(self.head)[:-1]
        tail = compact(self.tail)[1:]
        return b"".join((head.encode(), b',"hands":[', self.hands, b"],", tail.encode(), b"\n"))


def _match_info(job: Job, rules: Rules, seat: int, first_hand: int = 0) -> dict:
    """`first_hand`: 0, or the hand a match resumed from its checkpoint goes on from (the bot
    is new then, its random source as it was at that hand)."""
    return {"match": job.index, "seat": seat, "seats": [s.alias for s in job.seats],
            "players": len(job.seats), "rules": rules, "hands": job.hands, "timeout": job.timing.timeout,
            "first_hand": first_hand}


class Supervisor:
    """This process's side of the watchdog: the slot it reads, the time limit, and the
    crashes a replay must not repeat, keyed (hand, seat, decision)."""

    def __init__(self, slot, timeout: float, crashes: dict, given: dict | None = None):
        self.slot, self.timeout, self.crashes = slot, timeout, crashes
        self.given = given or {}  # time-outs a re-run takes from the log, same keys
        self.late = f"time-out: no answer within {timeout:g} s"
        self.hooks = 0  # lifecycle calls so far in this hand: they number the hook calls

    def overran(self) -> bool:
        """Did the watchdog time out the call that just returned? (A bot may catch the
        interrupt and answer anyway; its answer still comes too late.)"""
        slot = self.slot
        if not slot[KILLED]:
            return False
        slot[KILLED] = 0
        return slot[KILL_HAND] == slot[HAND] and slot[KILL_DECISION] == slot[DECISION]

    def new_hand(self, hand_no: int) -> None:
        self.slot[HAND] = hand_no
        self.hooks = 0

    def hook(self, seat: Seat, i: int, call) -> None:
        """A lifecycle call (match or hand start and end, events). A failure there is not a
        decision, so it costs nothing in play; a time-out still interrupts it, and a crash
        in it makes the seat dead from that very call on, as a replay will see it."""
        if seat.dead:
            return
        slot = self.slot
        self.hooks += 1
        number = -self.hooks
        if (slot[HAND], i, number) in self.crashes:
            seat.dead = True
            return
        slot[DECISION] = number
        slot[SEAT] = i
        try:
            call()
        except BaseException as e:
            if not _bot_failure(e):
                raise
        finally:
            slot[SEAT] = -1
            self.overran()

    def ask(self, hand: Hand, decide, i: int, watched: bool = True) -> tuple[object, str | None]:
        """One supervised decision: (the bot's answer, None) or (None, why it faulted).
        A seat process is not `watched`: its channel enforces the deadline."""
        slot = self.slot
        slot[DECISION] = hand.decisions
        slot[SEAT] = i if watched else -1
        try:
            answer = decide(hand.acting_view())
        except BaseException as e:
            # The slot still names the seat: an exception's text is the bot's code too.
            reason = self.late if isinstance(e, BotTimeout) else _exception(e, hand) if _bot_failure(e) else None
            slot[SEAT] = -1
            if reason is None:
                raise
            if reason is self.late:
                self.overran()
            return None, reason
        slot[SEAT] = -1
        if slot[KILLED] and self.overran():
            return None, self.late
        return answer, None


def _bot_failure(e: BaseException) -> bool:
    """Is `e` the bot's own failure? Anything a bot raises is, except, when playing
    in-process, the user's Ctrl-C (a worker ignores SIGINT, so there it is the bot's)."""
    return _in_worker or not isinstance(e, KeyboardInterrupt)


def _play_hand(hand: Hand, seats: list[Seat], watch: Supervisor) -> None:
    for i, seat in enumerate(seats):
        if seat.hand_start:
            view = hand.view(i)
            watch.hook(seat, i, lambda b=seat.bot, v=view: b.start_hand(v))
    listeners = [(i, s) for i, s in enumerate(seats) if s.events and not s.dead]
    _careful_loop(hand, seats, watch, listeners)
    if listeners or any(s.hand_end for s in seats):
        public = public_record(hand.record())
        for i, seat in enumerate(seats):
            if seat.events:
                watch.hook(seat, i, lambda b=seat.bot: b.observe({"type": "settle", **public}))
            if seat.hand_end:
                watch.hook(seat, i, lambda b=seat.bot: b.end_hand(public))


def _book(record: dict, summary: MatchSummary, body: bytearray) -> None:
    summary.add(record)
    body += orjson.dumps(record)
    body += b","


def _fast_hands(match: Match, hands: int, decide: list[dict], counts: list[int], watch: Supervisor,
                summary: MatchSummary, body: bytearray, marks: list[int], told: list,
                save: Callable[[], None] | None) -> None:
    """The common case, kept lean: every seat alive, nobody listening for events.

    The same supervision as `Supervisor.ask` and the same booking as `_book`, written out
    inline because this runs once per decision of every match. `marks[i]` is what the
    watchdog slot shows for seat i: the seat, or -1 for a seat process.
    """
    slot, dumps = watch.slot, orjson.dumps
    for _ in range(hands):
        hand = match.next_hand()
        slot[HAND] = hand.hand_no
        view, apply = hand.acting_view, hand.apply
        while not hand.over:
            i, kind = hand.to_act, hand.kind
            assert i is not None and kind is not None  # someone is to act until the hand is over
            counts[i] += 1
            slot[DECISION] = hand.decisions
            slot[SEAT] = marks[i]
            try:
                answer = decide[i][kind](view())
            except BaseException as e:
                # The slot still names the seat: an exception's text is the bot's code too.
                reason = watch.late if isinstance(e, BotTimeout) else _exception(e, hand) if _bot_failure(e) else None
                slot[SEAT] = -1
                if reason is None:
                    raise
                if reason is watch.late:
                    watch.overran()
                hand.fault(reason)
            else:
                slot[SEAT] = -1
                if slot[KILLED] and watch.overran():
                    hand.fault(watch.late)
                else:
                    apply(answer)
        match.finish(hand)
        record = hand.record()
        summary.add(record)
        body += dumps(record)
        body += b","
        if told:
            _tell_hand_end(told, record)
        if save is not None:
            save()


def _careful_loop(hand: Hand, seats: list[Seat], watch: Supervisor, listeners) -> None:
    """Every other case: crash replay, dead seats, event listeners."""
    mark = _mark(hand)
    while not hand.over:
        i, kind = hand.to_act, hand.kind
        assert i is not None and kind is not None  # someone is to act until the hand is over
        seat = seats[i]
        if seat.dead:
            hand.apply(hand.legal()[0])  # a crashed bot's seat: the first legal answer
        else:
            seat.decisions += 1
            reason = watch.crashes.get((hand.hand_no, i, hand.decisions))
            given = watch.given.get((hand.hand_no, i, hand.decisions))
            if reason is not None:
                seat.dead = True
            elif given is not None:
                reason = _time_out(seat, hand, given, watch, seat.decide[kind], i)
            else:
                answer, reason = watch.ask(hand, seat.decide[kind], i, seat.watched)
            hand.fault(reason) if reason is not None else hand.apply(answer)
        if listeners:
            mark = _tell(hand, mark, listeners, watch)


def _time_out(seat: Seat, hand: Hand, reason: str, watch: Supervisor, decide, i: int) -> str:
    """A logged time-out replayed as it happened. A seat process is given up on without
    being asked (its crash noted, its seat played by the fallback from here), as it was
    killed then. An in-process bot is asked as it was then, so its own state moves on the
    same way, and faulted whatever it answers."""
    if seat.remote:
        return _exception(seat.bot.give_up(reason), hand)
    watch.ask(hand, decide, i, seat.watched)
    return reason


def _exception(e: BaseException, hand: Hand) -> str:
    if isinstance(e, SeatFault):
        if e.bot is not None:  # the seat process broke: note where, as a crash is noted
            e.bot.crash = [hand.hand_no, e.bot.seat, hand.decisions, e.reason]
        return e.reason
    return f"exception: {_type_name(e)}: {_text(e)}"


def _type_name(e: BaseException) -> str:
    return type.__dict__["__name__"].__get__(type(e))  # a metaclass may not redefine it for us


def _text(e: BaseException) -> str:
    """The first 200 characters of an exception's message. Its __str__ is the bot's code:
    it may raise (shown as such), or hang (the watchdog, still watching, ends it)."""
    try:
        text = str(e)
    except BaseException:
        return "(its message could not be read)"
    return str.__getitem__(text, slice(0, 200))  # str's own slicing, not a subclass's


def _mark(hand: Hand) -> tuple:
    return (len(hand.bids), len(hand.tricks), len(hand.trick), len(hand.peeps),
            len(hand.exchanges), hand.garnet_taker, hand.trumps)


def _tell(hand: Hand, mark: tuple, listeners, watch: Supervisor) -> tuple:
    """Send the public events since `mark` to the bots that asked for them."""
    events = []
    nb, nt, np_, npe, nx, garnet, trumps = mark
    for seat, bid in hand.bids[nb:]:
        events.append({"type": "bid", "seat": seat, "bid": bid})
    for seat in hand.peeps[npe:]:
        events.append({"type": "peep", "seat": seat})
    for seat, n in hand.exchanges[nx:]:
        events.append({"type": "exchange", "seat": seat, "cards": n})
    if hand.garnet_taker is not None and garnet is None:
        events.append({"type": "garnet", "seat": hand.garnet_taker})
    if hand.trumps is not None and trumps is None and not hand.trumps_by_lead:
        events.append({"type": "trumps", "seat": hand.bidder, "suit": hand.trumps})
    plays = [p for _, ps, _ in hand.tricks for p in ps] + list(hand.trick)
    done = sum(len(ps) for _, ps, _ in hand.tricks[:nt]) + np_
    for seat, card in plays[done:]:
        events.append({"type": "play", "seat": seat, "card": card})
    for leader, _, winner in hand.tricks[nt:]:
        events.append({"type": "trick", "leader": leader, "winner": winner})
    for event in events:
        for i, seat in listeners:
            watch.hook(seat, i, lambda b=seat.bot, e=event: b.observe(e))
    return _mark(hand)


PRIVATE_KEYS = ("deal", "peep_card", "floater", "garnet", "pre", "cut", "gathered", "stock", "bought")


def public_record(record: dict) -> dict:
    """A finished hand as every seat may see it: no dealt cards, no private decisions, and
    faults by kind only (an illegal answer may hold the bot's own cards)."""
    public = {k: v for k, v in record.items() if k not in PRIVATE_KEYS}
    if "faults" in public:
        public["faults"] = tuple((d, s, k, fault_kind(r)) for d, s, k, r in public["faults"])
    return public
