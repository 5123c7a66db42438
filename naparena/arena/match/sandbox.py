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

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from naparena.arena.match.bot_files import SYSTEM, in_system
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
    argv = wrap(["true"], home=None, files=())
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap cannot start: {e}"
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


def wrap(argv: list[str], home: str | None, files: tuple[str, ...] | list[str],
         dirs: tuple[str, ...] | list[str] = (), hidden: tuple[str, ...] | list[str] = (),
         disk_mb: int = 0, stdout: str | None = None) -> list[str]:
    """`argv` inside bubblewrap: the system read-only, `files` read-only at their own
    paths, `dirs` empty (a folder the command names but must not see into), `hidden`
    masked wherever the mounts would show them, `home` (if given) a private writable
    folder and the working directory. Home, /tmp and /dev/shm are in-memory folders of at
    most `disk_mb` MB each (no cap at 0); `stdout`, a FIFO, becomes the bot's stdout."""
    size = ["--size", str(disk_mb << 20)] if disk_mb else []
    out = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--hostname", "seat"]
    for path in SYSTEM:
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            out += ["--ro-bind", path, path]
    for path in _ETC:
        out += ["--ro-bind-try", path, path]
    out += ["--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/dev/shm", *size, "--tmpfs", "/tmp"]
    for path in dirs:
        out += ["--dir", path]
    shown = _outermost(files)
    for path in shown:
        out += ["--symlink", os.readlink(path), path] if os.path.islink(path) else ["--ro-bind", path, path]
    for path in _masked(hidden, shown):
        out += ["--tmpfs", path, "--remount-ro", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
    if home is not None:
        out += [*size, "--tmpfs", home, "--chdir", home]
    if stdout is not None:
        out += ["--ro-bind", stdout, SEAT_STDOUT, "--", "/bin/sh", "-c", f'exec "$@" >{SEAT_STDOUT}', "seat"]
    else:
        out.append("--")
    return out + argv


def _outermost(paths: tuple[str, ...] | list[str]) -> list[str]:
    """Each path once, a folder before what lies in it, and none inside a folder already
    shown (a symlink there is already a symlink)."""
    out: list[str] = []
    for path in sorted(dict.fromkeys(paths), key=lambda p: (p.count("/"), p)):
        if not any(path.startswith(folder.rstrip("/") + "/") for folder in out):
            out.append(path)
    return out


def _masked(hidden: tuple[str, ...] | list[str], shown: list[str]) -> list[str]:
    """The hidden paths the mounts would show (inside a shown folder), outermost first."""
    inside = [p for p in dict.fromkeys(hidden)
              if os.path.exists(p) and any(p.startswith(f.rstrip("/") + "/") for f in shown)]
    return _outermost(inside)


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
