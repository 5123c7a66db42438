"""A warm seat: one server process per bot imports the seat runtime and the bot once, then
forks a fresh seat for every match that asks (the match's side: `arena/match/warm.py`).

The server never sees a match. It reads fork requests on its control socket, each
carrying the new seat's pipes and, sandboxed, its cgroups; it forks, and the child makes
itself a seat as the cold start would have made it, before any of the bot's play runs:

- its own session, the seat's rlimits, its own cgroups (joined through descriptors the
  match opened), no descriptor of the server's but read-only files, each opened afresh
  so that no file offset is shared;
- sandboxed (the server runs inside bubblewrap, under the seat's own mount rules), new
  user, mount, PID, network, IPC, UTS and cgroup namespaces: fresh in-memory home, /tmp
  and /dev/shm of `disk_mb` (what the server wrote there while importing copied in, as a
  cold start would have it), a fresh /dev/pts, everything else it sees read-only, its
  own /proc, loopback up, every capability dropped; a first process (PID 1, as
  bubblewrap's) waits for the bot (PID 2) and says how it ended;
- Python's own state as a cold start has it: `random` reseeded (Python does it at every
  fork), numpy's global generator reseeded, `tempfile`'s folder read again, `sys.argv`
  a served seat's.

A bot's module is imported here as every worker's plug-in registry already imports it,
so the server adds no trust; what runs after the fork (the bot's play) is confined as a
cold seat is, and cannot reach the server, its siblings or another match.
`docs/explanation/performance.md` and `docs/explanation/sandbox.md` say why this design.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import resource
import select
import signal
import socket
import stat
import struct
import sys
import threading
from typing import Any, BinaryIO, Protocol

# Linux's numbers, as <sched.h>, <sys/mount.h>, <linux/capability.h> and <sys/prctl.h> give them.
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_RELATIME, MS_STRICTATIME = 1024, 2048, 4096, 16384, 1 << 21, 1 << 24
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAP_VERSION_3 = 0x20080522

#: The seat's private folders besides its home, fresh for every seat.
PRIVATE = ("/tmp", "/dev/shm")
#: What bubblewrap covers read-only in the /proc it mounts, where writable: so does a seat.
_PROC_COVERED = ("sys", "sysrq-trigger", "irq", "bus")
_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
          "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME}

_libc = ctypes.CDLL(None, use_errno=True)
class Runtime(Protocol):
    """The seat runtime (`naparena.bots.serve`) as the server uses it. The runtime starts
    the server and hands itself in, so the server imports nothing of it back: one way."""

    __file__: str | None  # a module's, as Python types it

    def seat_args(self, args: list[str]) -> tuple[str, str | None, str, str | None] | None: ...

    def resolve(self, name: str, entry: str | None, version: str, bots_dir: str | None) -> Any: ...

    def play(self, bot: Any, params: dict[str, Any] | None, stdin: BinaryIO, out_fd: int) -> int: ...

    def _protocol_stdout(self) -> int: ...

    def exit_now(self, code: int) -> None: ...


_SERVER_HOME = ""  # the server's own home: what the bot's import wrote there, each seat finds in its own


class _Refused(Exception):
    """This server cannot fork seats as cold ones would be; the text says why."""


# --- the server -------------------------------------------------------------------------

def main(serve: Runtime, argv: list[str] | None = None) -> int:
    """The server, started with a cold seat's own arguments (`python -m naparena.bots.serve
    BOT ...`, so that a seat's /proc/self/cmdline and sys.argv are a cold seat's) and its
    control socket as stdin, on which the match first says "IDS PRELOAD" (IDS: "off"
    unsandboxed, else a cold seat's user and group ids inside, as "UID:GID"; PRELOAD:
    modules, comma-separated, or "-"); then serve fork requests until the socket closes."""
    global _SERVER_HOME
    _SERVER_HOME = os.environ.get("HOME", "")
    seat_args = sys.argv[1:] if argv is None else argv
    control = socket.socket(fileno=0)
    settings = control.recv(4096).decode().split(" ")
    if len(settings) != 2:
        return 2  # not the match's settings: no seats from here
    ids, preload = settings
    sandboxed = ids != "off"
    seat_ids = tuple(int(n) for n in ids.split(":")) if sandboxed else (0, 0)
    try:
        if sandboxed:
            _own_proc()
            _own_user(seat_ids[0], seat_ids[1])
            _drop_capabilities()
            _SHARED[:] = _shared()
        for module in (m for m in preload.split(",") if m and preload != "-"):
            importlib.import_module(module)
        found = serve.seat_args(seat_args)
        if found is None:
            raise _Refused(f"not a served seat's arguments: {seat_args}")
        bot = serve.resolve(*found)
        _check_forkable()
    except Exception as e:  # the match starts this bot's seats cold
        control.send(b"cold " + f"{type(e).__name__}: {e}"[:300].encode())
        _refuse_forks(control)
        return 0
    gc.freeze()  # what the imports made stays put: a seat's collections need not touch it
    control.send(b"ready")
    _serve_forks(serve, control, bot, seat_ids if sandboxed else None, [serve.__file__ or "", *seat_args])
    return 0


def _serve_forks(serve: Runtime, control: socket.socket, bot: Any, seat_ids: tuple[int, ...] | None,
                 argv: list[str]) -> None:
    """Fork a seat for each request until the control socket closes. Unsandboxed, a seat
    is this process's child, watched through a pidfd, its end reported here; sandboxed,
    its PID 1 reports it (`_first_process`), and its first process is only reaped here."""
    ready = select.poll()
    ready.register(control, select.POLLIN)
    watched: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, the seat's status socket)
    polled: dict[int, socket.socket] = {}  # pid -> status, where pidfds are missing (valgrind's)
    while True:
        for pid, status in list(polled.items()):
            ended, how = os.waitpid(pid, os.WNOHANG)
            if ended:
                del polled[pid]
                _report(status, how, bwrap=False)
                status.close()
        for woke, _ in ready.poll(20 if polled else None):
            if woke in watched:
                pid, status = watched.pop(woke)
                ready.unregister(woke)
                os.close(woke)
                _report(status, os.waitpid(pid, 0)[1], bwrap=False)
                status.close()
                continue
            try:
                request, fds, _, _ = socket.recv_fds(control, 4096, 16)
            except InterruptedError:
                continue
            except OSError:
                return  # the match's end of the socket is gone
            if not request:
                return  # the match closed its end: no more seats
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _seat(serve, request, fds, control, bot, seat_ids, argv)
            if seat_ids is None and len(fds) > 3:
                status = socket.socket(fileno=os.dup(fds[3]))
                try:
                    pidfd = os.pidfd_open(pid)
                except OSError:
                    polled[pid] = status
                else:
                    watched[pidfd] = (pid, status)
                    ready.register(pidfd, select.POLLIN)
            for fd in fds:
                os.close(fd)
        if seat_ids is not None:
            _reap()


def _refuse_forks(control: socket.socket) -> None:
    """Read every request until the match closes the socket, forking none: a socket
    closed with requests unread would lose the match the reason just sent."""
    while True:
        try:
            request, fds, _, _ = socket.recv_fds(control, 4096, 16)
        except OSError:
            return
        for fd in fds:
            os.close(fd)
        if not request:
            return


def _check_forkable() -> None:
    """A fork keeps only the thread that forks: a bot whose import started threads of
    its own would lose them, and memory shared writable would join every seat to the
    server and to each other. Either way the seats start cold."""
    if threading.active_count() > 1:
        raise _Refused(f"its import left {threading.active_count() - 1} Python thread(s) running")
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split(maxsplit=5)
            if len(fields) > 1 and fields[1][1] == "w" and fields[1][3] == "s":
                raise _Refused(f"its import mapped shared writable memory: {line.strip()}")


def _reap() -> None:
    """The seats' first processes that have ended (each ends once its seat is set up)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# --- the seat, after the fork -------------------------------------------------------------

def _seat(serve: Runtime, request: bytes, fds: list[int], control: socket.socket, bot: Any,
          seat_ids: tuple[int, ...] | None, argv: list[str]) -> None:
    """In the forked child: become the seat (sandboxed: with `seat_ids` inside), play it,
    exit. Never returns."""
    status = socket.socket(fileno=fds[3]) if len(fds) > 3 else None
    try:
        control.close()
        wanted = _request(request)
        stdin, stdout, stderr, groups = fds[0], fds[1], fds[2], fds[4:]
        os.setsid()
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the server gone, its seats go too
        _own_descriptors(set(fds))
        for fd in groups:  # the seat's cgroups, before anything it starts
            os.write(fd, b"0")
            os.close(fd)
        for kind, value in wanted["limits"]:
            resource.setrlimit(kind, (value, value))
        home = wanted["home"]
        pipes = (stdin, stdout, stderr)
        if seat_ids is not None:
            _private_namespaces(home, wanted["disk_mb"], seat_ids)
            _first_process(status, pipes)
        else:
            _unsandboxed(home, status)
        assert status is not None
        status.close()
        _become_the_bot(stdin, stdout, stderr, home, argv)
        code = serve.play(bot, None, sys.stdin.buffer, serve._protocol_stdout())
    except BaseException as e:  # before the bot ran: the match starts this seat cold
        if status is not None:
            where = e.__traceback__
            while where is not None and where.tb_next is not None:
                where = where.tb_next
            line = f" (warm.py line {where.tb_lineno})" if where is not None else ""
            try:
                status.send(b"E" + f"{type(e).__name__}: {e}{line}"[:300].encode())
            except OSError:
                pass
        os._exit(127)
    serve.exit_now(code)


def _request(request: bytes) -> dict[str, Any]:
    wanted: dict[str, Any] = json.loads(request)
    return wanted


def _own_descriptors(keep: set[int]) -> None:
    """No descriptor of the server's reaches the seat but read-only files, each opened
    afresh (a shared one would share its offset: a channel between seats)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd < 3 or fd in keep:
            continue
        try:
            mode, flags = os.fstat(fd).st_mode, _flags(fd)
        except OSError:
            continue  # the listing's own descriptor, closed already
        if stat.S_ISREG(mode) and flags & os.O_ACCMODE == os.O_RDONLY:
            again = os.open(f"/proc/self/fd/{fd}", flags & ~(os.O_CREAT | os.O_TRUNC | os.O_EXCL))
            os.lseek(again, os.lseek(fd, 0, os.SEEK_CUR), os.SEEK_SET)
            os.dup2(again, fd, inheritable=os.get_inheritable(fd))
            os.close(again)
        else:
            os.close(fd)


def _flags(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_GETFL)


def _unsandboxed(home: str, status: socket.socket | None) -> None:
    """Unsandboxed, the forked process is the seat (its server reports its end), in a
    session of its own as a cold seat is, its home its own."""
    assert status is not None
    status.send(b"R")  # the match reads this process's id from the message
    os.environ["HOME"] = os.environ["TMPDIR"] = home
    if _SERVER_HOME and os.path.isdir(_SERVER_HOME):
        _fill(_SERVER_HOME, home)


def _watch(child: int, status: socket.socket, pipes: tuple[int, ...]) -> None:
    """As a seat's PID 1: wait for the bot, reap whatever else ends meanwhile, report the
    bot's end as bubblewrap's own exit code gives it (128 + a signal). Never returns."""
    for fd in pipes:  # none of the seat's pipes held open here: its end is seen at once
        os.close(fd)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in range(3):
        os.dup2(null, fd)
    while True:
        try:
            pid, how = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue
        if pid == child:
            code = _report(status, how, bwrap=True)
            os._exit(code & 0xFF)


def _report(status: socket.socket, how: int, bwrap: bool) -> int:
    """Tell the match how the bot ended: its exit code as `Popen.returncode` gives it, or
    sandboxed as bubblewrap's own exit code gives it (128 + the signal)."""
    code = os.waitstatus_to_exitcode(how)
    if bwrap and code < 0:
        code = 128 - code
    try:
        status.send(b"X" + struct.pack("<i", code))
    except OSError:
        pass
    return code


def _become_the_bot(stdin: int, stdout: int, stderr: int, home: str, argv: list[str]) -> None:
    """Its pipes as 0, 1 and 2, its home as the working folder, and Python's process-wide
    state as a fresh interpreter would have it after the same imports."""
    for fd, to in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, to)
    for fd in {stdin, stdout, stderr} - {0, 1, 2}:
        os.close(fd)
    os.chdir(home)
    sys.argv = list(argv)
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        tempfile.tempdir = None  # type: ignore[attr-defined]  # read from TMPDIR again at its next use
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()  # the global generator, seeded from the system as at its import


# --- sandboxed: namespaces of its own -----------------------------------------------------

def _own_proc() -> None:
    """The server's first act in bubblewrap, holding CAP_SYS_ADMIN there: a /proc of its
    own over bubblewrap's. Bubblewrap covers parts of its /proc read-only, and the kernel
    lets a user namespace mount a /proc (each seat needs one for its PID namespace) only
    where some /proc is visible whole."""
    _check(_libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")


#: The ids a sandboxed server runs under in its own user namespace where its seats'
#: are 0 (root's): any but 0.
SERVER_ID = 1000


def _own_user(uid: int, gid: int) -> None:
    """The server's second act in bubblewrap: a user namespace of its own, in which it
    holds no capability once `_drop_capabilities` is done, under ids other than root's.
    A seat's namespace may then map its ids (root's, where the organizer is root) to the
    server's without a capability: the kernel lets a namespace map its parent's root only
    for a process that could set file capabilities, as this one can, once, here."""
    inside_uid, inside_gid = uid or SERVER_ID, gid or SERVER_ID
    _check(_libc.unshare(CLONE_NEWUSER), "unshare the server's user namespace")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{inside_uid} {uid} 1"),
                       ("gid_map", f"{inside_gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def _drop_capabilities() -> None:
    """Every capability gone, for good, before anything of the bot's runs."""
    last = _last_capability()
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("Ii", _CAP_VERSION_3, 0)
    data = ctypes.create_string_buffer(24)  # two zeroed {effective, permitted, inheritable}
    _check(_libc.capset(ctypes.c_char_p(header), data), "capset")
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 63


def _private_namespaces(home: str, disk_mb: int, seat_ids: tuple[int, ...]) -> None:
    """New namespaces of every kind, the user and group ids a cold seat has inside
    (`seat_ids`, mapped to the server's: `_own_user`), fresh private folders, the rest
    read-only, loopback up. The next process forked is PID 1 of the new PID namespace."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
                         | CLONE_NEWUTS | CLONE_NEWCGROUP), "unshare")
    inside_uid, inside_gid = seat_ids
    for name, text in (("setgroups", "deny"), ("uid_map", f"{inside_uid} {uid} 1"),
                       ("gid_map", f"{inside_gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    # Everything it shares with the server read-only first: a remount by path takes the
    # uppermost mount there, and the fresh folders are mounted on top next.
    for path, flags in _SHARED:
        _check(_libc.mount(None, path, None, flags, None), f"read-only {path.decode()}")
    folders = sorted({home, *PRIVATE}, key=lambda f: f.count("/"))  # /tmp before a home inside it
    templates = [os.open(folder, os.O_RDONLY | os.O_DIRECTORY) for folder in folders]
    shown = _mounted_within(folders)
    size = f",size={disk_mb << 20}" if disk_mb else ""
    for folder in folders:
        os.makedirs(folder, exist_ok=True)  # a home inside /tmp: its mount point in the fresh /tmp
        _check(_libc.mount(b"tmpfs", folder.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
                           f"mode=0755{size}".encode()), f"mount {folder}")
    for folder, template in zip(folders, templates):
        inner = {g[len(folder) + 1:].split("/")[0] for g in folders if g.startswith(folder + "/")}
        _fill(f"/proc/self/fd/{template}", folder, inner, shown.get(folder, ()))
        for point in shown.get(folder, ()):
            _bind_again(f"/proc/self/fd/{template}{point[len(folder):]}", point)
        os.close(template)
    if os.path.isdir("/dev/pts"):
        _check(_libc.mount(b"devpts", b"/dev/pts", b"devpts", MS_NOSUID | MS_NOEXEC,
                           b"newinstance,ptmxmode=0666,mode=620"), "mount /dev/pts")
    _loopback_up()


#: The server's mounts a seat must see read-only, (path, remount flags): every writable one
#: but /proc (each seat mounts its own), listed once by the server (`_shared`).
_SHARED: list[tuple[bytes, int]] = []


def _shared() -> list[tuple[bytes, int]]:
    """The writable mounts this process sees but /proc's and device nodes', with the flags that remount each
    read-only keeping the others (a mount's own flags are locked in a seat's namespace)."""
    out = []
    for path, options, kind in _mounts():
        if kind != "proc" and "rw" in options and not _device(path):
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY
            for option in options:
                flags |= _FLAGS.get(option, 0)
            out.append((path.encode(), flags))
    return out


def _device(path: str) -> bool:
    """A device node bound on its own (/dev/null, /dev/urandom, ...): left writable, as a
    cold seat has it; what is written there is kept nowhere."""
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


def _mounts() -> list[tuple[str, list[str], str]]:
    """(where, options, filesystem) of every mount this process sees."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            where = fields[4]
            if "\\" in where:  # \040 for a space, etc.
                where = where.encode().decode("unicode_escape")
            out.append((where, fields[5].split(","), fields[fields.index("-") + 1]))
    return out


def _mounted_within(folders: list[str]) -> dict[str, tuple[str, ...]]:
    """For each private folder, the outermost mounts inside it but the other private
    folders: what the seat's view shows there (a runtime or a bot folder under /tmp, as
    bubblewrap binds it on the server's fresh /tmp). A seat gets each bound again, not
    copied: read-only as a cold seat sees it, and no bigger in memory for its size."""
    points = [where for where, _, _ in _mounts() if where not in folders]
    out = {}
    for folder in folders:
        inner = [g for g in folders if g.startswith(folder + "/")]  # filled on their own
        inside = sorted({p for p in points if p.startswith(folder + "/")
                         and not any(p.startswith(g + "/") for g in inner)})
        out[folder] = tuple(p for p in inside if not any(p.startswith(q + "/") for q in inside))
    return out


def _bind_again(source: str, target: str) -> None:
    """Mount what `source` (a mount beneath the covered private folder) is on `target` in
    the fresh one, recursively: its flags (read-only) come with it."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o600))
    _check(_libc.mount(source.encode(), target.encode(), None, MS_BIND | MS_REC, None), f"bind {target}")


def _fill(template: str, folder: str, skip: set[str] = frozenset(),  # type: ignore[assignment]
          mounted: tuple[str, ...] = ()) -> None:
    """Copy into `folder` what the server's own `template` folder holds but `skip` (the
    mount points of the other private folders) and the `mounted` paths (bound again
    instead): what the bot's import wrote there, as each cold start would find it
    (usually nothing)."""
    def unmounted(where: str, listed: list[str]) -> set[str]:
        inside = folder + where[len(template):]
        return {n for n in listed if os.path.join(inside, n) in mounted}

    listed = os.listdir(template) if template else []
    names = set(listed) - skip - unmounted(template, listed)
    if not names:
        return
    import shutil

    for name in sorted(names):
        source, target = os.path.join(template, name), os.path.join(folder, name)
        if os.path.isdir(source) and not os.path.islink(source):
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True, ignore=unmounted)
        else:
            shutil.copy2(source, target, follow_symlinks=False)


def _loopback_up() -> None:
    import fcntl

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s, 0x8913, request))[1]  # SIOCGIFFLAGS
        fcntl.ioctl(s, 0x8914, struct.pack("16sh", b"lo", flags | 1))  # SIOCSIFFLAGS, IFF_UP


def _first_process(status: socket.socket | None, pipes: tuple[int, ...]) -> None:
    """Fork PID 1 of the seat's namespace, as bubblewrap's: its own /proc, it says the seat
    is up (the match reads its id from the message), forks the bot and waits. Returns in
    the bot (PID 2); the others exit."""
    assert status is not None
    if os.fork() != 0:
        os._exit(0)  # the namespaces are made and PID 1 is running: this process is done
    _check(_libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")
    for name in _PROC_COVERED:
        path = f"/proc/{name}".encode()
        if os.access(path, os.W_OK):
            _check(_libc.mount(path, path, None, MS_BIND | MS_REC, None), f"cover /proc/{name}")
            _check(_libc.mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                               None), f"cover /proc/{name}")
    os.setsid()
    _libc.prctl(PR_SET_DUMPABLE, 0)  # the bot, its child, cannot trace it
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # PID 1: the bot's signals then do not reach it
    status.send(b"R")
    child = os.fork()
    if child != 0:
        _watch(child, status, pipes)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the bot's, as Python starts it
    _drop_capabilities()  # in PID 1's session and process group, as bubblewrap's bot is


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")

