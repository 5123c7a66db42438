"""The seat sandbox: bubblewrap (`bwrap`) namespaces around every seat process.

A sandboxed seat has its own user, mount, PID, IPC, network, UTS and cgroup namespaces;
it sees the system directories read-only, its own files read-only, and one private
writable directory (fresh for every match) as its home, temporary and working directory.
It cannot see the run directory, the tournament file, other bots' files, other processes
or the network, and every process it starts dies with it (its PID namespace ends).
"""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from naparena.errors import RunError

#: What `auto` and `required` resolve to, as the manifest records it.
BWRAP = "bwrap"
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)"
UNGUARDED = ("seat processes run unsandboxed: a bot can read the run directory (earlier rotations' "
             "deals), the tournament file and other bots' files, reach the network, signal other "
             "processes and leave processes behind")

# The system, read-only: what interpreters and compiled bots need to start.
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
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


def resolve(mode: str | tuple[str, ...]) -> tuple[str | tuple[str, ...], str | None]:
    """The mode a run uses for `mode` as written, and the warning to give once (or None).
    `required` without bubblewrap is a `RunError` (exit 2)."""
    if isinstance(mode, tuple) or mode == "off":
        return mode, None
    why = unavailable()
    if why is None:
        return BWRAP, None
    if mode == "auto":
        return "off", f"no seat sandbox ({why}): {UNGUARDED}; {INSTALL_HINT}"
    raise RunError(f"sandbox = \"{mode}\" but {why}; {INSTALL_HINT}, or set [seats] sandbox = \"off\"")


def require() -> None:
    """On a worker about to start sandboxed seats: one clear error if it cannot."""
    why = unavailable()
    if why is not None:
        raise RunError(f"this worker cannot sandbox seat processes: {why}; {INSTALL_HINT}")


def wrap(argv: list[str], home: str | None, files: tuple[str, ...] | list[str],
         dirs: tuple[str, ...] | list[str] = ()) -> list[str]:
    """`argv` inside bubblewrap: the system read-only, `files` read-only at their own
    paths, `dirs` empty (a folder the command names but must not see into), `home` (if
    given) the only writable directory and the working directory."""
    out = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--hostname", "seat"]
    for path in _SYSTEM:
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            out += ["--ro-bind", path, path]
    for path in _ETC:
        out += ["--ro-bind-try", path, path]
    out += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in dirs:
        out += ["--dir", path]
    for path in dict.fromkeys(files):
        out += ["--ro-bind", path, path]
    if home is not None:
        out += ["--bind", home, home, "--chdir", home]
    return out + ["--"] + argv


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
    prefixes (a virtual environment's packages) and naparena's package directory alone,
    never the checkout it may sit in (a checkout holds logs/ beside it)."""
    package = str(Path(__file__).resolve().parents[2])
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    return [p for p in sorted(prefixes) if not _in_system(p)] + [package]


def command_files(argv: list[str]) -> list[str]:
    """An external command's own files: the program found on PATH when it lies outside the
    system directories, and every argument that names an existing file or folder, each
    bound alone (a script's folder is not bound: it may hold the tournament file)."""
    found = []
    program = shutil.which(argv[0]) if argv else None
    if program and not _in_system(program):
        found.append(os.path.abspath(program))
    found += [os.path.abspath(a) for a in argv[1:] if os.path.isabs(a) and os.path.exists(a)]
    return found


def _in_system(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real == d or real.startswith(d + "/") for d in ("/usr", "/bin", "/lib", "/lib64"))


# --- how many tasks a seat may run --------------------------------------------------

#: The most tasks (processes and threads) one sandboxed seat runs at once, where this
#: machine lets naparena make a pids cgroup (root, with cgroup v1's pids hierarchy): a
#: fork bomb stops there instead of filling the machine's process table.
SEAT_TASKS = 256
_PIDS = "/sys/fs/cgroup/pids"
_numbers = itertools.count()
_leftover: list[str] = []  # cgroups still busy when their seat ended: removed at exit


@functools.lru_cache(maxsize=1)
def tasks_limited() -> bool:
    """Whether seats get a pids cgroup here (a writable v1 pids hierarchy)."""
    return os.path.isfile(os.path.join(_PIDS, "cgroup.procs")) and os.access(_PIDS, os.W_OK)


class TaskLimit:
    """One seat process's own pids cgroup, joined between fork and exec; nothing where
    `tasks_limited()` is false or the cgroup cannot be made (the seat still starts)."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.fd: int | None = None
        if not tasks_limited():
            return
        _leftover[:] = [p for p in _leftover if not _removed(p, tries=1)]  # emptied since
        path = os.path.join(_PIDS, f"naparena-{os.getpid()}-{next(_numbers)}")
        try:
            os.mkdir(path)
            self.path = path
            with open(os.path.join(path, "pids.max"), "w") as f:
                f.write(str(SEAT_TASKS))
            self.fd = os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY)
        except OSError:
            self.release()

    def join(self) -> None:
        """In the child, before exec: only a write, nothing that could take a lock."""
        if self.fd is not None:
            try:
                os.write(self.fd, b"%d" % os.getpid())
            except OSError:
                pass

    def started(self) -> None:
        """In the parent, once the child runs."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def release(self) -> None:
        """Remove the cgroup once its tasks are gone (the seat's PID namespace ends them
        just after its first process dies); a moment later at the run's exit if not yet."""
        self.started()
        path, self.path = self.path, None
        if path is not None:
            _kill_tasks(path)
        if path is not None and not _removed(path, tries=500):  # 5 s: hundreds of tasks end slowly on a busy core
            if not _leftover:
                atexit.register(_remove_leftovers)
            _leftover.append(path)


def _kill_tasks(path: str) -> None:
    """Any task still in the seat's cgroup (its namespace's end is asynchronous): all ours."""
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            pids = [int(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _removed(path: str, tries: int) -> bool:
    for _ in range(tries):
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.01)
    return False


def _remove_leftovers() -> None:
    for path in _leftover:
        _removed(path, tries=100)
