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

import atexit
import collections
import ctypes
import logging
import math
import multiprocessing.util
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from naparena.arena.match import sandbox
from naparena.arena.match.bot_files import footprint, in_system
from naparena.arena.match.cgroups import SeatGroups
from naparena.arena.match.job import SeatRecord
from naparena.arena.setup.settings import Confinement
from naparena.arena.setup.tournament import Tournament
from naparena.bots import protocol
from naparena.bots.protocol import MAX_LINE, ProtocolError
from naparena.errors import ConfigError
from naparena.game.view import View

log = logging.getLogger("naparena")

#: The package's source root, so a Python seat imports the same naparena as its match.
_SOURCE_ROOT = str(Path(__file__).resolve().parents[3])
_STDERR_CAP = 1 << 16  # bytes of a seat's stderr logged per match; the rest is counted, not kept
STDERR_TAIL = 10  # last lines of a seat's stderr shown with a failed handshake
#: Said with a handshake that timed out: the usual cause is an output buffer.
FLUSH_HINT = ("does the bot flush its stdout after each line? (jq needs --unbuffered, "
              "Python print(..., flush=True), C fflush(stdout))")


#: What a sandboxed seat sees besides its command's footprint: (files shown, folders
#: shown empty, paths masked wherever the rest would show them).
Mounts = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


class SeatFault(Exception):
    """A decision a seat process could not answer; `reason` is the fault as logged, and
    `bot` the `RemoteBot` when its process broke (the seat is dead from here on)."""

    def __init__(self, reason: str, bot: RemoteBot | None = None):
        super().__init__(reason)
        self.reason, self.bot = reason, bot


class _Broken(Exception):
    """The channel to a seat process is unusable; `reason` says how."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def serve_command(seat: SeatRecord, bots_dir: str | None) -> list[str]:
    """The argv of an isolated Python bot: `naparena serve`'s code without the CLI's
    start-up, told the bot's class where the run's registry knows it (then the seat
    imports that module alone, not every plug-in: most of a Python seat's start-up)."""
    argv = [sys.executable, "-m", "naparena.bots.serve", seat.name]
    if seat.serves is not None:
        return [*argv, "--entry", seat.serves, "--version", seat.version]
    return argv + (["--bots-dir", str(Path(bots_dir).resolve())] if bots_dir else [])


def seat_environment(python: bool, home: str) -> dict[str, str]:
    """A scrubbed environment: nothing of the match's own leaks to a bot."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "HOME": home, "TMPDIR": home}
    if python:
        # Hash seed fixed: a bot iterating a set of strings does so alike in every run.
        path = os.pathsep.join(dict.fromkeys([_SOURCE_ROOT, *sandbox.search_path()]))
        env.update(PYTHONPATH=path, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
        for key in ("NAPARENA_DISABLE_PLUGIN_AUTOLOAD",):
            if key in os.environ:
                env[key] = os.environ[key]
    return env


def _rlimits(c: Confinement, groups: SeatGroups | None = None) -> Callable[[], None]:
    """The child's limits, set between fork and exec (and its cgroups joined). Only
    setrlimit and writes run there: nothing that could take a lock another thread of the
    match holds. Memory is bounded per process only where the seat has no memory cgroup."""
    wanted = [(resource.RLIMIT_CORE, 0)]
    if c.memory_mb and not (groups is not None and groups.bounds_memory):
        wanted.append((resource.RLIMIT_AS, c.memory_mb << 20))
    if c.cpu_seconds:
        wanted.append((resource.RLIMIT_CPU, c.cpu_seconds))
    if c.open_files:
        wanted.append((resource.RLIMIT_NOFILE, c.open_files))
    if c.disk_mb:
        wanted.append((resource.RLIMIT_FSIZE, c.disk_mb << 20))
    hard = {kind: resource.getrlimit(kind)[1] for kind, _ in wanted}
    limits = [(k, v if hard[k] == resource.RLIM_INFINITY else min(v, hard[k])) for k, v in wanted]
    prctl = _prctl()

    def apply() -> None:
        for kind, value in limits:
            resource.setrlimit(kind, (value, value))
        if prctl is not None:  # a worker killed outright takes its seats with it
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if groups is not None:
            groups.join()
    return apply


_PR_SET_PDEATHSIG = 1
_SIGNALS = frozenset(s.value for s in signal.Signals)


def _prctl() -> Callable[..., int] | None:
    """Linux's prctl, looked up before the fork (nothing is loaded between fork and exec)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


def sandboxed(confinement: Confinement) -> bool:
    """Whether seats under `confinement` run in bubblewrap (auto/required resolved here
    when no run resolved them)."""
    mode = confinement.sandbox
    if isinstance(mode, tuple) or mode == "off":
        return False
    return mode == sandbox.BWRAP or sandbox.resolve(mode)[0] == sandbox.BWRAP


def seat_view(argv: list[str], python: bool, mounts: Mounts) -> tuple[list[str], list[str]]:
    """(argv as the sandbox starts it, the paths it shows read-only) for a seat: a Python
    seat's interpreter and naparena beside its own files; an external bot's footprint."""
    files = mounts[0]
    if python:
        return argv, [*sandbox.python_files(), *files]
    found = footprint(tuple(argv), tuple(files))
    return list(found.argv), found.paths


def confined_argv(argv: list[str], confinement: Confinement, python: bool, home: str,
                  mounts: Mounts = ((), (), ()), stdout: str | None = None) -> list[str]:
    """`argv` as the sandbox mode starts it: inside bubblewrap with the seat's own files
    (`mounts`: files shown, folders shown empty, paths masked), behind an argv prefix, or
    as it is."""
    mode = confinement.sandbox
    if isinstance(mode, tuple):
        return list(mode) + argv
    if not sandboxed(confinement):
        return argv
    argv, shown = seat_view(argv, python, mounts)
    return sandbox.wrap(argv, home, shown, mounts[1], mounts[2], confinement.disk_mb, stdout)


class Channel:
    """The pipes to one seat process: writes and line reads that never wait past a deadline."""

    def __init__(self, argv: list[str], confinement: Confinement, python: bool, tag: str,
                 mounts: Mounts = ((), (), ())):
        self.tag = tag
        self.home = tempfile.mkdtemp(prefix="naparena-seat-")
        self.buf = bytearray()
        self.stderr = bytearray()
        self.stderr_seen = 0  # bytes the seat wrote to stderr
        self.stderr_kept = 0  # of those, bytes taken for run.log (at most _STDERR_CAP)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self.memory_mb = confinement.memory_mb
        self.sandboxed = sandboxed(confinement)
        # Sandboxed, the bot's stdout is a FIFO here that only the bot holds: its end is seen at once.
        fifo = os.path.join(self.home, "stdout") if self.sandboxed else None
        if fifo is not None:
            os.mkfifo(fifo, 0o600)
            self.rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        # What the sandbox shows and masks, to say so when a seat fails for want of a file.
        self.shown = seat_view(argv, python, mounts)[1] if self.sandboxed else []
        self.hidden = mounts[2]
        argv = confined_argv(argv, confinement, python, self.home, mounts, fifo)
        self.groups = SeatGroups(confinement.memory_mb) if self.sandboxed else None
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL if fifo else subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=self.home, env=seat_environment(python, self.home),
                start_new_session=True, close_fds=True, bufsize=0,
                # The seat's limits must be set between fork and exec, in the child alone.
                preexec_fn=_rlimits(confinement, self.groups))  # noqa: PLW1509
        except OSError as e:
            if self.groups is not None:
                self.groups.release()
            if fifo is not None:
                os.close(self.rfd)
            shutil.rmtree(self.home, ignore_errors=True)
            program = e.filename or argv[0]
            raise _Broken(f"crash: cannot start the seat process {program}: {e.strerror or e}") from None
        stdin, stdout, stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        assert stdin is not None and stderr is not None  # both are pipes
        if self.groups is not None:
            self.groups.started()
        if stdout is not None:
            self.rfd = stdout.fileno()
        self.files = [f for f in (stdin, stdout, stderr) if f is not None]
        self.wfd, self.efd = stdin.fileno(), stderr.fileno()
        for fd in (self.wfd, self.rfd, self.efd):
            os.set_blocking(fd, False)
        self.readable = select.poll()
        self.readable.register(self.rfd, select.POLLIN)
        self.readable.register(self.efd, select.POLLIN)
        self.oom = self.groups.oom if self.groups is not None else None
        if self.oom is not None:
            self.readable.register(self.oom, select.POLLIN)
        self.writable = select.poll()
        self.writable.register(self.wfd, select.POLLOUT)
        self.closed = False

    def pin(self, cpus: set[int]) -> None:
        """Hold the seat to `cpus` where its cpuset makes that binding (else advisory)."""
        if self.groups is not None:
            self.groups.pin(cpus)

    # --- one exchange ----------------------------------------------------------------

    def send(self, data: bytes | bytearray, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.wfd, view):]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                raise _Broken(self._exit_reason()) from None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Broken("time-out")  # not reading its input: the pipe is full
            self.writable.poll(math.ceil(remaining * 1000))

    def receive(self, deadline: float) -> bytes:
        """The next whole line, within the deadline and `MAX_LINE` bytes."""
        buf = self.buf
        while True:
            end = buf.find(b"\n")
            if end >= 0:
                line = bytes(buf[:end + 1])
                del buf[:end + 1]
                return line
            if len(buf) > MAX_LINE:
                raise _Broken(f"protocol: a line of more than {MAX_LINE} bytes: "
                              f"{bytes(buf[:60])!r}…")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Broken("time-out")
            for fd, _ in self.readable.poll(math.ceil(remaining * 1000)):
                if fd == self.efd:
                    self._drain_stderr()
                    continue
                if fd == self.oom:
                    self._out_of_memory()
                    continue
                chunk = self._read(self.rfd)
                if chunk is None:
                    continue
                if not chunk:
                    raise _Broken(self._exit_reason())
                buf += chunk

    def _read(self, fd: int) -> bytes | None:
        try:
            return os.read(fd, 1 << 16)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def _drain_stderr(self) -> bool:
        """Log the seat's complete stderr lines, tagged; False once it is closed."""
        chunk = self._read(self.efd)
        if chunk is None:
            return True
        if not chunk:
            self.readable.unregister(self.efd)
            self._log_stderr(final=True)
            return False
        self._keep_stderr(chunk)
        self._log_stderr(final=False)
        return True

    def _keep_stderr(self, chunk: bytes) -> None:
        # Counted always; kept for run.log only up to the cap over the whole match.
        self.stderr_seen += len(chunk)
        room = _STDERR_CAP - self.stderr_kept
        if room > 0:
            self.stderr += chunk[:room]
            self.stderr_kept += min(room, len(chunk))

    def _log_stderr(self, final: bool) -> None:
        text = self.stderr
        cut = len(text) if final else text.rfind(b"\n") + 1
        for line in bytes(text[:cut]).decode("utf-8", "replace").splitlines():
            log.info("%s stderr: %s", self.tag, line)
            self.stderr_tail.append(line)
        del text[:cut]
        if final and self.stderr_seen > self.stderr_kept:
            log.info("%s stderr: (%d bytes in all; only the first %d logged)", self.tag,
                     self.stderr_seen, self.stderr_kept)

    def _drain_rest(self) -> None:
        """After the kill, what the stderr pipe still holds (a crash's last words), without
        waiting: a seat abandoned at once has had no time to have it read."""
        for _ in range(16):  # at most 1 MiB: a child the kill missed may still be writing
            chunk = self._read(self.efd)
            if not chunk:
                break
            self._keep_stderr(chunk)
        self._log_stderr(final=True)

    def _out_of_memory(self) -> None:
        """The kernel found the seat over its memory cgroup's limit: it ends here."""
        if self.groups is not None and self.groups.out_of_memory():
            raise _Broken(self.memory_reason)

    @property
    def memory_reason(self) -> str:
        return (f"crash: the seat went over memory_mb = {self.memory_mb} (all its processes "
                "and in-memory folders together)")

    def _exit_reason(self) -> str:
        """Why the pipe closed: the process's exit, if it comes within a moment."""
        if self.groups is not None and self.groups.out_of_memory():
            return self.memory_reason
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return "crash: seat process closed its output"
        if self.sandboxed and code > 128 and code - 128 in _SIGNALS:
            code = 128 - code  # bwrap exits 128 + N for a bot killed by signal N: say it alike
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"crash: seat process killed by {name}"
        return f"crash: seat process exited with code {code}"

    # --- the end ---------------------------------------------------------------------

    def begin_close(self, farewell: bytes) -> None:
        """Say goodbye without waiting; `finish_close` waits for the exit."""
        if self.closed:
            return
        try:
            os.write(self.wfd, farewell)
        except OSError:
            pass  # full, or already gone: it is killed below
        try:
            self.files[0].close()
        except OSError:
            pass

    def finish_close(self, deadline: float) -> None:
        """Let the process exit until `deadline`, logging its stderr; then kill its group."""
        if self.closed:
            return
        self.closed = True
        stderr_open = True
        while stderr_open and time.monotonic() < deadline:
            ready = self.readable.poll(max(0, math.ceil((deadline - time.monotonic()) * 1000)))
            if not ready:
                break
            for fd, _ in ready:
                if fd == self.efd:
                    stderr_open = self._drain_stderr()
                elif fd == self.oom:  # over its memory as it ends: nothing more to do
                    self.readable.unregister(fd)
                elif not self._read(self.rfd):
                    self.readable.unregister(self.rfd)
        self.kill()
        if self.groups is not None:
            self.groups.release()
        if stderr_open:
            self._drain_rest()
        for f in self.files[1:]:
            f.close()
        if len(self.files) == 2:  # the stdout FIFO, opened here
            os.close(self.rfd)
        shutil.rmtree(self.home, ignore_errors=True)

    def kill(self) -> None:
        """The whole process group: a bot's own children go with it, and are gone when
        this returns (within `_GROUP_END` seconds)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
            pass
        _await_group_end(self.proc.pid, time.monotonic() + _GROUP_END)

    def abandon(self) -> None:
        """Kill now: the seat is broken."""
        self.begin_close(b"")
        self.finish_close(time.monotonic())


_GROUP_END = 5.0  # seconds a killed seat's group may take to end


def _await_group_end(group: int, deadline: float) -> None:
    """Wait until no live process is left in process group `group`. A SIGKILL ends a
    process only when it next runs, and a bot's hundreds of children take a while on a
    busy core; a zombie waiting for init to reap it counts as gone. The usual seat has no
    children left, and costs one `killpg(group, 0)`."""
    while True:
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return
        if not _live_in_group(group) or time.monotonic() >= deadline:
            return
        time.sleep(0.005)


def _live_in_group(group: int) -> bool:
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split(None, 3)
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] not in (b"Z", b"X"):
            return True
    return False


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
        self.pending += protocol.request(view)
        # The time charged: from sending the request to holding the whole answer.
        start = time.monotonic()
        deadline = start + self.timeout
        try:
            channel.send(self.pending, deadline)
            self.pending.clear()
            line = channel.receive(deadline)
            if self.times is not None:
                self.times.append(time.monotonic() - start)
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
        hint = sandbox_hint(reason, channel.stderr_tail, channel.shown, channel.hidden)
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
        self.queue(protocol.hand_start(view))

    def observe(self, event: dict[str, Any]) -> None:
        self.queue(protocol.event(event))

    def end_hand(self, record: dict[str, Any]) -> None:
        self.queue(protocol.hand_end(record))

    def end_match(self) -> None:
        self.queue(protocol.MATCH_END)

    def queue(self, message: bytes) -> None:
        """Send `message` with the next request (or at the match's end)."""
        if not self.dead and self.broken is None:
            self.pending += message


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
                              f"{tag} seat {i} ({seat.alias})", seat_mounts(seat, bots_dir))
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


def seat_argv(seat: SeatRecord, bots_dir: str | None) -> tuple[list[str], bool]:
    """(argv, whether it is naparena's own Python seat) of a process seat."""
    command = seat.command
    return (list(command), False) if command else (serve_command(seat, bots_dir), True)


def seat_mounts(seat: SeatRecord, bots_dir: str | None) -> Mounts:
    """What a sandboxed seat sees besides its command's footprint: (files, dirs, hidden).
    A Python bot looks for drop-ins in bots_dir: there, it finds only its own file."""
    dirs = (str(Path(bots_dir).resolve()),) if bots_dir and not seat.command else ()
    return seat.files, dirs, seat.hidden


def _greeted(argv: list[str], python: bool, params: dict[str, Any], confinement: Confinement,
             tag: str, mounts: Mounts = ((), (), ())) -> tuple[Channel | None, str | None]:
    """A seat process sent its hello, unread: a spare `prestart` started, or a new one;
    or (None, why it could not start)."""
    spare = _spares.take(_spare_key(argv, python, params, confinement, mounts))
    if spare is not None:
        spare.tag = tag  # its stderr is logged from here on, under its seat's name
        return spare, None
    return _spawn(argv, python, params, confinement, tag, mounts)


# --- the next match's seats, started while this one plays ------------------------------

def _spare_key(argv: list[str], python: bool, params: dict[str, Any], confinement: Confinement,
               mounts: Mounts) -> bytes:
    """What makes two seat processes interchangeable before their match begins: the same
    program, greeted with the same params, under the same limits, seeing the same files."""
    return orjson.dumps([argv, python, params, confinement.as_dict(), mounts], option=orjson.OPT_SORT_KEYS)


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

    def stock(self, wanted: dict[bytes, tuple[list[str], bool, dict[str, Any], Confinement, Mounts, int]]) -> None:
        """Keep, for each key, as many spares as `wanted` says; close the others."""
        self._mine()
        for key in list(self.ready):
            if key not in wanted:
                self._close(self.ready.pop(key))
        for key, (argv, python, params, confinement, mounts, count) in wanted.items():
            waiting = self.ready.setdefault(key, [])
            while len(waiting) < count:
                channel, _ = _spawn(argv, python, params, confinement, mounts=mounts)
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
            channel.begin_close(protocol.SHUTDOWN)
        deadline = time.monotonic() + 1.0
        for channel in channels:
            channel.finish_close(deadline)


def _spawn(argv: list[str], python: bool, params: dict[str, Any], confinement: Confinement,
           tag: str = "spare seat", mounts: Mounts = ((), (), ())) -> tuple[Channel | None, str | None]:
    """A new seat process, sent its hello; or (None, why it could not start)."""
    try:
        channel = Channel(argv, confinement, python=python, tag=tag, mounts=mounts)
    except _Broken as e:
        return None, e.reason
    try:
        channel.send(protocol.hello(params), time.monotonic() + confinement.start_timeout)
    except _Broken as e:
        channel.abandon()
        return None, e.reason
    return channel, None


_spares = _Spares()


def prestart(job_seats: Sequence[SeatRecord], bots_dir: str | None, confinement: Confinement) -> None:
    """Start (and greet) fresh processes for the seats of a match like this one, so the
    next match this worker plays, usually with the same bots, finds them ready."""
    wanted: dict[bytes, tuple[list[str], bool, dict[str, Any], Confinement, Mounts, int]] = {}
    for seat in job_seats:
        if not seat.in_process:
            continue
        argv, python = seat_argv(seat, bots_dir)
        params, mounts = dict(seat.params), seat_mounts(seat, bots_dir)
        key = _spare_key(argv, python, params, confinement, mounts)
        count = wanted[key][5] + 1 if key in wanted else 1
        wanted[key] = (argv, python, params, confinement, mounts, count)
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


PARAM_REFUSED = "the bot does not accept parameter"


def check_params(hello: dict[str, Any], params: dict[str, Any]) -> None:
    """A bot accepts exactly the params its hello lists: a hello without `params` lists
    none, as `"params": {}` does, so a tournament that gives it any is refused."""
    accepted = hello.get("params") or {}
    unknown = [k for k in params if k not in accepted]
    if unknown:
        listed = ", ".join(sorted(accepted)) or "none"
        raise ProtocolError(f"{PARAM_REFUSED} '{unknown[0]}'; it accepts: {listed}")


def close_seats(bots: dict[int, RemoteBot], grace: float = 2.0) -> None:
    """Send the match end and shutdown to every live seat, give them `grace` seconds
    together to exit, then kill what is left."""
    live = [b.channel for b in bots.values() if b.channel is not None and not b.dead and not b.channel.closed]
    for bot in bots.values():
        if bot.channel is not None and not bot.dead:
            bot.channel.begin_close(bytes(bot.pending) + protocol.SHUTDOWN)
    deadline = time.monotonic() + grace
    for channel in live:
        channel.finish_close(deadline)


def probe(argv: list[str], params: dict[str, Any], confinement: Confinement, python: bool = False,
          mounts: Mounts = ((), (), ())) -> dict[str, Any]:
    """Start a bot, shake hands, shut it down: its hello, or `ProtocolError` saying why
    not, with what the sandbox hid from it (if that is why) and the last lines of the
    bot's stderr (a syntax error, a wrong path)."""
    try:
        channel = Channel(argv, confinement, python, tag="probe", mounts=mounts)
    except _Broken as e:
        raise ProtocolError(e.reason.removeprefix("crash: ")) from None
    reason = ""
    try:
        deadline = time.monotonic() + confinement.start_timeout
        channel.send(protocol.hello(params), deadline)
        hello = protocol.read_hello(channel.receive(deadline))
        check_params(hello, params)
        return hello
    except _Broken as e:
        reason = (f"no hello within {confinement.start_timeout:g} s; {FLUSH_HINT}" if e.reason == "time-out"
                  else e.reason.removeprefix("crash: "))
    except ProtocolError as e:
        reason = str(e)
    finally:
        channel.begin_close(protocol.SHUTDOWN)
        channel.finish_close(time.monotonic() + 1.0)
    hint = sandbox_hint(reason, channel.stderr_tail, seat_view(argv, python, mounts)[1], mounts[2]) \
        if channel.sandboxed else None
    raise ProtocolError(reason + (f"\n  {hint}" if hint else "") + with_stderr(channel.stderr_tail))


_PATH = re.compile(r"""(/[^\s:'"`,;()\[\]<>]+)""")


def sandbox_hint(reason: str, stderr: Iterable[str], shown: list[str], hidden: Iterable[str] = ()) -> str | None:
    """One line when a sandboxed seat failed for want of a file: a path its stderr names
    that exists on this machine but not in its sandbox, or exit status 126/127 (a program
    it could not run); None when neither is the case."""
    masked = [h.rstrip("/") for h in hidden]
    inside = [p.rstrip("/") for p in shown]

    def hidden_here(path: str) -> bool:
        if any(path == m or path.startswith(m + "/") for m in masked):
            return True
        return not (in_system(path) or any(path == p or path.startswith(p + "/") for p in inside))

    for line in stderr:
        for written in _PATH.findall(line):
            path = written.rstrip(".")
            if os.path.exists(path) and hidden_here(path):
                return (f"the seat sandbox hides {path}, which exists on this machine: show it with "
                        f'files = ["{path}"] in the bot\'s [[bots]] entry, or set [seats] sandbox = "off"')
    code = re.search(r"exited with code (\d+)", reason)
    if code and code.group(1) in ("126", "127"):
        return (f"exit code {code.group(1)} in the seat sandbox: a program or library the bot runs is not "
                'in it; name it in files = [...] in the bot\'s [[bots]] entry, or set [seats] sandbox = "off"')
    return None


def with_stderr(lines: Iterable[str]) -> str:
    """The last lines a bot wrote to stderr, to follow a message about it ('' if none)."""
    if not lines:
        return ""
    return "\n  the bot's stderr ended with:\n" + "\n".join(f"    {line}" for line in lines)


def preflight(t: Tournament, files: dict[str, tuple[list[str], list[str]]]) -> None:
    """Shake hands with every external bot of tournament `t` before any play, so a wrong
    command or a parameter the bot refuses is a bad tournament file, not a run of faults.
    `files`: per alias, the paths its sandbox shows and masks (none unsandboxed)."""
    for i, bot in enumerate(t.bots, 1):
        if bot.command is None:
            continue
        shown, hidden = files.get(bot.alias, ([], []))
        try:
            probe(t.command_of(bot), bot.params, t.seats, mounts=(tuple(shown), (), tuple(hidden)))
        except ProtocolError as e:
            key = f"bots[{i}].params" if str(e).startswith(PARAM_REFUSED) else f"bots[{i}].command"
            raise ConfigError(t.path, key, f"bot '{bot.alias}' failed its handshake: {e}") from None
