"""One seat process and its pipes: how it is started (argv, environment, limits,
sandbox), and a `Channel` that writes to it and reads its lines without ever waiting past
a deadline, then ends its whole process group. The rules for a broken seat are in
`seats.py`; the spare processes started ahead of a match in `spares.py`."""

from __future__ import annotations

import collections
import ctypes
import functools
import logging
import math
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
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from naparena.arena.match import sandbox
from naparena.arena.match.bot_files import FOLDER_LINKED, footprint, in_system, program_path, runtime_installation
from naparena.arena.match.cgroups import SeatGroups
from naparena.arena.match.job import SeatRecord
from naparena.arena.match.wall import Places, Refused, homes
from naparena.arena.setup.settings import Confinement
from naparena.bots import protocol
from naparena.bots.protocol import MAX_LINE, ProtocolError

log = logging.getLogger("naparena")

#: The package's source root, so a Python seat imports the same naparena as its match.
_SOURCE_ROOT = str(Path(__file__).resolve().parents[3])
_STDERR_CAP = 1 << 16  # bytes of a seat's stderr logged per match; the rest is counted, not kept
STDERR_TAIL = 10  # last lines of a seat's stderr shown with a failed handshake
STDERR_HEAD = 4   # and its first lines (a JVM's exception names itself there, its frames follow)
#: Lines between head and tail worth showing: a chained exception's cause, a VM's own error.
_CAUSE = re.compile(r"^\s*(Caused by:|Error occurred|Error:|Exception in thread)")


#: What a sandboxed seat sees besides its command's footprint: (files shown, folders
#: shown empty, paths masked wherever the rest would show them).
Mounts = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


class SeatProcess(Protocol):
    """A seat's process as a channel uses it: a `Popen`, or a seat a server forked."""

    @property
    def pid(self) -> int: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...


class Forks(Protocol):
    """A server that forks seats (`warm.SeatServer`): one on these pipes (its stdin's read
    end, its stdout's and stderr's write ends), in these cgroups, with this home."""

    def fork(self, pipes: tuple[int, int, int], groups: SeatGroups | None, home: str) -> SeatProcess: ...


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


def seat_environment(python: bool, home: str, address_mb: int = 0) -> dict[str, str]:
    """A scrubbed environment: nothing of the match's own leaks to a bot. Where only
    RLIMIT_AS bounds the seat (`address_mb`), a JVM is told to reserve within it."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "HOME": home, "TMPDIR": home}
    if address_mb and not python:
        env.update(address_space_env(address_mb))
    if python:
        # Hash seed fixed: a bot iterating a set of strings does so alike in every run.
        path = os.pathsep.join(dict.fromkeys([_SOURCE_ROOT, *sandbox.search_path()]))
        env.update(PYTHONPATH=path, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
        for key in ("NAPARENA_DISABLE_PLUGIN_AUTOLOAD",):
            if key in os.environ:
                env[key] = os.environ[key]
    return env


_INLINE_SCRIPT = re.compile(rb"^# /// script\s*$", re.M)


def unsandboxable(argv: list[str]) -> str | None:
    """Why a command cannot start in the sandbox by any `files = [...]` (None: it may):
    `uv run` of a script with inline dependencies makes the script's environment in
    uv's cache as it starts, which needs the network and a writable cache."""
    program = program_path(argv[0]) if argv else None
    if program is None or os.path.basename(os.path.realpath(program)) != "uv" or "run" not in argv[1:]:
        return None
    script = next((a for a in argv[1:] if os.path.isfile(a) and a.endswith(".py")), None)
    inline = False
    if script is not None:
        try:
            with open(script, "rb") as f:
                inline = _INLINE_SCRIPT.search(f.read(1 << 16)) is not None
        except OSError:
            pass
    if "--script" not in argv and not inline:
        return None
    name = script or "FILE"
    return (f"uv run --script makes the script's environment as it starts, which a sandboxed seat cannot (no "
            f"network, no writable uv cache): prepare it once with `uv sync --script {name}` and start the bot "
            f"with the interpreter `uv python find --script {name}` prints, as the command's program")


def address_space_env(memory_mb: int) -> dict[str, str]:
    """What lets a program start where RLIMIT_AS = `memory_mb` bounds it: a JVM reserves
    address space by the machine's memory (a quarter of it for the heap, 1 GiB of class
    space, 240 MiB of code cache), far past the limit, and dies before `main`; told
    sizes in proportion to the limit (the command's own -Xmx and the like still win, as
    they come after), it starts at 768 MB and up. glibc's per-thread malloc arenas (64
    MiB of address space each) are kept to two."""
    share = max(16, min(256, memory_mb // 16))
    options = f"-Xmx{memory_mb * 2 // 5}m -XX:CompressedClassSpaceSize={share}m -XX:ReservedCodeCacheSize={share}m"
    return {"JAVA_TOOL_OPTIONS": options, "MALLOC_ARENA_MAX": "2"}


_NO_ROOM = re.compile(r"Could not reserve|Could not allocate|insufficient memory|initialization of VM|"
                      r"Cannot allocate memory|MemoryError|out of memory|std::bad_alloc|failed to map|mmap failed",
                      re.I)


def memory_hint(stderr: Iterable[str], memory_mb: int, address_bound: bool) -> str | None:
    """One line when a seat bounded by RLIMIT_AS alone could not reserve memory at start."""
    if not address_bound or not any(_NO_ROOM.search(line) for line in stderr):
        return None
    return (f"the seat's address space is bounded by [seats] memory_mb = {memory_mb} (RLIMIT_AS: no memory "
            "cgroup here) and the bot could not reserve what it asked for at start; raise memory_mb for this "
            "tournament (a JVM starts from 768)")


def _wanted_limits(c: Confinement, groups: SeatGroups | None) -> list[tuple[int, int, str]]:
    """A seat's rlimits, (kind, value within this process's hard limit, the setting's name)."""
    wanted = [(resource.RLIMIT_CORE, 0, "core dumps off (RLIMIT_CORE 0)")]
    if c.memory_mb and not (groups is not None and groups.bounds_memory):
        wanted.append((resource.RLIMIT_AS, c.memory_mb << 20, f"memory_mb = {c.memory_mb} (RLIMIT_AS)"))
    if c.cpu_seconds:
        wanted.append((resource.RLIMIT_CPU, c.cpu_seconds, f"cpu_seconds = {c.cpu_seconds} (RLIMIT_CPU)"))
    if c.open_files:
        wanted.append((resource.RLIMIT_NOFILE, c.open_files, f"open_files = {c.open_files} (RLIMIT_NOFILE)"))
    if c.disk_mb:
        wanted.append((resource.RLIMIT_FSIZE, c.disk_mb << 20, f"disk_mb = {c.disk_mb} (RLIMIT_FSIZE)"))
    hard = {kind: resource.getrlimit(kind)[1] for kind, _, _ in wanted}
    return [(k, v if hard[k] == resource.RLIM_INFINITY else min(v, hard[k]), label) for k, v, label in wanted]


def seat_limits(c: Confinement, groups: SeatGroups | None = None) -> list[tuple[int, int]]:
    """A seat's rlimits, (kind, value): what a forked seat sets itself (`naparena.bots.warm`)."""
    return [(k, v) for k, v, _ in _wanted_limits(c, groups)]


class _Limits:
    """The child's limits, set between fork and exec (and its cgroups joined): called as
    the seat's `preexec_fn`. Only setrlimit and writes run there: nothing that could take
    a lock another thread of the match holds. Memory is bounded per process only where the
    seat has no memory cgroup. A limit that cannot be set is written, by the setting's
    name as prepared here, to a pipe the parent reads (`failure`): subprocess itself says
    only "Exception occurred in preexec_fn"."""

    def __init__(self, c: Confinement, groups: SeatGroups | None = None, per_seat: bool = True):
        """`per_seat` false: a seat server's own limits, without the CPU bound (each seat
        it forks sets its own, for its match alone)."""
        self.limits = [(k, v, label.encode()) for k, v, label in _wanted_limits(c, groups)
                       if per_seat or k != resource.RLIMIT_CPU]
        self.groups = groups
        self.prctl = _prctl()
        self.told, self.tell = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)

    def __call__(self) -> None:
        for kind, value, label in self.limits:
            try:
                resource.setrlimit(kind, (value, value))
            except (OSError, ValueError) as e:
                os.write(self.tell, label + b"\0" + b"%d" % (getattr(e, "errno", 0) or 0))
                raise
        if self.prctl is not None:  # a worker killed outright takes its seats with it
            self.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if self.groups is not None:
            self.groups.join()

    def failure(self) -> str:
        """Which limit the child could not set, and why, in words."""
        try:
            said = os.read(self.told, 4096)
        except BlockingIOError:
            said = b""
        label, _, errno = said.partition(b"\0")
        if not label:
            return "its limits could not be set"
        why = os.strerror(int(errno)) if errno.isdigit() and int(errno) else "refused"
        return f"its limit {label.decode()} could not be set: {why}"

    def close(self) -> None:
        for fd in (self.told, self.tell):
            try:
                os.close(fd)
            except OSError:
                pass


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
    """Whether seats under `confinement` run in bubblewrap. A run, `check` and the
    environments resolve the mode before any seat starts; auto or required is resolved
    here only for a seat started some other way (a benchmark's), never left unguarded."""
    mode = confinement.sandbox
    if isinstance(mode, tuple) or mode == "off":
        return False
    return mode == sandbox.BWRAP or sandbox.resolve(mode)[0] == sandbox.BWRAP


def seat_view(argv: list[str], python: bool, mounts: Mounts) -> tuple[list[str], list[str]]:
    """(argv as the sandbox starts it, the paths it shows read-only) for a seat: a Python
    seat's interpreter and naparena beside its own files; an external bot's footprint."""
    argv, shown = seat_shown(argv, python, mounts)
    return argv, shown.named


def seat_shown(argv: list[str], python: bool, mounts: Mounts) -> tuple[list[str], sandbox.Shown]:
    """(argv as the sandbox starts it, what it is shown): a Python seat's interpreter and
    naparena beside its own files, resolved when its view is opened; an external bot's
    footprint, as it was checked."""
    files = mounts[0]
    if python:
        return argv, sandbox.Shown(paths=(*sandbox.python_files(), *files))
    found = footprint(tuple(argv), tuple(files), tuple(mounts[2]))
    return list(found.argv), sandbox.Shown(exact=found.exact, links=found.links, refused=found.refused)


def confined(argv: list[str], confinement: Confinement, python: bool, home: str,
             mounts: Mounts = ((), (), ()), stdout: str | None = None, caps: tuple[str, ...] = ()) -> sandbox.Wrapped:
    """`argv` as the sandbox mode starts it: inside bubblewrap with the seat's own files
    (`mounts`: files shown, folders shown empty, paths masked), behind an argv prefix, or
    as it is. A path the wall refuses to show is a seat that cannot start (`_Broken`)."""
    mode = confinement.sandbox
    if isinstance(mode, tuple):
        return sandbox.Wrapped(list(mode) + argv, ())
    if not sandboxed(confinement):
        # A version manager's shim runs what it would from the bot's folder, as sandboxed.
        return sandbox.Wrapped(argv if python else list(footprint(tuple(argv)).argv), ())
    if not python and argv and program_path(argv[0]) is None:
        where = "no such file" if "/" in argv[0] else "not found on PATH"
        raise _Broken(f"crash: the command's program {argv[0]} does not exist ({where}): "
                      "the sandbox is not the cause")
    if not python and (why := unsandboxable(argv)) is not None:
        raise _Broken(f"crash: {why}")
    argv, shown = seat_shown(argv, python, mounts)
    try:
        view = sandbox.view_of(shown, tuple(mounts[1]), tuple(mounts[2]))
    except Refused as e:
        raise _Broken(f"crash: the seat sandbox will not show {e}") from None
    except OSError as e:
        raise _Broken(f"crash: the seat sandbox cannot open {e.filename or e}: {e.strerror or e}") from None
    return sandbox.wrap(argv, view, home, confinement.disk_mb, stdout, caps)


class Channel:
    """The pipes to one seat process: writes and line reads that never wait past a deadline."""

    def __init__(self, argv: list[str], confinement: Confinement, python: bool, tag: str,
                 mounts: Mounts = ((), (), ()), server: Forks | None = None):
        self.tag = tag
        self.home = tempfile.mkdtemp(prefix="naparena-seat-")
        self.buf = bytearray()
        self.stderr = bytearray()
        self.stderr_seen = 0  # bytes the seat wrote to stderr
        self.stderr_kept = 0  # of those, bytes taken for run.log (at most _STDERR_CAP)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self.stderr_head: list[str] = []   # the first STDERR_HEAD lines
        self.stderr_causes: list[str] = []  # cause lines that left the tail
        self.stderr_lines = 0
        self.memory_mb = confinement.memory_mb
        self.sandboxed = sandboxed(confinement)
        # What the sandbox shows and masks, to say so when a seat fails for want of a file.
        self._view = (argv, python, mounts)
        self.hidden = mounts[2]
        self.groups = SeatGroups(confinement.memory_mb) if self.sandboxed else None
        self.address_bound = bool(confinement.memory_mb) and not (self.groups is not None and self.groups.bounds_memory)
        # A sandboxed forked seat's group holds its PID 1 alone: the bot and everything it
        # starts die with that namespace (`naparena.bots.warm`), never left in the group.
        self.group_alone = server is not None and self.sandboxed
        if server is None:
            self._start(argv, confinement, python, mounts)
        else:
            self._fork(server)
        if self.groups is not None:
            self.groups.started()
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

    def _start(self, argv: list[str], confinement: Confinement, python: bool, mounts: Mounts) -> None:
        """A cold start: the seat's own process, started from its argv."""
        # Sandboxed, the bot's stdout is a FIFO here that only the bot holds: its end is seen at once.
        fifo = os.path.join(self.home, "stdout") if self.sandboxed else None
        if fifo is not None:
            os.mkfifo(fifo, 0o600)
            self.rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            wrapped = confined(argv, confinement, python, self.home, mounts, fifo)
        except _Broken:
            if self.groups is not None:
                self.groups.release()
            self._undo(fifo)
            raise
        argv = wrapped.argv
        limits = _Limits(confinement, self.groups)
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL if fifo else subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=self.home,
                env=seat_environment(python, self.home, confinement.memory_mb if self.address_bound else 0),
                start_new_session=True, close_fds=True, bufsize=0, pass_fds=wrapped.fds,
                # The seat's limits must be set between fork and exec, in the child alone.
                preexec_fn=limits)  # noqa: PLW1509
        except (OSError, subprocess.SubprocessError) as e:
            if self.groups is not None:
                self.groups.release()
            self._undo(fifo)
            if not isinstance(e, OSError):  # the child's limits: say which one
                raise _Broken(f"crash: cannot start the seat process {argv[0]}: {limits.failure()}") from None
            program = e.filename or argv[0]
            raise _Broken(f"crash: cannot start the seat process {program}: {e.strerror or e}") from None
        finally:
            wrapped.started()
            limits.close()
        self.proc: SeatProcess = proc
        stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
        assert stdin is not None and stderr is not None  # both are pipes
        if stdout is not None:
            self.rfd = stdout.fileno()
        self.files = [f for f in (stdin, stdout, stderr) if f is not None]
        self.wfd, self.efd = stdin.fileno(), stderr.fileno()

    def _undo(self, fifo: str | None) -> None:
        """What a seat that could not start leaves: its FIFO's end and its home."""
        if fifo is not None:
            os.close(self.rfd)
        shutil.rmtree(self.home, ignore_errors=True)

    def _fork(self, server: Forks) -> None:
        """A warm start: the seat forked by its bot's server, on pipes made here."""
        stdin, self.wfd = os.pipe2(os.O_CLOEXEC)
        self.rfd, stdout = os.pipe2(os.O_CLOEXEC)
        self.efd, stderr = os.pipe2(os.O_CLOEXEC)
        try:
            self.proc = server.fork((stdin, stdout, stderr), self.groups, self.home)
        except _Broken:
            for fd in (self.wfd, self.rfd, self.efd):
                os.close(fd)
            if self.groups is not None:
                self.groups.release()
            shutil.rmtree(self.home, ignore_errors=True)
            raise
        finally:
            for fd in (stdin, stdout, stderr):
                os.close(fd)
        # Closed with the channel, as a Popen's pipes are.
        self.files = [open(fd, mode, buffering=0)  # noqa: SIM115
                      for fd, mode in ((self.wfd, "wb"), (self.rfd, "rb"), (self.efd, "rb"))]

    @functools.cached_property
    def _shown(self) -> sandbox.Shown:
        """What the seat's sandbox shows (nothing unsandboxed), worked out when asked:
        only a seat that failed for want of a file needs it."""
        return seat_shown(*self._view)[1] if self.sandboxed else sandbox.Shown()

    @property
    def shown(self) -> list[str]:
        return list(self._shown.named)

    @property
    def refused(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._shown.refused)

    def pin(self, cpus: set[int]) -> None:
        """Hold the seat to `cpus` where its cpuset makes that binding (else advisory)."""
        if self.groups is not None:
            self.groups.pin(cpus)

    # --- one exchange ----------------------------------------------------------------

    def ask(self, data: bytes | bytearray, deadline: float) -> bytes:
        """`send` the request, then `receive` the answer line, the usual case kept short:
        the request written at once, the answer alone in the one read that follows."""
        try:
            written = os.write(self.wfd, data)
        except BlockingIOError:
            written = 0
        except (BrokenPipeError, ConnectionResetError):
            raise _Broken(self._exit_reason()) from None
        if written < len(data):
            self.send(memoryview(data)[written:], deadline)
        remaining = deadline - time.monotonic()
        if self.buf or remaining <= 0:
            return self.receive(deadline)
        ready = self.readable.poll(math.ceil(remaining * 1000))
        if len(ready) == 1 and ready[0][0] == self.rfd:
            chunk = self._read(self.rfd)
            if chunk and chunk.find(b"\n") == len(chunk) - 1:
                return chunk
            if chunk:
                self.buf += chunk
        else:
            self._ready(ready)
        return self.receive(deadline)

    def send(self, data: bytes | bytearray | memoryview, deadline: float) -> None:
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
            self._ready(self.readable.poll(math.ceil(remaining * 1000)))

    def _ready(self, ready: list[tuple[int, int]]) -> None:
        """Take in what `poll` found: stderr logged, an out-of-memory event, the bot's output."""
        for fd, _ in ready:
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
            self.buf += chunk

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
            self._told(line)
        del text[:cut]
        if final and self.stderr_seen > self.stderr_kept:
            log.info("%s stderr: (%d bytes in all; only the first %d logged)", self.tag,
                     self.stderr_seen, self.stderr_kept)

    def _told(self, line: str) -> None:
        self.stderr_lines += 1
        if len(self.stderr_head) < STDERR_HEAD:
            self.stderr_head.append(line)
            return
        if len(self.stderr_tail) == STDERR_TAIL:
            leaving = self.stderr_tail[0]
            if _CAUSE.match(leaving) and len(self.stderr_causes) < STDERR_HEAD:
                self.stderr_causes.append(leaving)
        self.stderr_tail.append(line)

    @property
    def stderr_shown(self) -> list[str]:
        """What to show of the seat's stderr with its failure: all of it when short, else
        its first lines, the causes between, and its last lines."""
        skipped = self.stderr_lines - len(self.stderr_head) - len(self.stderr_tail) - len(self.stderr_causes)
        middle = [f"… ({skipped} lines)"] if skipped > 0 else []
        if self.stderr_causes:
            middle = [*middle, *self.stderr_causes, "…"]
        return [*self.stderr_head, *middle, *self.stderr_tail]

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
        group = self.proc.pid  # 0 only for a forked seat its server never made
        if group <= 0:
            return
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
            pass
        if not self.group_alone:
            _await_group_end(group, time.monotonic() + _GROUP_END)

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


def seat_argv(seat: SeatRecord, bots_dir: str | None) -> tuple[list[str], bool]:
    """(argv, whether it is naparena's own Python seat) of a process seat."""
    command = seat.command
    return (list(command), False) if command else (serve_command(seat, bots_dir), True)


def seat_mounts(seat: SeatRecord, bots_dir: str | None) -> Mounts:
    """What a sandboxed seat sees besides its command's footprint: (files, dirs, hidden).
    A Python bot looks for drop-ins in bots_dir: there, it finds only its own file."""
    dirs = (str(Path(bots_dir).resolve()),) if bots_dir and not seat.command else ()
    return seat.files, dirs, seat.hidden


def _spawn(argv: list[str], python: bool, params: dict[str, Any], confinement: Confinement,
           tag: str = "spare seat", mounts: Mounts = ((), (), ())) -> tuple[Channel | None, str | None]:
    """A new seat process, sent its hello; or (None, why it could not start)."""
    try:
        channel = Channel(argv, confinement, python=python, tag=tag, mounts=mounts)
    except _Broken as e:
        return None, e.reason
    try:
        channel.send(protocol.hello(params, frames=python), time.monotonic() + confinement.start_timeout)
    except _Broken as e:
        channel.abandon()
        return None, e.reason
    return channel, None


PARAM_REFUSED = "the bot does not accept parameter"


def check_params(hello: dict[str, Any], params: dict[str, Any]) -> None:
    """A bot accepts exactly the params its hello lists: a hello without `params` lists
    none, as `"params": {}` does, so a tournament that gives it any is refused."""
    accepted = hello.get("params") or {}
    unknown = [k for k in params if k not in accepted]
    if unknown:
        listed = ", ".join(sorted(accepted)) or "none"
        raise ProtocolError(f"{PARAM_REFUSED} '{unknown[0]}'; it accepts: {listed}")


_PATH = re.compile(r"""(/[^\s:'"`,;()\[\]<>]+)""")


def sandbox_hint(reason: str, stderr: Iterable[str], shown: list[str], hidden: Iterable[str] = (),
                 refused: Iterable[tuple[str, str]] = ()) -> str | None:
    """One line when a sandboxed seat failed for want of a file: a path its stderr names
    that exists on this machine but not in its sandbox, a path the bot's own files named
    that the sandbox would not show, or exit status 126/127 (a program it could not
    run); None when none is the case. It never advises showing a place of the run."""
    places = Places.of(tuple(hidden))
    inside = [p.rstrip("/") for p in shown]

    def not_shown(path: str) -> bool:
        return not (in_system(path) or any(path == p or path.startswith(p + "/") for p in inside))

    linked = [(p.rstrip("/"), why) for p, why in refused if why.startswith(FOLDER_LINKED)]
    for line in stderr:
        for written in _PATH.findall(line):
            path = written.rstrip(".")
            if not os.path.exists(path):
                continue
            folder = next(((p, why) for p, why in linked if path == p or path.startswith(p + "/")), None)
            if folder is not None:
                return f"the seat sandbox hides {path}: {folder[1]}"
            if places.relation(path) is not None:
                return (f"the seat sandbox hides {path}: a place of the run or another bot's, which no seat "
                        "may see")
            if not_shown(path) and (home := _private(path)) is not None:
                return (f"the seat sandbox hides {path}, a hidden file of the home folder {home}; a hint never "
                        "advises showing one (the bot's own output named it)")
            if not_shown(path) and _advisable(path, places):
                return (f"the seat sandbox hides {path}, which exists on this machine: show it with "
                        f'files = ["{_door(path)}"] in the bot\'s [[bots]] entry, or set [seats] sandbox = "off"')
    wanted = [(p, why) for p, why in refused if os.path.exists(p) and _advisable(p, places)
              and not why.startswith(FOLDER_LINKED)]
    if wanted and _FAILED.search(reason):
        path, why = wanted[0]
        return (f"the seat sandbox did not show {path} ({why}); if the bot needs it, show it with "
                f'files = ["{path}"] in the bot\'s [[bots]] entry')
    code = re.search(r"exited with code (\d+)", reason)
    if code and code.group(1) in ("126", "127"):
        return (f"exit code {code.group(1)} in the seat sandbox: a program or library the bot runs is not "
                'in it; name it in files = [...] in the bot\'s [[bots]] entry, or set [seats] sandbox = "off"')
    return None


_FAILED = re.compile(r"exited with code|killed by|closed its output|protocol|time-out")


def _advisable(path: str, places: Places) -> bool:
    """Whether a hint may advise showing `path`: not a place of the run or another bot's,
    not /, /etc or a home folder (nor a folder holding one), nor a hidden file of one."""
    real = os.path.realpath(path)
    return (places.relation(real) is None and real not in ("/", "/etc") and not real.startswith("/etc/")
            and not any(h == real or h.startswith(real.rstrip("/") + "/") for h in homes())
            and _private(path) is None)


def _private(path: str) -> str | None:
    """The home folder `path` is a hidden file or folder of (~/.ssh/id_ed25519, ~/.aws),
    unless it lies in a runtime installation there (~/.pyenv/versions/3.12.1): a bot's
    output names what it likes, and a hint is the organizer's to follow."""
    real = os.path.realpath(path)
    for home in homes():
        if real.startswith(home.rstrip("/") + "/"):
            hidden = any(part.startswith(".") for part in os.path.relpath(real, home).split("/"))
            if hidden and runtime_installation(real) is None:
                return home
    return None


def _door(path: str) -> str:
    """What to show for a hidden `path`: the runtime installation it lies in (a symlink
    or a file in one needs the whole), else the path itself."""
    found = runtime_installation(os.path.realpath(path))
    return found[0] if found is not None else path
