"""The worker's side of a run: play one match sent as a `Job` and hand back its summary.

Whatever runs the matches (this machine's pool, a Dask worker) calls `run_job`; it imports
nothing of the session, so a worker holds only what a match needs. Each worker keeps the
bot registry it loaded, per drop-in folder, until that folder's files change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from naparena.arena.match.job import Job
from naparena.arena.match.play import play_job
from naparena.arena.records.checkpoint import discard as discard_checkpoint
from naparena.arena.records.rundir import write_file
from naparena.bots.plugins import Registry, load_registry

_registries: dict[tuple[Any, ...], Registry] = {}


def _drop_in_key(folder: str | None) -> tuple[Any, ...]:
    """What a worker's cached registry depends on: the folder and its files' mtimes."""
    if folder is None:
        return (None,)
    path = Path(folder).resolve()
    return (str(path),) + tuple(sorted((p.name, p.stat().st_mtime_ns) for p in path.glob("*.py")))


def run_job(job: Job) -> dict[str, Any] | tuple[dict[str, Any], bytes]:
    """Worker entry point: play one match, write its log, return only its summary. A job
    without a path (played on another machine) returns (summary, log bytes) instead."""
    key = _drop_in_key(job.bots_dir)
    registry = _registries.get(key)
    if registry is None:
        registry = _registries[key] = load_registry(job.bots_dir)
    match_log = play_job(job, registry, prestart=job.prestart)
    if job.path is None:
        return match_log.summary, bytes(match_log)
    write_file(job.path, bytes(match_log))
    if job.checkpoint is not None:
        discard_checkpoint(job.checkpoint)  # the log holds it all now
    return match_log.summary
