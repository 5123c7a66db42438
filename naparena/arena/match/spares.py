"""Spare seat processes: the next match's seats, started and greeted while this one plays."""

from __future__ import annotations

import atexit
import multiprocessing.util
import os
import time
from collections.abc import Sequence
from typing import Any

import orjson

from naparena.arena.match.channel import Channel, Mounts, seat_argv, seat_mounts
from naparena.arena.match.job import SeatRecord
from naparena.arena.match.warm import spawn
from naparena.arena.setup.settings import Confinement


def _greeted(argv: list[str], python: bool, params: dict[str, Any], confinement: Confinement,
             tag: str, mounts: Mounts = ((), (), ()), preload: Sequence[str] = ()) -> tuple[Channel | None, str | None]:
    """A seat process sent its hello, unread: a spare `prestart` started, or a new one
    (forked from its bot's server where it starts warm: `warm.confirmed` waits for it);
    or (None, why it could not start)."""
    spare = _spares.take(_spare_key(argv, python, params, confinement, mounts, preload))
    if spare is not None:
        spare.tag = tag  # its stderr is logged from here on, under its seat's name
        return spare, None
    return spawn(argv, python, params, confinement, tag, mounts, preload)



# --- the next match's seats, started while this one plays ------------------------------

def _spare_key(argv: list[str], python: bool, params: dict[str, Any], confinement: Confinement,
               mounts: Mounts, preload: Sequence[str] = ()) -> bytes:
    """What makes two seat processes interchangeable before their match begins: the same
    program, greeted with the same params, under the same limits, seeing the same files
    (forked warm: from a server that imported the same modules first)."""
    return orjson.dumps([argv, python, params, confinement.as_dict(), mounts, list(preload)],
                        option=orjson.OPT_SORT_KEYS)


#: A spare wanted: argv, whether naparena serves it, params, confinement, mounts, preload, how many.
Wanted = tuple[list[str], bool, dict[str, Any], Confinement, Mounts, tuple[str, ...], int]


class _Spares:
    """Seat processes started and greeted ahead of the match that will take them.

    Starting a process (an interpreter, Node) costs 100-300 ms, which a match would wait
    for; a spare pays it while the previous match plays. Each spare serves one match and
    is closed with it, like any seat, so no bot carries memory from one match to the next.
    Spares belong to the process that started them: a fork's copy is not its own, and nor
    is the clean-up its parent armed (a fork starts with an empty finalizer registry).
    """

    def __init__(self) -> None:
        self.ready: dict[bytes, list[Channel]] = {}
        self.owner = os.getpid()
        self.armed = False

    def _mine(self) -> None:
        """In a fork, start afresh: no spares, and a clean-up still to arm."""
        if self.owner != os.getpid():
            self.ready, self.owner, self.armed = {}, os.getpid(), False

    def take(self, key: bytes) -> Channel | None:
        self._mine()
        waiting = self.ready.get(key)
        return waiting.pop() if waiting else None

    def stock(self, wanted: dict[bytes, Wanted]) -> None:
        """Keep, for each key, as many spares as `wanted` says; close the others."""
        self._mine()
        for key in list(self.ready):
            if key not in wanted:
                self._close(self.ready.pop(key))
        for key, (argv, python, params, confinement, mounts, preload, count) in wanted.items():
            waiting = self.ready.setdefault(key, [])
            while len(waiting) < count:
                channel, _ = spawn(argv, python, params, confinement, mounts=mounts, preload=preload)
                if channel is None:
                    break  # it will fail again at its match, which then says why
                waiting.append(channel)
        if not self.armed:  # a worker's exit, or the parent's, takes its spares with it
            self.armed = True
            atexit.register(self.close)
            multiprocessing.util.Finalize(self, _Spares.close, args=(self,), exitpriority=10)

    def close(self) -> None:
        if self.owner == os.getpid():
            for channels in self.ready.values():
                self._close(channels)
        self.ready = {}

    @staticmethod
    def _close(channels: list[Channel]) -> None:
        for channel in channels:
            channel.begin_close(b"")  # its input's end: whether it reads lines or frames, it exits
        deadline = time.monotonic() + 1.0
        for channel in channels:
            channel.finish_close(deadline)


_spares = _Spares()


def prestart(job_seats: Sequence[SeatRecord], bots_dir: str | None, confinement: Confinement) -> None:
    """Start (and greet) fresh processes for the seats of a match like this one, so the
    next match this worker plays, usually with the same bots, finds them ready."""
    wanted: dict[bytes, Wanted] = {}
    for seat in job_seats:
        if not seat.in_process:
            continue
        argv, python = seat_argv(seat, bots_dir)
        params, mounts = dict(seat.params), seat_mounts(seat, bots_dir)
        key = _spare_key(argv, python, params, confinement, mounts, seat.preload)
        count = wanted[key][6] + 1 if key in wanted else 1
        wanted[key] = (argv, python, params, confinement, mounts, seat.preload, count)
    _spares.stock(wanted)


def spare_pids() -> list[int]:
    """The processes of this process's spares (each a seat of a match still to come)."""
    if _spares.owner != os.getpid():
        return []
    return [channel.proc.pid for channels in _spares.ready.values() for channel in channels]


def spare_holds() -> list[Any]:
    """The spares' `Channel.pin`s: they keep off the core of the match now playing."""
    if _spares.owner != os.getpid():
        return []
    return [channel.pin for channels in _spares.ready.values() for channel in channels]


def close_spares() -> None:
    """Close every spare of this process (the end of a run played in it)."""
    _spares.close()

