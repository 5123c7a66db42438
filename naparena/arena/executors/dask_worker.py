"""A Dask worker's side of a cluster run (`cluster.py` is the run's): it plays each batch
of matches it is sent in supervised children of its own — the same `ForkPool` and
watchdog as on one machine — and sends back, for each, the summary, the match log's
bytes (unless it could write the log in the run's folder itself) and what the bots logged.

What a worker keeps between tasks (its pool, its report of the bots) lives in a
`WorkerSide`, a Dask worker plug-in the run registers, not in this module: each worker
process has its own, made when it joins and dropped with it.

`distributed` is imported here at once: only a Dask worker, or a run that asked for a
cluster, imports this module.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import multiprocessing
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import distributed

from naparena.arena.executors.executor import PlayJob
from naparena.arena.executors.pool import ForkPool, WorkerDied, tie_to_creator
from naparena.arena.executors.wire import DropIns, Identity, Outcome, Shared, describe_bots, digest, mismatch
from naparena.arena.match.job import Job
from naparena.arena.setup.settings import Timing
from naparena.bots.plugins import load_registry
from naparena.errors import RunError

#: The name the run registers `WorkerSide` under on every worker.
PLUGIN = "naparena"


#: What the worker's fork server imports once, so that each supervised child (the first,
#: and every one that replaces a child a bot killed) starts with all a match needs.
PRELOAD = ("naparena.arena.executors.pool", "naparena.arena.worker")


class WorkerSide(distributed.WorkerPlugin):
    """What one Dask worker keeps between tasks: a supervised child per worker thread,
    for every job, and `describe_bots` as it sees them, once per run. Registered again by
    a later run, the one a worker has is kept, pool and all.

    The pool starts as soon as the plug-in is set up, in the background: its fork server
    and children (a Python start and naparena's imports: 1.7-2.5 s of wall time before the
    first match, measured on a loaded machine) come up while the run checks the workers'
    bots, not when the first match arrives."""

    idempotent = True

    def setup(self, worker: distributed.Worker) -> None:
        self.threads = worker.state.nthreads
        self.lock = threading.Lock()
        self.pool_here: ForkPool | None = None
        self.reports: dict[tuple[str | None, tuple[str, ...]], Identity] = {}
        # A failure here is not lost: the first task's `pool()` tries again and reports it.
        threading.Thread(target=self._start_pool, name="naparena-pool-start", daemon=True).start()

    def _start_pool(self) -> None:
        try:
            self.pool()
        except Exception:
            pass

    def pool(self) -> ForkPool:
        with self.lock:
            if self.pool_here is None:
                me = multiprocessing.current_process()
                if me.daemon:
                    # A Dask nanny starts its worker as a daemon, and multiprocessing then refuses
                    # it children. Ours die with it (see `tie_to_creator`), which is what that rule is for.
                    me.daemon = False
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(list(PRELOAD))
                self.pool_here = ForkPool(self.threads, initializer=tie_to_creator, context="forkserver")
            return self.pool_here

    def report(self, names: list[str], drop_ins: DropIns | None) -> Identity:
        key = (drop_ins[0] if drop_ins else None, tuple(names))
        with self.lock:
            if key not in self.reports:
                self.reports[key] = describe_bots(load_registry(_unpack(drop_ins)), names)
            return self.reports[key]


def _side(worker: distributed.Worker) -> WorkerSide:
    side = worker.plugins[PLUGIN]
    assert isinstance(side, WorkerSide), "the run registers naparena's worker plug-in first"
    return side


def worker_report(names: list[str], drop_ins: DropIns | None, dask_worker: distributed.Worker) -> Identity:
    """`describe_bots` as this worker sees them (with the run's drop-ins), once per run
    (`Client.run` hands the worker in as `dask_worker`)."""
    return _side(dask_worker).report(names, drop_ins)


def play_remote(fn: PlayJob, jobs: list[Job], timing: Timing, drop_ins: DropIns | None, expected: Identity,
                shared: Shared | None = None) -> list[Outcome]:
    """The Dask task: each `fn(job)` of a batch, in this worker's supervised child, in
    order, watched by `timing`. One outcome per job: ("ok", summary, log bytes or None if
    this worker wrote the log itself, what the bots logged, seconds it took), ("died",
    reason, where) when a bot killed or hung its child, ("error", message) when the match
    failed outside any bot, or ("mismatch", message) when a bot differs here (then for
    every job of the batch)."""
    worker = distributed.get_worker()
    side = _side(worker)
    problem = mismatch(worker.address, side.report(sorted(expected["bots"]), drop_ins), expected)
    if problem:
        return [("mismatch", problem)] * len(jobs)
    bots_dir = _unpack(drop_ins)
    pool = side.pool()
    paths: list[str | None] = list(shared[2]) if shared is not None and _sees(shared) else [None] * len(jobs)
    jobs = [dataclasses.replace(job, bots_dir=bots_dir, path=path, checkpoint=None) for job, path in zip(jobs, paths)]
    played = functools.partial(_with_logs, fn)
    futures = [pool.play(played, job, timing) for job in jobs]
    return [_outcome(f) for f in futures]


def _outcome(future: Future[Any]) -> Outcome:
    try:
        return ("ok", *future.result())
    except WorkerDied as died:
        return ("died", died.reason, died.where)
    except RuntimeError as e:
        return ("error", str(e))


def _with_logs(fn: Callable[[Job], Any], job: Job) -> tuple[Any, bytes | None, list[tuple[str, int, str]], float]:
    """In the child: `fn(job)` (its summary and log bytes, or only the summary when it
    wrote the log to `job.path`), what the bots logged meanwhile, as (logger, level,
    text), for the parent's run.log (the local pool forwards the same records), and the
    seconds it took, which size the parent's batches (never written to a log)."""
    records: list[tuple[str, int, str]] = []
    handler = _Keep(records)
    root = logging.getLogger()
    root.addHandler(handler)
    start = time.perf_counter()
    try:
        played = fn(job)
    finally:
        root.removeHandler(handler)
    summary, data = played if job.path is None else (played, None)
    return summary, data, records, time.perf_counter() - start


def _sees(shared: Shared) -> bool:
    """Whether this worker sees the parent's run folder: the token file the parent wrote
    there holds the nonce it sent (a worker on another machine, or in a container without
    the folder, does not find it, and sends the logs back)."""
    token, nonce, _ = shared
    try:
        return Path(token).read_text() == nonce
    except (OSError, UnicodeDecodeError):
        return False


class _Keep(logging.Handler):
    def __init__(self, records: list[tuple[str, int, str]]):
        super().__init__()
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.name, record.levelno, self.format(record)))


def _unpack(drop_ins: DropIns | None) -> str | None:
    """The run's drop-in files in a folder of this machine named by their digest."""
    if drop_ins is None:
        return None
    name, files = drop_ins
    if digest(files) != name:
        raise RunError("drop-in bot files arrived damaged")
    folder = Path(tempfile.gettempdir()) / f"naparena-drop-ins-{os.getuid()}" / name
    if not folder.is_dir():
        staging = folder.with_name(f"{name}.tmp{os.getpid()}-{threading.get_ident()}")
        staging.mkdir(parents=True)
        for file_name, content in files:
            (staging / file_name).write_bytes(content)
        try:
            staging.rename(folder)  # whole or absent, as another thread may be doing the same
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
    return str(folder)
