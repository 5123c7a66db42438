"""Seat processes: a bot behind a process boundary, asked over the protocol (`docs/PROTOCOL.md`).

The match process holds the deal and enforces every deadline itself, waiting on the
seat's pipe with `poll`: whatever a bot does in its own process (hang, block signals,
exit, flood its output) costs at most its own time limit, and only its own seat.

The rule for a broken seat process: a time-out, an exit, a line that is not a protocol
message, or a line over `MAX_LINE` bytes faults the decision being asked, the process is
killed, and the engine plays the seat with the first legal answer for the rest of the
match (as it does for a bot that crashed its worker). A well-formed answer that is not
legal, or the bot's own report that it failed, faults only that decision. A restarted
process would have lost its memory of the match and could fail again at every hand; the
fallback bounds a broken seat's cost to one time-out a match.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from naparena.arena.match.channel import (
    Channel,
    _Broken,
    check_params,
    memory_hint,
    sandbox_hint,
    seat_argv,
    seat_mounts,
)
from naparena.arena.match.job import SeatRecord
from naparena.arena.match.spares import _greeted
from naparena.arena.match.warm import confirmed
from naparena.arena.setup.settings import Confinement
from naparena.bots import protocol
from naparena.bots.protocol import ProtocolError
from naparena.game.view import View

log = logging.getLogger("naparena")


class SeatFault(Exception):
    """A decision a seat process could not answer; `reason` is the fault as logged, and
    `bot` the `RemoteBot` when its process broke (the seat is dead from here on)."""

    def __init__(self, reason: str, bot: RemoteBot | None = None):
        super().__init__(reason)
        self.reason, self.bot = reason, bot


class RemoteBot:
    """Stands in for a `Bot` at the table: each decision is a request to the seat process.

    Lifecycle calls (match start, hand end, events) only queue their message; it goes out
    with the next request, in one write, so they cost no round trip.
    """

    remote = True

    def __init__(self, channel: Channel | None, hello: dict[str, Any] | None, seat: int, seed: int, timeout: float,
                 broken: str | None = None):
        self.channel, self.seat, self.seed, self.timeout = channel, seat, seed, timeout
        self.hello = hello or {}
        self.events = bool(self.hello.get("events"))
        self.hand_start_wanted = bool(self.hello.get("hand_start"))
        self.hand_end_wanted = self.hello.get("hand_end", True) is not False
        # A seat that took up the offer of frames gets the same messages marshalled.
        framed = self.hello.get("frames") == protocol.FRAMES
        self._request = protocol.request_frame if framed else protocol.request
        self._hand_start = protocol.hand_start_frame if framed else protocol.hand_start
        self._event = protocol.event_frame if framed else protocol.event
        self._line: Callable[[bytes], bytes] = protocol.line_frame if framed else bytes
        self.pending = bytearray()
        self.broken = broken          # why the seat cannot play, told at its next decision
        self.dead = False             # played by the fallback from now on
        self.fallbacks = 0            # decisions the fallback made (not the bot's)
        self.asked_count = 0          # decisions sent to the process
        self.crash: list[Any] | None = None  # [hand, seat, decision, reason], noted by the match
        self.late = f"time-out: no answer within {timeout:g} s"
        self.times: list[float] | None = None  # per-decision round trips, when measured
        self.asked: collections.Counter[str] | None = None  # decisions asked of the bot, by kind, when counted

    # Every decision kind is one request: the view says which.
    def _decide(self, view: View) -> Any:
        if self.dead:
            self.fallbacks += 1
            return view.legal[0]
        if self.broken is not None:
            self._die()
            raise SeatFault(self.broken, self)
        channel = self.channel
        assert channel is not None, "a seat without a channel is broken"
        self.asked_count += 1
        if self.asked is not None and view.kind is not None:  # a decision's view always names its kind
            self.asked[view.kind] += 1
        pending = self.pending
        pending += self._request(view)
        # The time charged: from sending the request to holding the whole answer.
        start = time.monotonic()
        try:
            line = channel.ask(pending, start + self.timeout)
            if self.times is not None:
                self.times.append(time.monotonic() - start)
            pending.clear()
            answer, error = protocol.read_answer(line)
        except _Broken as e:
            self._hint(e.reason, channel)
            self._die()
            raise SeatFault(self.late if e.reason == "time-out" else e.reason, self) from None
        except ProtocolError as e:
            self._die()
            raise SeatFault(f"protocol: {e}", self) from None
        if error is not None:
            raise SeatFault(f"exception: {error}")
        return answer

    bid = play = peep = floater_peep = exchange = garnet = garnet_discard = _decide
    peep_exchange = floater_discard = trumps = _decide

    def _hint(self, reason: str, channel: Channel) -> None:
        """A sandboxed seat that broke at its first decision: say in run.log if the
        sandbox hid what it needed."""
        if self.asked_count > 1 or not channel.sandboxed:
            return
        channel._drain_rest()
        told = channel.stderr_shown
        hint = memory_hint([reason, *told], channel.memory_mb, channel.address_bound) or \
            sandbox_hint(reason, told, channel.shown, channel.hidden, channel.refused)
        if hint is not None:
            log.warning("%s: %s", channel.tag, hint)

    def give_up(self, reason: str) -> SeatFault:
        """End the seat without asking it, as a logged time-out did (`verify --rerun`)."""
        self._die()
        return SeatFault(reason, self)

    def _die(self) -> None:
        self.dead = True
        if self.channel is not None:
            self.channel.abandon()

    def start_match(self, info: dict[str, Any]) -> None:
        self.queue(protocol.match_start(info, self.seed))

    def start_hand(self, view: View) -> None:
        if not self.dead and self.broken is None:
            self.pending += self._hand_start(view)

    def observe(self, event: dict[str, Any]) -> None:
        if not self.dead and self.broken is None:
            self.pending += self._event(event)

    def end_hand(self, record: dict[str, Any]) -> None:
        self.queue(protocol.hand_end(record))

    def end_match(self) -> None:
        self.queue(protocol.MATCH_END)

    def queue(self, message: bytes) -> None:
        """Send `message`, a JSON line, with the next request (or at the match's end)."""
        if not self.dead and self.broken is None:
            self.pending += self._line(message)


def start_seats(job_seats: Sequence[SeatRecord], bots_dir: str | None, timeout: float,
                confinement: Confinement, tag: str) -> dict[int, RemoteBot]:
    """Start every process seat of a match at once (or take the one `prestart` started
    for it), then shake hands with each.

    A seat that cannot start or answers the handshake badly is not an error here: it is
    a broken seat, faulted at its first decision, and the match goes on.
    """
    started: dict[int, tuple[Channel | None, str | None]] = {}
    for i, seat in enumerate(job_seats):
        if not seat.in_process:
            continue
        argv, python = seat_argv(seat, bots_dir)
        started[i] = _greeted(argv, python, dict(seat.params), confinement,
                              f"{tag} seat {i} ({seat.alias})", seat_mounts(seat, bots_dir), seat.preload)
    for i, (channel, _) in started.items():  # forked seats: each up, or started cold instead
        if channel is not None:
            seat = job_seats[i]
            argv, python = seat_argv(seat, bots_dir)
            started[i] = confirmed(channel, argv, python, dict(seat.params), confinement, channel.tag,
                                   seat_mounts(seat, bots_dir), seat.preload)
    deadline = time.monotonic() + confinement.start_timeout
    bots = {}
    for i, (started_channel, started_broken) in started.items():
        seat, hello = job_seats[i], None
        channel, broken = started_channel, started_broken
        if channel is not None:
            try:
                hello = protocol.read_hello(channel.receive(deadline))
                check_params(hello, dict(seat.params))
            except _Broken as e:
                broken = (f"time-out: no hello within {confinement.start_timeout:g} s"
                          if e.reason == "time-out" else e.reason)
            except ProtocolError as e:
                broken = f"protocol: {e}"
            if broken is not None:
                channel.abandon()
                channel = None
        bots[i] = RemoteBot(channel, hello, i, seat.seed, timeout, broken)
    return bots


def close_seats(bots: dict[int, RemoteBot], grace: float = 2.0) -> None:
    """Send the match end and shutdown to every live seat, give them `grace` seconds
    together to exit, then kill what is left."""
    live = [b.channel for b in bots.values() if b.channel is not None and not b.dead and not b.channel.closed]
    for bot in bots.values():
        if bot.channel is not None and not bot.dead:
            bot.channel.begin_close(bytes(bot.pending) + bot._line(protocol.SHUTDOWN))
    deadline = time.monotonic() + grace
    for channel in live:
        channel.finish_close(deadline)
