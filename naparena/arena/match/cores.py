"""One core per match: a match process and its seat processes share the core it runs on.

A decision is a ping-pong over pipes: the match writes a request and waits, the seat
wakes, answers and waits. On different cores each wake-up crosses cores (an
inter-processor interrupt, and in a virtual machine an exit to the hypervisor); on one
core it is a plain context switch, several times cheaper. Nothing is lost: a match is
sequential, so its seats never run at the same time as each other or as the match.

Linux only (`sched_setaffinity`); elsewhere, or with one core allowed, nothing changes.
`[seats] cores = "any"` turns it off, for a bot that runs threads of its own.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Callable, Iterable, Iterator


def _getcpu() -> Callable[[], int] | None:
    try:
        getcpu: Callable[[], int] = ctypes.CDLL(None, use_errno=True).sched_getcpu
        return getcpu
    except (OSError, AttributeError):
        return None


_sched_getcpu = _getcpu()


@contextlib.contextmanager
def sharing_core(pids: Iterable[int], mode: str = "match", elsewhere: Iterable[int] = (),
                 holds: Iterable[Callable[[set[int]], None]] = (),
                 spare_holds: Iterable[Callable[[set[int]], None]] = ()) -> Iterator[None]:
    """Within the block, the calling thread and every process of the trees rooted at
    `pids` (each of its threads) run on the core the thread is on now; the thread's own
    mask comes back after. The seats are not unpinned: they end with their match. The
    trees rooted at `elsewhere` (the next match's seats, starting up) keep off that core:
    a taken spare is pinned to its own match's core then. `holds` (and `spare_holds`)
    bind those cores where a seat's cpuset can: the seat cannot widen them itself."""
    roots, others = list(pids), list(elsewhere)
    allowed = _allowed()
    cpu = _sched_getcpu() if _sched_getcpu is not None else -1
    if mode != "match" or not roots or allowed is None or len(allowed) < 2 or cpu not in allowed:
        yield
        return
    os.sched_setaffinity(0, {cpu})
    try:
        for hold in holds:  # the cpusets first: a seat's affinity must fit in its cpuset
            hold({cpu})
        for hold in spare_holds:
            hold(allowed - {cpu})
        for pid in _tree(roots):
            _pin_process(pid, {cpu})
        for pid in _tree(others):
            _pin_process(pid, allowed - {cpu})
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def _allowed() -> set[int] | None:
    try:
        return os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return None


def _tree(roots: list[int]) -> list[int]:
    """`roots` and all their descendants (a seat may be bubblewrap's, whose bot is a
    grandchild; a spare's bot may have forked), found from the roots down through each
    thread's `children` in /proc: reading every process's parent instead cost a match
    10 ms on a machine running a few hundred processes."""
    found, todo = [], list(roots)
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone meanwhile
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                    todo.extend(map(int, f.read().split()))
            except FileNotFoundError:
                if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                    continue  # the thread ended
                return _tree_from(_children(), roots)  # a kernel without the file
            except OSError:
                continue
    return found


def _children() -> dict[int, list[int]]:
    """Every process's children, from each one's parent in /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        parent = int(stat[stat.rindex(b")") + 2:].split(None, 2)[1])
        children.setdefault(parent, []).append(int(name))
    return children


def _tree_from(children: dict[int, list[int]], roots: list[int]) -> list[int]:
    """`roots` and all their descendants."""
    found, todo = [], list(roots)
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _pin_process(pid: int, cpus: set[int]) -> None:
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in threads:
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass  # exited, or not ours to place: it runs where the kernel puts it
