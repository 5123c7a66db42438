"""A sandboxed seat's own control groups: its limits bound the seat as a whole.

Where this machine lets naparena make cgroups (root, with the cgroup v1 hierarchies
mounted under /sys/fs/cgroup, as on the machines this project runs its CI on), every
sandboxed seat process gets, below naparena's own cgroup in each hierarchy:

- `pids`: at most `SEAT_TASKS` tasks, so a fork bomb stops there;
- `memory`: `memory_mb` for all its processes together, its in-memory folders (home,
  /tmp, /dev/shm) included; going over it ends the seat at once (a crash, charged to it);
- `cpuset`: the match's core, which the seat cannot widen (`sched_setaffinity` outside
  its cpuset fails).

The seat's first process joins them between fork and exec; every process it starts is
born inside. Where a hierarchy cannot be used (no root, cgroup v2 without delegation,
another OS) that limit falls back as the README says: per-process rlimits for memory, an
advisory core, no task limit. `available()` says which hierarchies are in use.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import signal
import time

#: The most tasks (processes and threads) one sandboxed seat runs at once.
SEAT_TASKS = 256
_ROOT = "/sys/fs/cgroup"
_CONTROLLERS = ("pids", "memory", "cpuset")
_numbers = itertools.count()
_leftover: list[str] = []  # cgroups still busy when their seat ended: removed at exit


@functools.lru_cache(maxsize=1)
def available() -> dict[str, str]:
    """controller -> the folder (naparena's own cgroup) below which seats get theirs."""
    own: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, names, path = line.rstrip("\n").split(":", 2)
                for name in names.split(","):
                    own[name] = path
    except (OSError, ValueError):
        return {}
    found = {}
    for name in _CONTROLLERS:
        folder = os.path.join(_ROOT, name) + own.get(name, "/").rstrip("/")
        if name in own and os.path.isfile(os.path.join(folder, "cgroup.procs")) and os.access(folder, os.W_OK):
            found[name] = folder
    return found


def tasks_limited() -> bool:
    """Whether sandboxed seats get a pids cgroup here."""
    return "pids" in available()


class SeatGroups:
    """One seat process's cgroups, made before its start and removed after its end;
    nothing for a hierarchy that cannot be used (the seat still starts)."""

    def __init__(self, memory_mb: int) -> None:
        self.paths: dict[str, str] = {}
        self.fds: list[int] = []
        self.oom: int | None = None  # an eventfd the kernel signals when the seat runs out of memory
        self._oom_control: int | None = None
        self.memory_mb = memory_mb
        _leftover[:] = [p for p in _leftover if not _removed(p, tries=1)]  # emptied since
        name = f"naparena-{os.getpid()}-{next(_numbers)}"
        for controller, base in available().items():
            if controller == "memory" and not memory_mb:
                continue
            try:
                self._make(controller, os.path.join(base, name), base)
            except OSError:
                self._drop(controller)

    def _make(self, controller: str, path: str, parent: str) -> None:
        os.mkdir(path)
        self.paths[controller] = path
        if controller == "pids":
            _write(path, "pids.max", str(SEAT_TASKS))
        elif controller == "cpuset":
            for key in ("cpuset.cpus", "cpuset.mems"):
                with open(os.path.join(parent, key)) as f:
                    _write(path, key, f.read().strip())
        elif controller == "memory":
            _write(path, "memory.limit_in_bytes", str(self.memory_mb << 20))
            try:  # swap too, where swap is accounted: the limit is the seat's memory
                _write(path, "memory.memsw.limit_in_bytes", str(self.memory_mb << 20))
            except OSError:
                pass
            self.oom = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
            self._oom_control = os.open(os.path.join(path, "memory.oom_control"), os.O_RDONLY | os.O_CLOEXEC)
            _write(path, "cgroup.event_control", f"{self.oom} {self._oom_control}")
        self.fds.append(os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC))

    def _drop(self, controller: str) -> None:
        path = self.paths.pop(controller, None)
        if controller == "memory":
            self._close_oom()
        if path is not None:
            _removed(path, tries=1)

    @property
    def bounds_memory(self) -> bool:
        """Whether the seat's memory is bounded as a whole (else per process, by rlimit)."""
        return "memory" in self.paths

    def join(self) -> None:
        """In the child, before exec: only writes, nothing that could take a lock."""
        pid = b"%d" % os.getpid()
        for fd in self.fds:
            try:
                os.write(fd, pid)
            except OSError:
                pass

    def started(self) -> None:
        """In the parent, once the child runs."""
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def pin(self, cpus: set[int]) -> None:
        """Hold the seat to `cpus`: it cannot widen its own affinity past them."""
        path = self.paths.get("cpuset")
        if path is not None and cpus:
            try:
                _write(path, "cpuset.cpus", ",".join(map(str, sorted(cpus))))
            except OSError:
                pass

    def out_of_memory(self) -> bool:
        """Whether the kernel found the seat over its memory limit (reads the event)."""
        if self.oom is None:
            return False
        try:
            return os.eventfd_read(self.oom) > 0
        except (BlockingIOError, OSError):
            return False

    def release(self) -> None:
        """Remove the cgroups once their tasks are gone (the seat's PID namespace ends them
        just after its first process dies); a moment later at the run's exit if not yet."""
        self.started()
        self._close_oom()
        paths, self.paths = list(self.paths.values()), {}
        for path in paths:
            _kill_tasks(path)
        for path in paths:
            if not _removed(path, tries=500):  # 5 s: hundreds of tasks end slowly on a busy core
                if not _leftover:
                    atexit.register(_remove_leftovers)
                _leftover.append(path)

    def _close_oom(self) -> None:
        for fd in (self.oom, self._oom_control):
            if fd is not None:
                os.close(fd)
        self.oom = self._oom_control = None


def _write(folder: str, key: str, value: str) -> None:
    with open(os.path.join(folder, key), "w") as f:
        f.write(value)


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
