"""Supervision of one bot call: the watchdog's slot, the time-out, and how a failure is named.

The slot is a few ints the watchdog reads without locks (a list in-process, shared memory
in a worker: the arena binds it). A bot call is known by (MATCH, HAND, DECISION): a
decision's number in its hand, or for a lifecycle call (start_match, observe, …) -1 - its
number among the hand's lifecycle calls. SEAT is the seat inside a bot call, else -1. The
watchdog writes the call it timed out to KILL_HAND, KILL_DECISION and sets KILLED before
it interrupts (with `BotTimeout`).
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence
from typing import Any, Protocol

from naparena.game.engine import Hand

MATCH, HAND, SEAT, DECISION, KILL_HAND, KILL_DECISION, KILLED = range(7)
SLOT_SIZE = 7

#: A crash a replay must not repeat, or a time-out it takes as given: keyed (hand, seat, decision).
Calls = dict[tuple[int, int, int], str]


class Mortal(Protocol):
    """A seat as the supervisor sees it: alive, or dead (crashed) from some call on."""

    dead: bool


class BotTimeout(BaseException):
    """Raised inside a bot that overran its time; BaseException so `except Exception` in a bot cannot swallow it."""


def late(timeout: float) -> str:
    """The fault of a decision that came too late: the one wording of a time-out."""
    return f"time-out: no answer within {timeout:g} s"


def fault_kind(reason: str) -> str:
    """'exception: …' → 'exception'; 'illegal answer …' → 'illegal'."""
    head = reason.split(":", 1)[0]
    return "illegal" if head.startswith("illegal") else head


class Supervisor:
    """This process's side of the watchdog: the slot it reads, the time limit, and the
    crashes a replay must not repeat. `worker`: this process ignores SIGINT, so a
    KeyboardInterrupt is the bot's own; `fault_of` names an exception of the arena's own
    (a seat process that broke) as the fault it is, or None for a bot's exception."""

    def __init__(self, slot: MutableSequence[int] | None, timeout: float, crashes: Calls | None = None,
                 given: Calls | None = None, worker: bool = False,
                 fault_of: Callable[[BaseException, Hand], str | None] | None = None):
        self.slot: Any = slot if slot is not None else [0] * SLOT_SIZE
        self.timeout, self.crashes = timeout, crashes or {}
        self.given = given or {}  # time-outs a re-run takes from the log, same keys
        self.worker, self.fault_of = worker, fault_of
        self.late = late(timeout)
        self.hooks = 0  # lifecycle calls so far in this hand: they number the hook calls

    def overran(self) -> bool:
        """Did the watchdog time out the call that just returned? (A bot may catch the
        interrupt and answer anyway; its answer still comes too late.)"""
        slot = self.slot
        if not slot[KILLED]:
            return False
        slot[KILLED] = 0
        return bool(slot[KILL_HAND] == slot[HAND] and slot[KILL_DECISION] == slot[DECISION])

    def new_hand(self, hand_no: int) -> None:
        self.slot[HAND] = hand_no
        self.hooks = 0

    def hook(self, seat: Mortal, i: int, call: Callable[[], object]) -> None:
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
            if not self.bots(e):
                raise
        finally:
            slot[SEAT] = -1
            self.overran()

    def ask(self, hand: Hand, decide: Callable[[Any], object], i: int,
            watched: bool = True) -> tuple[object, str | None]:
        """One supervised decision: (the bot's answer, None) or (None, why it faulted).
        A seat process is not `watched`: its channel enforces the deadline."""
        slot = self.slot
        slot[DECISION] = hand.decisions
        slot[SEAT] = i if watched else -1
        try:
            answer = decide(hand.acting_view())
        except BaseException as e:
            return None, self.refused(e, hand)
        slot[SEAT] = -1
        if slot[KILLED] and self.overran():
            return None, self.late
        return answer, None

    def refused(self, e: BaseException, hand: Hand) -> str:
        """The fault of a decision that raised `e`, named while the slot still names the seat
        (an exception's text is the bot's code too), then the seat cleared. What is not the
        bot's failure (the user's Ctrl-C) goes on up."""
        reason = self.failed(e, hand)
        self.slot[SEAT] = -1
        if reason is None:
            raise e
        if reason is self.late:
            self.overran()
        return reason

    def failed(self, e: BaseException, hand: Hand) -> str | None:
        """The fault a decision that raised `e` is, or None when `e` is not the bot's to answer
        for. The caller clears the slot's seat, then, for a time-out, calls `overran`."""
        if isinstance(e, BotTimeout):
            return self.late
        if not self.bots(e):
            return None
        return self.exception(e, hand)

    def bots(self, e: BaseException) -> bool:
        """Is `e` the bot's own failure? Anything a bot raises is, except, when playing
        in-process, the user's Ctrl-C (a worker ignores SIGINT, so there it is the bot's)."""
        return self.worker or not isinstance(e, KeyboardInterrupt)

    def exception(self, e: BaseException, hand: Hand) -> str:
        own = self.fault_of(e, hand) if self.fault_of is not None else None
        return own if own is not None else f"exception: {_type_name(e)}: {_text(e)}"


def _type_name(e: BaseException) -> str:
    return str(type.__dict__["__name__"].__get__(type(e)))  # a metaclass may not redefine it for us


def _text(e: BaseException) -> str:
    """The first 200 characters of an exception's message. Its __str__ is the bot's code:
    it may raise (shown as such), or hang (the watchdog, still watching, ends it)."""
    try:
        text = str(e)
    except BaseException:
        return "(its message could not be read)"
    return str.__getitem__(text, slice(0, 200))  # str's own slicing, not a subclass's
