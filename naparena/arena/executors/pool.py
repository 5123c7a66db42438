"""Executors that run matches: a fork-based worker pool that survives dying workers, and
an in-process one for debugging. Both follow `concurrent.futures.Executor`, and both are
a session's `MatchExecutor` (`executor.py`): `play(fn, job, timing)` runs a match
watched by the timing it is handed.

Why not `ProcessPoolExecutor`: one worker killed by a bot (`os._exit`, a segfault, a
hang we must kill) breaks that pool for every pending match. Here only the future of
the match that was running fails, with `WorkerDied` saying which seat was deciding;
the worker is replaced and the pool goes on.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

from naparena.arena.executors.executor import PlayJob
from naparena.arena.match.job import Job
from naparena.arena.match.play import bind_slot
from naparena.arena.setup.settings import Timing
from naparena.errors import RunError
from naparena.table import watch as layout  # the watchdog slot's fields


class WorkerDied(Exception):
    """The worker running a task died; `where` is its slot: match, hand, seat, decision."""

    def __init__(self, reason: str, where: dict[str, int]):
        super().__init__(reason)
        self.reason, self.where = reason, where


class WorkerLost(WorkerDied):
    """The worker was lost to something outside any bot: killed, stopped or terminated from
    outside, or dead while no bot was running. Not a bot's fault: play the match again."""


# Signals that come from outside the worker (a person, a supervisor, the OOM killer);
# a bot's own crash shows as an exit code or SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL.
OUTSIDE_SIGNALS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT})
PR_SET_PDEATHSIG = 1


def _where(slot: Any) -> dict[str, int]:
    return {"match": slot[layout.MATCH], "hand": slot[layout.HAND], "seat": slot[layout.SEAT],
            "decision": slot[layout.DECISION]}


@dataclass
class _Task:
    """A task waiting or under way: its future and call, the `Timing` that watches it, and
    for a match (`play`) its (index, hands), which `in_play` reads progress against."""

    future: Future[Any]
    task_id: int
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    timing: Timing
    match: tuple[int, int] | None = None


def _tick(timeout: float) -> float:
    """How often a watchdog looks: often enough for `timeout`, at least every 0.25 s."""
    return max(0.02, min(timeout / 4, 0.25))


class _Watch:
    """Times the decision a slot shows by the `timing` of the task under way; says when
    to interrupt it and, if it may `kill`, when to give up on it."""

    def __init__(self, slot: Any, timing: Timing, kill: bool = True, stall: float | None = None):
        self.slot, self.timing, self.kill, self._stall = slot, timing, kill, stall
        self.ticket: tuple[int, int, int] | None = None
        self.since, self.signalled = 0.0, False
        self.place: tuple[int, ...] | None = None
        self.moved: float | None = None

    @property
    def stall(self) -> float:
        if not self.kill:
            return float("inf")
        return self._stall if self._stall is not None else self.timing.stall

    def check(self, now: float) -> str | None:
        slot = self.slot
        ticket = (slot[layout.MATCH], slot[layout.HAND], slot[layout.DECISION])
        place = (*ticket, slot[layout.SEAT])
        if place != self.place or self.moved is None:
            self.place, self.moved = place, now
        elif slot[layout.SEAT] < 0 and now - self.moved >= self.stall:
            # Between bot calls a match never waits this long: someone (an inline bot
            # with the run's own objects in reach) has tampered with the slot.
            return "stall"
        if slot[layout.SEAT] < 0 or ticket != self.ticket:
            self.ticket, self.since, self.signalled = ticket, now, False
            return None
        waited = now - self.since
        if self.kill and waited >= self.timing.hard:
            return "kill"
        if waited >= self.timing.timeout and not self.signalled:
            self.signalled = True
            slot[layout.KILL_HAND], slot[layout.KILL_DECISION] = ticket[1], ticket[2]
            slot[layout.KILLED] = 1
            return "interrupt"
        return None


def _die_with_parent(parent: int | None, parent_end: multiprocessing.connection.Connection | None) -> None:
    """Never outlive the parent (a `kill -9` of it must not leave workers behind).

    On Linux the kernel sends SIGKILL when the parent goes; everywhere, closing our copy
    of the parent's end of the pipe makes `recv` see EOF once the parent is gone, and a
    parent that died before all this shows as a new parent pid.
    """
    if parent is None or parent_end is None:
        return
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    parent_end.close()
    if os.getppid() != parent:
        os._exit(0)


def tie_to_creator() -> None:
    """A forkserver child's initializer: die with the process that made the pool (a Dask
    worker). A bot hanging in a child whose worker was killed would otherwise never be
    stopped, the watchdog having gone with the worker."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_die_with_creator, args=(parent.sentinel,), daemon=True).start()


def _die_with_creator(sentinel: int) -> None:
    # Signals are for the main thread, as in a local worker, which has no other thread:
    # the watchdog's interrupt must reach the bot's thread (or stay pending if the bot
    # blocks it) exactly as it would there.
    signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    multiprocessing.connection.wait([sentinel])
    os.kill(os.getpid(), signal.SIGKILL)


def _timer_went_off(signum: int, frame: object) -> None:
    """A bot's forgotten timer: nothing to do."""


def _worker_main(conn: multiprocessing.connection.Connection, slot: Any, initializer: Callable[..., Any] | None,
                 initargs: tuple[Any, ...], parent: int | None,
                 parent_end: multiprocessing.connection.Connection | None) -> None:
    # The parent's objects, forked along, are not this worker's garbage: kept out of its
    # collections, a full one here does not walk (and copy) the parent's whole heap, which
    # with a big parent (one that imported Dask: 55,000 objects) cost 48 ms CPU, not 12.
    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # forked blocked (`_Worker`): a pending one is dropped
    # The parent's SIGTERM handler (stop the run) means nothing here: a worker sent
    # SIGTERM just ends, and the parent replays its match.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # A timer a bot leaves armed must not end the worker between calls (default action:
    # terminate); a bot that installs its own handler is beyond what inline play can stop.
    # A handler, not SIG_IGN: a seat process started from here must get the default back,
    # and exec resets a handled signal but keeps an ignored one ignored.
    for timer in (signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF):
        signal.signal(timer, _timer_went_off)
    # What a bot prints goes to stderr, never into results on stdout (`--json`).
    sys.stdout.flush()
    os.dup2(2, 1)
    _die_with_parent(parent, parent_end)
    bind_slot(slot, worker=True)
    if initializer:
        initializer(*initargs)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if task is None:
            return
        task_id, fn, args = task
        slot[layout.SEAT] = -1
        try:
            out = (task_id, True, fn(*args))
        except RunError as e:  # the run's own verdict (a log it cannot write): pass it on
            out = (task_id, False, RunError(str(e)))
        except BaseException as e:  # report, never die of a task's error
            out = (task_id, False, RuntimeError(f"{type(e).__name__}: {e}"))
        conn.send(out)


class _Worker:
    def __init__(self, ctx: Any, slot: Any, initializer: Callable[..., Any] | None, initargs: tuple[Any, ...]):
        self.slot = slot
        self.conn, child = ctx.Pipe()
        # Only a forked child's parent is this process; a forkserver's child has the
        # server as its parent and is tied to its creator by the initializer instead.
        forked = ctx.get_start_method() == "fork"
        args = (child, slot, initializer, initargs, os.getpid() if forked else None,
                self.conn if forked else None)
        self.process = ctx.Process(target=_worker_main, args=args, daemon=True)
        # A Ctrl-C landing between the fork and the worker's ignoring it would interrupt
        # Python's own after-fork code in the child, which prints a traceback: the child
        # is forked with SIGINT blocked, and unblocks it once it is ignored.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        child.close()
        self.task: _Task | None = None


class ForkPool(Executor):
    """A fixed set of forked workers, reused for every task; a dead worker is replaced.
    A match (`play`) is watched by the `Timing` it is handed; any other task by `timing`."""

    def __init__(self, workers: int, timing: Timing = Timing(),
                 initializer: Callable[..., Any] | None = None, initargs: tuple[Any, ...] = (),
                 clock: Callable[[int], float] | None = None, context: str = "fork",
                 stall: float | None = None):
        """`clock(pid)` is the watchdog's time for a worker (default: wall time); tests
        give it the worker's CPU time, so a loaded machine cannot time out a quick bot.
        `context` is "forkserver" where the parent is itself a busy multi-threaded server
        (a Dask worker): a forked child would inherit its sockets and keep them open.
        `stall`, if given, replaces the timing's stall limit (tests)."""
        self._ctx = multiprocessing.get_context(context)
        self._clock = clock
        self._init = (initializer, initargs)
        self._timing = timing
        self._stall = stall
        self._pending: deque[_Task] = deque()
        self._lock = threading.Lock()
        self._closing = False
        self._next_id = 0
        self._wake_r, self._wake_w = os.pipe()
        self._workers = [self._spawn() for _ in range(workers)]
        self._watches = [_Watch(w.slot, timing, stall=stall) for w in self._workers]
        self._thread = threading.Thread(target=self._manage, name="naparena-pool", daemon=True)
        self._thread.start()

    @property
    def workers(self) -> int:
        return len(self._workers)

    @property
    def window(self) -> int:
        return max(2, self.workers * 3)

    @property
    def description(self) -> str | None:
        return None

    def expect(self, matches: int) -> None:
        """Every match goes out as it comes: nothing to size."""

    def flush(self) -> None:
        """Nothing is held back."""

    def in_play(self) -> dict[int, int] | None:
        """Hands finished so far in each match being played, read from the workers' slots
        (a slot names its match, so a worker between two matches shows no stale count)."""
        playing = {}
        for w in self._workers:
            match = w.task.match if w.task else None
            if match is not None and w.slot[layout.MATCH] == match[0]:
                playing[match[0]] = max(0, min(w.slot[layout.HAND], match[1]))
        return playing

    def _spawn(self) -> _Worker:
        slot = self._ctx.RawArray("q", layout.SLOT_SIZE)
        slot[layout.SEAT] = -1
        return _Worker(self._ctx, slot, *self._init)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """`fn(*args)` in a worker, watched by the pool's own `timing`."""
        if kwargs:
            raise TypeError("ForkPool.submit takes positional arguments only")
        return self._queue(fn, args, self._timing, None)

    def play(self, fn: PlayJob, job: Job, timing: Timing) -> Future[Any]:
        """`fn(job)` in a worker, watched by `timing`."""
        return self._queue(fn, (job,), timing, (job.index, job.hands))

    def _queue(self, fn: Callable[..., Any], args: tuple[Any, ...], timing: Timing,
               match: tuple[int, int] | None) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._closing:
                raise RuntimeError("cannot submit after shutdown")
            self._pending.append(_Task(future, self._next_id, fn, args, timing, match))
            self._next_id += 1
            self._wake()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closing = True
            if cancel_futures:
                while self._pending:
                    self._pending.popleft().future.cancel()
            self._wake()
        if wait:
            self._thread.join()
        else:
            self.terminate()

    def terminate(self) -> None:
        """Stop at once (Ctrl-C): kill the workers, fail what was running."""
        with self._lock:
            self._closing = True
            self._pending.clear()
        for w in self._workers:
            if w.process.is_alive():
                w.process.kill()
        with self._lock:
            self._wake()
        self._thread.join(timeout=5)

    def _wake(self) -> None:
        """Wake the manager thread. Called with the lock held: the manager closes the
        pipe under the same lock once it has seen `_closing`, so a byte is never written
        to a closed descriptor, nor to another file that took its number."""
        if self._wake_w >= 0:
            os.write(self._wake_w, b"x")

    # --- the manager thread -------------------------------------------------------

    def _manage(self) -> None:
        while True:
            self._dispatch()
            busy = [w for w in self._workers if w.task]
            tick = _tick(min((w.timing.timeout for w in self._watches), default=self._timing.timeout))
            with self._lock:
                if self._closing and not busy and not self._pending:
                    # Closed here, under the lock every writer holds (see `_wake`).
                    os.close(self._wake_w)
                    self._wake_w = -1
                    break
            handles = [self._wake_r] + [w.conn for w in busy] + [w.process.sentinel for w in busy]
            ready = multiprocessing.connection.wait(handles, timeout=tick)
            if self._wake_r in ready:
                os.read(self._wake_r, 4096)
            for i, w in enumerate(self._workers):
                if w.task and (w.conn in ready or w.process.sentinel in ready):
                    self._collect(i)
            self._watch(time.monotonic())
        for w in self._workers:
            try:
                w.conn.send(None)
            except OSError:
                pass
            w.process.join(timeout=5)
        os.close(self._wake_r)

    def _dispatch(self) -> None:
        for i, w in enumerate(self._workers):
            if w.task is not None:
                continue
            with self._lock:
                if not self._pending:
                    return
                task = self._pending.popleft()
            future = task.future
            if not future.running() and not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            w.task = task
            self._watches[i].timing = task.timing
            self._watches[i].moved = None  # an idle worker was not stalled: time it from now
            try:
                w.conn.send((task.task_id, task.fn, task.args))
            except OSError:  # the worker died while idle: replace it; the task goes first again
                w.task = None
                with self._lock:
                    self._pending.appendleft(task)
                self._fresh(i)

    def _fresh(self, i: int) -> None:
        """Put a new worker in place `i` (the old one is dead or being replaced)."""
        self._workers[i].conn.close()
        if not self._closing:
            self._workers[i] = self._spawn()
            self._watches[i] = _Watch(self._workers[i].slot, self._timing, stall=self._stall)

    def _collect(self, i: int) -> None:
        w = self._workers[i]
        assert w.task is not None, "collected only from a busy worker"
        future = w.task.future
        try:
            if w.conn.poll():
                _, ok, value = w.conn.recv()
                w.task = None
                future.set_result(value) if ok else future.set_exception(value)
                return
        except (EOFError, OSError):
            pass
        w.process.join(timeout=1)
        if w.process.is_alive():
            return
        code = w.process.exitcode
        outside = (code is not None and code < 0 and -code in OUTSIDE_SIGNALS) or w.slot[layout.SEAT] < 0
        self._replace(i, _death(code), WorkerLost if outside else WorkerDied)

    def _replace(self, i: int, reason: str, kind: type = WorkerDied) -> None:
        w = self._workers[i]
        assert w.task is not None, "only a busy worker's death fails a task"
        future, where = w.task.future, _where(w.slot)
        w.task = None
        self._fresh(i)
        future.set_exception(kind(reason, where))

    def _watch(self, now: float) -> None:
        for i, w in enumerate(self._workers):
            if not w.task:
                continue
            if _stopped(w.process.pid):
                # Stopped from outside (SIGSTOP, a debugger): its time is not the bot's.
                w.process.kill()
                w.process.join()
                self._replace(i, "lost: worker stopped from outside", WorkerLost)
                continue
            watch = self._watches[i]
            action = watch.check(self._clock(w.process.pid) if self._clock else now)
            if action == "interrupt":
                os.kill(w.process.pid, signal.SIGUSR1)
            elif action == "kill":
                w.process.kill()
                w.process.join()
                self._replace(i, f"hang: killed after {watch.timing.hard:g} s without an answer")
            elif action == "stall":
                w.process.kill()
                w.process.join()
                future = w.task.future
                where = _where(w.slot)
                w.task = None
                self._fresh(i)
                future.set_exception(RunError(
                    f"match {where['match']}: no progress for {watch.stall:g} s and no bot call under"
                    " way (a bot in the match process tampering with naparena's watchdog?); the"
                    " finished matches are kept; isolate the match's bots (isolation = \"process\")"))


def _stopped(pid: int) -> bool:
    """Is the process stopped (state T)? Read from /proc, where there is one: a wait()
    here would race with multiprocessing's own reaping of the worker."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] in (b"T", b"t")


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = str(-exitcode)
        return f"crash: process killed by signal {name}"
    return f"crash: process exited with code {exitcode}"


class InlineExecutor(Executor):
    """Runs each task at once in this process (`--workers 1`), with the same time-outs.

    A watchdog thread interrupts a bot that overruns; a hang in C code, or a bot that
    kills its process, cannot be survived here — use two or more workers for that.
    """

    def __init__(self, timing: Timing = Timing(), initializer: Callable[..., Any] | None = None,
                 initargs: tuple[Any, ...] = ()):
        """`timing` watches what runs outside a task (`naparena check`); a task is
        watched by its job's."""
        self.slot = [0] * layout.SLOT_SIZE
        self.slot[layout.SEAT] = -1
        self._timing = timing
        self._watch = _Watch(self.slot, timing, kill=False)  # nothing can be killed in this process
        self._stop = threading.Event()
        self._main = threading.main_thread().ident
        bind_slot(self.slot)
        if threading.current_thread() is threading.main_thread():
            self._thread: threading.Thread | None = threading.Thread(
                target=self._watchdog, name="naparena-watchdog", daemon=True)
            self._thread.start()
        else:
            self._thread = None
        if initializer:
            initializer(*initargs)

    def _watchdog(self) -> None:
        watch = self._watch
        while not self._stop.wait(_tick(watch.timing.timeout)):
            if watch.check(time.monotonic()) == "interrupt":
                assert self._main is not None
                signal.pthread_kill(self._main, signal.SIGUSR1)

    workers = 1
    window = 2
    description = None

    def expect(self, matches: int) -> None:
        """Every match is played as it comes: nothing to size."""

    def flush(self) -> None:
        """Nothing is held back."""

    def in_play(self) -> dict[int, int] | None:
        return None  # a match is played inside `play`: none is ever under way between calls

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """`fn(*args, **kwargs)` here, now, watched by the executor's own `timing`."""
        return self._run(lambda: fn(*args, **kwargs), self._timing)

    def play(self, fn: PlayJob, job: Job, timing: Timing) -> Future[Any]:
        """`fn(job)` here, now, watched by `timing`."""
        return self._run(lambda: fn(job), timing)

    def _run(self, call: Callable[[], Any], timing: Timing) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        self._watch.timing = timing
        try:
            future.set_result(call())
        except Exception as e:
            future.set_exception(e)
        finally:
            self._watch.timing = self._timing
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._stop.set()
        bind_slot(None)

    def terminate(self) -> None:
        self.shutdown()


#: Set (to anything) to play every match in this process, for a debugger; a bot that
#: kills, stops or exits its process then takes the run with it.
IN_PROCESS_ENV = "NAPARENA_IN_PROCESS"


def in_process() -> bool:
    return bool(os.environ.get(IN_PROCESS_ENV))


def make_executor(workers: int, initializer: Callable[..., Any] | None = None,
                  initargs: tuple[Any, ...] = ()) -> ForkPool | InlineExecutor:
    """A ForkPool of `workers`, one worker too: a bot's exit, interrupt, timer or crash
    then ends a worker, never the run. In-process only when asked (`IN_PROCESS_ENV`).
    Each match is watched by the `Timing` it is played with."""
    if in_process():
        return InlineExecutor(initializer=initializer, initargs=initargs)
    return ForkPool(max(1, workers), initializer=initializer, initargs=initargs)
