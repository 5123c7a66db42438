"""The seat sandbox: bubblewrap (`bwrap`) namespaces around every seat process.

A sandboxed seat has its own user, mount, PID, IPC, network, UTS and cgroup namespaces;
it sees the system directories read-only, its own files read-only (`bot_files` finds
them: its folder, its runtime, its `files`), and private in-memory folders of a bounded
size (fresh for every match) as its home, working directory, /tmp and /dev/shm. It
cannot see the run directory, the tournament file, other bots' files (masked even inside
its own folder), other processes or the network, and every process it starts dies with
it (its PID namespace ends). Its cgroups (`cgroups.py`) bound it as a whole.
"""

from __future__ import annotations

import collections
import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from naparena.arena.match.bot_files import SYSTEM, in_system
from naparena.arena.match.wall import Places, Refused, View
from naparena.arena.setup.settings import Sandbox
from naparena.errors import RunError

#: What `auto` and `required` resolve to where bubblewrap works, as the manifest records it.
BWRAP = Sandbox.BWRAP
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)"
UNGUARDED = ("seat processes run unsandboxed: a bot can read the run directory (earlier rotations' "
             "deals), the tournament file and other bots' files, reach the network, signal other "
             "processes and leave processes behind")

_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
        "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/ssl/certs")


def unavailable() -> str | None:
    """Why the bubblewrap sandbox cannot run here (None if it can), asked once a process."""
    return _probe(shutil.which("bwrap"))


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str | None) -> str | None:
    if bwrap is None:
        return "bwrap (bubblewrap) is not on PATH"
    try:
        wrapped = wrap(["true"], View.of([]), home=None)
    except OSError as e:
        return f"bwrap cannot start: {e}"
    try:
        done = subprocess.run(wrapped.argv, capture_output=True, timeout=30, check=False, pass_fds=wrapped.fds)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap cannot start: {e}"
    finally:
        wrapped.started()
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        # The usual cause for a normal user: unprivileged user namespaces switched off.
        return f"bwrap fails here: {said[-1] if said else f'exit code {done.returncode}'}"
    return None


def resolve(mode: Sandbox | tuple[str, ...]) -> tuple[Sandbox | tuple[str, ...], str | None]:
    """The mode a run uses for `mode` as written (BWRAP, OFF or the argv prefix), and the
    warning to give once (or None). `required` without bubblewrap is a `RunError` (exit 2)."""
    if isinstance(mode, tuple) or mode == Sandbox.OFF:
        return mode, None
    why = unavailable()
    if why is None:
        return Sandbox.BWRAP, None
    if mode == Sandbox.AUTO:
        return Sandbox.OFF, f"no seat sandbox ({why}): {UNGUARDED}; {INSTALL_HINT}"
    raise RunError(f"sandbox = \"{mode}\" but {why}; {INSTALL_HINT}, or set [seats] sandbox = \"off\"")


def require() -> None:
    """On a worker about to start sandboxed seats: one clear error if it cannot."""
    why = unavailable()
    if why is not None:
        raise RunError(f"this worker cannot sandbox seat processes: {why}; {INSTALL_HINT}")


#: Where a sandboxed seat's stdout is, inside: a FIFO only the bot holds open, so a bot
#: that closes its stdout is seen at once (bubblewrap keeps the pipes it was given open).
SEAT_STDOUT = "/run/seat/stdout"


#: Made read-only once the seat's view is drawn: only its home, /tmp and /dev/shm take writes.
READ_ONLY: tuple[str, ...] = ("--remount-ro", "/dev", "--remount-ro", "/")


@dataclass(frozen=True)
class Wrapped:
    """A command as bubblewrap starts it: `argv` (bwrap's options travel in a memory
    file, `--args FD`, so nothing inside the sandbox reads them from /proc/1/cmdline),
    and `fds`, the descriptors the child must inherit (that file and the view's). Call
    `started()` in the parent once the child runs."""

    argv: list[str]
    fds: tuple[int, ...]
    options: int = -1

    def started(self) -> None:
        if self.options >= 0:
            os.close(self.options)


def wrap(argv: list[str], shown: View, home: str | None, disk_mb: int = 0, stdout: str | None = None,
         caps: tuple[str, ...] = ()) -> Wrapped:
    """`argv` inside bubblewrap, the one place a seat's sandbox is drawn: the system
    folders and the view `shown` (the organizer's paths, opened and checked once, the
    run's places carved out) read-only; `/`, `/run` and `/dev` read-only too; `home` (if
    given) a private folder and the working directory; home, /tmp and /dev/shm the only
    writable places, in-memory folders of at most `disk_mb` MB each (no cap at 0);
    `stdout`, a FIFO, becomes the bot's stdout. A function of its arguments alone, so a
    process that starts seats itself (a fork server) wraps them the same way; `caps`, the
    capabilities (in the sandbox's own user namespace) a seat server keeps for its first
    steps alone (`naparena.bots.warm`), before any of a bot's code runs."""
    size = ["--size", str(disk_mb << 20)] if disk_mb else []
    options = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
               *(a for cap in caps for a in ("--cap-add", cap)), "--hostname", "seat",
               *system_view().args(),
               "--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/dev/shm", *size, "--tmpfs", "/tmp",
               *shown.args()]
    if home is not None:
        options += [*size, "--tmpfs", home, "--chdir", home]
    tail = ["--", *argv]
    if stdout is not None:
        options += ["--ro-bind", stdout, SEAT_STDOUT]
        tail = ["--", "/bin/sh", "-c", f'exec "$@" >{SEAT_STDOUT}', "seat", *argv]
    options += list(READ_ONLY)
    fd = os.memfd_create("bwrap-options", os.MFD_CLOEXEC)
    try:
        os.write(fd, b"".join(o.encode() + b"\0" for o in options))
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return Wrapped(["bwrap", "--args", str(fd), *tail], (fd, *system_view().fds, *shown.fds), fd)


@functools.lru_cache(maxsize=1)
def system_view() -> View:
    """The system folders and the loader's /etc files, opened once a process (never
    carved: a run place under /usr is refused by the seat's own view)."""
    return View.of([*SYSTEM, *_ETC], places=Places())


@dataclass(frozen=True)
class Shown:
    """What a seat is shown besides the system: `paths` resolved when its view is
    opened (the organizer's, for a Python seat), `exact` real paths with the `links` on
    the way to them, as an external bot's footprint checked them."""

    paths: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    refused: tuple[tuple[str, str], ...] = ()  # what the bot's own files named but may not be shown, and why

    @property
    def named(self) -> list[str]:
        """Every path shown, as named and as resolved."""
        return [*self.paths, *self.exact, *(where for where, _ in self.links)]


_VIEWS: collections.OrderedDict[tuple[Shown, tuple[str, ...], tuple[str, ...]], View] = collections.OrderedDict()
_KEPT_VIEWS = 32  # seats' views kept open in one process (each holds a few descriptors)


def view_of(shown: Shown, empty: tuple[str, ...] = (), hidden: tuple[str, ...] = ()) -> View:
    """A seat's view, opened once a process for the same paths (a worker starts the same
    bots match after match); `wall.Refused` if one of `shown` may not be shown."""
    key = (shown, empty, hidden)
    view = _VIEWS.get(key)
    if view is None:
        for place in hidden:
            if in_system(place):
                raise Refused(place, "is a place of the run in the system folders every seat sees: keep it elsewhere")
        view = _VIEWS[key] = View.of(shown.paths, empty, hidden, exact=shown.exact, links=shown.links)
        while len(_VIEWS) > _KEPT_VIEWS:
            _VIEWS.popitem(last=False)[1].close()
    else:
        _VIEWS.move_to_end(key)
    return view


def module_files(cls: type) -> list[str]:
    """A Python bot's own code: its module's file (a package's whole folder) and, for a
    drop-in, the folder's `_*.py` helpers (drop-ins share them); never other bots' files."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if not path:
        return []
    file = Path(path).resolve()
    if file.name == "__init__.py":
        return [str(file.parent)]
    return [str(file), *(str(p) for p in sorted(file.parent.glob("_*.py")) if p.name != "__init__.py")]


def python_files() -> list[str]:
    """What an isolated Python bot needs besides its own module: the interpreter's
    prefixes (a virtual environment's packages), the folders of PYTHONPATH, and naparena's
    package directory alone, never the checkout it may sit in (a checkout holds logs/
    beside it)."""
    package = str(Path(__file__).resolve().parents[2])
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    searched = [p for p in search_path() if os.path.exists(p) and not in_system(p)]
    return [p for p in sorted(prefixes) if not in_system(p)] + searched + [package]


def search_path() -> list[str]:
    """This process's PYTHONPATH, each folder absolute. Where naparena (or a bot's own
    library) was found that way, a Python seat needs the same path: its environment is
    scrubbed, so it is given the folders again rather than inheriting the variable."""
    return [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
