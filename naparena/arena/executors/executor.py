"""What a session plays its matches on: the one interface the pool (`pool.py`) and the
Dask cluster (`cluster.py`) both implement, so the session asks, never probes."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol

from naparena.arena.match.job import Job
from naparena.arena.setup.settings import Timing

#: A match as an executor runs it: `run_job(job)`, the worker's entry point.
PlayJob = Callable[[Job], Any]


class MatchExecutor(Protocol):
    """Plays jobs, each watched by the `Timing` it is handed, and says how far ahead the
    session may submit. Futures complete with the match's summary, or fail with
    `WorkerDied` (a bot crashed or hung: replay it), `WorkerLost` (the worker was lost to
    something outside any bot) or `RuntimeError` (the match failed outside any bot)."""

    @property
    def workers(self) -> int:
        """Matches it plays at once."""
        ...

    @property
    def window(self) -> int:
        """Matches the session keeps submitted ahead, counting those done ahead of their turn."""
        ...

    @property
    def description(self) -> str | None:
        """What it has to say about itself before play (a cluster's workers), if anything."""
        ...

    def expect(self, matches: int) -> None:
        """The run will submit about `matches` more matches (replays aside)."""
        ...

    def play(self, fn: PlayJob, job: Job, timing: Timing) -> Future[Any]:
        """`fn(job)` in a worker, its bots watched by `timing`."""
        ...

    def flush(self) -> None:
        """Send what was submitted so far; the session calls it before it waits."""
        ...

    def in_play(self) -> dict[int, int] | None:
        """Hands finished in each match under way, by match index; None if it cannot tell."""
        ...

    def shutdown(self) -> None:
        """Finish what was submitted, then stop."""
        ...

    def terminate(self) -> None:
        """Stop at once (Ctrl-C): what is still playing is dropped."""
        ...
