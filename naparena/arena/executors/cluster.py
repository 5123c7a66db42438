"""Plays a tournament's matches on a Dask cluster (the optional `naparena[dask]` extra).

This module is the run's side; `dask_worker.py` is the workers', and `wire.py` what
travels between them. The parent sends each match as plain data — the `Job`, plus the drop-in bot files by
content; short matches several to a task, so a task's fixed cost is spread — and a Dask
worker plays it in a supervised child process of its own (the
same `ForkPool` and watchdog as on one machine), then sends back the summary and the
match log's bytes. The parent writes every file and books in schedule order, so a run
gives the same bytes on a cluster as with the local pool, and no disk is shared.

Faults: a bot that crashes or hangs kills only that child; the worker reports where
(`WorkerDied`) and the runner replays the match exactly as it does locally. A Dask
worker that is lost (killed, its machine gone) is Dask's business: the scheduler plays
its task again on another worker, and play is deterministic, so the result is the same.

Bots must be the same everywhere: at start every worker reports its naparena (version
and a hash of its code) and the identity of each bot the run needs, and any difference
from this machine stops the run with one message naming the worker and the bot. Each
task checks again, for workers that join later.

`distributed` is imported only when a cluster is asked for, so naparena works without it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import os
import secrets
import signal
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path
from types import ModuleType
from typing import Any

from naparena.arena.executors.executor import PlayJob
from naparena.arena.executors.pool import WorkerDied
from naparena.arena.executors.wire import Outcome, Shared, describe_bots, mismatch, pack_drop_ins
from naparena.arena.match.job import Job
from naparena.arena.records.logs import write_atomic
from naparena.arena.setup.settings import Scheduler, Timing
from naparena.bots.plugins import Registry
from naparena.errors import RunError

INSTALL = "pip install 'naparena[dask]'"
#: A task's length the batches aim at: the few ms a task costs the scheduler, this process
#: and the gap before a worker's next task are then well under 1% of it (cluster_bench:
#: Dask / pool 0.85-1.08 round by round at 0.5 s, 0.94-1.04 at 2 s). A match longer than
#: this goes alone; the last batches of a run shrink (`batch`), so none is left alone.
TASK_SECONDS = 2.0
MAX_BATCH = 128  # and no more matches than this in one task
#: What a local cluster's workers have imported before they start (`_local_cluster`).
LOCAL_PRELOAD = ("distributed", "naparena.arena.executors.dask_worker", "naparena.arena.worker")
#: Dask's own housekeeping, slowed for a local cluster: idle, its scheduler, nannies and two
#: workers took 1.3 s of CPU every 20 s (3% of two cores, taken from play), 0.3 s with these.
#: They time the event loop (a warning), sample the task thread (a task here only waits for
#: its pool) and the workers' memory (a worker holds no data), and feed the dashboard.
LOCAL_CONFIG = {"distributed.admin.tick.interval": "1s", "distributed.worker.profile.enabled": False,
                "distributed.worker.memory.monitor-interval": "1s",
                "distributed.admin.system-monitor.interval": "2s"}
log = logging.getLogger("naparena")

__all__ = ["MAX_BATCH", "TASK_SECONDS", "ClusterExecutor", "describe_bots", "mismatch", "require_distributed"]


def require_distributed() -> ModuleType:
    """`distributed`, or the one-line error saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise RunError(f"Dask is not installed: {INSTALL}") from None
    return distributed


# --- in the parent --------------------------------------------------------------------

class ClusterExecutor:
    """Plays matches on a Dask cluster, a session's `MatchExecutor`.

    `play(run_job, job, timing)` returns a future that, like the local pool's, completes once
    the match log is on disk here, with the summary, or fails with `WorkerDied` (a bot
    crashed or hung: replay it), `RuntimeError` (the match failed outside any bot) or
    `RunError` (a worker lacks a bot or has another one). On the worker the job has no
    path, so `run_job` sends the log back instead of writing it.
    """

    def __init__(self, scheduler: Scheduler, registry: Registry, bot_names: Iterable[str],
                 drop_in_folder: str | None):
        distributed = require_distributed()
        from naparena.arena.executors import dask_worker  # imports distributed: only now

        self._worker_side = dask_worker
        self._killed_worker: type[BaseException] = distributed.KilledWorker
        self.scheduler = scheduler
        self._cluster, self.client = _connect(distributed, scheduler)
        # Dask key -> (Dask future, [(our future, log path)] of its batch)
        self._open: dict[str, tuple[Any, list[tuple[Future[Any], str | None]]]] = {}
        self._batch: list[tuple[Job, Future[Any]]] = []  # submitted, not yet sent
        self._fn: PlayJob | None = None    # what the batch plays, and
        self._timing: Timing | None = None  # the limits that watch it
        self.workers = 1
        self.description: str | None = None
        self._seconds, self._played = 0.0, 0  # matches' play time as measured on the workers
        self._left: int | None = None  # matches the run has yet to submit, once it says (`expect`)
        self._token: tuple[Path, str] | None = None  # (file, nonce) a worker reads to know it sees our folder
        self._guard = threading.Lock()
        self._closing = False
        self._direct = False
        try:
            # Each worker keeps its pool and its report of the bots in this plug-in (joiners too).
            self.client.register_plugin(dask_worker.WorkerSide(), name=dask_worker.PLUGIN)
            self._drop_ins = pack_drop_ins(drop_in_folder)
            self._expected = describe_bots(registry, sorted(set(bot_names)))
            self.workers = self._check_workers()
            # A local cluster's workers are on loopback: no need to probe them.
            self._direct = scheduler.kind == "local" or self._reachable(list(self.client.nthreads()))
        except BaseException:
            self._close()
            raise
        self.description = self._describe()

    def _check_workers(self) -> int:
        """Every worker's naparena and bots must be this machine's; return the cluster's threads."""
        if not self.client.nthreads():
            log.warning("no Dask worker has joined %s yet: waiting for the first", self.client.scheduler.address)
            self.client.wait_for_workers(1)
        reports = self.client.run(self._worker_side.worker_report, sorted(self._expected["bots"]), self._drop_ins,
                                  on_error="return")
        for worker, report in sorted(reports.items()):
            if isinstance(report, BaseException):
                raise RunError(f"Dask worker {worker} could not report its bots: {type(report).__name__}: {report}")
            problem = mismatch(worker, report, self._expected)
            if problem:
                raise RunError(problem)
        return max(1, int(sum(self.client.nthreads().values())))

    def _reachable(self, workers: list[str]) -> bool:
        """Can this machine talk to the workers themselves? Then match logs come straight
        from them; through the scheduler every log crosses the network twice. (A cluster
        behind its scheduler, as on Kubernetes, is reached through the scheduler only.)"""
        from distributed.comm.core import connect

        async def probe() -> None:
            for address in workers:
                comm = await connect(  # type: ignore[no-untyped-call]
                    address, timeout=5, **self.client.connection_args)
                await comm.close()
        try:
            self.client.sync(probe)
        except (OSError, TimeoutError):
            return False
        return True

    def _describe(self) -> str:
        threads = self.client.nthreads()
        where = self.client.scheduler.address
        text = f"Dask scheduler {where}: {len(threads)} worker(s), {sum(threads.values())} thread(s)"
        # A scheduler always serves HTTP; it is a dashboard where bokeh is installed.
        served = "dashboard" in self.client.scheduler_info().get("services", {})
        if served and self.client.run_on_scheduler(_has_bokeh):
            text += f"; dashboard {self.client.dashboard_link}"
        return text

    @property
    def batch(self) -> int:
        """Matches a task plays: `_timed_batch`, but near the end no more than half a
        thread's share of what is left (guided self-scheduling): the batches shrink to one
        match, and the threads finish together instead of one playing a last long batch
        while the others wait."""
        size = self._timed_batch
        if self._left is not None:
            share = -(-(self._left + len(self._batch)) // (2 * self.workers))
            size = max(1, min(size, share))
        return size

    @property
    def _timed_batch(self) -> int:
        """Enough matches that a task lasts `TASK_SECONDS` by the matches measured so far
        (one until the first comes back), so the scheduler's and this process's cost per
        task is spread over several short matches."""
        if not self._played:
            return 1
        seconds = self._seconds / self._played
        return max(1, min(MAX_BATCH, int(TASK_SECONDS / max(seconds, 1e-6))))

    def expect(self, matches: int) -> None:
        """The run will submit about `matches` more matches (replays aside)."""
        self._left = matches

    @property
    def window(self) -> int:
        """Matches the run keeps submitted ahead, counting those done ahead of their turn:
        a task and the next for each thread, and room for the rest to finish while the
        oldest task, up to a full batch, still plays. Sized by the full batch, not the
        shrinking one, so the end's short tasks are not held back behind a long one."""
        return max(2, self.workers * 3, self.workers * self._timed_batch * 3)

    def in_play(self) -> dict[int, int] | None:
        return None  # the workers do not say how far a match has got

    def play(self, fn: PlayJob, job: Job, timing: Timing) -> Future[Any]:
        """`fn(job)` on a worker, watched by `timing`; sent with the next batch."""
        if self._batch and (fn, timing) != (self._fn, self._timing):
            self.flush()  # a batch is played by one function under one timing
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        self._fn, self._timing = fn, timing
        self._batch.append((job, future))
        if self._left is not None:
            self._left = max(0, self._left - 1)
        if len(self._batch) >= self.batch:
            self.flush()
        return future

    def flush(self) -> None:
        """Send the matches submitted so far as one task; the run calls this before it waits."""
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        # Paths of this machine mean nothing on a worker: the drop-ins travel by content, and
        # the logs come back, unless the worker finds the token in the run's folder.
        wire = [dataclasses.replace(job, bots_dir=None, path=None, checkpoint=None) for job, _ in batch]
        shared = self._shared([job.path for job, _ in batch])
        remote = self.client.submit(self._worker_side.play_remote, self._fn, wire, self._timing, self._drop_ins,
                                    self._expected, shared, pure=False)
        with self._guard:
            self._open[remote.key] = (remote, [(future, job.path) for job, future in batch])
        remote.add_done_callback(self._done)

    def _shared(self, paths: list[str | None]) -> Shared | None:
        """What lets a worker that sees the run's folder (the same machine, a shared file
        system) write the logs there itself, as a local worker does, rather than send them
        through Dask for this process to write: a token file of a random nonce beside them."""
        known = [p for p in paths if p is not None]
        if not known or len(known) != len(paths):
            return None
        if self._token is None:
            folder = Path(known[0]).parent
            nonce = secrets.token_hex(16)
            token = folder / f".dask-{nonce[:8]}.tmp"  # *.tmp*: a resume's clean-up takes a stray one
            try:
                token.write_text(nonce)
            except OSError:
                return None
            self._token = (token, nonce)
        token, nonce = self._token
        return str(token), nonce, known

    def _done(self, remote: Any) -> None:
        """In Dask's callback thread: fetch the outcomes, write the logs, settle our futures."""
        with self._guard:
            entry = self._open.pop(remote.key, None)
        if entry is None or self._closing:
            return
        _, settle = entry
        try:
            outcomes = self._fetch(remote)
        except self._killed_worker:
            for future, _ in settle:
                future.set_exception(RuntimeError("Dask gave up on it after losing the workers that played it"))
            return
        except BaseException as e:
            for future, _ in settle:
                future.set_exception(RuntimeError(f"{type(e).__name__}: {e}"))
            return
        for (future, path), outcome in zip(settle, outcomes):
            self._settle(future, path, outcome)

    def _settle(self, future: Future[Any], path: str | None, outcome: Outcome) -> None:
        kind = outcome[0]
        if kind == "ok":
            try:
                if outcome[2] is not None:  # else the worker wrote it, in the run's folder
                    assert path is not None, "a run's job always has its log's path"
                    write_atomic(path, outcome[2])
            except OSError as e:
                future.set_exception(RunError(f"cannot write {path}: {e.strerror}"))
                return
            for name, level, text in outcome[3]:
                logging.getLogger(name).log(level, "%s", text)
            with self._guard:
                self._seconds += outcome[4]
                self._played += 1
            future.set_result(outcome[1])
        elif kind == "died":
            future.set_exception(WorkerDied(outcome[1], outcome[2]))
        elif kind == "mismatch":
            future.set_exception(RunError(outcome[1]))
        else:
            future.set_exception(RuntimeError(outcome[1]))

    def _fetch(self, remote: Any) -> list[Outcome]:
        """The task's outcome, from its worker where this machine reaches the workers."""
        outcomes: list[Outcome] = self.client.gather(remote, direct=self._direct)
        return outcomes

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            self.terminate()
        else:
            self._close()

    def terminate(self) -> None:
        """Stop at once (Ctrl-C): what is still playing is dropped; finished logs are kept."""
        self._closing = True
        with self._guard:
            remotes = [remote for remote, _ in self._open.values()]
            self._open.clear()
            self._batch = []
        if remotes:
            try:
                self.client.cancel(remotes, force=True)
            except Exception:
                pass  # the scheduler may be gone already; closing is all that is left
        self._close()

    def _close(self) -> None:
        self._closing = True
        try:
            self.client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()
            if self._token is not None:
                self._token[0].unlink(missing_ok=True)


def _has_bokeh() -> bool:
    return importlib.util.find_spec("bokeh") is not None


def _local_cluster(distributed: ModuleType, workers: int) -> Any:
    """A LocalCluster of `workers` processes, on loopback and any free port (another run may
    hold the usual one), quiet below errors, whose workers ignore Ctrl-C as the pool's do:
    the terminal sends it to them too, and the parent stops them cleanly.

    The workers are forked from a fork server that has imported Dask and naparena's worker
    side once (`LOCAL_PRELOAD`), not spawned as fresh interpreters that each import them:
    0.6 s of CPU a worker, measured, which a run on one machine pays before any match. The
    cluster's housekeeping is slowed (`LOCAL_CONFIG`): on one machine it competes with play."""
    import dask

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:  # an ignored signal stays ignored in the processes started meanwhile (the fork server too)
        with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver", **LOCAL_CONFIG}):
            # Dask gives the context its own preload list on first use; ours replaces it after.
            distributed.utils.get_mp_context().set_forkserver_preload(list(LOCAL_PRELOAD))
            # The fork server keeps the environment it started with (the first local cluster
            # of this process): each worker is handed the run's own, as a spawned one had it
            # (its PATH says whether it can sandbox).
            return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                            host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                            silence_logs=logging.ERROR, env=dict(os.environ))
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)


def _connect(distributed: ModuleType, scheduler: Scheduler) -> tuple[Any, Any]:
    """(LocalCluster or None, Client) for a Dask `scheduler`."""
    assert scheduler.on_dask, "this machine's pool is the runner's, not a cluster"
    try:
        if scheduler.kind == "local":
            cluster = _local_cluster(distributed, scheduler.local_workers)
            try:
                return cluster, distributed.Client(cluster, set_as_default=False)
            except BaseException:
                cluster.close()
                raise
        if scheduler.kind == "file":
            if not Path(scheduler.text).is_file():
                raise RunError(f"scheduler file {scheduler} does not exist")
            return None, distributed.Client(scheduler_file=scheduler.text, set_as_default=False)
        return None, distributed.Client(scheduler.text, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise RunError(f"cannot reach the Dask scheduler {scheduler}: {e}") from None
