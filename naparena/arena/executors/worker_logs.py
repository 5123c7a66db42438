"""Log records from forked workers, handled in the parent, with the fork before any thread.

Forking a process that runs threads can deadlock the child (a lock held by a thread
that does not exist there), and Python 3.12+ warns about it. So the queue the workers
write to is made before the pool forks, and the thread that reads it starts after:

    logs = WorkerLogs([file_handler, stderr_handler])
    logs.arm()          # workers forked from now on send their records to the queue
    pool = ForkPool(…)  # forks: still one thread
    logs.start()        # the reading thread
    …
    logs.stop()         # after the pool is shut down: every record is handled
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from logging.handlers import QueueHandler, QueueListener
from typing import Any


class _Pipe:
    """A fork context's SimpleQueue, shaped as QueueHandler and QueueListener use a queue:
    unlike a multiprocessing Queue it starts no feeder thread in the worker, and it has
    no timeouts, so a get always blocks."""

    def __init__(self) -> None:
        self.simple = multiprocessing.get_context("fork").SimpleQueue()

    def put_nowait(self, item: Any, /) -> None:
        self.simple.put(item)

    def get(self, block: bool = True) -> Any:
        return self.simple.get()


_queue: _Pipe | None = None  # the queue a worker forked now sends its records to (None: none)
_registered = False  # os.register_at_fork cannot be undone: register once, consult _queue


def _in_worker() -> None:
    if _queue is None:
        return
    root = logging.getLogger()
    for handler in list(root.handlers):  # the parent's handlers; their files are the parent's
        root.removeHandler(handler)
    root.addHandler(QueueHandler(_queue))  # a worker's only handler: onto the parent's queue


class WorkerLogs:
    """Forward the records of workers forked between `arm` and `stop` to `handlers`."""

    def __init__(self, handlers: list[logging.Handler]):
        self.queue = _Pipe()
        self.listener = QueueListener(self.queue, *handlers, respect_handler_level=True)
        self.armed = self.started = False

    def arm(self) -> None:
        global _queue, _registered
        if not _registered:
            os.register_at_fork(after_in_child=_in_worker)
            _registered = True
        _queue = self.queue
        self.armed = True

    def start(self) -> None:
        """Start reading, if armed (no worker is forked in-process, so nothing to read)."""
        if self.armed:
            self.listener.start()
            self.started = True

    def stop(self) -> None:
        """Handle every record sent so far, then stop; call after the workers are gone."""
        global _queue
        _queue = None
        self.armed = False
        if self.started:
            self.listener.stop()
            self.started = False
