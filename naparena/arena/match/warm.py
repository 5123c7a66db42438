"""Warm seats, the match's side: a server process per bot (`naparena.bots.warm`) that has
imported the bot once and forks a fresh seat for each match, in a few milliseconds where a
cold start takes a fresh interpreter's hundred.

A worker keeps a server for each bot it seats from its own Python (naparena's served
seats), as the seat would start: the same argv, limits, sandbox and files shown. The
server is started the first time its bot is seated and answers from then on; a seat
asked of it before it is ready simply waits for it, as a cold seat waits for its
interpreter. A server that cannot fork seats as cold ones would be (no user namespaces
for its seats, threads or shared memory left by the bot's import) says so once: its
bot's seats start cold, and run.log says why. Servers belong to the process that
started them, at most `MAX_SERVERS` at once (the least recently used without a seat in
play gives way), and end with it, after its seats.
"""

from __future__ import annotations

import atexit
import json
import logging
import multiprocessing.util
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from naparena.arena.match.cgroups import SeatGroups
from naparena.arena.match.channel import (
    Channel,
    Mounts,
    _Broken,
    _Limits,
    _spawn,
    confined,
    sandboxed,
    seat_environment,
    seat_limits,
)
from naparena.arena.setup.settings import Confinement

log = logging.getLogger("naparena")

#: Servers one process keeps at once: each holds a bot's imports (tens of MB).
MAX_SERVERS = 8
#: A forked seat's report: (pid, uid, gid) of its sender, as the kernel gives it.
_CREDENTIALS = struct.Struct("iII")
_LOOK_AGAIN = 0.05  # seconds between looks at a server while a seat it was asked for is awaited
_STDERR_KEPT = 1 << 14  # bytes of a server's own stderr logged (an import's traceback)


class ForkedSeat:
    """A forked seat's process, as a `Channel` uses a `Popen`: its id (of the process
    whose group ends the seat: the bot's, or sandboxed its PID 1), its exit code.

    Both come on the seat's status socket: "R" once it is up (the kernel stamps the
    sender's id, as this process sees it), "X" and the code when the bot has ended,
    "E" and a reason if it could not be made, nothing (the socket's end) if it was killed.
    """

    def __init__(self, status: socket.socket, server: SeatServer):
        self.status, self.server = status, server
        self._pid: int | None = None
        self.returncode: int | None = None
        self.failed: str | None = None
        self.args = ["seat of", server.name]

    def confirm(self, deadline: float) -> str | None:
        """None once the seat is up; else why it is not (it then never will be)."""
        while self._pid is None and self.failed is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.failed = "no seat forked in time"
                break
            why = self.server.why_not()
            if why:  # a server that gave up forks no seat: its request may never be answered
                self.failed = why
                break
            self._take(min(remaining, _LOOK_AGAIN))
        return self.failed

    @property
    def pid(self) -> int:
        """The seat's process id, waited for if it is still being made; 0 if it never was."""
        if self._pid is None and self.failed is None:
            self.confirm(time.monotonic() + 10.0)
        return self._pid or 0

    def poll(self) -> int | None:
        if self.returncode is None:
            self._take(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._take(remaining)
        return self.returncode

    def _take(self, timeout: float | None) -> None:
        """Read the status socket's next report, waiting at most `timeout` seconds."""
        if self.status.fileno() < 0:
            return
        ready = select.select([self.status], [], [], timeout)[0]
        if not ready:
            return
        try:
            message, ancillary, _, _ = self.status.recvmsg(512, socket.CMSG_SPACE(_CREDENTIALS.size))
        except OSError:
            message, ancillary = b"", []
        kind = message[:1]
        if kind == b"R":
            for level, what, data in ancillary:
                if level == socket.SOL_SOCKET and what == socket.SCM_CREDENTIALS:
                    self._pid = _CREDENTIALS.unpack(data[:_CREDENTIALS.size])[0]
            if self._pid is None:
                self.failed = "the seat's report came without its process id"
        elif kind == b"X":
            self.returncode = struct.unpack("<i", message[1:5])[0]
            self.status.close()  # nothing follows
        elif kind == b"E":
            reason = message[1:].decode("utf-8", "replace")
            if self._pid is None:
                self.failed = reason
            else:
                self.returncode = 127
        else:  # the socket's end: killed, or never forked (the server gave up)
            if self._pid is None and self.failed is None:
                self.failed = self.server.why_not() or "the seat server ended before forking the seat"
            if self.returncode is None:
                self.returncode = -signal.SIGKILL
            self.status.close()

    def close(self) -> None:
        self.status.close()


class SeatServer:
    """One bot's server: started with the seat's own argv, limits and sandbox; forks a
    seat for each `fork`. `state` is "starting", "ready" or "cold" (with `reason`)."""

    #: What the interpreter runs (a test puts a naive server in its place, as a control).
    program: tuple[str, ...] = ("-m", "naparena.bots.serve")

    def __init__(self, seat_argv: list[str], confinement: Confinement, mounts: Mounts,
                 preload: Sequence[str], tag: str):
        self.name, self.tag = seat_argv[3], tag
        self.confinement = confinement
        self.sandboxed = sandboxed(confinement)
        self.home = tempfile.mkdtemp(prefix="naparena-seat-")  # its seats' home: a cold seat's name
        self.state, self.reason = "starting", ""
        self.seats: list[ForkedSeat] = []  # those not known to have ended
        self.stderr = bytearray()
        self.stderr_kept = 0
        # Sandboxed, the ids a cold seat has inside (bubblewrap's own default: the caller's).
        ids = f"{os.getuid()}:{os.getgid()}" if self.sandboxed else "off"
        argv = [sys.executable, *self.program, *seat_argv[3:]]  # a seat's own: its cmdline is a cold seat's
        if self.sandboxed:  # a cold seat's shell before it, as `sandbox.wrap` starts one: the same environ
            argv = ["/bin/sh", "-c", 'exec "$@"', "seat", *argv]
        # Sandboxed, the seat's own wall (`sandbox.wrap`, the view its seats would have), and
        # two capabilities in bubblewrap's namespace for the server's first steps alone
        # (`naparena.bots.warm.main`): all are gone before the bot is imported.
        caps = ("CAP_SYS_ADMIN", "CAP_SETFCAP") if self.sandboxed else ()
        self.groups = SeatGroups(confinement.memory_mb) if self.sandboxed else None
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            wrapped = confined(argv, confinement, True, self.home, mounts, caps=caps)
        except _Broken as e:
            self._give_up(e.reason)
            theirs.close()
            return
        limits = _Limits(confinement, self.groups, per_seat=False)
        try:
            self.proc = subprocess.Popen(
                wrapped.argv, stdin=theirs.fileno(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                cwd=self.home, env=seat_environment(True, self.home), start_new_session=True, close_fds=True,
                pass_fds=wrapped.fds, preexec_fn=limits)  # noqa: PLW1509
        except (OSError, subprocess.SubprocessError) as e:
            self._give_up(f"cannot start: {limits.failure() if not isinstance(e, OSError) else e}")
            theirs.close()
            return
        finally:
            wrapped.started()
            limits.close()
        theirs.close()
        try:
            self.control.send(f"{ids} {','.join(preload) or '-'}".encode())
        except OSError as e:  # it ended at once: `ready` says so
            log.debug("%s: its settings were not sent: %s", tag, e)
        if self.groups is not None:
            self.groups.started()
        assert self.proc.stderr is not None
        self.efd = self.proc.stderr.fileno()
        os.set_blocking(self.efd, False)

    def ready(self, deadline: float) -> bool:
        """Whether the server forks seats; waits for its import until `deadline` at most."""
        while self.state == "starting":
            remaining = max(0.0, deadline - time.monotonic())
            if not select.select([self.control], [], [], remaining)[0]:
                if remaining == 0:
                    return False
                continue
            if True:
                try:
                    said = self.control.recv(512)
                except OSError:
                    said = b""
                if said == b"ready":
                    self.state = "ready"
                else:
                    why = said[5:].decode("utf-8", "replace") if said.startswith(b"cold ") else \
                        "it ended while importing the bot"
                    self._give_up(why)
        return self.state == "ready"

    def why_not(self) -> str:
        """Why the server forks no seat ('' if it does, or may yet)."""
        if self.state == "starting":
            self.ready(time.monotonic())
        return self.reason if self.state == "cold" else ""

    def fork(self, pipes: tuple[int, int, int], groups: SeatGroups | None, home: str) -> ForkedSeat:
        """Ask for a seat on these pipes (its stdin's read end, its stdout's and stderr's
        write ends) in these cgroups; its home is `home` (sandboxed: the server's own
        path, a fresh folder there). Raises `_Broken` if the server is gone."""
        self._drain_stderr()
        home = self.home if self.sandboxed else home  # in its own mount namespace, a fresh tmpfs there
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        mine.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        request = json.dumps({"home": home, "disk_mb": self.confinement.disk_mb,
                              "limits": seat_limits(self.confinement, groups)}).encode()
        try:
            socket.send_fds(self.control, [request], [*pipes, theirs.fileno(), *(groups.fds if groups else [])])
        except OSError as e:
            mine.close()
            raise _Broken(f"crash: the seat server is gone: {e}") from None
        finally:
            theirs.close()
        seat = ForkedSeat(mine, self)
        self.seats = [s for s in self.seats if s.returncode is None] + [seat]
        return seat

    @property
    def busy(self) -> bool:
        """Whether any seat it forked may still be playing (then it must not end: a
        sandboxed server's end ends every seat in its PID namespace)."""
        return any(s.poll() is None and s.failed is None for s in self.seats)

    def _give_up(self, why: str) -> None:
        self.state, self.reason = "cold", why

    def _drain_stderr(self, final: bool = False) -> None:
        if not hasattr(self, "efd"):
            return
        while True:
            try:
                chunk = os.read(self.efd, 1 << 16)
            except BlockingIOError:
                chunk = None
            except OSError:
                chunk = b""
            if not chunk:
                break
            room = _STDERR_KEPT - self.stderr_kept
            self.stderr += chunk[:max(room, 0)]
            self.stderr_kept += min(max(room, 0), len(chunk))
        cut = len(self.stderr) if final else self.stderr.rfind(b"\n") + 1
        for line in bytes(self.stderr[:cut]).decode("utf-8", "replace").splitlines():
            log.info("%s stderr: %s", self.tag, line)
        del self.stderr[:cut]

    def close(self) -> None:
        """End the server (its seats have ended), its process group, cgroups and folder."""
        self.control.close()
        if hasattr(self, "proc"):
            try:
                self.proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            self._drain_stderr(final=True)
            assert self.proc.stderr is not None
            self.proc.stderr.close()
        for seat in self.seats:
            seat.close()
        if self.groups is not None:
            self.groups.release()
        shutil.rmtree(self.home, ignore_errors=True)


def server_key(argv: list[str], confinement: Confinement, mounts: Mounts, preload: Sequence[str]) -> bytes:
    """What makes two seats forkable from one server: the same program in the same
    environment under the same limits, seeing the same files, with the same modules
    imported ahead."""
    environment = seat_environment(True, "")
    return json.dumps([argv, environment, confinement.as_dict(), mounts, list(preload)],
                      sort_keys=True).encode()


class _Servers:
    """This process's servers, by key; the keys whose servers could not fork, with why."""

    def __init__(self) -> None:
        self.live: dict[bytes, SeatServer] = {}
        self.cold: dict[bytes, str] = {}
        self.owner = os.getpid()
        self.armed = False

    def _mine(self) -> None:
        """In a fork, start afresh: the servers are the parent's."""
        if self.owner != os.getpid():
            self.live, self.cold, self.owner, self.armed = {}, {}, os.getpid(), False

    def get(self, argv: list[str], confinement: Confinement, mounts: Mounts, preload: Sequence[str]) \
            -> SeatServer | None:
        """The server for these seats, started if need be; None where they start cold."""
        self._mine()
        key = server_key(argv, confinement, mounts, preload)
        if key in self.cold:
            return None
        server = self.live.pop(key, None)
        if server is not None and server.state == "cold":
            self.refuse(key, server)
            return None
        if server is None:
            if len(self.live) >= MAX_SERVERS and not self._evict():
                return None
            server = SeatServer(argv, confinement, mounts, preload, f"seat server ({argv[3]})")
            if not self.armed:  # a worker's exit, or the parent's, ends its servers
                self.armed = True
                atexit.register(self.close)
                multiprocessing.util.Finalize(self, _Servers.close, args=(self,), exitpriority=5)
        self.live[key] = server  # the most recently used last
        return server

    def refuse(self, key: bytes, server: SeatServer) -> None:
        """`server` cannot fork its seats: they start cold from now on, and run.log says why."""
        if key not in self.cold:
            self.cold[key] = server.reason
            log.warning("%s: its seats start cold: %s", server.tag, server.reason)
        self.live.pop(key, None)
        server.close()

    def key_of(self, server: SeatServer) -> bytes | None:
        return next((k for k, s in self.live.items() if s is server), None)

    def _evict(self) -> bool:
        """End the least recently used server without a seat in play; False if none is idle."""
        for key, server in list(self.live.items()):
            if not server.busy:
                del self.live[key]
                server.close()
                return True
        return False

    def close(self) -> None:
        if self.owner == os.getpid():
            for server in self.live.values():
                server.close()
        self.live = {}


_servers = _Servers()


def spawn(argv: list[str], python: bool, params: dict[str, Any], confinement: Confinement,
          tag: str = "spare seat", mounts: Mounts = ((), (), ()),
          preload: Sequence[str] = ()) -> tuple[Channel | None, str | None]:
    """A new seat process, sent its hello (as `channel._spawn`): forked from its bot's
    server where its seats start warm, else started cold."""
    server = _servers.get(argv, confinement, mounts, preload) if warm(python, confinement) else None
    if server is None:
        return _spawn(argv, python, params, confinement, tag, mounts)
    try:
        channel = Channel(argv, confinement, python=python, tag=tag, mounts=mounts, server=server)
    except _Broken:
        return _spawn(argv, python, params, confinement, tag, mounts)
    from naparena.bots import protocol

    try:
        channel.send(protocol.hello(params, frames=True), time.monotonic() + confinement.start_timeout)
    except _Broken as e:
        channel.abandon()
        return None, e.reason
    return channel, None


def confirmed(channel: Channel, argv: list[str], python: bool, params: dict[str, Any],
              confinement: Confinement, tag: str, mounts: Mounts = ((), (), ()),
              preload: Sequence[str] = ()) -> tuple[Channel | None, str | None]:
    """`channel`, once its forked seat is up; a cold seat in its place if the server
    could not fork it (the server's key then starts cold from here on)."""
    seat = channel.proc
    if not isinstance(seat, ForkedSeat):
        return channel, None
    if seat.confirm(time.monotonic() + confinement.start_timeout) is None:
        return channel, None
    server = seat.server
    if server.state != "cold":
        server._give_up(seat.failed or "it could not fork a seat")
    key = _servers.key_of(server)
    if key is not None:
        _servers.refuse(key, server)
    channel.abandon()
    return _spawn(argv, python, params, confinement, tag, mounts)


def warm(python: bool, confinement: Confinement) -> bool:
    """Whether seats like these are forked from a server: naparena's own Python seats,
    unsandboxed or in bubblewrap (not behind another argv prefix), unless `[seats] start`
    says cold."""
    mode = confinement.sandbox
    return python and confinement.start == "warm" and not isinstance(mode, tuple) and sys.platform.startswith("linux")


def close_servers() -> None:
    """End this process's servers (the end of a run played in it; its seats have ended)."""
    _servers.close()


__all__ = ["ForkedSeat", "SeatServer", "close_servers", "confirmed", "spawn", "warm"]
